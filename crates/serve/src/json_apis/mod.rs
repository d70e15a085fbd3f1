//! The JSON API families as their servers speak them, emulated from their sources and API
//! documents (docs/api-families.md names each): vLLM's pooling routes and OpenAI's
//! embeddings (`vllm`), text-embeddings-inference (`tei`), Infinity (`infinity`), and the
//! Jina/Cohere rerank shape they share (`rerank`). Each answers with the reference model's
//! known answers, in the family's shapes, with its own error bodies.

pub mod infinity;
pub mod rerank;
pub mod tei;
pub mod vllm;

use super::{Fault, Served, Server};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use encbench_core::input::Input;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// One input as a request carried it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    Text(String),
    Ids(Vec<i64>),
    Pair(String, String),
}

impl Item {
    fn input(&self) -> Option<Input> {
        match self {
            Item::Text(t) => Some(Input::Text(t.clone())),
            Item::Pair(a, b) => Some(Input::pair(a, b)),
            Item::Ids(_) => None,
        }
    }
}

/// Why a request is refused, before the family's dialect words it.
#[derive(Debug)]
pub(crate) struct Refusal {
    pub status: StatusCode,
    pub message: String,
    /// FastAPI's validation detail, for the families that answer 422 with it: JSON written
    /// in FastAPI's key order (type, loc, msg, input), which a `Value` would sort.
    pub detail: Option<String>,
}

pub(crate) fn bad(message: impl Into<String>) -> Refusal {
    Refusal {
        status: StatusCode::BAD_REQUEST,
        message: message.into(),
        detail: None,
    }
}

/// `input` as vLLM, OpenAI and TEI's `/embed` take it: a string, token ids, or a list of
/// either. With `strings_only` (Infinity) token ids get FastAPI's 422, word for word.
pub(crate) fn parse_input(
    v: Option<&Value>,
    key: &str,
    strings_only: bool,
) -> Result<Vec<Item>, Refusal> {
    let v = v.ok_or_else(|| bad(format!("missing \"{key}\"")))?;
    let list: Vec<&Value> = match v {
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_i64) => vec![v],
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    if list.is_empty() {
        return Err(bad(format!("\"{key}\" is empty")));
    }
    list.into_iter()
        .enumerate()
        .map(|(i, x)| match x {
            Value::String(s) => Ok(Item::Text(s.clone())),
            Value::Array(ids) if !strings_only && ids.iter().all(Value::is_i64) => {
                Ok(Item::Ids(ids.iter().filter_map(Value::as_i64).collect()))
            }
            other if strings_only => Err(not_a_string(key, i, other)),
            _ => Err(bad(format!(
                "each of \"{key}\" must be a string or a list of token ids"
            ))),
        })
        .collect()
}

/// FastAPI's (pydantic's) refusal of a value where a string belongs.
fn not_a_string(key: &str, index: usize, input: &Value) -> Refusal {
    let msg = "Input should be a valid string";
    Refusal {
        status: StatusCode::UNPROCESSABLE_ENTITY,
        message: msg.into(),
        detail: Some(format!(
            r#"[{{"type":"string_type","loc":["body",{},{index}],"msg":"{msg}","input":{input}}}]"#,
            json!(key)
        )),
    }
}

/// A list of strings under `key` (documents, texts), possibly Cohere's `{"text": ...}`.
pub(crate) fn strings(v: &Value, key: &str) -> Result<Vec<String>, Refusal> {
    let list = v[key]
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| bad(format!("\"{key}\" must be a non-empty list of strings")))?;
    list.iter()
        .map(|d| {
            d.as_str()
                .or_else(|| d["text"].as_str())
                .map(str::to_owned)
                .ok_or_else(|| bad(format!("each of \"{key}\" must be a string")))
        })
        .collect()
}

pub(crate) fn body(bytes: &[u8]) -> Result<Value, Refusal> {
    serde_json::from_slice(bytes).map_err(|e| bad(format!("body is not JSON: {e}")))
}

/// A request's items served: each one's tokens, one forward pass over them, and where the
/// time went (`tokenize` is what the server spent reading them, inside the service time).
pub(crate) struct Done {
    pub served: Served,
    pub tokenize: Duration,
    pub tokens: usize,
}

/// Serves `items` as one forward pass padded to the longest; `pairs_with` is a rerank
/// request's query, counted with each document.
pub(crate) async fn serve(
    s: &Server,
    arrived: Instant,
    items: Result<Vec<Item>, Refusal>,
    pairs_with: Option<&str>,
) -> Result<(Vec<Item>, Done), Result<Refusal, Fault>> {
    let lens: Vec<usize> = match &items {
        Ok(items) => items
            .iter()
            .map(|i| match (i, pairs_with) {
                (Item::Ids(ids), _) => ids.len(),
                (Item::Text(d), Some(q)) => s.lengths.natural(&Input::pair(q, d)),
                (item, _) => item.input().map_or(0, |i| s.lengths.natural(&i)),
            })
            .collect(),
        Err(_) => vec![],
    };
    let tokenize = arrived.elapsed();
    *s.counters
        .last_vllm
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = json!({ "token_counts": lens });
    let items = items.map_err(Ok)?;
    let work = super::model::Work::tensor(items.len(), lens.iter().copied().max().unwrap_or(0));
    let served = s.execute(arrived, Ok(work), true).await.map_err(Err)?;
    Ok((
        items,
        Done {
            served,
            tokenize,
            tokens: lens.iter().sum(),
        },
    ))
}

/// A request whose inputs are under `"input"` (vLLM, OpenAI, Infinity), read, checked by
/// `valid` and served: its body, its items and where the time went, or the family's refusal.
pub(crate) async fn serve_input(
    s: &Server,
    bytes: &[u8],
    dialect: Dialect,
    strings_only: bool,
    valid: impl FnOnce(&Value) -> Result<(), Refusal>,
) -> Result<(Value, Vec<Item>, Done), Response> {
    let arrived = Instant::now();
    let v = body(bytes).map_err(|r| dialect.refuse(r))?;
    let items = valid(&v).and_then(|()| parse_input(v.get("input"), "input", strings_only));
    let (items, done) = serve(s, arrived, items, None)
        .await
        .map_err(|e| dialect.failed(e))?;
    Ok((v, items, done))
}

/// How a family words its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// vLLM from 0.10.1: `{"error": {"message", "type", "param", "code"}}`.
    Vllm,
    /// OpenAI: `{"error": {"message", "type", "param", "code": null}}`.
    OpenAi,
    /// TEI: `{"error", "error_type"}`, its status per type.
    Tei,
    /// TEI's OpenAI route: `{"message", "code", "type"}`.
    TeiOpenAi,
    /// Infinity: `{"error": {"message", "type": null, "param": null, "code"}}`, and
    /// FastAPI's `{"detail": [...]}` for a body that does not validate.
    Infinity,
    /// Jina and Cohere: `{"message", "id"}`.
    Cohere,
}

impl Dialect {
    pub(crate) fn refuse(self, r: Refusal) -> Response {
        let code = r.status.as_u16();
        let message = r.message;
        if let (Dialect::Infinity, Some(detail)) = (self, &r.detail) {
            let body = format!(r#"{{"detail":{detail}}}"#);
            return (r.status, [("content-type", "application/json")], body).into_response();
        }
        let body = match (self, r.detail) {
            (Dialect::Vllm, _) => json!({ "error": {
                "message": message, "type": vllm_type(code), "param": null, "code": code,
            }}),
            (Dialect::OpenAi, _) => json!({ "error": {
                "message": message,
                "type": if code < 500 { "invalid_request_error" } else { "server_error" },
                "param": null, "code": null,
            }}),
            (Dialect::Tei, _) => json!({ "error": message, "error_type": tei_type(code) }),
            (Dialect::TeiOpenAi, _) => {
                json!({ "message": message, "code": code, "type": tei_type(code) })
            }
            (Dialect::Infinity, _) => json!({ "error": {
                "message": message, "type": null, "param": null, "code": code,
            }}),
            (Dialect::Cohere, _) => json!({ "message": message, "id": "encbench-reference" }),
        };
        (r.status, axum::Json(body)).into_response()
    }

    /// A fault of the simulated model or queue, at the family's status for it.
    pub(crate) fn fault(self, f: Fault) -> Response {
        let tei = matches!(self, Dialect::Tei | Dialect::TeiOpenAi);
        let (status, message) = match f {
            Fault::Invalid(m) => (
                if tei {
                    StatusCode::UNPROCESSABLE_ENTITY
                } else {
                    StatusCode::BAD_REQUEST
                },
                m,
            ),
            Fault::Throttled(m) if self == Dialect::Vllm => (StatusCode::SERVICE_UNAVAILABLE, m),
            Fault::Throttled(_) if tei => {
                (StatusCode::TOO_MANY_REQUESTS, "Model is overloaded".into())
            }
            Fault::Throttled(m) => (StatusCode::TOO_MANY_REQUESTS, m),
            // TEI's backend errors are 424s; the others answer 500.
            Fault::ModelError if tei => (
                StatusCode::FAILED_DEPENDENCY,
                "simulated model error".into(),
            ),
            Fault::ModelError => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "simulated model error".into(),
            ),
            Fault::NotReady => (StatusCode::SERVICE_UNAVAILABLE, "model loading".into()),
        };
        self.refuse(Refusal {
            status,
            message,
            detail: None,
        })
    }

    /// A request refused before it was served, or a fault while serving it.
    pub(crate) fn failed(self, e: Result<Refusal, Fault>) -> Response {
        match e {
            Ok(r) => self.refuse(r),
            Err(f) => self.fault(f),
        }
    }
}

fn vllm_type(code: u16) -> &'static str {
    match code {
        404 => "NotFoundError",
        500..=599 => "InternalServerError",
        _ => "BadRequestError",
    }
}

/// TEI's `error_type` for a status (its `ErrorType` to `StatusCode` map, reversed).
fn tei_type(code: u16) -> &'static str {
    match code {
        503 => "Unhealthy",
        424 => "Backend",
        429 => "Overloaded",
        400 => "Empty",
        _ => "Validation",
    }
}

/// Every class with its score, best first: how TEI's `/predict` and Infinity's `/classify`
/// answer an input.
pub(crate) fn scored_labels(s: &Server, item: &Item) -> Value {
    let class = match item {
        Item::Ids(ids) => s.verdicts.class_of_ids(ids),
        other => s
            .verdicts
            .class_of_text(&other.input().expect("text items")),
    };
    let mut labels: Vec<(f64, &str)> = super::model::LABELS
        .iter()
        .enumerate()
        .map(|(c, l)| (if c == class { 0.9 } else { 0.05 }, *l))
        .collect();
    labels.sort_by(|a, b| b.0.total_cmp(&a.0));
    labels
        .iter()
        .map(|(score, label)| json!({ "score": score, "label": label }))
        .collect()
}

/// FastAPI's answer to a route that does not exist (vLLM's and Infinity's servers).
pub(crate) fn fastapi_not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({ "detail": "Not Found" })),
    )
        .into_response()
}

/// Seconds since the epoch, for `created` fields.
pub(crate) fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_as_each_family_takes_them() {
        let v = json!(["a", [101, 102]]);
        assert_eq!(
            parse_input(Some(&v), "input", false).unwrap(),
            vec![Item::Text("a".into()), Item::Ids(vec![101, 102])]
        );
        let one = json!([101, 7592, 102]);
        assert_eq!(parse_input(Some(&one), "input", false).unwrap().len(), 1);
        let refused = parse_input(Some(&v), "input", true).unwrap_err();
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        let detail = refused.detail.unwrap();
        assert!(
            detail.starts_with(r#"[{"type":"string_type","loc":["body","input",1],"msg":"#),
            "FastAPI's order: {detail}"
        );
        assert!(parse_input(Some(&json!([])), "input", false).is_err());
        assert!(parse_input(None, "input", false).is_err());
        assert_eq!(
            strings(&json!({"documents": ["x", {"text": "y"}]}), "documents").unwrap(),
            vec!["x", "y"]
        );
    }
}
