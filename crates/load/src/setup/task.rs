//! What a request is made of: a batch of inputs, or one query with D documents. A rerank
//! route ranks by itself; `--task rerank` on a route that classifies reads a cross-encoder's
//! score per pair as the ranking; the load's queries and documents come from `--texts`, or
//! from the rerank samples.

use super::family::Resolved;
use super::{SetupError, TargetSettings, usage};
use encbench_core::input::{Input, Rankings, RerankSample, Task};
use encbench_wire::payload::ranked::Ranked;
use encbench_wire::payload::{Api, Format, PayloadFormat};
use std::sync::Arc;

/// Documents per request of a rerank task when neither `--docs-per-query` nor
/// `--batch-size` says.
pub const DOCS_PER_QUERY: usize = 8;

/// The task, and the format that serves it: `--task`, else a rerank route's; a classifier
/// route made to rank for `--task rerank`.
/// `kind`: what the server said its model is (`embedder`, `reranker`, `classifier`), where
/// its metadata says.
pub(super) fn resolve_task(
    s: &TargetSettings,
    r: &Resolved,
    format: Arc<dyn Format>,
    kind: Option<&str>,
) -> Result<(Task, Arc<dyn Format>), SetupError> {
    let route = || format!("{} {}", format.name(), format.path());
    match (s.task, format.ranks()) {
        (None | Some(Task::Rerank), true) => Ok((Task::Rerank, format)),
        (Some(Task::Inputs), true) => Err(usage(
            "--task",
            format!(
                "inputs: {} ranks a query's documents: drop --task, or name another --api",
                route()
            ),
        )),
        (None | Some(Task::Inputs), false) => Ok((Task::Inputs, format)),
        (Some(Task::Rerank), false) => {
            // A cross-encoder served as a classifier gives one score per pair.
            let scores = matches!(r.family, PayloadFormat::Hf | PayloadFormat::Triton)
                || r.api == Some(Api::Classify);
            if scores {
                Ok((Task::Rerank, Arc::new(Ranked(format))))
            } else if kind == Some("embedder") {
                // Its metadata said what the model is: "use the rerank route" would send
                // a reranker's requests to an embedder.
                Err(usage(
                    "--task",
                    format!(
                        "rerank: {} answers vectors, not a score per document, and the server says its model is an embedder: give --url a reranker's server, or drop --task rerank (--api rerank only if this model also ranks)",
                        route()
                    ),
                ))
            } else {
                Err(usage(
                    "--task",
                    format!(
                        "rerank: {} answers vectors, not a score per document: name the family's rerank route (--api rerank)",
                        route()
                    ),
                ))
            }
        }
    }
}

/// The documents per request: the batch size given, else `DOCS_PER_QUERY` for a reranker.
pub(super) fn batch_size(s: &TargetSettings, task: Task) -> usize {
    match task {
        Task::Rerank if !s.batch_size_given => DOCS_PER_QUERY,
        _ => s.batch_size,
    }
}

/// A reranker's load: from `--texts` when given, else the rerank samples' queries and
/// documents, in the order the seed shuffles.
pub(super) fn rankings(
    s: &TargetSettings,
    texts: &[Input],
    samples: &[RerankSample],
    seed: u64,
) -> Rankings {
    match (&s.texts, samples.is_empty()) {
        (None, false) => Rankings::from_samples(samples, seed),
        _ => Rankings::from_texts(texts, seed),
    }
}
