//! One unary call: a framed message out, the reply read to its trailers (no further than the
//! cap), and the call's outcome as the protocol gives it (`grpc-status`, `grpc-message`, in
//! the trailers, or in the headers of a reply that has no body).

use super::super::{ErrorKind, Failure};
use super::conn::Sender;
use crate::grpc::status::{Code, decode_message};
use bytes::{Bytes, BytesMut};
use hyper::header::HeaderMap;
use hyper::{Request, Uri};

/// How a call ended, short of a message.
#[derive(Debug)]
pub(crate) enum Ended {
    /// The server answered with a status other than OK, and maybe words.
    Status(Code, Option<String>),
    /// No answer that gRPC can read: the connection failed, the reply was cut or over the
    /// cap, a frame was broken.
    Transport(ErrorKind, Option<String>),
    /// No connection could be had: the call never reached the server.
    Unconnected(ErrorKind, Option<encbench_core::reach::ConnectFailure>),
}

impl Ended {
    /// The kind a request counts, as the issue's table has it: the server's own status by
    /// its meaning (UNAVAILABLE is the server's; a connection that failed is `Connection`).
    pub fn failure(self) -> Failure {
        match self {
            Ended::Status(code, said) => Failure {
                kind: kind_of(code),
                said,
                unconnected: None,
            },
            Ended::Transport(kind, said) => Failure {
                kind,
                said,
                unconnected: None,
            },
            Ended::Unconnected(kind, why) => Failure {
                kind,
                said: None,
                unconnected: why,
            },
        }
    }
}

/// A status's kind: those with a kind of their own, the server's failures as the model's
/// error, and the rest by name (`gRPC NOT_FOUND`).
pub fn kind_of(code: Code) -> ErrorKind {
    match code {
        Code::INVALID_ARGUMENT | Code::OUT_OF_RANGE | Code::FAILED_PRECONDITION => {
            ErrorKind::Validation
        }
        Code::DEADLINE_EXCEEDED => ErrorKind::Timeout,
        Code::RESOURCE_EXHAUSTED => ErrorKind::Throttling,
        Code::UNAVAILABLE => ErrorKind::ServiceUnavailable,
        Code::UNAUTHENTICATED | Code::PERMISSION_DENIED => ErrorKind::Auth,
        Code::INTERNAL | Code::UNKNOWN => ErrorKind::ModelError {
            original_status: None,
        },
        other => ErrorKind::Service(format!("gRPC {}", other.name())),
    }
}

/// Sends `body` (one framed message) to `uri` with `headers`, and reads the answer's one
/// message, reading no more than `cap` bytes of reply.
pub(crate) async fn unary(
    sender: Sender,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
    cap: usize,
) -> Result<Bytes, Ended> {
    let failed = |e: h2::Error| Ended::Transport(ErrorKind::Connection, Some(short(&e)));
    let mut req = Request::post(uri)
        .body(())
        .expect("a request of a parsed URI");
    *req.headers_mut() = headers;
    // Waits while the connection has as many streams open as the server allows.
    let mut sender = sender.ready().await.map_err(failed)?;
    let (response, mut stream) = sender.send_request(req, false).map_err(failed)?;
    // A server may answer before it reads the request (a refusal) and close the stream:
    // its answer, not the closed stream, is the call's outcome.
    let unsent = stream.send_data(body, true).err();
    let (parts, mut body) = match response.await {
        Ok(r) => r.into_parts(),
        Err(e) => return Err(failed(unsent.unwrap_or(e))),
    };
    if parts.status != hyper::StatusCode::OK {
        let code = Code::of_http(parts.status.as_u16());
        let said = format!("HTTP {} from a gRPC call", parts.status.as_u16());
        return Err(Ended::Status(code, Some(said)));
    }
    // A reply without a body carries its status in its headers ("Trailers-Only").
    match outcome(&parts.headers) {
        Outcome::Absent => {}
        Outcome::Ok => return Err(Ended::Transport(ErrorKind::BadResponse, None)),
        Outcome::Failed(ended) => return Err(ended),
    }
    let cut = |e: h2::Error| Ended::Transport(ErrorKind::BadResponse, Some(short(&e)));
    let mut chunks: Vec<Bytes> = Vec::with_capacity(1);
    let mut len = 0;
    while let Some(data) = body.data().await {
        let data = data.map_err(cut)?;
        len += data.len();
        // Dropping the stream over the cap resets it: the server stops sending.
        if len > cap {
            return Err(Ended::Transport(ErrorKind::BadResponse, None));
        }
        let _ = body.flow_control().release_capacity(data.len());
        chunks.push(data);
    }
    let trailers = body.trailers().await.map_err(cut)?;
    match trailers.as_ref().map_or(Outcome::Absent, outcome) {
        Outcome::Failed(failed) => Err(failed),
        // The protocol requires a status: a reply without one was cut short.
        Outcome::Absent => Err(Ended::Transport(
            ErrorKind::BadResponse,
            Some("the reply ended without a grpc-status".into()),
        )),
        Outcome::Ok => {
            let whole = match chunks.len() {
                1 => chunks.pop().expect("one chunk"),
                _ => chunks
                    .iter()
                    .fold(BytesMut::with_capacity(len), |mut b, c| {
                        b.extend_from_slice(c);
                        b
                    })
                    .freeze(),
            };
            crate::grpc::unframe(&whole)
                .map_err(|e| Ended::Transport(ErrorKind::BadResponse, Some(e)))
        }
    }
}

/// What a header block says of the call's end.
#[derive(Debug)]
enum Outcome {
    /// No `grpc-status` in it.
    Absent,
    Ok,
    Failed(Ended),
}

/// The status in `h`, if it holds one.
fn outcome(h: &HeaderMap) -> Outcome {
    let Some(status) = h.get("grpc-status") else {
        return Outcome::Absent;
    };
    let code = Code::parse(status.as_bytes());
    if code == Code::OK {
        return Outcome::Ok;
    }
    let said = h
        .get("grpc-message")
        .map(|m| decode_message(m.as_bytes()))
        .filter(|m| !m.is_empty());
    Outcome::Failed(Ended::Status(code, said))
}

/// h2's innermost cause ("connection reset"), in words fit to show.
fn short(e: &h2::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    encbench_core::scrub::text(&source.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_count_under_the_issues_kinds() {
        assert_eq!(kind_of(Code::UNAVAILABLE), ErrorKind::ServiceUnavailable);
        assert_eq!(kind_of(Code::RESOURCE_EXHAUSTED), ErrorKind::Throttling);
        assert_eq!(kind_of(Code::DEADLINE_EXCEEDED), ErrorKind::Timeout);
        assert_eq!(kind_of(Code::INVALID_ARGUMENT), ErrorKind::Validation);
        assert_eq!(kind_of(Code::PERMISSION_DENIED), ErrorKind::Auth);
        assert_eq!(
            kind_of(Code::INTERNAL),
            ErrorKind::ModelError {
                original_status: None
            }
        );
        assert_eq!(kind_of(Code::NOT_FOUND).key(), "gRPC NOT_FOUND");
        assert_eq!(kind_of(Code::UNIMPLEMENTED).key(), "gRPC UNIMPLEMENTED");
    }

    #[test]
    fn the_outcome_is_read_from_status_and_words() {
        let mut h = HeaderMap::new();
        assert!(matches!(outcome(&h), Outcome::Absent));
        h.insert("grpc-status", "0".parse().unwrap());
        assert!(matches!(outcome(&h), Outcome::Ok));
        h.insert("grpc-status", "5".parse().unwrap());
        h.insert(
            "grpc-message",
            "Request for unknown model: 'x' is not found"
                .parse()
                .unwrap(),
        );
        let Outcome::Failed(Ended::Status(code, said)) = outcome(&h) else {
            panic!("a failure")
        };
        assert_eq!(code, Code::NOT_FOUND);
        assert_eq!(
            said.as_deref(),
            Some("Request for unknown model: 'x' is not found")
        );
    }
}
