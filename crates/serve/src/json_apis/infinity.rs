//! Infinity (infinity-emb 0.0.77) as its FastAPI server answers: `/models` with each model's
//! capabilities, `/health`, and `/embeddings`, `/classify` and `/rerank` for a model that
//! has the capability (400 `ModelNotDeployedError` otherwise). Inputs are strings only: a
//! list of token ids gets pydantic's 422, "Input should be a valid string".

use super::{Dialect, Refusal, now_s, serve_input};
use crate::Server;
use crate::families::{ApiFamily, ModelKind, Playing};
use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;

pub fn models(s: &Server, p: Playing) -> Response {
    let kind = p.kind_of(ApiFamily::Infinity);
    axum::Json(json!({ "object": "list", "data": [{
        "id": s.cfg.served_model,
        "stats": { "queue_fraction": 0.0, "queue_absolute": 0, "results_pending": 0, "batch_size": 32 },
        "object": "model", "owned_by": "infinity", "created": now_s(), "backend": "encbench",
        "capabilities": [kind.infinity_capability()],
    }]}))
    .into_response()
}

pub fn health() -> Response {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    axum::Json(json!({ "unix": unix })).into_response()
}

/// Infinity's refusal of a task the model cannot do.
fn lacks(s: &Server, p: Playing, kind: ModelKind) -> Option<Response> {
    let has = p.kind_of(ApiFamily::Infinity);
    (has != kind).then(|| {
        Dialect::Infinity.refuse(Refusal {
            status: StatusCode::BAD_REQUEST,
            message: format!(
                "ModelNotDeployedError: model=`{}` does not support `{}`. Reason: the loaded moded cannot fullyfill `{}`. Options are {{'{}'}}.",
                s.cfg.served_model,
                kind.infinity_capability(),
                kind.infinity_capability(),
                has.infinity_capability()
            ),
            detail: None,
        })
    })
}

pub async fn embeddings(s: Arc<Server>, bytes: Bytes, p: Playing) -> Response {
    if let Some(r) = lacks(&s, p, ModelKind::Embedding) {
        return r;
    }
    super::vllm::embeddings(s, bytes, Dialect::Infinity).await
}

pub async fn rerank(s: Arc<Server>, bytes: Bytes, p: Playing) -> Response {
    if let Some(r) = lacks(&s, p, ModelKind::Reranker) {
        return r;
    }
    super::rerank::rerank(s, bytes, Dialect::Infinity).await
}

/// `/classify`: every label with its score per input, best first.
pub async fn classify(s: Arc<Server>, bytes: Bytes, p: Playing) -> Response {
    if let Some(r) = lacks(&s, p, ModelKind::Classifier) {
        return r;
    }
    let (_, items, done) = match serve_input(&s, &bytes, Dialect::Infinity, true, |_| Ok(())).await
    {
        Ok(served) => served,
        Err(refused) => return refused,
    };
    let data: Vec<serde_json::Value> = items
        .iter()
        .map(|item| super::scored_labels(&s, item))
        .collect();
    let usage = json!({ "prompt_tokens": done.tokens, "total_tokens": done.tokens });
    axum::Json(json!({
        "object": "classify", "data": data, "model": s.cfg.served_model, "usage": usage,
        "id": "infinity-encbench", "created": now_s(),
    }))
    .into_response()
}
