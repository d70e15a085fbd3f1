//! HTTP/2 connections to a gRPC server: `per_thread` of them for each client thread (see
//! `super::super::client_thread`), each carrying many calls at once as streams. A connection
//! is driven by the runtime that opened it, so a request takes one of its own thread's; one
//! that has closed (the server went away, or the runtime that drove it ended with its engine:
//! its task then ends, or is dropped with the runtime) is opened again by the next request
//! that wants it.

use super::super::ErrorKind;
use super::super::client_thread;
use bytes::Bytes;
use encbench_core::reach::ConnectFailure;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Mutex;

pub(crate) type Sender = h2::client::SendRequest<Bytes>;

/// A connection's sender, and whether its I/O task has ended.
struct Open {
    sender: Sender,
    closed: Arc<AtomicBool>,
}

/// Flow-control windows: a reply of several MiB (vectors per token of a batch) then streams
/// without waiting on the client's window updates; the protocol's 64 KiB would stall it.
const STREAM_WINDOW: u32 = 4 * 1024 * 1024;
const CONNECTION_WINDOW: u32 = 16 * 1024 * 1024;

/// Where to connect, and how.
#[derive(Clone)]
pub(crate) struct Endpoint {
    pub host: String,
    pub port: u16,
    /// `grpcs://`: TLS, with h2 agreed by ALPN.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    pub connect_timeout: Duration,
}

/// One client thread's connections, and which it gave out last.
struct Slot {
    conns: Box<[Mutex<Option<Open>>]>,
    next: AtomicUsize,
}

pub(crate) struct Connections {
    endpoint: Endpoint,
    slots: Box<[Slot]>,
}

impl Connections {
    pub fn new(endpoint: Endpoint, per_thread: usize) -> Connections {
        let slot = || Slot {
            conns: (0..per_thread.max(1)).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
        };
        Connections {
            endpoint,
            slots: (0..client_thread::SLOTS).map(|_| slot()).collect(),
        }
    }

    /// A sender on one of this thread's connections, round robin; opened where it is not.
    /// Requests that find a connection being opened wait for it rather than open their own:
    /// sixteen requests at a run's start share one connection, as a gRPC channel's do.
    pub async fn sender(&self) -> Result<Sender, Unconnected> {
        let slot = &self.slots[client_thread::current() % self.slots.len()];
        let k = slot.next.fetch_add(1, Ordering::Relaxed) % slot.conns.len();
        let mut conn = slot.conns[k].lock().await;
        if let Some(open) = conn.as_ref().filter(|o| !o.closed.load(Ordering::Acquire)) {
            return Ok(open.sender.clone());
        }
        let open = connect(&self.endpoint).await?;
        let sender = open.sender.clone();
        *conn = Some(open);
        Ok(sender)
    }
}

/// Why no connection could be had: the kind a request counts, and words for the readiness
/// check to say.
#[derive(Debug)]
pub(crate) struct Unconnected {
    pub kind: ErrorKind,
    pub reason: String,
    /// Why the TCP connection could not be made; `None` when it was made and TLS or
    /// HTTP/2 on it failed (someone is there).
    pub cause: Option<ConnectFailure>,
}

fn unconnected(kind: ErrorKind, reason: impl std::fmt::Display) -> Unconnected {
    Unconnected {
        kind,
        reason: encbench_core::scrub::text(&reason.to_string()),
        cause: None,
    }
}

/// A new connection, its I/O driven by a task on the calling thread's runtime.
async fn connect(e: &Endpoint) -> Result<Open, Unconnected> {
    let tcp = match tokio::time::timeout(
        e.connect_timeout,
        tokio::net::TcpStream::connect((e.host.as_str(), e.port)),
    )
    .await
    {
        Err(_) => {
            let waited = e.connect_timeout.as_secs_f64();
            return Err(Unconnected {
                cause: Some(ConnectFailure::TimedOut),
                ..unconnected(
                    ErrorKind::Timeout,
                    format!("no connection within {waited:.1} s"),
                )
            });
        }
        Ok(Err(why)) => {
            return Err(Unconnected {
                cause: Some(ConnectFailure::of_io(why.kind())),
                ..unconnected(ErrorKind::Connection, why)
            });
        }
        Ok(Ok(s)) => s,
    };
    // A call's small frames must not wait on delayed ACKs.
    let _ = tcp.set_nodelay(true);
    match &e.tls {
        None => handshake(tcp).await,
        Some(config) => {
            let name = rustls::pki_types::ServerName::try_from(e.host.clone())
                .map_err(|why| unconnected(ErrorKind::Connection, why))?;
            let tls = tokio_rustls::TlsConnector::from(config.clone())
                .connect(name, tcp)
                .await
                .map_err(|why| unconnected(ErrorKind::Connection, format!("TLS: {why}")))?;
            handshake(tls).await
        }
    }
}

/// HTTP/2 on `io`, straight on h2 rather than through hyper's client: a call's HEADERS and
/// DATA frames are then queued together and leave in one write, with no dispatch task
/// between the call and the connection (BENCHMARKS.md, "HTTP or gRPC").
async fn handshake<S>(io: S) -> Result<Open, Unconnected>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, conn) = h2::client::Builder::new()
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        // A request body is queued whole (up to the 64 MiB body limit), sent as the
        // server's window allows.
        .max_send_buffer_size(super::super::url::MAX_BODY_BYTES)
        .handshake(io)
        .await
        .map_err(|why| unconnected(ErrorKind::Connection, format!("HTTP/2: {why}")))?;
    let closed = Arc::new(AtomicBool::new(false));
    let ended = Closes(closed.clone());
    tokio::spawn(async move {
        let _ended = ended;
        let _ = conn.await;
    });
    Ok(Open { sender, closed })
}

/// Marks a connection closed when its task ends, or is dropped with its runtime.
struct Closes(Arc<AtomicBool>);

impl Drop for Closes {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// The TLS settings of `grpcs://`: the platform's roots, and h2 by ALPN (gRPC has no other).
pub(crate) fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls_platform_verifier::ConfigVerifierExt;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = rustls::ClientConfig::with_platform_verifier()
        .map_err(|e| format!("TLS roots could not be loaded: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}
