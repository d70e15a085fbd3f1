//! `ModelInfer` through tonic's client instead of the calls on h2: a benchmark switch, so
//! that both clients are in one binary and measured side by side (`bench/protocols.sh
//! --protocols gRPC gRPC/tonic`; BENCHMARKS.md, "gRPC: tonic against the hand-made
//! client"). Set `ENCBENCH_GRPC_CLIENT=tonic`; nothing else reads it, and only the load's
//! calls change: readiness, metadata and statistics stay on the hand-made client.
//!
//! The request goes out as the payload encoded it and the reply comes back as bytes, through
//! tonic's `ProstCodec` over two messages that carry encoded bytes: both clients then do the
//! same protobuf work (the request encoded while it is prepared, the reply decoded by the
//! format's check), and what is measured is the client around it.

use super::super::client_thread;
use super::super::{ErrorKind, url::MAX_BODY_BYTES};
use super::GrpcClient;
use super::call::Ended;
use crate::grpc::frame::PREFIX;
use crate::grpc::messages::SERVICE;
use crate::grpc::status::Code;
use bytes::{Buf, BufMut, Bytes};
use encbench_core::reach::ConnectFailure;
use hyper::header::{CONTENT_TYPE, HeaderMap, TE};
use hyper::http::uri::PathAndQuery;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tonic::client::Grpc;
use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, Endpoint};
use tonic_prost::ProstCodec;

/// The environment variable, and the value that selects tonic.
const SWITCH: &str = "ENCBENCH_GRPC_CLIENT";

/// Whether this process sends `ModelInfer` through tonic.
pub(crate) fn selected() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var(SWITCH).is_ok_and(|v| v.eq_ignore_ascii_case("tonic")))
}

/// A message already encoded, sent as it is.
#[derive(Debug, Default)]
pub(crate) struct Encoded(Bytes);

impl prost::Message for Encoded {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&self.0);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: prost::encoding::WireType,
        buf: &mut impl Buf,
        ctx: prost::encoding::DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        prost::encoding::skip_field(wire_type, tag, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        self.0.len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }

    /// The whole message kept as its bytes: tonic's buffer hands them over without a copy.
    fn merge(&mut self, mut buf: impl Buf) -> Result<(), prost::DecodeError> {
        self.0 = buf.copy_to_bytes(buf.remaining());
        Ok(())
    }
}

/// A channel, and whether the runtime that drives it has ended.
struct Open {
    channel: Channel,
    closed: Arc<AtomicBool>,
}

/// One client thread's channels, as `conn::Slot` keeps its connections.
struct Slot {
    channels: Box<[Mutex<Option<Open>>]>,
    next: AtomicUsize,
}

/// `ModelInfer` on tonic channels: `per_thread` for each client thread, each opened by the
/// thread's first request and driven by its runtime, as the hand-made connections are.
pub(crate) struct TonicInfer {
    endpoint: Endpoint,
    slots: Box<[Slot]>,
    /// The user's headers; tonic sets `content-type`, `te` and `grpc-timeout` itself.
    metadata: MetadataMap,
    path: PathAndQuery,
}

impl TonicInfer {
    /// When the switch is on: `ModelInfer` to `client`'s server through tonic (where tonic
    /// cannot, the hand-made client, and why).
    pub fn when_selected(client: &GrpcClient) -> Option<TonicInfer> {
        if !selected() {
            return None;
        }
        TonicInfer::new(client)
            .inspect_err(|why| {
                encbench_core::failure::say(format_args!("{why}: the hand-made client is used"));
            })
            .ok()
    }

    fn new(client: &GrpcClient) -> Result<TonicInfer, String> {
        if client.origin.starts_with("https") {
            return Err(format!(
                "{SWITCH}=tonic speaks grpc:// only (built without TLS)"
            ));
        }
        let endpoint = Endpoint::from_shared(client.origin.clone())
            .map_err(|e| format!("tonic: {e}"))?
            .connect_timeout(client.load.endpoint().connect_timeout)
            .tcp_nodelay(true)
            // The hand-made connections' windows (conn.rs): a large reply streams at once.
            .initial_stream_window_size(4 * 1024 * 1024)
            .initial_connection_window_size(16 * 1024 * 1024);
        let mut headers: HeaderMap = client.headers.clone();
        headers.remove(CONTENT_TYPE);
        headers.remove(TE);
        let slot = || Slot {
            channels: (0..client.load.per_thread())
                .map(|_| Mutex::new(None))
                .collect(),
            next: AtomicUsize::new(0),
        };
        Ok(TonicInfer {
            endpoint,
            slots: (0..client_thread::SLOTS).map(|_| slot()).collect(),
            metadata: MetadataMap::from_headers(headers),
            path: PathAndQuery::from_maybe_shared(format!("{SERVICE}ModelInfer"))
                .map_err(|e| format!("tonic: {e}"))?,
        })
    }

    /// This thread's next channel, round robin; opened (lazily: it connects on its first
    /// call) where it is not, or where the runtime that drove it has ended.
    fn channel(&self) -> Channel {
        let slot = &self.slots[client_thread::current() % self.slots.len()];
        let k = slot.next.fetch_add(1, Ordering::Relaxed) % slot.channels.len();
        let mut open = slot.channels[k]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(o) = open.as_ref().filter(|o| !o.closed.load(Ordering::Acquire)) {
            return o.channel.clone();
        }
        let channel = self.endpoint.connect_lazy();
        let closed = Arc::new(AtomicBool::new(false));
        let ended = super::conn::Closes(closed.clone());
        // Dropped with this runtime, as the channel's own tasks are.
        tokio::spawn(async move {
            let _ended = ended;
            std::future::pending::<()>().await;
        });
        *open = Some(Open {
            channel: channel.clone(),
            closed,
        });
        channel
    }

    /// One `ModelInfer` of `body` (framed, as the payload prepares it) within `timeout`: the
    /// reply's message, unframed.
    pub async fn infer(&self, body: &Bytes, timeout: Duration) -> Result<Bytes, Ended> {
        let message = Encoded(body.slice(PREFIX.min(body.len())..));
        let mut request = tonic::Request::from_parts(
            self.metadata.clone(),
            tonic::Extensions::default(),
            message,
        );
        request.set_timeout(timeout);
        let mut grpc = Grpc::new(self.channel())
            .max_decoding_message_size(super::MAX_REPLY_BYTES)
            .max_encoding_message_size(MAX_BODY_BYTES);
        let call = async {
            grpc.ready()
                .await
                .map_err(|e| Ended::Transport(ErrorKind::Connection, Some(short(&e))))?;
            grpc.unary(
                request,
                self.path.clone(),
                ProstCodec::<Encoded, Encoded>::default(),
            )
            .await
            .map(|r| r.into_inner().0)
            .map_err(|s| ended(&s))
        };
        tokio::time::timeout(timeout, call)
            .await
            .unwrap_or(Err(Ended::Transport(ErrorKind::Timeout, None)))
    }
}

/// A tonic status as the hand-made client would have ended: no connection made, the
/// transport failed under the call (tonic gives the error as the status's source), or the
/// server's own status.
fn ended(s: &tonic::Status) -> Ended {
    let Some(cause) = std::error::Error::source(s) else {
        let said = Some(s.message().to_owned()).filter(|m| !m.is_empty());
        return Ended::Status(Code(s.code() as u32), said);
    };
    let mut source = Some(cause);
    let mut connect = false;
    while let Some(e) = source {
        connect |= e.is::<tonic::ConnectError>();
        if connect && let Some(io) = e.downcast_ref::<std::io::Error>() {
            let kind = match io.kind() {
                std::io::ErrorKind::TimedOut => ErrorKind::Timeout,
                _ => ErrorKind::Connection,
            };
            return Ended::Unconnected(kind, Some(ConnectFailure::of_io(io.kind())));
        }
        source = e.source();
    }
    Ended::Transport(ErrorKind::Connection, Some(short(cause)))
}

/// The innermost cause, in words fit to show.
fn short(e: &(dyn std::error::Error + 'static)) -> String {
    let mut source = e;
    while let Some(next) = source.source() {
        source = next;
    }
    encbench_core::scrub::text(&source.to_string())
}
