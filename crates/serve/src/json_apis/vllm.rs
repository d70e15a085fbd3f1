//! vLLM's pooling routes (`/classify`, `/v1/embeddings`, `/pooling`, `/score`, the model
//! list and `/version`), and the OpenAI embeddings shape they share with OpenAI-compatible
//! servers, TEI and Infinity. Shapes as vLLM 0.33 answers them.

use super::{Dialect, Item, Refusal, bad, body, now_s, serve, serve_input};
use crate::Server;
use crate::families::ModelKind;
use crate::model::LABELS;
use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// The model name replies carry: the one asked for, or the served one.
fn model_of(s: &Server, v: &Value) -> String {
    v["model"]
        .as_str()
        .map_or_else(|| s.cfg.served_model.clone(), str::to_owned)
}

/// `/classify`: a label and probabilities per input; a reranker's single class is its score.
pub async fn classify(s: Arc<Server>, bytes: Bytes, kind: ModelKind) -> Response {
    let (v, items, _) = match serve_input(&s, &bytes, Dialect::Vllm, false, |_| Ok(())).await {
        Ok(served) => served,
        Err(refused) => return refused,
    };
    let data: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            if kind == ModelKind::Reranker {
                return json!({ "index": i, "label": "LABEL_0", "probs": [0.5], "num_classes": 1 });
            }
            let class = match item {
                Item::Ids(ids) => s.verdicts.class_of_ids(ids),
                other => s.verdicts.class_of_text(&other.input().expect("text items")),
            };
            let probs: Vec<f64> = (0..LABELS.len())
                .map(|c| if c == class { 0.9 } else { 0.05 })
                .collect();
            json!({ "index": i, "label": LABELS[class], "probs": probs, "num_classes": LABELS.len() })
        })
        .collect();
    axum::Json(json!({
        "id": "classify-encbench", "object": "list", "created": now_s(),
        "model": model_of(&s, &v), "data": data,
    }))
    .into_response()
}

fn vector(s: &Server, item: &Item) -> Vec<f32> {
    match item {
        Item::Ids(ids) => s.embeddings.of_ids(ids),
        Item::Text(t) => s.embeddings.of_text(t),
        Item::Pair(a, b) => s.embeddings.of_text(&format!("{a} {b}")),
    }
}

/// The OpenAI embeddings route, in the dialect of the family serving it (Infinity takes
/// strings only). `encoding_format` `base64` is little-endian f32, as OpenAI's own client
/// asks by default.
pub async fn embeddings(s: Arc<Server>, bytes: Bytes, dialect: Dialect) -> Response {
    let strings_only = dialect == Dialect::Infinity;
    let format = |v: &Value| match v["encoding_format"].as_str() {
        None | Some("float" | "base64") => Ok(()),
        Some(other) => Err(bad(format!(
            "encoding_format '{other}' is not one of float, base64"
        ))),
    };
    let (v, items, done) = match serve_input(&s, &bytes, dialect, strings_only, format).await {
        Ok(served) => served,
        Err(refused) => return refused,
    };
    let base64 = v["encoding_format"] == "base64";
    let data: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let v = vector(&s, item);
            let embedding = if base64 {
                let raw: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
                json!(base64::engine::general_purpose::STANDARD.encode(raw))
            } else {
                json!(v)
            };
            json!({ "object": "embedding", "index": i, "embedding": embedding })
        })
        .collect();
    let usage = json!({ "prompt_tokens": done.tokens, "total_tokens": done.tokens });
    let mut reply =
        json!({ "object": "list", "data": data, "model": model_of(&s, &v), "usage": usage });
    if dialect == Dialect::Infinity {
        reply["id"] = json!("infinity-encbench");
        reply["created"] = json!(now_s());
    }
    if dialect == Dialect::TeiOpenAi {
        let headers = super::tei::timing_headers(&s, &done, super::tei::characters(&items));
        return (headers, axum::Json(reply)).into_response();
    }
    axum::Json(reply).into_response()
}

/// `/pooling`: the pooler's output per input, here the embedding.
pub async fn pooling(s: Arc<Server>, bytes: Bytes) -> Response {
    let (v, items, _) = match serve_input(&s, &bytes, Dialect::Vllm, false, |_| Ok(())).await {
        Ok(served) => served,
        Err(refused) => return refused,
    };
    let data: Vec<Value> = items
        .iter()
        .enumerate()
        .map(|(i, item)| json!({ "index": i, "object": "pooling", "data": vector(&s, item) }))
        .collect();
    axum::Json(json!({
        "id": "pool-encbench", "object": "list", "created": now_s(),
        "model": model_of(&s, &v), "data": data,
    }))
    .into_response()
}

/// The two sides of a `/score` request, under any of the names vLLM takes them by.
fn sides(v: &Value) -> Result<(Vec<String>, Vec<String>), Refusal> {
    let side = |x: &Value| -> Option<Vec<String>> {
        match x {
            Value::String(s) => Some(vec![s.clone()]),
            Value::Array(a) => a.iter().map(|s| s.as_str().map(str::to_owned)).collect(),
            _ => None,
        }
    };
    [
        ("queries", "documents"),
        ("queries", "items"),
        ("data_1", "data_2"),
        ("text_1", "text_2"),
    ]
    .into_iter()
    .find_map(|(a, b)| Some((side(&v[a])?, side(&v[b])?)))
    .ok_or_else(|| bad("give text_1 and text_2 (or queries and documents)"))
}

/// `/score`: a score per pair of its two sides; one first text goes with every second one.
pub async fn score(s: Arc<Server>, bytes: Bytes) -> Response {
    let arrived = Instant::now();
    let v = match body(&bytes) {
        Ok(v) => v,
        Err(r) => return Dialect::Vllm.refuse(r),
    };
    let pairs = sides(&v).and_then(|(first, second)| match first.len() {
        1 => Ok(second
            .iter()
            .map(|d| (first[0].clone(), d.clone()))
            .collect::<Vec<_>>()),
        n if n == second.len() => Ok(first.into_iter().zip(second).collect()),
        _ => Err(bad(
            "text_1 and text_2 must be of one length, or text_1 of one",
        )),
    });
    let items = pairs
        .as_ref()
        .map(|p| {
            p.iter()
                .map(|(a, b)| Item::Pair(a.clone(), b.clone()))
                .collect()
        })
        .map_err(|r| bad(r.message.clone()));
    if let Err(e) = serve(&s, arrived, items, None).await {
        return Dialect::Vllm.failed(e);
    }
    let data: Vec<Value> = pairs
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, (q, d))| json!({ "index": i, "object": "score", "score": s.relevance(q, d) }))
        .collect();
    axum::Json(json!({
        "id": "score-encbench", "object": "list", "created": now_s(),
        "model": model_of(&s, &v), "data": data,
    }))
    .into_response()
}

/// `GET /v1/models`: the served model, owned by `owner` (vLLM's own, or a gateway's).
pub fn models(s: &Server, owner: &str) -> Response {
    axum::Json(json!({ "object": "list", "data": [{
        "id": s.cfg.served_model, "object": "model", "created": now_s(), "owned_by": owner,
        "root": s.cfg.served_model, "parent": null, "max_model_len": 512, "permission": [],
    }]}))
    .into_response()
}

pub async fn version() -> Response {
    axum::Json(json!({ "version": "0.33.0" })).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_sides_under_every_name() {
        let (a, b) = sides(&json!({"text_1": "q", "text_2": ["d1", "d2"]})).unwrap();
        assert_eq!((a.len(), b.len()), (1, 2));
        assert!(sides(&json!({"queries": ["q"], "documents": ["d"]})).is_ok());
        assert!(sides(&json!({"text_1": 3})).is_err());
    }
}
