//! The API families a server may speak, and the routes of each: which path a request of a
//! task goes to and which body shape it takes. The shapes are the servers' own, as their
//! sources and API documents give them (docs/api-families.md names each source).

use encbench_core::choice::Choice;

/// The API families `--engine` selects: each a server's documented payload format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PayloadFormat {
    /// Hugging Face inference toolkit payloads (the SageMaker container contract).
    Hf,
    /// KServe v2 tensors (Triton, KServe's Python server), tokenized on the client.
    Triton,
    /// vLLM's pooling routes: /classify, /v1/embeddings, /score, /rerank, /pooling.
    Vllm,
    /// OpenAI-compatible /v1/embeddings (gateways, and most servers).
    Openai,
    /// Hugging Face text-embeddings-inference: /embed, /predict, /rerank.
    Tei,
    /// Infinity (infinity-emb): /embeddings, /classify, /rerank.
    Infinity,
    /// The Jina and Cohere rerank API: /v1/rerank.
    Jina,
}

/// What a request asks of the model (`--api`): the route of families that have several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Api {
    /// A vector per input (an embedder).
    Embed,
    /// A class per input (a classifier, NLI pairs among them).
    Classify,
    /// One query and its documents, a relevance score per document (a reranker).
    Rerank,
    /// vLLM's /score: a score per (query, document) pair.
    Score,
    /// vLLM's /pooling: whatever the model's pooler gives, read as vectors.
    Pooling,
}

impl Choice for Api {
    const ALL: &'static [Api] = &[
        Api::Embed,
        Api::Classify,
        Api::Rerank,
        Api::Score,
        Api::Pooling,
    ];

    fn name(self) -> &'static str {
        match self {
            Api::Embed => "embed",
            Api::Classify => "classify",
            Api::Rerank => "rerank",
            Api::Score => "score",
            Api::Pooling => "pooling",
        }
    }

    fn aliases(self) -> &'static [&'static str] {
        match self {
            Api::Embed => &["embeddings"],
            _ => &[],
        }
    }
}

encbench_core::parse_by_name!(Api);

impl Api {
    /// Whether a request is one query with documents, answered by a score per document.
    pub fn ranks(self) -> bool {
        matches!(self, Api::Rerank | Api::Score)
    }

    /// The kind of model this route is for: embedder, classifier, reranker.
    pub fn kind(self) -> &'static str {
        match self {
            Api::Embed | Api::Pooling => "embedder",
            Api::Classify => "classifier",
            Api::Rerank | Api::Score => "reranker",
        }
    }
}

/// How a route's request body is laid out, and so how its reply is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyShape {
    /// `{"model", "input": [...], "encoding_format"}` → `{"data": [{"index", "embedding"}]}`.
    OpenAiEmbeddings,
    /// TEI `{"inputs": [...]}` → `[[f32]]`.
    TeiEmbed,
    /// TEI `{"inputs": [[a], [a, b], ...]}` → `[[{"score", "label"}, ...], ...]`.
    TeiPredict,
    /// TEI `{"query", "texts"}` → `[{"index", "score"}]`.
    TeiRerank,
    /// vLLM `{"model", "input"}` → `{"data": [{"label", "probs"}]}`.
    VllmClassify,
    /// vLLM `{"model", "input"}` → `{"data": [{"index", "data"}]}`.
    VllmPooling,
    /// vLLM `{"model", "text_1", "text_2"}` → `{"data": [{"index", "score"}]}`.
    VllmScore,
    /// Jina and Cohere `{"model", "query", "documents", "top_n"}` →
    /// `{"results": [{"index", "relevance_score"}]}` (vLLM and Infinity too).
    CohereRerank,
    /// Infinity `{"model", "input": [...]}` → `{"data": [[{"score", "label"}, ...], ...]}`.
    InfinityClassify,
}

/// What a rerank request asks beyond the scores (`--top-n`, `--return-documents`): results
/// cut to the best N, the documents' texts sent back. Both change what a reply costs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RerankOptions {
    /// `None`: every document's score (`top_n` = D).
    pub top_n: Option<usize>,
    /// `None`: not sent, the server's default (Jina returns the documents, Cohere not).
    pub return_documents: Option<bool>,
}

impl RerankOptions {
    /// `Err((flag, reason))` where the route's API has no such field: the option would be
    /// silently ignored, and the cost it stands for not measured.
    pub fn check(
        self,
        family: PayloadFormat,
        route: Option<Route>,
    ) -> Result<(), (&'static str, String)> {
        let shape = route.map(|r| r.shape);
        let at = match route {
            Some(r) => format!("{} {}", family.name(), r.path),
            None => family.name().to_string(),
        };
        if self.top_n.is_some() && shape != Some(BodyShape::CohereRerank) {
            return Err((
                "--top-n",
                format!(
                    "{at} takes no top_n (the Jina/Cohere rerank shape does: --engine jina, or vllm or infinity with --api rerank)"
                ),
            ));
        }
        if self.return_documents.is_some()
            && !matches!(shape, Some(BodyShape::CohereRerank | BodyShape::TeiRerank))
        {
            return Err((
                "--return-documents",
                format!(
                    "{at} returns no documents (a rerank route does: jina, or vllm, infinity or tei with --api rerank)"
                ),
            ));
        }
        Ok(())
    }
}

/// Where a request of one task goes on a family's server, and in what shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub path: &'static str,
    pub shape: BodyShape,
}

impl Choice for PayloadFormat {
    const ALL: &'static [PayloadFormat] = &[
        PayloadFormat::Hf,
        PayloadFormat::Triton,
        PayloadFormat::Vllm,
        PayloadFormat::Openai,
        PayloadFormat::Tei,
        PayloadFormat::Infinity,
        PayloadFormat::Jina,
    ];

    fn name(self) -> &'static str {
        match self {
            PayloadFormat::Hf => "hf",
            PayloadFormat::Triton => "triton",
            PayloadFormat::Vllm => "vllm",
            PayloadFormat::Openai => "openai",
            PayloadFormat::Tei => "tei",
            PayloadFormat::Infinity => "infinity",
            PayloadFormat::Jina => "jina",
        }
    }

    fn aliases(self) -> &'static [&'static str] {
        match self {
            PayloadFormat::Triton => &["kserve"],
            PayloadFormat::Jina => &["cohere"],
            _ => &[],
        }
    }
}

encbench_core::parse_by_name!(PayloadFormat);

impl PayloadFormat {
    /// The tasks this family has a route of its own for; hf and KServe v2 take every task at
    /// one route (what the model answers is read from the reply).
    pub fn apis(self) -> &'static [Api] {
        match self {
            PayloadFormat::Hf | PayloadFormat::Triton => &[],
            PayloadFormat::Vllm => &[
                Api::Classify,
                Api::Embed,
                Api::Score,
                Api::Rerank,
                Api::Pooling,
            ],
            PayloadFormat::Openai => &[Api::Embed],
            PayloadFormat::Tei | PayloadFormat::Infinity => {
                &[Api::Embed, Api::Classify, Api::Rerank]
            }
            PayloadFormat::Jina => &[Api::Rerank],
        }
    }

    /// The task when neither `--api` nor the server says: vLLM's classify (as before the
    /// families), an embedder otherwise.
    pub fn default_api(self) -> Option<Api> {
        match self {
            PayloadFormat::Hf | PayloadFormat::Triton => None,
            PayloadFormat::Vllm => Some(Api::Classify),
            PayloadFormat::Jina => Some(Api::Rerank),
            PayloadFormat::Openai | PayloadFormat::Tei | PayloadFormat::Infinity => {
                Some(Api::Embed)
            }
        }
    }

    /// The route of `api` on this family's server; `None` where it has none.
    pub fn route(self, api: Api) -> Option<Route> {
        use PayloadFormat as F;
        let (path, shape) = match (self, api) {
            (F::Openai | F::Vllm, Api::Embed) => ("/v1/embeddings", BodyShape::OpenAiEmbeddings),
            (F::Vllm, Api::Classify) => ("/classify", BodyShape::VllmClassify),
            (F::Vllm, Api::Pooling) => ("/pooling", BodyShape::VllmPooling),
            (F::Vllm, Api::Score) => ("/score", BodyShape::VllmScore),
            (F::Vllm | F::Infinity, Api::Rerank) => ("/rerank", BodyShape::CohereRerank),
            (F::Tei, Api::Embed) => ("/embed", BodyShape::TeiEmbed),
            (F::Tei, Api::Classify) => ("/predict", BodyShape::TeiPredict),
            (F::Tei, Api::Rerank) => ("/rerank", BodyShape::TeiRerank),
            (F::Infinity, Api::Embed) => ("/embeddings", BodyShape::OpenAiEmbeddings),
            (F::Infinity, Api::Classify) => ("/classify", BodyShape::InfinityClassify),
            (F::Jina, Api::Rerank) => ("/v1/rerank", BodyShape::CohereRerank),
            _ => return None,
        };
        Some(Route { path, shape })
    }

    /// The route that answers once the model can serve; `None` for a rerank API behind a
    /// gateway, which has none (any answer at all then says the server is up).
    pub fn ready_path(self) -> Option<&'static str> {
        match self {
            PayloadFormat::Hf => Some("/ping"),
            PayloadFormat::Vllm | PayloadFormat::Tei | PayloadFormat::Infinity => Some("/health"),
            PayloadFormat::Openai => Some("/v1/models"),
            // KServe's route names the model: its format says it.
            PayloadFormat::Triton | PayloadFormat::Jina => None,
        }
    }

    /// `api` if this family has a route for it, else a one-line reason naming those it has.
    pub fn check_api(self, api: Api) -> Result<Route, String> {
        self.route(api).ok_or_else(|| {
            let has: Vec<&str> = self.apis().iter().map(|a| a.name()).collect();
            if has.is_empty() {
                format!(
                    "{} takes every task at one route (what the model answers is read from its reply): drop --api",
                    self.name()
                )
            } else {
                format!(
                    "{} has no {} route (it has: {})",
                    self.name(),
                    api.name(),
                    has.join(", ")
                )
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_a_family_lists_has_a_route_and_no_other() {
        for f in PayloadFormat::ALL {
            for api in Api::ALL {
                assert_eq!(
                    f.route(*api).is_some(),
                    f.apis().contains(api),
                    "{f:?} {api:?}"
                );
            }
            if let Some(api) = f.default_api() {
                assert!(f.apis().contains(&api), "{f:?}");
            }
        }
        assert_eq!(
            PayloadFormat::Openai.check_api(Api::Rerank).unwrap_err(),
            "openai has no rerank route (it has: embed)"
        );
        assert!(
            PayloadFormat::Hf
                .check_api(Api::Embed)
                .unwrap_err()
                .contains("drop --api")
        );
        assert_eq!("kserve".parse(), Ok(PayloadFormat::Triton));
        assert_eq!("Cohere".parse(), Ok(PayloadFormat::Jina));
        assert_eq!("embeddings".parse(), Ok(Api::Embed));
    }
}
