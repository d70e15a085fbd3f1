//! Where requests go. Each target turns a prepared body into a response body, timing to the
//! last byte, and classifies failures into the error kinds the tables and exports count.

pub mod address;
pub mod aws;
pub mod body;
pub mod client_thread;
pub mod cloudwatch;
mod h1;
pub mod headers;
pub mod metrics;
pub mod sagemaker;
mod sdk_guard;
pub mod tls;
pub mod url;

use encbench_core::server_metrics::stats::ServerStats;

use crate::payload::{Prepared, Reply};
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

/// A request that failed: its kind, and the server's own words where it said any (the start
/// of its reply body: "Input should be a valid string" says more than `HTTP 422`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub kind: ErrorKind,
    pub said: Option<String>,
}

impl From<ErrorKind> for Failure {
    fn from(kind: ErrorKind) -> Failure {
        Failure { kind, said: None }
    }
}

impl std::fmt::Display for Failure {
    /// `HTTP 422: {"detail": "Input should be a valid string"}`: the kind, then the words.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.said {
            Some(said) => write!(f, "{}: {said}", self.kind.key()),
            None => f.write_str(&self.kind.key()),
        }
    }
}

impl Failure {
    /// `kind`, with the reply `body` as the server's words.
    pub fn with_body(kind: ErrorKind, body: &[u8]) -> Failure {
        Failure {
            kind,
            said: words(&String::from_utf8_lossy(
                &body[..body.len().min(4 * WORDS_CHARS)],
            )),
        }
    }
}

/// How much of what a server said is kept: enough for a validation message, not a page.
pub const WORDS_CHARS: usize = 200;

/// Text a server sent, ready to show and store in one line: whitespace runs as one space,
/// scrubbed (secrets, URL passwords, control characters), cut to `WORDS_CHARS`. `None` when
/// it said nothing.
pub fn words(text: &str) -> Option<String> {
    // JSON as compact as it goes (most servers indent theirs): more of the reason fits.
    let compact = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .map(|v| v.to_string());
    let text = compact.as_deref().unwrap_or(text);
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!one_line.is_empty())
        .then(|| encbench_core::text::truncate(&encbench_core::scrub::text(&one_line), WORDS_CHARS))
}

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

    /// Health check before the run; returns what the endpoint said about itself.
    fn check_ready(&self) -> BoxFuture<'_, Result<String, TargetError>>;

    /// One request, already prepared in the engine's wire format.
    fn invoke<'a>(&'a self, req: &'a Prepared) -> BoxFuture<'a, Result<Reply, Failure>>;

    /// Whether a 2xx body must be a response of the format to count as a success.
    fn checks_replies(&self) -> bool {
        true
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
