//! The wire formats inputs are sent in, and the verdicts read back.
//!
//! A `Format` is one payload format (what `--engine` and `--api` select: an API family and
//! a route of it); where the request goes is the target's business. Formats that tokenize on
//! the client prepare each request when it is sent, so tokenization time is part of the
//! latency and is reported on its own.

pub mod api;
pub mod hf;
pub mod items;
pub mod json_api;
pub mod kserve;
pub mod kserve_grpc;
mod kserve_names;
pub mod labels;
pub mod pretokenized;
pub mod ranked;
mod replies;
pub mod vectors;

pub use api::{Api, PayloadFormat, RerankOptions};
pub use hf::HfFormat;
pub use items::Form;
pub use labels::LabelMap;
pub use vectors::{Answers, Pooling};

use bytes::Bytes;
use encbench_core::input::{Input, batch_inputs};
use encbench_core::server_metrics::headers::ServerTime;
use std::time::Duration;

/// Most distinct bodies kept per phase: enough to vary inputs, bounded for huge text files.
pub const MAX_BODIES: usize = 256;

/// Most bytes of bodies kept per phase: huge batches vary less instead of holding 256 large
/// bodies (256 of SageMaker's 6 MiB would be 1.5 GiB).
const MAX_RING_BYTES: usize = 64 * 1024 * 1024;

/// How a request body is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    Json,
    /// KServe v2 binary tensor extension: a JSON header of this many bytes, then raw tensors.
    Binary {
        json_len: usize,
    },
    /// One framed gRPC message (a KServe v2 `ModelInferRequest`), for a gRPC target; its
    /// reply body is the answer's message, unframed.
    Grpc,
    /// A body sent as it was recorded (a replayed Data Capture record), under the content
    /// type it was recorded with (see `content_type`).
    Raw {
        content_type: &'static str,
    },
}

/// `s` as a `&'static str` for `BodyKind::Raw`, the same one for every equal `s`: a capture
/// holds a handful of content types, each kept once for the process's life, and the kind
/// stays `Copy` for every other request's sake.
pub fn content_type(s: &str) -> &'static str {
    static KNOWN: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut known = KNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(k) = known.iter().find(|k| **k == s) {
        return k;
    }
    let k: &'static str = Box::leak(s.to_owned().into_boxed_str());
    known.push(k);
    k
}

/// A request ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub body: Bytes,
    pub kind: BodyKind,
    /// Client-side tokenization time, for formats that tokenize.
    pub tokenize: Option<Duration>,
    /// A timeout for this request instead of the target's (warmup of a new shape).
    pub timeout: Option<Duration>,
    /// Tokens of the inputs (padding left out), for formats that tokenize.
    pub tokens: Option<u64>,
}

impl Prepared {
    pub fn json(body: Bytes) -> Prepared {
        Prepared {
            body,
            kind: BodyKind::Json,
            tokenize: None,
            timeout: None,
            tokens: None,
        }
    }

    /// A recorded body, sent byte for byte under its recorded content type.
    pub fn raw(body: &[u8], content_type: &str) -> Prepared {
        Prepared {
            body: Bytes::copy_from_slice(body),
            kind: BodyKind::Raw {
                content_type: self::content_type(content_type),
            },
            tokenize: None,
            timeout: None,
            tokens: None,
        }
    }
}

/// A successful response, read to its last byte.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub body: Bytes,
    /// SageMaker's invoked production variant, where the target reports one.
    pub variant: Option<String>,
    /// Length of the JSON header of a KServe v2 binary reply.
    pub json_len: Option<usize>,
    /// The server's time on the request, where its headers say (TEI's `x-queue-time`, ...).
    pub server_time: Option<ServerTime>,
}

impl Reply {
    /// A JSON body, or a binary one with a JSON header of `json_len` bytes.
    pub fn new(body: impl Into<Bytes>, json_len: Option<usize>) -> Reply {
        Reply {
            body: body.into(),
            variant: None,
            json_len,
            server_time: None,
        }
    }
}

/// One payload format.
pub trait Format: Send + Sync {
    fn name(&self) -> &'static str;
    /// Path of the invocation on a local server.
    fn path(&self) -> String;
    /// Path that answers 200 once the model can serve; `None` where the API has none (any
    /// answer at all then says the server is up).
    fn ready_path(&self) -> Option<String>;
    /// Path of server-side statistics (KServe v2), if the format has them.
    fn stats_path(&self) -> Option<String> {
        None
    }
    /// Whether `prepare` tokenizes (and must run per request, timed).
    fn tokenizes(&self) -> bool;
    fn prepare(&self, inputs: &[&Input]) -> Prepared;
    /// A request for every input's answer, where the load's requests ask fewer (a
    /// reranker's `top_n`): what the accuracy check sends.
    fn prepare_whole(&self, inputs: &[&Input]) -> Prepared {
        self.prepare(inputs)
    }
    /// The class each input was given, as the endpoint names it (`LABEL_n` for indices).
    fn verdicts(&self, reply: &Reply) -> Result<Vec<String>, String>;
    /// What the reply says about each of `inputs`: class names, rows of scores, or vectors
    /// (an embedding model). The accuracy check reads replies through this; the load path
    /// only through `check`.
    fn answers(&self, reply: &Reply, inputs: &[&Input]) -> Result<Answers, String> {
        let _ = inputs;
        self.verdicts(reply).map(Answers::Labels)
    }
    /// Whether a 2xx reply answers `inputs` inputs: a proxy's HTML page, a half-written body,
    /// a crashed worker's text, an empty verdict list (`{"data": []}`, logits of shape
    /// [0, 3]) or rows without scores are not. Run on every load request; a classification
    /// reply is a few dozen bytes per input, so reading its verdicts costs microseconds.
    fn check(&self, reply: &Reply, inputs: usize) -> Result<(), String> {
        check_verdict_count(self.verdicts(reply)?.len(), inputs)
    }
    /// Whether a request is one query with its documents (a batch of pairs that share their
    /// first part), answered by a score per document.
    fn ranks(&self) -> bool {
        false
    }
    /// A score per input, for a classifier that is a cross-encoder (one logit or one label
    /// per pair): what `Ranked` ranks by. `Err` where the reply holds none.
    fn scores(&self, reply: &Reply, inputs: usize) -> Result<Vec<f32>, String> {
        let _ = (reply, inputs);
        Err(format!(
            "{} {} answers no score per input",
            self.name(),
            self.path()
        ))
    }
    /// What the format learned from the server's replies that no one declared, in words
    /// (the KServe output read from the first reply), once it has.
    fn learned(&self) -> Option<String> {
        None
    }
    /// Whether a pair is sent as one text (its two parts joined by a space): the route has
    /// no pair form, so a model trained on pairs reads it otherwise.
    fn joins_pairs(&self) -> bool {
        false
    }
    /// How inputs are sent, for formats whose API takes more than one form.
    fn form(&self) -> Option<Form> {
        None
    }
    /// Sends in the API's other form from now on (strings for token ids, or the reverse),
    /// and says which; `None` where the API documents only one.
    fn switch_form(&self) -> Option<Form> {
        None
    }
}

/// Fewer verdicts than inputs is no answer (more is tolerated: a server may pad a batch).
pub fn check_verdict_count(got: usize, inputs: usize) -> Result<(), String> {
    if got >= inputs {
        Ok(())
    } else {
        let count = encbench_core::text::count::<usize>;
        Err(format!(
            "{} for {}",
            count(got, "verdict"),
            count(inputs, "input")
        ))
    }
}

/// Parses without allocating a document: the whole body must be one JSON value.
pub fn check_json(body: &[u8]) -> Result<(), String> {
    serde_json::from_slice::<serde::de::IgnoredAny>(body)
        .map(|_| ())
        .map_err(|e| format!("response is not JSON: {e}"))
}

/// Requests prepared once per phase, for formats that do not tokenize: the dispatch loop
/// then only clones reference-counted bytes.
pub fn prepared_ring(format: &dyn Format, texts: &[Input], batch_size: usize) -> Vec<Prepared> {
    let mut ring = Vec::new();
    let mut bytes = 0;
    // Request k starts at text k·b mod n: after n / gcd(n, b) requests the bodies repeat, so
    // no more are built (a reranker's few requests of many documents each are that many).
    let n = texts.len().max(1);
    let period = n / gcd(n, batch_size.max(1));
    for k in 0..period.clamp(1, MAX_BODIES) {
        if bytes >= MAX_RING_BYTES {
            break;
        }
        let p = format.prepare(&batch_inputs(texts, batch_size, k));
        bytes += p.body.len();
        ring.push(p);
    }
    ring
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encbench_core::input::Shape;

    #[test]
    fn bodies_cycle_through_texts() {
        let texts: Vec<Input> = (0..3).map(|i| Input::Text(i.to_string())).collect();
        let format = HfFormat::new(Shape {
            pad_to_max: false,
            max_len: 512,
        });
        let bodies = prepared_ring(&format, &texts, 2);
        assert_eq!(bodies.len(), 3);
        let b1: serde_json::Value = serde_json::from_slice(&bodies[1].body).unwrap();
        assert_eq!(b1["inputs"], serde_json::json!(["2", "0"]));
    }
}
