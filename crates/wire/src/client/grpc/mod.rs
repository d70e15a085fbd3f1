//! A KServe v2 server over gRPC (`grpc://host:port`, `grpcs://` with TLS): Triton's port
//! 8001, KServe's `--grpc_port`. `ModelInfer` carries the load; `ServerLive` and
//! `ModelReady` say when it may start, `ModelMetadata` names the tensors, and Triton's
//! `ModelStatistics` gives the server's breakdown as `/stats` does over HTTP.
//!
//! The calls go over HTTP/2 connections of the client's own (`conn`): one per client thread
//! by default, `--grpc-connections N` to spread streams over more. Each request is one stream;
//! the run's concurrency cap counts streams in flight. The protocol's framing and status are
//! small enough to speak directly on h2, HTTP/2 itself (`call`), which keeps a call's client
//! CPU to that of the HTTP/1.1 path (BENCHMARKS.md, "HTTP or gRPC").

mod call;
mod conn;

use super::body::MAX_REPLY_BYTES;
use super::headers::ExtraHeaders;
use super::ready::{self, Look, OnWaiting};
use super::{BoxFuture, ErrorKind, Failure, Target, TargetError};
use crate::grpc::messages::{
    ModelMetadataRequest, ModelMetadataResponse, ModelReadyRequest, ModelReadyResponse,
    ModelStatisticsRequest, ModelStatisticsResponse, RepositoryIndexRequest,
    RepositoryIndexResponse, SERVICE, ServerLiveRequest, ServerLiveResponse, ServerMetadataRequest,
    ServerMetadataResponse,
};
use crate::grpc::status::{Code, timeout_header};
use crate::payload::{Prepared, Reply};
use bytes::Bytes;
use call::Ended;
use conn::{Connections, Endpoint};
use encbench_core::server_metrics::stats::ServerStats;
use hyper::Uri;
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, TE};
use std::time::Duration;

pub use call::kind_of;

/// Whether `url` names a gRPC server.
pub fn is_grpc(url: &str) -> bool {
    let scheme = url.split_once("://").map_or("", |(s, _)| s);
    scheme.eq_ignore_ascii_case("grpc") || scheme.eq_ignore_ascii_case("grpcs")
}

static GRPC_TIMEOUT: HeaderName = HeaderName::from_static("grpc-timeout");

/// Calls to one gRPC server: its connections and the headers every call carries.
pub struct GrpcClient {
    /// The load's connections, per client thread.
    load: Connections,
    /// One more for everything else (readiness, metadata, statistics), which runs on other
    /// runtimes than the load: a load connection opened there would have every request's
    /// I/O cross to that runtime's threads (measured: twice the wakeups per request).
    control: Connections,
    /// `http://host:port` (`https://` under TLS): HTTP/2's scheme and authority.
    origin: String,
    /// `content-type`, `te` and the user's headers (gRPC metadata).
    headers: HeaderMap,
    /// The URL as it may be shown.
    shown: String,
}

impl GrpcClient {
    /// `per_thread` connections on each client thread; `headers` go with every call.
    pub fn new(
        url: &str,
        per_thread: usize,
        connect_timeout: Duration,
        extra: &ExtraHeaders,
    ) -> Result<GrpcClient, String> {
        let uri: Uri = url
            .trim_end_matches('/')
            .parse()
            .map_err(|e| format!("not a URL ({e})"))?;
        let tls = uri
            .scheme_str()
            .is_some_and(|s| s.eq_ignore_ascii_case("grpcs"));
        let authority = uri.authority().ok_or("no host")?;
        let port = authority.port_u16().ok_or("no port")?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let endpoint = Endpoint {
            host: host.to_string(),
            port,
            tls: if tls { Some(conn::tls_config()?) } else { None },
            connect_timeout,
        };
        let mut headers = HeaderMap::with_capacity(2 + extra.as_slice().len());
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
        headers.insert(TE, HeaderValue::from_static("trailers"));
        for (name, value) in extra.as_slice() {
            headers.append(name.clone(), value.clone());
        }
        Ok(GrpcClient {
            load: Connections::new(endpoint.clone(), per_thread),
            control: Connections::new(endpoint, 1),
            origin: format!(
                "{}://{}",
                if tls { "https" } else { "http" },
                authority.as_str()
            ),
            headers,
            shown: super::shown_url(url.trim_end_matches('/')),
        })
    }

    fn uri(&self, method: &str) -> Uri {
        format!("{}{SERVICE}{method}", self.origin)
            .parse()
            .expect("an origin that parsed, and a method name")
    }

    /// One call of `method` with a framed `body` on `conns`, within `timeout`: the deadline
    /// the server is told and the client keeps.
    async fn raw(
        &self,
        conns: &Connections,
        uri: Uri,
        headers: HeaderMap,
        body: Bytes,
        timeout: Duration,
    ) -> Result<Bytes, Ended> {
        let call = async {
            let sender = conns.sender().await.map_err(|u| match u.cause {
                Some(_) => Ended::Unconnected(u.kind, u.cause),
                // Connected, then TLS or HTTP/2 failed: its words are the reason to show.
                None => Ended::Transport(u.kind, Some(u.reason)),
            })?;
            call::unary(sender, uri, headers, body, MAX_REPLY_BYTES).await
        };
        tokio::time::timeout(timeout, call)
            .await
            .unwrap_or(Err(Ended::Transport(ErrorKind::Timeout, None)))
    }

    fn headers_for(&self, timeout: Duration) -> HeaderMap {
        let mut h = self.headers.clone();
        if let Ok(v) = HeaderValue::from_str(&timeout_header(timeout)) {
            h.insert(GRPC_TIMEOUT.clone(), v);
        }
        h
    }

    /// A call of `method` with a message, its answer decoded.
    pub(crate) async fn call<Req, Resp>(
        &self,
        method: &str,
        req: &Req,
        timeout: Duration,
    ) -> Result<Resp, Ended>
    where
        Req: prost::Message,
        Resp: prost::Message + Default,
    {
        let body = crate::grpc::frame(req);
        let (uri, headers) = (self.uri(method), self.headers_for(timeout));
        let reply = self.raw(&self.control, uri, headers, body, timeout).await?;
        Resp::decode(reply).map_err(|e| {
            Ended::Transport(
                ErrorKind::BadResponse,
                Some(format!("{method}'s answer does not decode: {e}")),
            )
        })
    }

    /// Whether the server is live: `Err` when it cannot be reached, or refuses the call for
    /// want of credentials (waiting would change neither).
    async fn live(&self, wait: Duration) -> Result<bool, TargetError> {
        let unreachable = |reason: String| TargetError::Unreachable {
            target: self.shown.clone(),
            reason,
        };
        if let Err(u) = self.control.sender().await {
            return Err(unreachable(u.reason));
        }
        match self
            .call::<_, ServerLiveResponse>("ServerLive", &ServerLiveRequest {}, wait)
            .await
        {
            Ok(r) => Ok(r.live),
            // An HTTP/1 server reads HTTP/2's preface as garbage and answers in HTTP/1,
            // which h2 reads as a broken frame: no gRPC will come from that port.
            Err(Ended::Transport(ErrorKind::Connection, Some(said)))
                if said.contains("frame") || said.contains("preface") =>
            {
                Err(unreachable(format!(
                    "{said}: it does not speak HTTP/2, so no gRPC; an HTTP port? --url http://… for its HTTP API, or its gRPC port (Triton's is 8001)"
                )))
            }
            Err(Ended::Transport(ErrorKind::Connection, said)) => Err(unreachable(
                said.unwrap_or_else(|| "the connection failed".into()),
            )),
            // HTTP/2 without the gRPC service: the port serves HTTP, waiting changes nothing.
            Err(Ended::Status(_, Some(said))) if said.starts_with("HTTP ") => {
                Err(unreachable(format!(
                    "ServerLive: {said}: KServe v2's gRPC service is not on this port; --url http://… for its HTTP API, or its gRPC port (Triton's is 8001)"
                )))
            }
            Err(Ended::Unconnected(_, why)) => Err(unreachable(
                why.map_or("the connection failed", |w| w.words()).into(),
            )),
            Err(Ended::Status(code @ (Code::UNAUTHENTICATED | Code::PERMISSION_DENIED), said)) => {
                let said = said.map_or_else(String::new, |s| {
                    format!(": {}", encbench_core::scrub::text(&s))
                });
                Err(TargetError::Auth {
                    target: self.shown.clone(),
                    reason: format!(
                        "ServerLive answered {}{said}: the server wants credentials (--header)",
                        code.name()
                    ),
                })
            }
            Err(_) => Ok(false),
        }
    }

    /// `ServerMetadata`: the server's name and version.
    pub async fn server_metadata(&self, wait: Duration) -> Result<ServerMetadataResponse, Failure> {
        self.call("ServerMetadata", &ServerMetadataRequest {}, wait)
            .await
            .map_err(Ended::failure)
    }

    /// `ModelMetadata` of `model`: its tensors, names and datatypes.
    pub async fn model_metadata(
        &self,
        model: &str,
        wait: Duration,
    ) -> Result<ModelMetadataResponse, Failure> {
        let req = ModelMetadataRequest {
            name: model.to_owned(),
            version: String::new(),
        };
        self.call("ModelMetadata", &req, wait)
            .await
            .map_err(Ended::failure)
    }

    /// Triton's repository index: the models it has loaded (pytriton keeps it empty).
    pub async fn repository_index(&self, wait: Duration) -> Result<Vec<String>, Failure> {
        let req = RepositoryIndexRequest {
            repository_name: String::new(),
            ready: true,
        };
        let r: RepositoryIndexResponse = self
            .call("RepositoryIndex", &req, wait)
            .await
            .map_err(Ended::failure)?;
        Ok(r.models.into_iter().map(|m| m.name).collect())
    }

    /// The models Triton's statistics of every model name.
    pub async fn statistics_names(&self, wait: Duration) -> Result<Vec<String>, Failure> {
        let r = self.statistics("", wait).await.map_err(Ended::failure)?;
        let mut names: Vec<String> = r.model_stats.into_iter().map(|m| m.name).collect();
        names.dedup();
        Ok(names)
    }

    async fn statistics(
        &self,
        model: &str,
        wait: Duration,
    ) -> Result<ModelStatisticsResponse, Ended> {
        let req = ModelStatisticsRequest {
            name: model.to_owned(),
            version: String::new(),
        };
        self.call("ModelStatistics", &req, wait).await
    }
}

/// A KServe v2 model served over gRPC, as the run's target.
pub struct GrpcTarget {
    client: GrpcClient,
    model: String,
    infer: Uri,
    /// Every request's headers with the default deadline, built once.
    infer_headers: HeaderMap,
    timeout: Duration,
    ready_timeout: Duration,
}

impl GrpcTarget {
    pub fn new(client: GrpcClient, model: &str, timeout: Duration) -> GrpcTarget {
        GrpcTarget {
            infer: client.uri("ModelInfer"),
            infer_headers: client.headers_for(timeout),
            client,
            model: model.to_owned(),
            timeout,
            ready_timeout: Duration::from_mins(1),
        }
    }

    #[must_use]
    pub fn with_ready_timeout(mut self, d: Duration) -> GrpcTarget {
        self.ready_timeout = d;
        self
    }

    /// `ModelReady`, and when it says no, whether the server has such a model at all
    /// (`ModelMetadata`'s `NOT_FOUND`): a wrong name is said at once, not waited on.
    async fn model_ready(&self, wait: Duration) -> Result<bool, TargetError> {
        let req = ModelReadyRequest {
            name: self.model.clone(),
            version: String::new(),
        };
        let ready = self
            .client
            .call::<_, ModelReadyResponse>("ModelReady", &req, wait)
            .await;
        let missing = match ready {
            Ok(r) if r.ready => return Ok(true),
            Ok(_) => match self.client.model_metadata(&self.model, wait).await {
                Err(f) if f.kind == kind_of(Code::NOT_FOUND) => f,
                _ => return Ok(false),
            },
            // KServe answers ModelReady of an unknown model with NOT_FOUND itself.
            Err(Ended::Status(Code::NOT_FOUND, said)) => Failure {
                unconnected: None,
                kind: kind_of(Code::NOT_FOUND),
                said,
            },
            Err(_) => return Ok(false),
        };
        Err(TargetError::Config {
            target: self.client.shown.clone(),
            reason: format!(
                "the server has no model '{}' ({}): name one it serves with --model",
                encbench_core::scrub::text(&self.model),
                missing
            ),
        })
    }
}

impl Target for GrpcTarget {
    fn describe(&self) -> String {
        self.client.shown.clone()
    }

    /// Waits (up to the ready timeout) while the server is not live or the model not
    /// ready; an unreachable server or an unknown model is an error at once.
    fn check_ready<'a>(
        &'a self,
        waiting: &'a OnWaiting,
    ) -> BoxFuture<'a, Result<String, TargetError>> {
        Box::pin(ready::wait(
            &self.client.shown,
            self.ready_timeout,
            waiting,
            move |wait| async move {
                // A deadline of zero is one no call could meet.
                let wait = wait.max(Duration::from_millis(1));
                let reason = match self.client.live(wait).await? {
                    false => "ServerLive says it is not live".to_string(),
                    true if self.model_ready(wait).await? => {
                        return Ok(Look::Ready(format!("ModelReady {}: ready", self.model)));
                    }
                    true => format!("ModelReady says '{}' is not ready", self.model),
                };
                Ok(Look::NotYet(encbench_core::scrub::text(&reason)))
            },
        ))
    }

    fn invoke<'a>(&'a self, req: &'a Prepared) -> BoxFuture<'a, Result<Reply, Failure>> {
        Box::pin(async move {
            if req.body.len() > super::url::MAX_BODY_BYTES {
                return Err(ErrorKind::TooLarge.into());
            }
            let (headers, timeout) = match req.timeout {
                Some(t) => (self.client.headers_for(t), t),
                None => (self.infer_headers.clone(), self.timeout),
            };
            let c = &self.client;
            let message = c
                .raw(
                    &c.load,
                    self.infer.clone(),
                    headers,
                    req.body.clone(),
                    timeout,
                )
                .await
                .map_err(Ended::failure)?;
            Ok(Reply::new(message, None))
        })
    }

    /// Triton's `ModelStatistics`; a server without the extension (KServe) has none, and one
    /// that refuses (a restricted API) says why.
    fn server_stats(&self) -> BoxFuture<'_, Result<Option<ServerStats>, String>> {
        Box::pin(async move {
            match self
                .client
                .statistics(&self.model, Duration::from_secs(10))
                .await
            {
                Ok(r) => Ok(Some(stats_of(&r))),
                Err(Ended::Status(
                    code @ (Code::UNAUTHENTICATED | Code::PERMISSION_DENIED),
                    said,
                )) => {
                    let said = said.map_or_else(String::new, |s| {
                        format!(
                            ": {}",
                            encbench_core::text::truncate(&encbench_core::scrub::text(&s), 160)
                        )
                    });
                    Err(format!("ModelStatistics answered {}{said}", code.name()))
                }
                Err(_) => Ok(None),
            }
        })
    }
}

/// The statistics summed over the model's versions, as `ServerStats::parse` sums `/stats`.
fn stats_of(r: &ModelStatisticsResponse) -> ServerStats {
    let mut s = ServerStats::default();
    for m in &r.model_stats {
        s.inference_count += m.inference_count;
        s.execution_count += m.execution_count;
        let Some(i) = &m.inference_stats else {
            continue;
        };
        let ns = |d: &Option<crate::grpc::messages::StatisticDuration>| d.map_or(0, |d| d.ns);
        s.success_count += i.success.map_or(0, |d| d.count);
        s.queue_ns += ns(&i.queue);
        s.compute_input_ns += ns(&i.compute_input);
        s.compute_infer_ns += ns(&i.compute_infer);
        s.compute_output_ns += ns(&i.compute_output);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python's bytes (tritonclient 2.51) of a statistics answer with fields this client does
    /// not declare (`last_inference`, `batch_stats`): skipped, the rest summed.
    #[test]
    fn statistics_read_from_tritons_own_encoding() {
        let hex = "0a2b0a066d696e696c6d12013118052010280432100a0208081a05080810a01f2a0310a8463a0608041a020804";
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let r: ModelStatisticsResponse = prost::Message::decode(&bytes[..]).unwrap();
        let s = stats_of(&r);
        assert_eq!(
            (
                s.inference_count,
                s.execution_count,
                s.success_count,
                s.queue_ns,
                s.compute_infer_ns
            ),
            (16, 4, 8, 4000, 9000)
        );
    }

    #[test]
    fn grpc_urls_are_told_apart() {
        assert!(is_grpc("grpc://127.0.0.1:8001"));
        assert!(is_grpc("GRPCS://h:443"));
        assert!(!is_grpc("http://h:8001"));
        assert!(!is_grpc("127.0.0.1:8001"));
    }
}
