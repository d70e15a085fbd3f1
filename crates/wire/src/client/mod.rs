//! Where requests go. Each target turns a prepared body into a response body, timing to the
//! last byte, and classifies failures into the error kinds the tables and exports count.

pub mod address;
pub mod aws;
pub mod body;
pub mod client_thread;
pub mod cloudwatch;
pub mod grpc;
mod h1;
pub mod headers;
pub mod metrics;
pub mod prometheus;
pub mod ready;
pub mod sagemaker;
mod sdk_guard;
pub mod tls;
pub mod url;

use encbench_core::reach::ConnectFailure;
use encbench_core::server_metrics::stats::ServerStats;

use crate::payload::{Prepared, Reply};
pub use ready::{OnWaiting, Waiting};
use std::future::Future;
use std::pin::Pin;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a request failed, in the vocabulary of SageMaker's runtime errors plus transport ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    Throttling,
    /// The container answered with an error; `original_status` is its HTTP status.
    ModelError {
        original_status: Option<u16>,
    },
    ModelNotReady,
    Validation,
    InternalFailure,
    ServiceUnavailable,
    Timeout,
    Connection,
    Auth,
    /// Any other HTTP status.
    Http(u16),
    /// A 2xx whose body could not be read to the end, or any reply over
    /// `body::MAX_REPLY_BYTES`.
    BadResponse,
    /// A service error with no kind of its own, by its error code.
    Service(String),
    /// Refused before sending (a body over the target's limit: 6 MiB for SageMaker,
    /// `url::MAX_BODY_BYTES` for a URL).
    TooLarge,
}

impl ErrorKind {
    /// The key under which exports and tables count this error.
    pub fn key(&self) -> String {
        match self {
            ErrorKind::Throttling => "ThrottlingException".into(),
            ErrorKind::ModelError {
                original_status: Some(s),
            } => format!("ModelError({s})"),
            ErrorKind::ModelError {
                original_status: None,
            } => "ModelError".into(),
            ErrorKind::ModelNotReady => "ModelNotReadyException".into(),
            ErrorKind::Validation => "ValidationError".into(),
            ErrorKind::InternalFailure => "InternalFailure".into(),
            ErrorKind::ServiceUnavailable => "ServiceUnavailable".into(),
            ErrorKind::Timeout => "Timeout".into(),
            ErrorKind::Connection => "ConnectionError".into(),
            ErrorKind::Auth => "AuthFailure".into(),
            ErrorKind::Http(s) => format!("HTTP {s}"),
            ErrorKind::BadResponse => "BadResponse".into(),
            ErrorKind::Service(code) => code.clone(),
            ErrorKind::TooLarge => "RequestTooLarge".into(),
        }
    }
}

/// A request that failed: its kind, and the start of what the server said with it (its reply
/// body: "Input should be a valid string" says more than `HTTP 422`). Kept raw, as cheap to
/// carry as a slice: only the first of a kind is made fit to show (`words`), off the path
/// every failed request takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: ErrorKind,
    /// Unscrubbed and unescaped: show only through `words`.
    pub said: Option<String>,
    /// No connection could be made, and why: the request never reached the server (see
    /// `encbench_core::reach`).
    pub unconnected: Option<ConnectFailure>,
}

impl From<ErrorKind> for Failure {
    fn from(kind: ErrorKind) -> Failure {
        Failure {
            kind,
            said: None,
            unconnected: None,
        }
    }
}

impl std::fmt::Display for Failure {
    /// `HTTP 422: {"detail": "Input should be a valid string"}`: the kind, then the words.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.words(), self.unconnected) {
            (Some(words), _) => write!(f, "{}: {words}", self.kind.key()),
            (None, Some(why)) => write!(f, "{}: {}", self.kind.key(), why.words()),
            (None, None) => f.write_str(&self.kind.key()),
        }
    }
}

impl Failure {
    /// `kind`, with the start of the reply `body` as what the server said.
    pub fn with_body(kind: ErrorKind, body: &[u8]) -> Failure {
        let start = &body[..body.len().min(SAID_BYTES)];
        Failure {
            kind,
            said: (!start.is_empty()).then(|| String::from_utf8_lossy(start).into_owned()),
            unconnected: None,
        }
    }

    /// A request that never reached the server: connecting failed with `why`.
    pub fn unconnected(kind: ErrorKind, why: ConnectFailure) -> Failure {
        Failure {
            kind,
            said: None,
            unconnected: Some(why),
        }
    }

    /// Whether the server answered: a reply with a status came back, whatever it said. A
    /// request cut on the way, one that timed out or could not connect, or one the client
    /// refused to send says nothing of whether anyone is there.
    pub fn answered(&self) -> bool {
        self.unconnected.is_none()
            && !matches!(
                self.kind,
                ErrorKind::Connection
                    | ErrorKind::Timeout
                    | ErrorKind::BadResponse
                    | ErrorKind::TooLarge
            )
            && self.kind.key() != encbench_core::stats::CLIENT_PANIC
    }

    /// What the server said, ready to show and store.
    pub fn words(&self) -> Option<String> {
        self.said
            .as_deref()
            .and_then(encbench_core::text::server_words)
    }
}

/// How much of a reply body a failure carries: room for a pretty-printed reason to come
/// down to `text::WORDS_CHARS` once compacted.
const SAID_BYTES: usize = 4 * encbench_core::text::WORDS_CHARS;

/// A target could not be used at all (before the run starts).
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{target}: endpoint unreachable ({reason})")]
    Unreachable { target: String, reason: String },
    #[error("{target}: not healthy ({reason})")]
    Unhealthy { target: String, reason: String },
    #[error("{target}: authentication failed ({reason})")]
    Auth { target: String, reason: String },
    #[error("{target}: {reason}")]
    Config { target: String, reason: String },
}

pub trait Target: Send + Sync {
    /// Human-readable name for headers and exports (never credentials).
    fn describe(&self) -> String;

    /// Health check before the run; returns what the endpoint said about itself. A server
    /// that is up and not ready yet is waited for, and `waiting` told so once: the caller
    /// decides whether and where that shows.
    fn check_ready<'a>(
        &'a self,
        waiting: &'a OnWaiting,
    ) -> BoxFuture<'a, Result<String, TargetError>>;

    /// One request, already prepared in the engine's wire format.
    fn invoke<'a>(&'a self, req: &'a Prepared) -> BoxFuture<'a, Result<Reply, Failure>>;

    /// Whether a 2xx body must be a response of the format to count as a success.
    fn checks_replies(&self) -> bool {
        true
    }

    /// The invocation as errors name it (`POST /embed`), for targets whose route can be
    /// wrong.
    fn route(&self) -> Option<String> {
        None
    }

    /// Server-side counters where the server offers them (KServe v2 stats): `Ok(None)`
    /// where it does not or did not answer, `Err` with why when it refused (401, 403).
    fn server_stats(&self) -> BoxFuture<'_, Result<Option<ServerStats>, String>> {
        Box::pin(async { Ok(None) })
    }
}

/// A URL as it may reach the screen, a log or an export: without the user and password a
/// URL can carry, also when it does not parse.
pub fn shown_url(url: &str) -> String {
    encbench_core::scrub::url(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_urls_lose_only_their_credentials() {
        assert_eq!(
            shown_url("http://user:secret@127.0.0.1:8080/base"),
            "http://127.0.0.1:8080/base"
        );
        assert_eq!(shown_url("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
        assert_eq!(shown_url("localhost:8080"), "localhost:8080");
        assert_eq!(
            shown_url("http://admin:pw@127.0.0.1:99999"),
            "http://127.0.0.1:99999"
        );
    }
}
