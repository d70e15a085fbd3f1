//! The routes the reference endpoint answers, for what it plays (`families`): the inference
//! routes (behind the wire faults) and the routes that describe the server and its model.

use super::families::{ApiFamily, ModelKind, Playing};
use super::json_apis::{Dialect, infinity, rerank, tei, vllm};
use super::{Server, kserve, sagemaker};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use serde_json::json;
use std::sync::Arc;

type S = Arc<Server>;

/// A POST route whose handler takes the server, the body and what is played.
fn posting<F, Fut>(p: Playing, handler: F) -> MethodRouter<S>
where
    F: Fn(S, Bytes, Playing) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response> + Send + 'static,
{
    post(move |State(s): State<S>, body: Bytes| handler(s, body, p))
}

/// Whether the vLLM route is served, for the model kinds that have it (vLLM 0.33 registers a
/// route only for a model that supports its task).
fn vllm_serves(p: Playing, kinds: &[ModelKind]) -> bool {
    p.only.is_none() || (p.is(ApiFamily::Vllm) && kinds.contains(&p.kind_of(ApiFamily::Vllm)))
}

/// The inference routes.
pub(crate) fn inference(p: Playing) -> Router<S> {
    use ModelKind::{Classifier, Embedding, Reranker};
    let mut r = Router::new();
    let all = p.only.is_none();
    if all || p.is(ApiFamily::Hf) {
        r = r
            .route("/invocations", post(super::invocations))
            .route("/endpoints/{name}/invocations", post(sagemaker::invoke));
    }
    if all || p.is(ApiFamily::Triton) || p.is(ApiFamily::Kserve) {
        r = r.route("/v2/models/{model}/infer", post(kserve::infer));
    }
    if vllm_serves(p, &[Classifier, Reranker]) {
        let kind = if all {
            Classifier
        } else {
            p.kind_of(ApiFamily::Vllm)
        };
        r = r.route(
            "/classify",
            posting(p, move |s, b, _| vllm::classify(s, b, kind)),
        );
    }
    if vllm_serves(p, &[Embedding]) {
        r = r.route(
            "/v1/embeddings",
            posting(p, |s, b, _| vllm::embeddings(s, b, Dialect::Vllm)),
        );
    }
    if vllm_serves(p, &[Classifier, Embedding, Reranker]) {
        r = r.route("/pooling", posting(p, |s, b, _| vllm::pooling(s, b)));
    }
    if vllm_serves(p, &[Embedding, Reranker]) {
        let cohere = || posting(p, |s, b, _| rerank::rerank(s, b, Dialect::Vllm));
        r = r
            .route("/score", posting(p, |s, b, _| vllm::score(s, b)))
            .route("/v1/score", posting(p, |s, b, _| vllm::score(s, b)))
            .route("/v1/rerank", cohere())
            .route("/v2/rerank", cohere());
        r = if all {
            // Both families' /rerank: TEI's takes "texts", the Cohere shape "documents".
            r.route(
                "/rerank",
                posting(p, |s, b, p| async move {
                    let tei_shape = serde_json::from_slice::<serde_json::Value>(&b)
                        .is_ok_and(|v| v.get("texts").is_some());
                    if tei_shape {
                        tei::rerank(s, b, p).await
                    } else {
                        rerank::rerank(s, b, Dialect::Vllm).await
                    }
                }),
            )
        } else {
            r.route("/rerank", cohere())
        };
    }
    if p.is(ApiFamily::Openai) {
        r = r.route(
            "/v1/embeddings",
            posting(p, |s, b, _| vllm::embeddings(s, b, Dialect::OpenAi)),
        );
    }
    if all || p.is(ApiFamily::Tei) {
        r = r
            .route("/embed", posting(p, tei::embed))
            .route("/predict", posting(p, tei::predict));
    }
    if p.is(ApiFamily::Tei) {
        r = r
            .route("/rerank", posting(p, tei::rerank))
            .route("/embeddings", posting(p, tei::openai))
            .route("/v1/embeddings", posting(p, tei::openai))
            .route("/invocations", posting(p, tei::invocations))
            .route("/", posting(p, tei::invocations))
            // The TEI container on SageMaker, behind the runtime API.
            .route("/endpoints/{name}/invocations", post(sagemaker::invoke));
    }
    if all {
        r = r.route(
            "/embeddings",
            posting(p, |s, b, _| vllm::embeddings(s, b, Dialect::OpenAi)),
        );
    }
    if p.is(ApiFamily::Infinity) {
        r = r
            .route("/embeddings", posting(p, infinity::embeddings))
            .route("/classify", posting(p, infinity::classify))
            .route("/rerank", posting(p, infinity::rerank));
    }
    if p.is(ApiFamily::Jina) {
        r = r.route(
            "/v1/rerank",
            posting(p, |s, b, _| rerank::rerank(s, b, Dialect::Cohere)),
        );
    }
    r
}

fn empty() -> Response {
    StatusCode::OK.into_response()
}

/// The routes that describe the server: readiness, metadata, model lists, statistics.
pub(crate) fn describing(p: Playing) -> Router<S> {
    let all = p.only.is_none();
    let mut r = Router::new();
    if all || p.is(ApiFamily::Hf) {
        r = r.route("/ping", get(super::ping));
    }
    if all || p.is(ApiFamily::Triton) || p.is(ApiFamily::Kserve) {
        r = r
            .route("/v2/models/{model}/ready", get(kserve::ready))
            .route("/v2/models/{model}", get(kserve::metadata));
    }
    if all || p.is(ApiFamily::Triton) {
        r = r
            .route("/v2/models/{model}/config", get(kserve::config))
            .route("/v2/models/{model}/stats", get(kserve::stats));
    }
    if p.is(ApiFamily::Triton) || p.is(ApiFamily::Kserve) {
        r = r
            .route(
                "/v2",
                get(move || async move { kserve::server_metadata(p) }),
            )
            .route(
                "/v2/health/ready",
                get(move |State(s): State<S>| async move { kserve::health_ready(&s, p) }),
            )
            .route(
                "/v2/health/live",
                get(move || async move { kserve::health_live(p) }),
            );
    }
    if p.is(ApiFamily::Triton) {
        r = r.route(
            "/v2/repository/index",
            post(|State(s): State<S>| async move { kserve::repository_index(&s) }),
        );
    }
    if p.is(ApiFamily::Kserve) {
        // KServe's own lists, in its own shape (not OpenAI's, though at /v1/models too).
        let list = |State(s): State<S>| async move {
            axum::Json(json!({ "models": [s.cfg.served_model] })).into_response()
        };
        r = r
            .route("/v2/models", get(list))
            .route("/v1/models", get(list))
            .route(
                "/",
                get(|| async { axum::Json(json!({ "status": "alive" })).into_response() }),
            );
    }
    if all || p.is(ApiFamily::Vllm) || p.is(ApiFamily::Infinity) || p.is(ApiFamily::Tei) {
        let health = if p.is(ApiFamily::Infinity) {
            get(|| async { infinity::health() })
        } else {
            get(|| async { empty() })
        };
        r = r.route("/health", health);
    }
    if p.is(ApiFamily::Vllm) {
        r = r
            .route("/ping", get(|| async { empty() }))
            .route("/version", get(vllm::version))
            .route(
                "/v1/models",
                get(|State(s): State<S>| async move { vllm::models(&s, "vllm") }),
            );
    }
    if p.is(ApiFamily::Openai) {
        r = r.route(
            "/v1/models",
            get(|State(s): State<S>| async move { vllm::models(&s, "encbench") }),
        );
    }
    if p.is(ApiFamily::Tei) {
        r = r
            .route(
                "/info",
                get(move |State(s): State<S>| async move { tei::info(&s, p) }),
            )
            .route("/ping", get(|| async { empty() }))
            .route("/", get(|| async { empty() }));
    }
    if p.is(ApiFamily::Infinity) {
        r = r.route(
            "/models",
            get(move |State(s): State<S>| async move { infinity::models(&s, p) }),
        );
    }
    r
}

/// What a route the family does not have answers, as its server's framework answers it.
pub(crate) fn not_found(p: Playing) -> Response {
    match p.only {
        Some(ApiFamily::Vllm | ApiFamily::Infinity | ApiFamily::Kserve) => {
            super::json_apis::fastapi_not_found()
        }
        Some(ApiFamily::Triton) => (
            StatusCode::NOT_FOUND,
            axum::Json(json!({ "error": "Not Found" })),
        )
            .into_response(),
        // axum's (TEI's, and the reference's own): an empty 404.
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}
