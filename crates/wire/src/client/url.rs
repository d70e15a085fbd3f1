//! A server on a URL: the SageMaker container contract (`/ping`, `/invocations`), KServe v2
//! (`/v2/models/{m}/infer`) or a vLLM pooling server, as the format says.

use super::h1::H1Pool;
use super::headers::ExtraHeaders;
use super::ready::{self, Look, OnWaiting};
use super::{BoxFuture, ErrorKind, Failure, Target, TargetError, shown_url};
use crate::payload::{BodyKind, Format, Prepared, Reply};
use encbench_core::server_metrics::headers::{self, ServerTime};
use encbench_core::server_metrics::stats::ServerStats;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use std::time::Duration;

const JSON: &str = "application/json";

/// Largest request body sent to a URL: Triton's default `--http-max-input-size`. Batches
/// that would build a bigger one are refused before the run.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// The routes a URL target uses: its format's, or those the user named (`--path`,
/// `--ready-path`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Routes {
    pub invoke: String,
    /// `None`: the API has no readiness route, and any answer says the server is up.
    pub ready: Option<String>,
    pub stats: Option<String>,
}

impl Routes {
    pub fn of(format: &dyn Format) -> Routes {
        Routes {
            invoke: format.path(),
            ready: format.ready_path(),
            stats: format.stats_path(),
        }
    }

    /// These routes with the user's in place of the format's, where given.
    #[must_use]
    pub fn with(self, invoke: Option<&str>, ready: Option<&str>) -> Routes {
        Routes {
            invoke: invoke.map_or(self.invoke, str::to_owned),
            ready: ready.map(str::to_owned).or(self.ready),
            stats: self.stats,
        }
    }
}

pub struct UrlTarget {
    base: String,
    /// `base` as it may be shown: without a user or password in it.
    shown: String,
    invoke_url: String,
    /// Parsed once: reqwest would otherwise parse (and IDNA-check) the URL on every request,
    /// about 3 % of the client's CPU at 30k req/s. `None` keeps a bad URL's error for the
    /// first request, where it was reported before.
    invoke_parsed: Option<reqwest::Url>,
    /// The invocation's path, as errors name it.
    route: String,
    /// `None`: any answer of the base URL says the server is up.
    ready_url: Option<String>,
    stats_url: Option<String>,
    client: reqwest::Client,
    /// The request path (`http://` and `https://`); reqwest serves the probes.
    h1: Option<H1Pool>,
    timeout: Duration,
    /// How long to wait for the ready path to say healthy before giving up.
    ready_timeout: Duration,
    /// The user's headers, on every request.
    extra: ExtraHeaders,
    /// A JSON request's headers for the h1 pool, with the user's and `Host`: built once (see
    /// `H1Pool::with_host`).
    json_headers: HeaderMap,
}

impl UrlTarget {
    /// The pool is sized to the concurrency cap so requests never queue inside the client
    /// (botocore's fixed pool of 10 does exactly that, and the wait is invisible).
    pub fn new(url: &str, format: &dyn Format, concurrency: usize, timeout: Duration) -> UrlTarget {
        Self::routed(url, Routes::of(format), concurrency, timeout)
    }

    /// A target whose routes are given (`Routes::with`).
    pub fn routed(url: &str, routes: Routes, concurrency: usize, timeout: Duration) -> UrlTarget {
        let connect_timeout = timeout.min(Duration::from_secs(10));
        let client = super::tls::reqwest_builder()
            .pool_max_idle_per_host(concurrency.max(1))
            .timeout(timeout)
            .connect_timeout(connect_timeout)
            .tcp_nodelay(true)
            .build()
            .expect("reqwest client with static settings");
        let base = url.trim_end_matches('/').to_string();
        let invoke_url = format!("{base}{}", routes.invoke);
        let target = UrlTarget {
            shown: shown_url(&base),
            h1: H1Pool::new(&invoke_url, concurrency, connect_timeout),
            timeout,
            invoke_parsed: reqwest::Url::parse(&invoke_url).ok(),
            invoke_url,
            route: routes.invoke,
            ready_url: routes.ready.map(|p| format!("{base}{p}")),
            stats_url: routes.stats.map(|p| format!("{base}{p}")),
            base,
            client,
            ready_timeout: Duration::from_mins(1),
            extra: ExtraHeaders::default(),
            json_headers: HeaderMap::new(),
        };
        target.with_headers(&ExtraHeaders::default())
    }

    #[must_use]
    pub fn with_headers(mut self, extra: &ExtraHeaders) -> UrlTarget {
        self.extra = extra.clone();
        self.json_headers = self.h1_headers(BodyKind::Json);
        self
    }

    fn get(&self, url: &str) -> reqwest::RequestBuilder {
        self.client.get(url).headers(self.extra.map())
    }

    #[must_use]
    pub fn with_ready_timeout(mut self, d: Duration) -> UrlTarget {
        self.ready_timeout = d;
        self
    }

    /// One readiness probe, within `wait`: `Err(reason)` when unreachable. Only the status
    /// and the start of the body are read: a readiness answer says what it has to say in
    /// its first bytes.
    async fn probe(&self, wait: Duration) -> Result<Look, String> {
        let no_answer = || Ok(Look::Silent);
        let url = self.ready_url.as_deref().unwrap_or(&self.base);
        let answer = async {
            let resp = self.get(url).send().await?;
            let status = resp.status();
            let (body, _) = super::body::read_reqwest(resp, super::body::MAX_PROBE_BYTES).await?;
            Ok::<_, reqwest::Error>((status, body))
        };
        // A server that accepts the connection but does not answer is up but not ready.
        let (status, body) = match tokio::time::timeout(wait, answer).await {
            Err(_) => return no_answer(),
            Ok(Err(e)) if e.is_timeout() => return no_answer(),
            Ok(Err(e)) => return Err(short_reason(&e)),
            Ok(Ok(answer)) => answer,
        };
        let body = String::from_utf8_lossy(&body);
        // An API with no readiness route: whatever answers is up.
        if self.ready_url.is_none() {
            return Ok(Look::Ready(String::new()));
        }
        let path = encbench_core::scrub::text(url.trim_start_matches(&self.base));
        // Refused is not "not ready yet": waiting would not change the answer.
        if matches!(status.as_u16(), 401 | 403) {
            return Err(format!(
                "GET {path} answered {status}: the server wants credentials (--header, --bearer-token-env)"
            ));
        }
        // A route that does not exist may yet appear (a gateway before its backend), so it
        // is waited on, but said for what it likely is.
        if matches!(status.as_u16(), 404 | 405) {
            return Ok(Look::NotYet(format!(
                "GET {path} answered {status} (no such route here? --ready-path names the server's readiness route)"
            )));
        }
        if !status.is_success() {
            return Ok(Look::NotYet(format!("GET {path} answered {status}")));
        }
        // multi-model-server answers 200 {"status": "Unhealthy"} while no worker is up.
        let said = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| v.get("status").and_then(|s| s.as_str()).map(str::to_owned));
        match said {
            Some(s) if s.to_ascii_lowercase().starts_with("unhealthy") => Ok(Look::NotYet(
                format!("GET {path} says \"{}\"", encbench_core::scrub::text(&s)),
            )),
            _ => Ok(Look::Ready(encbench_core::scrub::text(&body))),
        }
    }
}

/// The headers that say how a body is laid out: the same on both request paths.
struct BodyHeaders {
    list: [(HeaderName, HeaderValue); 3],
    len: usize,
}

impl BodyHeaders {
    fn of(kind: BodyKind) -> BodyHeaders {
        // Static names and values: parsing them per request shows in the profile.
        let json = HeaderValue::from_static(JSON);
        match kind {
            BodyKind::Json => BodyHeaders {
                list: [
                    (ACCEPT, json.clone()),
                    (CONTENT_TYPE, json.clone()),
                    (ACCEPT, json),
                ],
                len: 2,
            },
            // Setup never pairs a gRPC body with a URL target; the type would say what it is.
            BodyKind::Grpc => BodyHeaders {
                list: [
                    (ACCEPT, json.clone()),
                    (CONTENT_TYPE, HeaderValue::from_static("application/grpc")),
                    (ACCEPT, json),
                ],
                len: 2,
            },
            // A recorded body's type was checked to be printable ASCII when it was read.
            BodyKind::Raw { content_type } => BodyHeaders {
                list: [
                    (ACCEPT, json.clone()),
                    (
                        CONTENT_TYPE,
                        HeaderValue::from_str(content_type).unwrap_or_else(|_| {
                            HeaderValue::from_static("application/octet-stream")
                        }),
                    ),
                    (ACCEPT, json),
                ],
                len: 2,
            },
            BodyKind::Binary { json_len } => BodyHeaders {
                list: [
                    (ACCEPT, json),
                    (
                        CONTENT_TYPE,
                        HeaderValue::from_static("application/octet-stream"),
                    ),
                    (INFERENCE_HEADER_LENGTH.clone(), HeaderValue::from(json_len)),
                ],
                len: 3,
            },
        }
    }

    fn as_slice(&self) -> &[(HeaderName, HeaderValue)] {
        &self.list[..self.len]
    }
}

/// The server's timing headers (TEI's), named once: a name looked up by `&str` is parsed
/// anew each time, about a thousand instructions a reply for the three.
static TIMING: [HeaderName; 3] = [
    HeaderName::from_static(headers::QUEUE),
    HeaderName::from_static(headers::INFERENCE),
    HeaderName::from_static(headers::TOKENIZATION),
];

/// What the reply's headers say of the server's time. Most servers send none: a look at
/// the few names a reply has settles that before any lookup.
fn server_time(h: &HeaderMap) -> Option<ServerTime> {
    if !h.keys().any(|k| k.as_str().starts_with("x-")) {
        return None;
    }
    ServerTime::read(|name| {
        let name = TIMING.iter().find(|n| n.as_str() == name)?;
        h.get(name)?.to_str().ok()
    })
}

/// KServe's binary extension: how long the JSON part of a body is.
static INFERENCE_HEADER_LENGTH: HeaderName =
    HeaderName::from_static("inference-header-content-length");

impl UrlTarget {
    /// A request's headers on the h1 pool: how the body is laid out, the user's, `Host`.
    fn h1_headers(&self, kind: BodyKind) -> HeaderMap {
        let Some(pool) = &self.h1 else {
            return HeaderMap::new();
        };
        let body = BodyHeaders::of(kind);
        let mut map = HeaderMap::with_capacity(body.len + self.extra.as_slice().len() + 1);
        for (name, value) in body.as_slice().iter().chain(self.extra.as_slice()) {
            map.insert(name.clone(), value.clone());
        }
        pool.with_host(map)
    }

    async fn invoke_h1(&self, pool: &H1Pool, req: &Prepared) -> Result<Reply, Failure> {
        let headers = match req.kind {
            BodyKind::Json => self.json_headers.clone(),
            kind @ (BodyKind::Binary { .. } | BodyKind::Grpc | BodyKind::Raw { .. }) => {
                self.h1_headers(kind)
            }
        };
        let answer = pool
            .post(
                req.body.clone(),
                headers,
                req.timeout.unwrap_or(self.timeout),
            )
            .await?;
        let header = |name: &str| answer.headers.get(name).and_then(|v| v.to_str().ok());
        let json_len = answer
            .headers
            .get(&INFERENCE_HEADER_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        if answer.status.is_success() {
            Ok(Reply {
                server_time: server_time(&answer.headers),
                body: answer.body,
                variant: None,
                json_len,
            })
        } else {
            let kind = classify_status(answer.status, header("x-amzn-errortype"), &answer.body);
            Err(Failure::with_body(kind, &answer.body))
        }
    }

    async fn invoke_reqwest(&self, req: &Prepared) -> Result<Reply, Failure> {
        let mut builder = match &self.invoke_parsed {
            Some(url) => self.client.post(url.clone()),
            None => self.client.post(&self.invoke_url),
        };
        for (name, value) in BodyHeaders::of(req.kind)
            .as_slice()
            .iter()
            .chain(self.extra.as_slice())
        {
            builder = builder.header(name.clone(), value.clone());
        }
        if let Some(t) = req.timeout {
            builder = builder.timeout(t);
        }
        let resp =
            builder.body(req.body.clone()).send().await.map_err(|e| {
                match unconnected_cause(&e) {
                    Some(why) => Failure::unconnected(classify_transport(&e), why),
                    None => classify_transport(&e).into(),
                }
            })?;
        let status = resp.status();
        let header = |name: &str| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let error_type = header("x-amzn-errortype");
        let json_len = header("inference-header-content-length").and_then(|v| v.parse().ok());
        let server_time = server_time(resp.headers());
        // Latency ends at the last byte, so the body is always read in full (up to the cap).
        let body = match super::body::read_reqwest(resp, super::body::MAX_REPLY_BYTES).await {
            Ok((_, true)) => return Err(ErrorKind::BadResponse.into()),
            Ok((body, false)) => body,
            Err(e) => return Err(classify_transport(&e).into()),
        };
        if status.is_success() {
            Ok(Reply {
                body,
                variant: None,
                json_len,
                server_time,
            })
        } else {
            let kind = classify_status(status, error_type.as_deref(), &body);
            Err(Failure::with_body(kind, &body))
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

/// Why connecting failed, when it was connecting that failed.
fn unconnected_cause(e: &reqwest::Error) -> Option<encbench_core::reach::ConnectFailure> {
    use encbench_core::reach::ConnectFailure;
    if !e.is_connect() {
        return None;
    }
    if e.is_timeout() {
        return Some(ConnectFailure::TimedOut);
    }
    ConnectFailure::in_causes(e)
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

impl Target for UrlTarget {
    fn describe(&self) -> String {
        self.shown.clone()
    }

    /// Waits (up to the ready timeout) while the server says it is not ready; an
    /// unreachable server is an error at once.
    fn check_ready<'a>(
        &'a self,
        waiting: &'a OnWaiting,
    ) -> BoxFuture<'a, Result<String, TargetError>> {
        Box::pin(ready::wait(
            &self.shown,
            self.ready_timeout,
            waiting,
            move |wait| async move {
                self.probe(wait)
                    .await
                    .map_err(|reason| TargetError::Unreachable {
                        target: self.shown.clone(),
                        reason,
                    })
            },
        ))
    }

    fn route(&self) -> Option<String> {
        Some(format!("POST {}", encbench_core::scrub::text(&self.route)))
    }

    fn invoke<'a>(&'a self, req: &'a Prepared) -> BoxFuture<'a, Result<Reply, Failure>> {
        if req.body.len() > MAX_BODY_BYTES {
            return Box::pin(async { Err(ErrorKind::TooLarge.into()) });
        }
        match &self.h1 {
            Some(pool) => Box::pin(self.invoke_h1(pool, req)),
            None => Box::pin(self.invoke_reqwest(req)),
        }
    }

    fn server_stats(&self) -> BoxFuture<'_, Result<Option<ServerStats>, String>> {
        Box::pin(async move {
            let Some(url) = self.stats_url.as_ref() else {
                return Ok(None);
            };
            let Ok(resp) = self.get(url).send().await else {
                return Ok(None);
            };
            let status = resp.status();
            let Ok((body, false)) =
                super::body::read_reqwest(resp, super::body::MAX_PROBE_BYTES).await
            else {
                return Ok(None);
            };
            if matches!(status.as_u16(), 401 | 403) {
                let path = encbench_core::scrub::text(url.trim_start_matches(&self.base));
                let said = encbench_core::text::truncate(
                    &encbench_core::scrub::text(&String::from_utf8_lossy(&body)),
                    160,
                );
                return Err(format!("GET {path} answered {status}: {said}"));
            }
            Ok(serde_json::from_slice(&body)
                .ok()
                .and_then(|v| ServerStats::parse(&v)))
        })
    }
}

/// reqwest's Display nests causes; users want the innermost one ("Connection refused").
pub(crate) fn short_reason(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    let inner = encbench_core::scrub::text(&source.to_string());
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
