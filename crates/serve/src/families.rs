//! Which API families the reference endpoint speaks (`serve --only FAMILY`), and the model
//! kind it plays (`--model-kind`). Without `--only` it answers every family's invocation
//! routes but only the container contract's discovery route (`/ping`), so that `--url`
//! alone finds it as the Hugging Face container it always was; with `--only`, it answers
//! that family's routes as the real server does (its metadata, its errors, its 404s) and
//! nothing else, so discovery is tested against one family at a time.

/// A family as `--only` names it: the client's API families, with KServe's own Python
/// server apart from Triton (they answer discovery differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiFamily {
    Hf,
    Triton,
    Kserve,
    Vllm,
    Openai,
    Tei,
    Infinity,
    Jina,
}

impl encbench_core::choice::Choice for ApiFamily {
    const ALL: &'static [ApiFamily] = &[
        ApiFamily::Hf,
        ApiFamily::Triton,
        ApiFamily::Kserve,
        ApiFamily::Vllm,
        ApiFamily::Openai,
        ApiFamily::Tei,
        ApiFamily::Infinity,
        ApiFamily::Jina,
    ];

    fn name(self) -> &'static str {
        match self {
            ApiFamily::Hf => "hf",
            ApiFamily::Triton => "triton",
            ApiFamily::Kserve => "kserve",
            ApiFamily::Vllm => "vllm",
            ApiFamily::Openai => "openai",
            ApiFamily::Tei => "tei",
            ApiFamily::Infinity => "infinity",
            ApiFamily::Jina => "jina",
        }
    }
}

encbench_core::parse_by_name!(ApiFamily);

/// What the simulated model is, for the families whose server serves one kind of model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// A vector per input (TEI's `embedding`, Infinity's `embed`).
    Embedding,
    /// A label per input: the NLI classifier of the shipped samples.
    Classifier,
    /// A score per (query, document): a cross-encoder.
    Reranker,
}

impl encbench_core::choice::Choice for ModelKind {
    const ALL: &'static [ModelKind] = &[
        ModelKind::Embedding,
        ModelKind::Classifier,
        ModelKind::Reranker,
    ];

    fn name(self) -> &'static str {
        match self {
            ModelKind::Embedding => "embedding",
            ModelKind::Classifier => "classifier",
            ModelKind::Reranker => "reranker",
        }
    }
}

encbench_core::parse_by_name!(ModelKind);

impl ModelKind {
    /// The kind a family's server plays when `--model-kind` does not say.
    pub fn default_for(family: ApiFamily) -> ModelKind {
        match family {
            ApiFamily::Vllm | ApiFamily::Hf | ApiFamily::Triton | ApiFamily::Kserve => {
                ModelKind::Classifier
            }
            ApiFamily::Jina => ModelKind::Reranker,
            ApiFamily::Openai | ApiFamily::Tei | ApiFamily::Infinity => ModelKind::Embedding,
        }
    }

    /// TEI's `model_type` key, and Infinity's capability.
    pub fn tei_name(self) -> &'static str {
        match self {
            ModelKind::Embedding => "embedding",
            ModelKind::Classifier => "classifier",
            ModelKind::Reranker => "reranker",
        }
    }

    pub fn infinity_capability(self) -> &'static str {
        match self {
            ModelKind::Embedding => "embed",
            ModelKind::Classifier => "classify",
            ModelKind::Reranker => "rerank",
        }
    }
}

/// What the server plays: every family at once, or one family with one kind of model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Playing {
    pub only: Option<ApiFamily>,
    pub kind: Option<ModelKind>,
}

impl Playing {
    /// Whether a route of `family` for models of `kind` is served: every route without
    /// `--only`; with it, the family's own, for its kind.
    pub fn serves(&self, family: ApiFamily, kind: ModelKind) -> bool {
        match self.only {
            None => true,
            Some(f) => f == family && self.kind_of(f) == kind,
        }
    }

    /// The kind the one family plays.
    pub fn kind_of(&self, family: ApiFamily) -> ModelKind {
        self.kind.unwrap_or_else(|| ModelKind::default_for(family))
    }

    pub fn is(&self, family: ApiFamily) -> bool {
        self.only == Some(family)
    }
}
