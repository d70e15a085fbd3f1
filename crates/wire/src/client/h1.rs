//! A plain HTTP/1.1 connection pool for `http://` targets: the request path of the load
//! generator. reqwest, kept for probes and for `https://`, spends more CPU per request than
//! the endpoint under test when that endpoint is fast (URL handling, its pool's hashing, a
//! clone of its connector and service stack per request: about a third of the client's CPU
//! at 30k req/s on loopback). Over plain HTTP reqwest never speaks HTTP/2 (that needs ALPN),
//! so this sends the same bytes on the same kind of connection.

use super::{ErrorKind, Failure};
use bytes::Bytes;
use encbench_core::reach::ConnectFailure;
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HOST, HeaderMap, HeaderValue};
use hyper::{Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use std::sync::Mutex;
use std::time::Duration;

type Sender = SendRequest<Full<Bytes>>;

pub(crate) struct H1Pool {
    /// `host:port` to connect to.
    addr: String,
    host: HeaderValue,
    /// Origin-form request target (path and query).
    path: Uri,
    /// One idle list per client thread (`super::client_thread`): a connection's I/O is driven by the runtime
    /// that opened it, so it is only handed to requests on that same thread.
    idle: Box<[Mutex<Vec<Sender>>]>,
    max_idle: usize,
    connect_timeout: Duration,
}

/// A response read to its last byte.
pub(crate) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl H1Pool {
    /// `None` for anything but a plain `http://` URL without credentials: those stay with
    /// reqwest, which knows TLS and basic auth.
    pub fn new(url: &str, max_idle: usize, connect_timeout: Duration) -> Option<H1Pool> {
        let uri: Uri = url.parse().ok()?;
        if uri.scheme_str() != Some("http") {
            return None;
        }
        let authority = uri.authority()?;
        if authority.as_str().contains('@') {
            return None;
        }
        let path = uri
            .path_and_query()
            .map_or_else(|| Uri::from_static("/"), |pq| Uri::from(pq.clone()));
        Some(H1Pool {
            addr: format!(
                "{}:{}",
                authority.host(),
                authority.port_u16().unwrap_or(80)
            ),
            host: HeaderValue::from_str(authority.as_str()).ok()?,
            path,
            idle: (0..super::client_thread::SLOTS)
                .map(|_| Mutex::new(Vec::new()))
                .collect(),
            max_idle: max_idle.max(1),
            connect_timeout,
        })
    }

    fn idle(&self) -> &Mutex<Vec<Sender>> {
        &self.idle[super::client_thread::current() % self.idle.len()]
    }

    fn pop(&self) -> Option<Sender> {
        self.idle()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
    }

    fn give_back(&self, sender: Sender) {
        if sender.is_closed() {
            return;
        }
        let mut idle = self
            .idle()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if idle.len() < self.max_idle {
            idle.push(sender);
        }
    }

    async fn connect(&self) -> Result<Sender, Failure> {
        let stream = match tokio::time::timeout(
            self.connect_timeout,
            tokio::net::TcpStream::connect(&self.addr),
        )
        .await
        {
            Err(_) => {
                return Err(Failure::unconnected(
                    ErrorKind::Timeout,
                    ConnectFailure::TimedOut,
                ));
            }
            Ok(Err(e)) => {
                return Err(Failure::unconnected(
                    ErrorKind::Connection,
                    ConnectFailure::of_io(e.kind()),
                ));
            }
            Ok(Ok(s)) => s,
        };
        // Small requests must not wait on delayed ACKs.
        let _ = stream.set_nodelay(true);
        let (sender, conn) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|_| ErrorKind::Connection)?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }

    /// An idle connection that is still open and ready, else a new one.
    async fn checkout(&self) -> Result<(Sender, bool), Failure> {
        while let Some(mut s) = self.pop() {
            if s.ready().await.is_ok() {
                return Ok((s, false));
            }
        }
        Ok((self.connect().await?, true))
    }

    /// `headers` with this pool's `Host` added, ready for `post`: built once, a map is
    /// cloned per request, which costs less than filling (hashing) one per request.
    pub fn with_host(&self, mut headers: HeaderMap) -> HeaderMap {
        // A `Host` of the user's (`--header`) wins.
        headers.entry(HOST).or_insert_with(|| self.host.clone());
        headers
    }

    /// POSTs `body` with `headers` (from `with_host`) and reads the response to its last
    /// byte, within `timeout`.
    pub async fn post(
        &self,
        body: Bytes,
        headers: HeaderMap,
        timeout: Duration,
    ) -> Result<Answer, Failure> {
        match tokio::time::timeout(timeout, self.exchange(body, headers)).await {
            Ok(r) => r,
            Err(_) => Err(ErrorKind::Timeout.into()),
        }
    }

    async fn exchange(&self, body: Bytes, headers: HeaderMap) -> Result<Answer, Failure> {
        let mut request = Request::post(self.path.clone())
            .body(Full::new(body))
            .map_err(|_| ErrorKind::Connection)?;
        *request.headers_mut() = headers;
        let (mut sender, fresh) = self.checkout().await?;
        let response = match sender.try_send_request(request).await {
            Ok(r) => r,
            Err(mut e) => match e.take_message() {
                // The server closed a pooled connection before the request went out: it was
                // never sent, so sending it on a new connection is not a retry.
                Some(request) if !fresh => {
                    sender = self.connect().await?;
                    sender
                        .send_request(request)
                        .await
                        .map_err(|_| ErrorKind::Connection)?
                }
                _ => return Err(ErrorKind::Connection.into()),
            },
        };
        let (parts, incoming) = response.into_parts();
        // An over-long body leaves the connection half read: it is dropped, not pooled.
        let body = super::body::read_hyper(incoming, super::body::MAX_REPLY_BYTES).await?;
        self.give_back(sender);
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_http_without_credentials_takes_this_path() {
        let pool = |u: &str| H1Pool::new(u, 4, Duration::from_secs(1));
        let p = pool("http://127.0.0.1:8080/invocations").expect("plain http");
        assert_eq!(p.addr, "127.0.0.1:8080");
        assert_eq!(p.host, "127.0.0.1:8080");
        assert_eq!(p.path, "/invocations");
        let p = pool("http://localhost/v2/models/m/infer?x=1").expect("default port");
        assert_eq!(p.addr, "localhost:80");
        assert_eq!(p.path, "/v2/models/m/infer?x=1");
        assert_eq!(
            pool("http://[::1]:9000/classify").unwrap().addr,
            "[::1]:9000"
        );
        assert!(pool("https://example.com/invocations").is_none());
        assert!(pool("http://user:pw@127.0.0.1:8080/invocations").is_none());
    }
}
