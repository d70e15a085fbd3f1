//! A gRPC reply's body: its one message, then the trailers that say how the call ended.
//! axum's bodies carry no trailers of their own.

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use std::pin::Pin;
use std::task::{Context, Poll};

struct MessageThenStatus {
    message: Option<Bytes>,
    trailers: Option<HeaderMap>,
}

impl http_body::Body for MessageThenStatus {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(m) = self.message.take() {
            return Poll::Ready(Some(Ok(Frame::data(m))));
        }
        Poll::Ready(self.trailers.take().map(|t| Ok(Frame::trailers(t))))
    }

    fn is_end_stream(&self) -> bool {
        self.message.is_none() && self.trailers.is_none()
    }
}

/// A call that succeeded: the framed `message`, then `grpc-status: 0`.
pub(crate) fn ok(message: Bytes) -> Response {
    let mut trailers = HeaderMap::new();
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    let body = Body::new(MessageThenStatus {
        message: Some(message),
        trailers: Some(trailers),
    });
    ([("content-type", "application/grpc")], body).into_response()
}
