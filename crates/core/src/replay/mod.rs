//! Recorded traffic to replay (`--replay FILE`): the file's records (`read`), and the
//! schedule they make at a speed and a scale (`plan`). Pure: the engine takes the plan's
//! send times as a phase's intended times, as it takes the arrival process's.
//!
//! Two formats, one a line: a trace of `{"timestamp_ms", "texts": [...]}` (or
//! `{"timestamp_ms", "tokens", "batch_size"}`), and SageMaker Data Capture as an endpoint
//! writes it to S3 (`captureData.endpointInput` with `observedContentType`, `mode`, `data`,
//! `encoding`; `eventMetadata.inferenceTime`).

pub mod plan;
pub mod read;

pub use plan::{ReplayPlan, Speed};
pub use read::{Trace, load, parse};

use crate::input::Input;
use std::sync::Arc;

/// Largest replay file read: the project's cap for input files. The file is read whole
/// (its records are needed for the plan before the first send); a capture bigger than this
/// is cut into parts and replayed part by part.
pub const MAX_REPLAY_FILE_BYTES: u64 = crate::input::MAX_INPUT_FILE_BYTES;

/// Most requests one replay plans (records × scale): each costs 16 bytes of schedule.
pub const MAX_REPLAY_REQUESTS: u64 = 20_000_000;

/// What one record asks to send.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// A trace's texts: sent in the target's own format, one batch.
    Texts(Vec<Input>),
    /// A trace's lengths: texts of `tokens` tokens, `batch_size` of them (built by the
    /// `--input-tokens` text builder).
    Tokens { tokens: usize, batch_size: usize },
    /// A Data Capture body, sent as captured with its content type.
    Captured(Captured),
}

impl Body {
    /// Inputs the request carries (its batch), as far as the record says.
    pub fn inputs(&self) -> usize {
        match self {
            Body::Texts(t) => t.len(),
            Body::Tokens { batch_size, .. } => *batch_size,
            Body::Captured(c) => c.inputs,
        }
    }
}

/// A captured request body, decoded from its encoding.
#[derive(Debug, Clone, PartialEq)]
pub struct Captured {
    pub data: Arc<[u8]>,
    /// `observedContentType`, checked to be a valid header value.
    pub content_type: String,
    /// Inputs in the body where its JSON says (an `inputs`, `instances`, `texts` or `input`
    /// array); 1 otherwise.
    pub inputs: usize,
}

/// Which of the two formats a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    Trace,
    DataCapture,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Trace => "trace",
            TraceFormat::DataCapture => "data-capture",
        }
    }
}

/// A replay file refused, in one line naming the file and what is wrong.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ReplayError {
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("{path} line {line}: {reason}")]
    BadLine {
        path: String,
        line: usize,
        reason: String,
    },
    #[error("{path}: no records (one JSON object a line)")]
    Empty { path: String },
    #[error("{path}: {reason}")]
    Whole { path: String, reason: String },
}
