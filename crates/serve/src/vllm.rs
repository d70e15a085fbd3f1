//! vLLM's pooling API: `/classify` (labels and probabilities) and `/v1/embeddings`. Inputs
//! are strings or token-id lists; the service time follows their token counts.

use super::model::LABELS;
use super::model::Work;
use super::{Fault, Server};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use encbench_core::input::Input;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

enum Item {
    Text(String),
    Ids(Vec<i64>),
}

fn parse(body: &[u8]) -> Result<(String, Vec<Item>), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("body is not JSON: {e}"))?;
    let model = v["model"].as_str().unwrap_or("").to_string();
    let items = match &v["input"] {
        Value::String(s) => vec![Item::Text(s.clone())],
        Value::Array(a) if a.iter().all(Value::is_i64) => {
            vec![Item::Ids(a.iter().filter_map(Value::as_i64).collect())]
        }
        Value::Array(a) => a
            .iter()
            .map(|x| match x {
                Value::String(s) => Ok(Item::Text(s.clone())),
                Value::Array(ids) => Ok(Item::Ids(ids.iter().filter_map(Value::as_i64).collect())),
                _ => Err("each input must be a string or a list of token ids".to_string()),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err("missing \"input\"".into()),
    };
    if items.is_empty() {
        return Err("\"input\" is empty".into());
    }
    Ok((model, items))
}

pub async fn health() -> Response {
    StatusCode::OK.into_response()
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    let message = message.into();
    (
        status,
        axum::Json(json!({ "object": "error", "message": message, "code": status.as_u16() })),
    )
        .into_response()
}

/// Parses, records what arrived, and serves; returns the model name and the items.
async fn serve(s: &Server, body: &[u8]) -> Result<(String, Vec<Item>), Response> {
    let arrived = Instant::now();
    let parsed = parse(body);
    let lens: Vec<usize> = match &parsed {
        Ok((_, items)) => items
            .iter()
            .map(|i| match i {
                Item::Ids(ids) => ids.len(),
                Item::Text(t) => s.lengths.natural(&Input::Text(t.clone())),
            })
            .collect(),
        Err(_) => vec![],
    };
    *s.counters
        .last_vllm
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = json!({ "token_counts": lens });
    let work = parsed
        .as_ref()
        .map(|(_, items)| Work::tensor(items.len(), lens.iter().copied().max().unwrap_or(0)))
        .map_err(Clone::clone);
    match s.execute(arrived, work, true).await {
        Ok(_) => parsed.map_err(|m| error(StatusCode::BAD_REQUEST, m)),
        Err(Fault::Invalid(m)) => Err(error(StatusCode::BAD_REQUEST, m)),
        Err(Fault::Throttled(m)) => Err(error(StatusCode::SERVICE_UNAVAILABLE, m)),
        Err(Fault::ModelError) => Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "simulated model error",
        )),
        Err(Fault::NotReady) => Err(error(StatusCode::SERVICE_UNAVAILABLE, "model loading")),
    }
}

/// Serves the request and answers each input with `one(index, input)`, in a body of the
/// API's shape (`reply(model, data)`).
async fn respond(
    s: &Server,
    body: &[u8],
    one: impl Fn(usize, &Item) -> Value,
    reply: impl FnOnce(String, Vec<Value>) -> Value,
) -> Response {
    match serve(s, body).await {
        Ok((model, items)) => {
            let data = items
                .iter()
                .enumerate()
                .map(|(i, item)| one(i, item))
                .collect();
            axum::Json(reply(model, data)).into_response()
        }
        Err(r) => r,
    }
}

pub async fn classify(State(s): State<Arc<Server>>, body: Bytes) -> Response {
    let one = |i: usize, item: &Item| {
        let class = match item {
            Item::Ids(ids) => s.verdicts.class_of_ids(ids),
            Item::Text(t) => s.verdicts.class_of_text(&Input::Text(t.clone())),
        };
        let probs: Vec<f64> = (0..LABELS.len())
            .map(|c| if c == class { 0.9 } else { 0.05 })
            .collect();
        json!({ "index": i, "label": LABELS[class], "probs": probs, "num_classes": LABELS.len() })
    };
    respond(&s, &body, one, |model, data| {
        json!({ "id": "classify-encbench", "object": "list", "model": model, "data": data })
    })
    .await
}

pub async fn embeddings(State(s): State<Arc<Server>>, body: Bytes) -> Response {
    let one = |i: usize, item: &Item| {
        let v = match item {
            Item::Text(t) => s.embeddings.of_text(t),
            Item::Ids(ids) => s.embeddings.of_ids(ids),
        };
        json!({ "index": i, "object": "embedding", "embedding": v })
    };
    respond(
        &s,
        &body,
        one,
        |model, data| json!({ "object": "list", "model": model, "data": data }),
    )
    .await
}
