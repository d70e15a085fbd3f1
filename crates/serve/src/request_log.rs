//! `--request-log FILE`: one JSON line per invocation as it arrives (microseconds since the
//! server started, the HTTP version, the content type, the body in base64), appended, so a
//! test can compare what arrived, how and when, with what was meant to be sent.

use super::Server;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Largest body logged; the reference endpoint takes nothing bigger anyway.
const MAX_LOGGED_BYTES: usize = 64 * 1024 * 1024;

pub(crate) struct RequestLog(Mutex<std::fs::File>);

impl RequestLog {
    pub fn open(path: &Path) -> std::io::Result<RequestLog> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(RequestLog(Mutex::new(file)))
    }

    fn write(&self, at_us: u128, http: axum::http::Version, content_type: &str, body: &[u8]) {
        let mut line = serde_json::json!({
            "at_us": at_us as u64,
            "http": format!("{http:?}"),
            "content_type": content_type,
            "body_base64": base64::engine::general_purpose::STANDARD.encode(body),
        })
        .to_string();
        line.push('\n');
        // One write a line: lines from concurrent requests never interleave.
        let mut f = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = f.write_all(line.as_bytes());
    }
}

/// Logs the request, then serves it.
pub(crate) async fn record(State(s): State<Arc<Server>>, req: Request, next: Next) -> Response {
    let Some(log) = &s.request_log else {
        return next.run(req).await;
    };
    let at = s.started.elapsed().as_micros();
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_LOGGED_BYTES).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "body too large to log").into_response();
    };
    let content_type = (parts.headers.get("content-type"))
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    log.write(at, parts.version, content_type, &bytes);
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
