//! Data shipped inside the binary, so nothing is fetched at run time (users behind
//! firewalls, and this project's CI, have no route to model hubs).

/// WordPiece tokenizer of all-MiniLM-L6-v2 (BERT uncased); licence in `assets/TOKENIZER_LICENSE.txt`.
pub const TOKENIZER_JSON: &[u8] = include_bytes!("../../../assets/tokenizer.json");
/// Premise/hypothesis pairs with the verdict an NLI model must give.
pub const NLI_SAMPLES: &str = include_str!("../../../assets/nli_samples.jsonl");
/// Queries with candidates and the one an embedding model must put nearest.
pub const RETRIEVAL_SAMPLES: &str = include_str!("../../../assets/retrieval_samples.jsonl");
/// Queries with documents and the ones a reranker must rank first: relevant ones beside
/// hard negatives (the same topic, the wrong answer) and unrelated ones.
pub const RERANK_SAMPLES: &str = include_str!("../../../assets/rerank_samples.jsonl");
/// SageMaker hourly prices for `--instance-type`.
pub const PRICES: &str = include_str!("../../../assets/prices.json");
/// JSON Schema of the export, also shipped for users' own validation.
pub const EXPORT_SCHEMA: &str = include_str!("../../../assets/export.schema.json");
