//! Faults of the wire rather than of the model, applied to successful inference replies of
//! every protocol: a connection closed half-way through the body, a 200 whose body is not a
//! response (plain text, truncated JSON, a proxy's HTML page), a wrong content type.

use super::Server;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body::Frame;
use rand::RngExt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

/// What a reply is turned into.
#[derive(Clone, Copy)]
enum Mangle {
    Reset,
    Garbage,
}

/// How many garbage bodies were sent: they cycle through the three forms in turn.
static GARBAGE_SENT: AtomicU64 = AtomicU64::new(0);

pub async fn wire_faults(State(s): State<Arc<Server>>, req: Request, next: Next) -> Response {
    let resp = next.run(req).await;
    if !resp.status().is_success() {
        return resp;
    }
    let (reset, garbage) = (s.cfg.reset_rate, s.cfg.garbage_rate);
    let mangle = if reset > 0.0 || garbage > 0.0 {
        let u: f64 = s
            .rng
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .random();
        if u < reset {
            Some(Mangle::Reset)
        } else if u < reset + garbage {
            Some(Mangle::Garbage)
        } else {
            None
        }
    } else {
        None
    };
    let (mut parts, body) = resp.into_parts();
    let mut resp = match mangle {
        None => Response::from_parts(parts, body),
        Some(Mangle::Reset) => {
            let full = axum::body::to_bytes(body, usize::MAX)
                .await
                .unwrap_or_default();
            parts
                .headers
                .insert(header::CONTENT_LENGTH, full.len().into());
            let half = full.slice(..full.len() / 2);
            s.counters.mangled.fetch_add(1, Ordering::Relaxed);
            Response::from_parts(parts, Body::new(HalfThenReset::new(half)))
        }
        Some(Mangle::Garbage) => {
            let full = axum::body::to_bytes(body, usize::MAX)
                .await
                .unwrap_or_default();
            parts.headers.remove(header::CONTENT_LENGTH);
            let (content_type, text) = match GARBAGE_SENT.fetch_add(1, Ordering::Relaxed) % 3 {
                0 => (
                    "text/plain",
                    Bytes::from_static(b"worker crashed: CUDA error\n"),
                ),
                // A complete HTTP message whose JSON stops half-way: no transport error at all.
                1 => ("application/json", full.slice(..full.len() / 2)),
                _ => (
                    "text/html",
                    Bytes::from_static(b"<html><body><h1>502 Bad Gateway</h1></body></html>"),
                ),
            };
            parts
                .headers
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            s.counters.mangled.fetch_add(1, Ordering::Relaxed);
            Response::from_parts(parts, Body::from(text))
        }
    };
    if s.cfg.wrong_content_type && mangle.is_none() {
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
    }
    resp
}

/// Sends the first half of a body, then fails: hyper closes the connection with the
/// announced Content-Length unmet, as a worker that dies mid-write does. The pause lets the
/// headers and the half reach the client first (hyper would otherwise drop them unsent).
struct HalfThenReset {
    half: Option<Bytes>,
    pause: Pin<Box<tokio::time::Sleep>>,
}

impl HalfThenReset {
    fn new(half: Bytes) -> HalfThenReset {
        HalfThenReset {
            half: Some(half),
            pause: Box::pin(tokio::time::sleep(Duration::from_millis(20))),
        }
    }
}

impl HttpBody for HalfThenReset {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        if let Some(half) = self.half.take() {
            return Poll::Ready(Some(Ok(Frame::data(half))));
        }
        match self.pause.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => Poll::Ready(Some(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "simulated reset mid-response",
            )))),
        }
    }
}
