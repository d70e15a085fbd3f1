//! Hugging Face text-embeddings-inference, as its router (1.9) answers: `/info`, `/embed`,
//! `/predict`, `/rerank`, its OpenAI route, and `/invocations` bound to the model's type,
//! each success with TEI's timing headers (whole milliseconds), each error as `{"error",
//! "error_type"}` at TEI's status for the type.

use super::{Dialect, Done, Item, Refusal, body, parse_input, serve, strings};
use crate::Server;
use crate::families::{ModelKind, Playing};
use crate::model::LABELS;
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// The timing headers sent, for tests to compare with what the client read: a bounded
/// record, as the counters are.
#[derive(Default)]
pub(crate) struct SentTimes(std::sync::Mutex<Vec<[u64; 3]>>);

/// Enough for any test's phase; a soak stops recording past it.
const SENT_KEPT: usize = 100_000;

impl SentTimes {
    fn record(&self, queue: u64, inference: u64, tokenization: u64) {
        let mut v = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if v.len() < SENT_KEPT {
            v.push([queue, inference, tokenization]);
        }
    }

    pub(crate) fn json(&self) -> Value {
        let v = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let column = |i: usize| v.iter().map(|t| t[i]).collect::<Vec<_>>();
        json!({ "queue_ms": column(0), "inference_ms": column(1), "tokenization_ms": column(2) })
    }
}

/// TEI's default `--max-client-batch-size`.
pub const MAX_CLIENT_BATCH: usize = 32;

/// The headers TEI sends with every success; what was sent is kept for the tests.
pub(crate) fn timing_headers(s: &Server, done: &Done, characters: usize) -> HeaderMap {
    let ms = |d: std::time::Duration| d.as_millis() as u64;
    let (queue, inference, tokenization) = (
        ms(done.served.queue),
        ms(done.served.compute),
        ms(done.tokenize),
    );
    s.counters.tei_sent.record(queue, inference, tokenization);
    let total = queue + inference + tokenization;
    let mut h = HeaderMap::new();
    for (name, value) in [
        ("x-compute-type", "gpu+optimized".to_string()),
        ("x-compute-time", total.to_string()),
        ("x-total-time", total.to_string()),
        ("x-compute-characters", characters.to_string()),
        ("x-compute-tokens", done.tokens.to_string()),
        ("x-tokenization-time", tokenization.to_string()),
        ("x-queue-time", queue.to_string()),
        ("x-inference-time", inference.to_string()),
    ] {
        h.insert(
            name,
            HeaderValue::from_str(&value).expect("digits and letters"),
        );
    }
    h
}

pub(crate) fn characters(items: &[Item]) -> usize {
    items
        .iter()
        .map(|i| match i {
            Item::Text(t) => t.chars().count(),
            Item::Pair(a, b) => a.chars().count() + b.chars().count(),
            Item::Ids(ids) => ids.len(),
        })
        .sum()
}

/// TEI's refusal of a route its model type does not serve (a 424 Backend error).
fn wrong_kind(p: Playing, serves: &[ModelKind], message: &str) -> Option<Response> {
    let kind = p.only.map(|f| p.kind_of(f))?;
    (!serves.contains(&kind)).then(|| {
        Dialect::Tei.refuse(Refusal {
            status: StatusCode::FAILED_DEPENDENCY,
            message: message.into(),
            detail: None,
        })
    })
}

fn over_batch(n: usize) -> Option<Response> {
    (n > MAX_CLIENT_BATCH).then(|| {
        Dialect::Tei.refuse(Refusal {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            message: format!("batch size {n} > maximum allowed batch size {MAX_CLIENT_BATCH}"),
            detail: None,
        })
    })
}

pub fn info(s: &Server, p: Playing) -> Response {
    let kind = p.kind_of(crate::families::ApiFamily::Tei);
    let model_type = match kind {
        ModelKind::Embedding => json!({ "embedding": { "pooling": "mean" } }),
        ModelKind::Classifier => {
            let id2label: serde_json::Map<String, Value> = LABELS
                .iter()
                .enumerate()
                .map(|(i, l)| (i.to_string(), json!(l)))
                .collect();
            json!({ "classifier": { "id2label": id2label } })
        }
        ModelKind::Reranker => json!({ "reranker": { "id2label": { "0": "LABEL_0" } } }),
    };
    axum::Json(json!({
        "model_id": s.cfg.served_model, "model_sha": null, "model_dtype": "float32",
        "served_model_name": s.cfg.served_model, "model_type": model_type,
        "max_concurrent_requests": 512, "max_input_length": 512, "max_batch_tokens": 16384,
        "max_batch_requests": null, "max_client_batch_size": MAX_CLIENT_BATCH,
        "auto_truncate": true, "tokenization_workers": 1, "version": "1.9.3",
        "sha": null, "docker_label": "encbench reference endpoint (simulated)",
    }))
    .into_response()
}

/// `/embed`: `[[f32]]`, a vector per input.
pub async fn embed(s: Arc<Server>, bytes: Bytes, p: Playing) -> Response {
    if let Some(r) = wrong_kind(
        p,
        &[ModelKind::Embedding],
        "Model is not an embedding model",
    ) {
        return r;
    }
    let arrived = Instant::now();
    let v = match body(&bytes) {
        Ok(v) => v,
        Err(r) => return Dialect::Tei.refuse(r),
    };
    if v.get("inputs").is_none() {
        return axum_422("missing field `inputs`");
    }
    let items = parse_input(v.get("inputs"), "inputs", false);
    if let Some(r) = items.as_ref().ok().and_then(|i| over_batch(i.len())) {
        return r;
    }
    let (items, done) = match serve(&s, arrived, items, None).await {
        Ok(done) => done,
        Err(e) => return Dialect::Tei.failed(e),
    };
    let vectors: Vec<Vec<f32>> = items
        .iter()
        .map(|i| match i {
            Item::Ids(ids) => s.embeddings.of_ids(ids),
            Item::Text(t) => s.embeddings.of_text(t),
            Item::Pair(a, b) => s.embeddings.of_text(&format!("{a} {b}")),
        })
        .collect();
    (
        timing_headers(&s, &done, characters(&items)),
        axum::Json(vectors),
    )
        .into_response()
}

/// axum's refusal of a body that does not deserialize into the route's request: TEI's
/// handler never sees it.
fn axum_422(why: &str) -> Response {
    let text = format!("Failed to deserialize the JSON body into the target type: {why}");
    (StatusCode::UNPROCESSABLE_ENTITY, text).into_response()
}

/// `/predict`'s `inputs`: one text, one pair `[a, b]`, or a batch of `[a]` and `[a, b]`.
/// A list of three strings is neither, and never reaches TEI's handler: axum refuses it,
/// in plain text (the `Err` here).
fn predict_inputs(v: &Value) -> Result<(Vec<Item>, bool), String> {
    let axum_422 = |why: &str| {
        format!("Failed to deserialize the JSON body into the target type: inputs: {why}")
    };
    let one = |x: &Value| -> Result<Item, String> {
        match x {
            Value::String(t) => Ok(Item::Text(t.clone())),
            Value::Array(a) => match a.as_slice() {
                [Value::String(t)] => Ok(Item::Text(t.clone())),
                [Value::String(a), Value::String(b)] => Ok(Item::Pair(a.clone(), b.clone())),
                _ => Err(axum_422(&format!(
                    "invalid length {}, expected 1 or 2",
                    a.len()
                ))),
            },
            _ => Err(axum_422("expected a string or a list of strings")),
        }
    };
    match &v["inputs"] {
        Value::Array(a) if a.first().is_some_and(Value::is_array) => {
            let items = a.iter().map(one).collect::<Result<Vec<_>, _>>()?;
            Ok((items, true))
        }
        single => Ok((vec![one(single)?], false)),
    }
}

/// `/predict`: every label with its score, best first; a list of those per input of a batch.
pub async fn predict(s: Arc<Server>, bytes: Bytes, p: Playing) -> Response {
    let serves = [ModelKind::Classifier, ModelKind::Reranker];
    if let Some(r) = wrong_kind(p, &serves, "Model is not a classifier model") {
        return r;
    }
    let arrived = Instant::now();
    let v = match body(&bytes) {
        Ok(v) => v,
        Err(r) => return Dialect::Tei.refuse(r),
    };
    let (items, batch) = match predict_inputs(&v) {
        Ok(x) => x,
        Err(text) => return (StatusCode::UNPROCESSABLE_ENTITY, text).into_response(),
    };
    if let Some(r) = over_batch(items.len()) {
        return r;
    }
    let (items, done) = match serve(&s, arrived, Ok(items), None).await {
        Ok(done) => done,
        Err(e) => return Dialect::Tei.failed(e),
    };
    let reranker = p.only.is_some_and(|f| p.kind_of(f) == ModelKind::Reranker);
    let scored: Vec<Value> = items
        .iter()
        .map(|item| {
            if reranker {
                let score = match item {
                    Item::Pair(q, d) => s.relevance(q, d),
                    _ => 0.5,
                };
                return json!([{ "score": score, "label": "LABEL_0" }]);
            }
            super::scored_labels(&s, item)
        })
        .collect();
    let reply = if batch {
        json!(scored)
    } else {
        scored[0].clone()
    };
    (
        timing_headers(&s, &done, characters(&items)),
        axum::Json(reply),
    )
        .into_response()
}

/// `/rerank`: `[{"index", "score"}]`, every text, best first.
pub async fn rerank(s: Arc<Server>, bytes: Bytes, p: Playing) -> Response {
    if let Some(r) = wrong_kind(p, &[ModelKind::Reranker], "model is not a re-ranker model") {
        return r;
    }
    let arrived = Instant::now();
    let v = match body(&bytes) {
        Ok(v) => v,
        Err(r) => return Dialect::Tei.refuse(r),
    };
    for field in ["query", "texts"] {
        if v.get(field).is_none() {
            return axum_422(&format!("missing field `{field}`"));
        }
    }
    let query = v["query"].as_str().unwrap_or_default().to_string();
    let texts = strings(&v, "texts");
    let items = texts
        .as_ref()
        .map(|t| t.iter().cloned().map(Item::Text).collect::<Vec<_>>())
        .map_err(|r| super::bad(r.message.clone()));
    if let Some(r) = items.as_ref().ok().and_then(|i| over_batch(i.len())) {
        return r;
    }
    let (items, done) = match serve(&s, arrived, items, Some(&query)).await {
        Ok(done) => done,
        Err(e) => return Dialect::Tei.failed(e),
    };
    let texts = texts.unwrap_or_default();
    let with_text = v["return_text"].as_bool().unwrap_or(false);
    let ranks: Vec<Value> = super::rerank::ranked(&s, &query, &texts, None)
        .into_iter()
        .map(|(i, score)| {
            if with_text {
                json!({ "index": i, "text": texts[i], "score": score })
            } else {
                json!({ "index": i, "score": score })
            }
        })
        .collect();
    let chars = characters(&items) + query.chars().count() * items.len();
    (timing_headers(&s, &done, chars), axum::Json(ranks)).into_response()
}

/// TEI's OpenAI route: the embeddings of any model type it embeds, TEI's headers on them.
pub async fn openai(s: Arc<Server>, bytes: Bytes, p: Playing) -> Response {
    if let Some(r) = wrong_kind(
        p,
        &[ModelKind::Embedding],
        "Model is not an embedding model",
    ) {
        return r;
    }
    super::vllm::embeddings(s, bytes, Dialect::TeiOpenAi).await
}

/// `/invocations` (and `POST /`), bound at start to the route of the model's type.
pub async fn invocations(s: Arc<Server>, bytes: Bytes, p: Playing) -> Response {
    match p.kind_of(crate::families::ApiFamily::Tei) {
        ModelKind::Embedding => embed(s, bytes, p).await,
        ModelKind::Classifier => predict(s, bytes, p).await,
        ModelKind::Reranker => rerank(s, bytes, p).await,
    }
}
