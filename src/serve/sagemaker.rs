//! The SageMaker runtime API: `POST /endpoints/{name}/invocations`, SigV4 checked, routing
//! headers honoured and echoed back, errors worded as SageMaker words them.

use super::{Fault, Server, sigv4};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;

const ROUTING: [&str; 4] = [
    "x-amzn-sagemaker-target-container-hostname",
    "x-amzn-sagemaker-inference-component",
    "x-amzn-sagemaker-target-model",
    "x-amzn-sagemaker-target-variant",
];

fn error(status: StatusCode, kind: &'static str, body: Value) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert("x-amzn-errortype", HeaderValue::from_static(kind));
    (status, headers, axum::Json(body)).into_response()
}

fn plain(status: StatusCode, kind: &'static str, message: String) -> Response {
    error(status, kind, json!({ "__type": kind, "message": message }))
}

pub async fn invoke(
    State(s): State<Arc<Server>>,
    Path(name): Path<String>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some((key, secret)) = &s.cfg.credentials
        && let Err((code, message)) = sigv4::verify(&method, &uri, &headers, &body, key, secret)
    {
        return plain(StatusCode::FORBIDDEN, code, message);
    }
    let mut echo = HeaderMap::new();
    {
        let mut seen = s
            .counters
            .last_routing
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        seen.clear();
        for h in ROUTING {
            if let Some(v) = headers.get(h) {
                seen.insert(h.to_string(), v.to_str().unwrap_or("").to_string());
                echo.insert(h, v.clone());
            }
        }
    }
    let variant = headers
        .get("x-amzn-sagemaker-target-variant")
        .cloned()
        .unwrap_or(HeaderValue::from_static("AllTraffic"));
    match s.infer(&body, false).await {
        Ok(out) => {
            echo.insert("x-amzn-invoked-production-variant", variant);
            (StatusCode::OK, echo, axum::Json(Value::Array(out))).into_response()
        }
        Err(Fault::Throttled(m)) => plain(StatusCode::BAD_REQUEST, "ThrottlingException", m),
        Err(Fault::Invalid(m)) => plain(StatusCode::BAD_REQUEST, "ValidationError", m),
        Err(Fault::NotReady) => plain(
            StatusCode::TOO_MANY_REQUESTS,
            "ModelNotReadyException",
            format!("Model for endpoint {name} is not ready: workers are loading"),
        ),
        Err(Fault::ModelError) => error(
            StatusCode::FAILED_DEPENDENCY,
            "ModelError",
            json!({
                "__type": "ModelError",
                "message": format!("Received server error (500) from primary with message \"simulated model error\". See logs for endpoint {name}."),
                "OriginalStatusCode": 500,
                "OriginalMessage": "simulated model error",
                "LogStreamArn": format!("arn:aws:logs:us-east-1:000000000000:log-group:/aws/sagemaker/Endpoints/{name}"),
            }),
        ),
    }
}
