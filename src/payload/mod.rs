//! Inputs, the wire formats they are sent in, and the verdicts read back.
//!
//! A `Format` is the payload side of an engine (hf, triton, vllm); where the request goes is
//! the target's business. Formats that tokenize on the client prepare each request when it is
//! sent, so tokenization time is part of the latency and is reported on its own.

pub mod kserve;
pub mod vllm;

use crate::target::Reply;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// One model input: an NLI pair or a single text (embedders, classifiers).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(untagged)]
pub enum Input {
    Pair { premise: String, hypothesis: String },
    HfPair { text: String, text_pair: String },
    Text(String),
}

impl Input {
    pub fn pair(premise: &str, hypothesis: &str) -> Input {
        Input::Pair {
            premise: premise.into(),
            hypothesis: hypothesis.into(),
        }
    }

    /// (first, optional second) sequence, whatever the input was written as.
    pub fn parts(&self) -> (&str, Option<&str>) {
        match self {
            Input::Pair {
                premise,
                hypothesis,
            } => (premise, Some(hypothesis)),
            Input::HfPair { text, text_pair } => (text, Some(text_pair)),
            Input::Text(t) => (t, None),
        }
    }

    /// The Hugging Face pipeline's form: pairs as `{"text", "text_pair"}`.
    pub fn to_hf(&self) -> Value {
        match self.parts() {
            (a, Some(b)) => json!({ "text": a, "text_pair": b }),
            (a, None) => Value::String(a.to_string()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TextsError {
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("{path} line {line}: expected a JSON string or an object with premise/hypothesis")]
    BadLine { path: String, line: usize },
    #[error("{path}: no inputs")]
    Empty { path: String },
}

/// JSONL of pairs or strings; a line that is not JSON at all is taken as a plain text.
pub fn parse_texts(source: &str, path: &str) -> Result<Vec<Input>, TextsError> {
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => {
                out.push(
                    serde_json::from_value::<Input>(v).map_err(|_| TextsError::BadLine {
                        path: path.into(),
                        line: i + 1,
                    })?,
                )
            }
            Err(_) => out.push(Input::Text(line.to_string())),
        }
    }
    if out.is_empty() {
        return Err(TextsError::Empty { path: path.into() });
    }
    Ok(out)
}

pub fn load_texts(path: &Path) -> Result<Vec<Input>, TextsError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| TextsError::Unreadable {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    parse_texts(&text, &shown)
}

/// How the endpoint is asked to shape the inputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub pad_to_max: bool,
    pub max_len: usize,
}

/// `{"inputs": [...], "parameters": {"batch_size": N}}`. `batch_size` is always sent:
/// without it the HF pipeline runs the list one input at a time (510 ms instead of 25 ms
/// for 32 inputs in the seed's measurements).
pub fn hf_body(inputs: &[&Input], shape: Shape) -> Bytes {
    let mut parameters = json!({ "batch_size": inputs.len() });
    if shape.pad_to_max {
        parameters["padding"] = json!("max_length");
        parameters["truncation"] = json!(true);
        parameters["max_length"] = json!(shape.max_len);
    }
    let body = json!({
        "inputs": inputs.iter().map(|i| i.to_hf()).collect::<Vec<_>>(),
        "parameters": parameters,
    });
    Bytes::from(serde_json::to_vec(&body).expect("JSON values serialize"))
}

/// Most distinct bodies kept per phase: enough to vary inputs, bounded for huge text files.
const MAX_BODIES: usize = 256;

/// How a request body is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    Json,
    /// KServe v2 binary tensor extension: a JSON header of this many bytes, then raw tensors.
    Binary {
        json_len: usize,
    },
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
}

impl Prepared {
    pub fn json(body: Bytes) -> Prepared {
        Prepared {
            body,
            kind: BodyKind::Json,
            tokenize: None,
            timeout: None,
        }
    }
}

/// The payload side of an engine.
pub trait Format: Send + Sync {
    fn name(&self) -> &'static str;
    /// Path of the invocation on a local server.
    fn path(&self) -> String;
    /// Path that answers 200 once the model can serve.
    fn ready_path(&self) -> String;
    /// Path of server-side statistics (KServe v2), if the format has them.
    fn stats_path(&self) -> Option<String> {
        None
    }
    /// Whether `prepare` tokenizes (and must run per request, timed).
    fn tokenizes(&self) -> bool;
    fn prepare(&self, inputs: &[&Input]) -> Prepared;
    /// The class each input was given, as the endpoint names it (`LABEL_n` for indices).
    fn verdicts(&self, reply: &Reply) -> Result<Vec<String>, String>;
    /// Whether a 2xx reply is a response at all. Run on every load request, so it only
    /// checks that the body is complete JSON (a proxy's HTML page, a half-written body, a
    /// crashed worker's text are not) without building a tree; `verdicts` reads the content.
    fn check(&self, reply: &Reply) -> Result<(), String> {
        check_json(&reply.body)
    }
}

/// Parses without allocating a document: the whole body must be one JSON value.
pub fn check_json(body: &[u8]) -> Result<(), String> {
    serde_json::from_slice::<serde::de::IgnoredAny>(body)
        .map(|_| ())
        .map_err(|e| format!("response is not JSON: {e}"))
}

/// Hugging Face inference toolkit payloads; the server tokenizes.
pub struct HfFormat {
    pub shape: Shape,
}

impl Format for HfFormat {
    fn name(&self) -> &'static str {
        "hf"
    }

    fn path(&self) -> String {
        "/invocations".into()
    }

    fn ready_path(&self) -> String {
        "/ping".into()
    }

    fn tokenizes(&self) -> bool {
        false
    }

    fn prepare(&self, inputs: &[&Input]) -> Prepared {
        Prepared::json(hf_body(inputs, self.shape))
    }

    fn verdicts(&self, reply: &Reply) -> Result<Vec<String>, String> {
        crate::accuracy::hf_labels(&reply.body)
    }
}

/// The inputs of request `k` of a phase: the batch after request k-1's, cycling through the texts.
pub fn batch_inputs(texts: &[Input], batch_size: usize, k: usize) -> Vec<&Input> {
    (0..batch_size)
        .map(|j| &texts[(k * batch_size + j) % texts.len()])
        .collect()
}

/// Requests prepared once per phase, for formats that do not tokenize: the dispatch loop
/// then only clones reference-counted bytes.
pub fn prepared_ring(format: &dyn Format, texts: &[Input], batch_size: usize) -> Vec<Prepared> {
    (0..texts.len().clamp(1, MAX_BODIES))
        .map(|k| format.prepare(&batch_inputs(texts, batch_size, k)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hf_pairs_and_pad_to_max() {
        let a = Input::pair("p", "h");
        let body: Value = serde_json::from_slice(&hf_body(
            &[&a, &a],
            Shape {
                pad_to_max: true,
                max_len: 512,
            },
        ))
        .unwrap();
        assert_eq!(body["inputs"][0], json!({"text": "p", "text_pair": "h"}));
        assert_eq!(
            body["parameters"],
            json!({"batch_size": 2, "padding": "max_length", "truncation": true, "max_length": 512})
        );
        let plain: Value = serde_json::from_slice(&hf_body(
            &[&Input::Text("x".into())],
            Shape {
                pad_to_max: false,
                max_len: 512,
            },
        ))
        .unwrap();
        assert_eq!(
            plain,
            json!({"inputs": ["x"], "parameters": {"batch_size": 1}})
        );
    }

    #[test]
    fn texts_file_accepts_pairs_strings_and_plain_lines() {
        let src = "{\"premise\":\"a\",\"hypothesis\":\"b\",\"expected\":\"neutral\"}\n\"quoted\"\nplain words\n\n{\"text\":\"t\",\"text_pair\":\"u\"}\n";
        let t = parse_texts(src, "f").unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(t[0].parts(), ("a", Some("b")));
        assert_eq!(t[1], Input::Text("quoted".into()));
        assert_eq!(t[2], Input::Text("plain words".into()));
        assert_eq!(t[3].parts(), ("t", Some("u")));
        assert!(matches!(
            parse_texts("{\"x\":1}", "f"),
            Err(TextsError::BadLine { line: 1, .. })
        ));
        assert!(matches!(
            parse_texts("\n", "f"),
            Err(TextsError::Empty { .. })
        ));
    }

    #[test]
    fn bodies_cycle_through_texts() {
        let texts: Vec<Input> = (0..3).map(|i| Input::Text(i.to_string())).collect();
        let format = HfFormat {
            shape: Shape {
                pad_to_max: false,
                max_len: 512,
            },
        };
        let bodies = prepared_ring(&format, &texts, 2);
        assert_eq!(bodies.len(), 3);
        let b1: Value = serde_json::from_slice(&bodies[1].body).unwrap();
        assert_eq!(b1["inputs"], json!(["2", "0"]));
    }
}
