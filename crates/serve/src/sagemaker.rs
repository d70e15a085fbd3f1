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

fn plain(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Response {
    error(
        status,
        kind,
        json!({ "__type": kind, "message": message.into() }),
    )
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
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.clear();
        let mut routed = s
            .counters
            .routed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for h in ROUTING {
            if let Some(v) = headers.get(h) {
                let v_str = v.to_str().unwrap_or("").to_string();
                *routed.entry(format!("{name} {h}={v_str}")).or_default() += 1;
                seen.insert(h.to_string(), v_str);
                echo.insert(h, v.clone());
            }
        }
    }
    let variant = headers
        .get("x-amzn-sagemaker-target-variant")
        .cloned()
        .unwrap_or(HeaderValue::from_static("AllTraffic"));
    // Triton behind SageMaker: KServe v2 tensors, binary under its own media type.
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if let Some(reply) = triton(&s, &name, content_type, &body).await {
        return match reply {
            Ok(response) => {
                let (mut parts, bytes) = response.into_parts();
                parts.headers.extend(echo);
                parts
                    .headers
                    .insert("x-amzn-invoked-production-variant", variant);
                Response::from_parts(parts, bytes)
            }
            Err(status) => error(
                StatusCode::FAILED_DEPENDENCY,
                "ModelError",
                json!({
                    "__type": "ModelError",
                    "message": format!("Received client error ({status}) from primary"),
                    "OriginalStatusCode": status,
                }),
            ),
        };
    }
    // TEI's SageMaker container: its own payloads at /invocations, the route of its model.
    if s.cfg.only == Some(crate::ApiFamily::Tei) {
        return tei_container(&s, &name, body, echo, variant).await;
    }
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

/// A KServe v2 request through the SageMaker API, answered by the KServe handler; `None`
/// when the body is not one. A container error comes back as its status (SageMaker wraps
/// it in a `ModelError`).
async fn triton(
    s: &Arc<Server>,
    model: &str,
    content_type: &str,
    body: &Bytes,
) -> Option<Result<Response, u16>> {
    let mut headers = HeaderMap::new();
    if let Some(size) = content_type
        .strip_prefix("application/vnd.sagemaker-triton.binary+json")
        .and_then(|rest| rest.split("json-header-size=").nth(1))
    {
        headers.insert(
            "inference-header-content-length",
            HeaderValue::from_str(size.trim()).ok()?,
        );
    } else {
        let looks_like_tensors = serde_json::from_slice::<Value>(body).ok().is_some_and(|v| {
            v["inputs"]
                .as_array()
                .is_some_and(|i| i.first().is_some_and(|t| t.get("datatype").is_some()))
        });
        if !looks_like_tensors {
            return None;
        }
    }
    let response = super::kserve::infer(
        State(s.clone()),
        Path(model.to_string()),
        headers,
        body.clone(),
    )
    .await;
    if !response.status().is_success() {
        return Some(Err(response.status().as_u16()));
    }
    let (mut parts, bytes) = response.into_parts();
    if let Some(len) = parts.headers.remove("inference-header-content-length") {
        let media = format!(
            "application/vnd.sagemaker-triton.binary+json;json-header-size={}",
            len.to_str().unwrap_or("0")
        );
        parts
            .headers
            .insert("content-type", HeaderValue::from_str(&media).ok()?);
    }
    Some(Ok(Response::from_parts(parts, bytes)))
}

/// The TEI container behind the runtime API: its reply passed on (timing headers and all),
/// an error of its own wrapped as SageMaker wraps a container's: a `ModelError` with the
/// original status and message.
async fn tei_container(
    s: &Arc<Server>,
    name: &str,
    body: Bytes,
    echo: HeaderMap,
    variant: HeaderValue,
) -> Response {
    let playing = crate::families::Playing {
        only: s.cfg.only,
        kind: s.cfg.model_kind,
    };
    let reply = super::json_apis::tei::invocations(s.clone(), body, playing).await;
    let status = reply.status();
    let (mut parts, bytes) = reply.into_parts();
    if status.is_success() {
        parts.headers.extend(echo);
        parts
            .headers
            .insert("x-amzn-invoked-production-variant", variant);
        return Response::from_parts(parts, bytes);
    }
    let said = axum::body::to_bytes(bytes, 64 * 1024)
        .await
        .unwrap_or_default();
    let said = String::from_utf8_lossy(&said);
    let side = if status.is_client_error() {
        "client"
    } else {
        "server"
    };
    error(
        StatusCode::FAILED_DEPENDENCY,
        "ModelError",
        json!({
            "__type": "ModelError",
            "message": format!("Received {side} error ({}) from primary with message \"{said}\". See logs for endpoint {name}.", status.as_u16()),
            "OriginalStatusCode": status.as_u16(),
            "OriginalMessage": said,
        }),
    )
}
