//! An HTTP/1.1 connection pool for `http://` and `https://` targets: the request path of the
//! load generator. reqwest, kept for probes, spends more CPU per request than the endpoint
//! under test when that endpoint is fast (URL handling, its pool's hashing, a clone of its
//! connector and service stack per request: about a third of the client's CPU at 30k req/s
//! on loopback), and a figure must not depend on the URL's scheme (BENCHMARKS.md, "HTTPS
//! through the pool"). Over TLS it offers only HTTP/1.1 by ALPN, so `https://` sends the
//! same requests on the same kind of connection as `http://`, with TLS beneath.

use super::{ErrorKind, Failure};
use bytes::Bytes;
use encbench_core::reach::ConnectFailure;
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HOST, HeaderMap, HeaderValue};
use hyper::{Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

type Sender = SendRequest<Full<Bytes>>;

pub(crate) struct H1Pool {
    /// `host:port` to connect to.
    addr: String,
    host: HeaderValue,
    /// `https://`: the name the certificate must hold, and the settings.
    tls: Option<(ServerName<'static>, Arc<rustls::ClientConfig>)>,
    /// `Basic` credentials from the URL's `user:password@`, as reqwest would send them.
    basic: Option<HeaderValue>,
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
    /// `None` for anything but an `http://` or `https://` URL (or when the platform's TLS
    /// roots cannot be loaded: reqwest then says why at the first request).
    pub fn new(url: &str, max_idle: usize, connect_timeout: Duration) -> Option<H1Pool> {
        let uri: Uri = url.parse().ok()?;
        let (tls, default_port) = match uri.scheme_str() {
            Some("http") => (None, 80),
            Some("https") => (Some(tls_config()?), 443),
            _ => return None,
        };
        let authority = uri.authority()?;
        let host = authority.host();
        let host_port = match authority.port_u16() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        let tls = match tls {
            Some(config) => {
                let name = host.trim_start_matches('[').trim_end_matches(']');
                Some((ServerName::try_from(name.to_string()).ok()?, config))
            }
            None => None,
        };
        let path = uri
            .path_and_query()
            .map_or_else(|| Uri::from_static("/"), |pq| Uri::from(pq.clone()));
        Some(H1Pool {
            addr: format!("{host}:{}", authority.port_u16().unwrap_or(default_port)),
            host: HeaderValue::from_str(&host_port).ok()?,
            tls,
            basic: basic_credentials(authority.as_str()),
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
        let Some((name, config)) = &self.tls else {
            return handshake(stream).await;
        };
        let stream = tokio_rustls::TlsConnector::from(config.clone())
            .connect(name.clone(), stream)
            .await
            .map_err(|why| Failure {
                kind: ErrorKind::Connection,
                said: Some(format!("TLS: {why}")),
                unconnected: None,
            })?;
        handshake(stream).await
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
        // A `Host` or `Authorization` of the user's (`--header`) wins.
        headers.entry(HOST).or_insert_with(|| self.host.clone());
        if let Some(basic) = &self.basic {
            headers
                .entry(hyper::header::AUTHORIZATION)
                .or_insert_with(|| basic.clone());
        }
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

async fn handshake<S>(io: S) -> Result<Sender, Failure>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = http1::handshake(TokioIo::new(io))
        .await
        .map_err(|_| ErrorKind::Connection)?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(sender)
}

/// The platform's roots (as reqwest and `grpcs://` have them) and HTTP/1.1 by ALPN: built
/// once, as loading the roots reads the system's certificate files.
fn tls_config() -> Option<Arc<rustls::ClientConfig>> {
    static CONFIG: OnceLock<Option<Arc<rustls::ClientConfig>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            use rustls_platform_verifier::ConfigVerifierExt;
            let _ = rustls::crypto::ring::default_provider().install_default();
            let mut config = rustls::ClientConfig::with_platform_verifier().ok()?;
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Some(Arc::new(config))
        })
        .clone()
}

/// `Basic` and the base64 of `user:password` from an authority's `user:password@`, each
/// percent-decoded as a URL carries them.
fn basic_credentials(authority: &str) -> Option<HeaderValue> {
    use base64::Engine as _;
    let (userinfo, _) = authority.rsplit_once('@')?;
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let decode = |s: &str| percent_encoding::percent_decode_str(s).collect::<Vec<u8>>();
    let mut pair = decode(user);
    pair.push(b':');
    pair.extend(decode(password));
    let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
    let mut value = HeaderValue::from_str(&format!("Basic {encoded}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_and_https_take_this_path_with_host_port_and_credentials_apart() {
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
        let p = pool("https://example.com/invocations").expect("https");
        assert_eq!(p.addr, "example.com:443");
        assert_eq!(p.host, "example.com");
        assert!(p.tls.is_some() && p.basic.is_none());
        let p = pool("https://[::1]:8443/x").expect("https to an address");
        assert_eq!(p.addr, "[::1]:8443");
        assert!(matches!(p.tls, Some((ServerName::IpAddress(_), _))));
        // The credentials leave the Host and go into Authorization, decoded as reqwest does.
        let p = pool("http://us%40r:p%3Aw@127.0.0.1:8080/invocations").expect("credentials");
        assert_eq!(p.host, "127.0.0.1:8080");
        let sent = p.with_host(HeaderMap::new());
        // base64("us@r:p:w")
        assert_eq!(sent[hyper::header::AUTHORIZATION], "Basic dXNAcjpwOnc=");
        assert!(sent[hyper::header::AUTHORIZATION].is_sensitive());
        assert!(pool("ftp://example.com/x").is_none());
    }
}
