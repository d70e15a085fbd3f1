//! The flags that take one of a few names (`--engine`, `--api`, `--format`, …). Each type
//! names its values and reads them in its own crate (`Choice`, `FromStr`); what `--help`,
//! the completions and the man page say of each value is the command line's, here, so that
//! no crate below this one needs clap.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use encbench_core::choice::Choice;
use encbench_core::export::CompareOrder;
use encbench_core::input::Task;
use encbench_core::ramp::RampShape;
use encbench_report::ReportFormat;
use encbench_serve::{ApiFamily, ModelKind, Queue, ServiceDist};
use encbench_wire::payload::{Api, PayloadFormat, Pooling};
use std::str::FromStr;

/// `T`'s values with their `help`, offered as clap offers an enum's (in `--help`, the
/// completions, the error naming the values), the one given read by `T`'s `FromStr`.
fn offered<T>(help: fn(T) -> Option<&'static str>) -> impl TypedValueParser<Value = T>
where
    T: Choice + FromStr<Err = String> + Send + Sync,
{
    let values = T::ALL.iter().map(|&v| {
        PossibleValue::new(v.name())
            .aliases(v.aliases().iter().copied())
            .help(help(v))
    });
    PossibleValuesParser::new(values).try_map(|s| s.parse::<T>())
}

pub(super) fn engine() -> impl TypedValueParser<Value = PayloadFormat> {
    offered(|f| {
        Some(match f {
            PayloadFormat::Hf => {
                "Hugging Face inference toolkit payloads (the SageMaker container contract)"
            }
            PayloadFormat::Triton => {
                "KServe v2 tensors (Triton, KServe's Python server), tokenized on the client"
            }
            PayloadFormat::Vllm => {
                "vLLM's pooling routes: /classify, /v1/embeddings, /score, /rerank, /pooling"
            }
            PayloadFormat::Openai => {
                "OpenAI-compatible /v1/embeddings (gateways, and most servers)"
            }
            PayloadFormat::Tei => {
                "Hugging Face text-embeddings-inference: /embed, /predict, /rerank"
            }
            PayloadFormat::Infinity => "Infinity (infinity-emb): /embeddings, /classify, /rerank",
            PayloadFormat::Jina => "The Jina and Cohere rerank API: /v1/rerank",
        })
    })
}

pub(super) fn api() -> impl TypedValueParser<Value = Api> {
    offered(|a| {
        Some(match a {
            Api::Embed => "A vector per input (an embedder)",
            Api::Classify => "A class per input (a classifier, NLI pairs among them)",
            Api::Rerank => {
                "One query and its documents, a relevance score per document (a reranker)"
            }
            Api::Score => "vLLM's /score: a score per (query, document) pair",
            Api::Pooling => "vLLM's /pooling: whatever the model's pooler gives, read as vectors",
        })
    })
}

pub(super) fn pooling() -> impl TypedValueParser<Value = Pooling> {
    offered(|p| {
        Some(match p {
            Pooling::Mean => {
                "The mean over the input's real tokens (the attention mask): sentence-transformers' default, and all-MiniLM-L6-v2's"
            }
            Pooling::Cls => "The first token's vector ([CLS])",
            Pooling::None => "No pooling: a reply of vectors per token is refused",
        })
    })
}

pub(super) fn task() -> impl TypedValueParser<Value = Task> {
    offered(|t| {
        Some(match t {
            Task::Inputs => "A batch of inputs (texts or pairs), an answer per input",
            Task::Rerank => "One query with D documents (`--docs-per-query`), a score per document",
        })
    })
}

pub(super) fn ramp_shape() -> impl TypedValueParser<Value = RampShape> {
    offered(|_| None)
}

pub(super) fn order() -> impl TypedValueParser<Value = CompareOrder> {
    offered(|_| None)
}

pub(super) fn report_format() -> impl TypedValueParser<Value = ReportFormat> {
    offered(|f| {
        Some(match f {
            ReportFormat::Terminal => "Aligned columns",
            ReportFormat::Markdown => "Pipe tables to paste into a document",
            ReportFormat::Csv => "One row per phase of every export, for spreadsheets",
            ReportFormat::Html => {
                "One self-contained page: charts (inline SVG) over the Markdown tables; the curves of several exports overlaid"
            }
        })
    })
}

pub(super) fn service_dist() -> impl TypedValueParser<Value = ServiceDist> {
    offered(|_| None)
}

pub(super) fn queue() -> impl TypedValueParser<Value = Queue> {
    offered(|q| {
        Some(match q {
            Queue::PerWorker => {
                "Each worker has its own queue, requests dealt out round-robin (multi-model-server's front process): with Poisson arrivals each worker sees Erlang-distributed gaps"
            }
            Queue::Shared => {
                "One queue for all workers, served by whichever comes free first (a Triton instance group, a `TorchServe` job queue): with exponential service an M/M/c queue"
            }
        })
    })
}

pub(super) fn family() -> impl TypedValueParser<Value = ApiFamily> {
    offered(|_| None)
}

pub(super) fn model_kind() -> impl TypedValueParser<Value = ModelKind> {
    offered(|k| {
        Some(match k {
            ModelKind::Embedding => "A vector per input (TEI's `embedding`, Infinity's `embed`)",
            ModelKind::Classifier => "A label per input: the NLI classifier of the shipped samples",
            ModelKind::Reranker => "A score per (query, document): a cross-encoder",
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What clap offers for `parser`: each value's name and aliases, and what each reads as.
    fn offers<T: Choice + PartialEq + std::fmt::Debug>(parser: &impl TypedValueParser<Value = T>) {
        let offered: Vec<PossibleValue> = parser.possible_values().unwrap().collect();
        let names: Vec<&str> = offered.iter().map(PossibleValue::get_name).collect();
        let all: Vec<&str> = T::ALL.iter().map(|v| v.name()).collect();
        assert_eq!(names, all, "every value offered, in order");
        let cmd = clap::Command::new("t");
        for (p, &v) in offered.iter().zip(T::ALL) {
            for n in p.get_name_and_aliases() {
                let read = parser.parse_ref(&cmd, None, std::ffi::OsStr::new(n));
                assert_eq!(read.ok(), Some(v), "{n}");
            }
        }
    }

    #[test]
    fn each_flag_offers_every_value_and_reads_each_name_and_alias_as_it() {
        offers(&engine());
        offers(&api());
        offers(&pooling());
        offers(&task());
        offers(&ramp_shape());
        offers(&order());
        offers(&report_format());
        offers(&service_dist());
        offers(&queue());
        offers(&family());
        offers(&model_kind());
    }
}
