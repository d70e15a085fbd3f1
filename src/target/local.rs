//! A local server speaking the SageMaker container contract: `GET /ping`, `POST /invocations`.

use super::{BoxFuture, ErrorKind, Target, TargetError};
use bytes::Bytes;
use reqwest::StatusCode;
use std::time::Duration;

pub struct LocalTarget {
    base: String,
    client: reqwest::Client,
}

impl LocalTarget {
    /// The pool is sized to the concurrency cap so requests never queue inside the client
    /// (botocore's fixed pool of 10 does exactly that, and the wait is invisible).
    pub fn new(url: &str, concurrency: usize, timeout: Duration) -> LocalTarget {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(concurrency.max(1))
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .tcp_nodelay(true)
            .build()
            .expect("reqwest client with static settings");
        LocalTarget {
            base: url.trim_end_matches('/').to_string(),
            client,
        }
    }
}

/// Container errors arrive with whatever body the server chose; SageMaker-style error
/// types travel in `x-amzn-ErrorType` or a JSON `__type`/`type` field.
pub(crate) fn classify_status(
    status: StatusCode,
    error_type: Option<&str>,
    body: &[u8],
) -> ErrorKind {
    let text = String::from_utf8_lossy(&body[..body.len().min(2048)]);
    let named = |name: &str| error_type.is_some_and(|t| t.starts_with(name)) || text.contains(name);
    if named("ThrottlingException") {
        return ErrorKind::Throttling;
    }
    if named("ModelNotReadyException") {
        return ErrorKind::ModelNotReady;
    }
    match status.as_u16() {
        424 => ErrorKind::ModelError {
            original_status: None,
        },
        503 => ErrorKind::ServiceUnavailable,
        401 | 403 => ErrorKind::Auth,
        // A container's own 5xx is what SageMaker reports as a ModelError.
        s @ 500..=599 => ErrorKind::ModelError {
            original_status: Some(s),
        },
        s => ErrorKind::Http(s),
    }
}

pub(crate) fn classify_transport(e: &reqwest::Error) -> ErrorKind {
    if e.is_timeout() {
        ErrorKind::Timeout
    } else if e.is_connect() || e.is_request() {
        ErrorKind::Connection
    } else {
        ErrorKind::BadResponse
    }
}

impl Target for LocalTarget {
    fn describe(&self) -> String {
        self.base.clone()
    }

    fn check_ready(&self) -> BoxFuture<'_, Result<String, TargetError>> {
        Box::pin(async move {
            let url = format!("{}/ping", self.base);
            let resp =
                self.client
                    .get(&url)
                    .send()
                    .await
                    .map_err(|e| TargetError::Unreachable {
                        target: self.base.clone(),
                        reason: short_reason(&e),
                    })?;
            let status = resp.status();
            let body = resp.text().await.unwrap_or_default();
            if !status.is_success() {
                return Err(TargetError::Unhealthy {
                    target: self.base.clone(),
                    reason: format!("GET /ping answered {status}"),
                });
            }
            Ok(body)
        })
    }

    fn invoke(&self, body: Bytes) -> BoxFuture<'_, Result<Bytes, ErrorKind>> {
        Box::pin(async move {
            let resp = self
                .client
                .post(format!("{}/invocations", self.base))
                .header("content-type", "application/json")
                .header("accept", "application/json")
                .body(body)
                .send()
                .await
                .map_err(|e| classify_transport(&e))?;
            let status = resp.status();
            let error_type = resp
                .headers()
                .get("x-amzn-errortype")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            // Latency ends at the last byte, so the body is always read in full.
            let bytes = resp.bytes().await.map_err(|e| classify_transport(&e))?;
            if status.is_success() {
                Ok(bytes)
            } else {
                Err(classify_status(status, error_type.as_deref(), &bytes))
            }
        })
    }
}

/// reqwest's Display nests causes; users want the innermost one ("Connection refused").
pub(crate) fn short_reason(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    let inner = source.to_string();
    if e.is_timeout() {
        format!("timed out: {inner}")
    } else {
        inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_sagemaker_kinds() {
        let c = |s: u16, t: Option<&str>, b: &str| {
            classify_status(StatusCode::from_u16(s).unwrap(), t, b.as_bytes())
        };
        assert_eq!(
            c(400, Some("ThrottlingException"), ""),
            ErrorKind::Throttling
        );
        assert_eq!(
            c(400, None, r#"{"__type":"ThrottlingException"}"#),
            ErrorKind::Throttling
        );
        assert_eq!(
            c(500, None, "boom"),
            ErrorKind::ModelError {
                original_status: Some(500)
            }
        );
        assert_eq!(c(503, None, ""), ErrorKind::ServiceUnavailable);
        assert_eq!(c(404, None, ""), ErrorKind::Http(404));
        assert_eq!(c(403, None, ""), ErrorKind::Auth);
    }
}
