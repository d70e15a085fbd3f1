//! The aggregated view of a running engine that front-ends render. Published on a tick;
//! its size does not grow with run length (the timeline is cut to a recent tail).

use encbench_core::arrival::Pace;
use encbench_core::plan::{PhaseKind, StopAt};
use encbench_core::results::PhaseResult;
use encbench_core::stats::{LatencySummary, TimelineEntry};
use encbench_core::verdicts::AccuracyReport;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    Starting,
    CheckingAccuracy,
    Warming,
    /// Warmed up, waiting for the common start of several hosts (`--start-at`).
    Waiting,
    Running,
    Paused,
    Draining,
    Finished,
    /// The engine met an internal failure; what it measured is kept.
    Failed,
}

impl RunState {
    pub fn label(self) -> &'static str {
        match self {
            RunState::Starting => "starting",
            RunState::CheckingAccuracy => "checking accuracy",
            RunState::Warming => "warming",
            RunState::Waiting => "waiting for the start",
            RunState::Running => "running",
            RunState::Paused => "paused",
            RunState::Draining => "draining",
            RunState::Finished => "finished",
            RunState::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PhaseView {
    pub kind: PhaseKind,
    /// 1-based position among the phases run so far.
    pub index: usize,
    /// Its place in the sweep it belongs to, and how many phases the sweep has: (2, 3) for
    /// the second of three batch sizes, whatever ran before the sweep.
    pub step: Option<(usize, usize)>,
    pub batch_size: usize,
    pub concurrency: usize,
    pub warmup: u64,
    pub stop: StopAt,
    /// `--repeat`: repetition k of K.
    pub repetition: Option<(u32, u32)>,
    /// Requests dispatched in this phase, warmup included.
    pub sent: u64,
}

/// The current phase's measured figures so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveStats {
    pub n: u64,
    pub ok: u64,
    pub errors: BTreeMap<String, u64>,
    /// The server's words with the phase's first error of each kind that had any.
    pub said: BTreeMap<String, String>,
    pub latency: LatencySummary,
    pub service: LatencySummary,
    pub dispatch_delay: LatencySummary,
    /// Client-side tokenization, for engines that tokenize.
    pub tokenize: Option<LatencySummary>,
    pub req_per_s: f64,
    pub samples_per_s: f64,
    /// Under `--slo`: how the phase stands against it so far.
    pub slo: Option<encbench_core::slo::Judgement>,
    /// `--metrics-url`: the server's figures since the phase began (refreshed about once a
    /// second).
    pub server: Option<encbench_core::server_metrics::ServerMetrics>,
    /// The server's time per request from its replies' headers (TEI's `x-queue-time`, ...).
    pub server_time: Option<encbench_core::server_metrics::headers::ServerTimeSummary>,
}

impl LiveStats {
    /// Errors of every kind.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// How an open loop keeps its schedule right now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScheduleStatus {
    pub offered_per_s: f64,
    /// Requests due and not yet sent (estimated from the lag at the offered rate).
    pub backlog: u64,
    /// Now minus the intended send time of the oldest request not yet sent.
    pub lag: Duration,
    /// Requests in flight beyond what the latency measured explains: the backlog queued at
    /// the server (see `stats::queue_lag`), and how long it takes at the offered rate.
    pub queued: u64,
    pub queue_lag: Duration,
    /// The lag or the queue lag is over 100 ms and over 5 % of the phase so far: the
    /// endpoint is not keeping up.
    pub overloaded: bool,
}

impl ScheduleStatus {
    /// How far behind, wherever the backlog is: the larger of the two lags.
    pub fn behind_by(&self) -> Duration {
        self.lag.max(self.queue_lag)
    }

    /// The backlog in words (see `text::backlog`).
    pub fn backlog_words(&self) -> String {
        encbench_core::text::backlog(self.backlog, self.queued)
    }
}

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub elapsed: Duration,
    pub state: RunState,
    pub target: String,
    pub pace: Pace,
    pub concurrency: usize,
    /// The cap is the default for the pace (`plan::default_cap`), not one that was given.
    pub concurrency_default: bool,
    pub batch_size: usize,
    pub in_flight: usize,
    /// Open loop only.
    pub schedule: Option<ScheduleStatus>,
    pub phase: Option<PhaseView>,
    pub current: LiveStats,
    /// Scheduled latency (µs) of all completions over the recent window.
    pub recent_latency: Histogram<u64>,
    /// Scheduled latency (µs) of every measured request since the start or the last reset.
    pub run_latency: Histogram<u64>,
    /// Measured requests that failed over the same span as `run_latency`.
    pub run_errors: u64,
    pub timeline_tail: Vec<TimelineEntry>,
    pub phases: Arc<Vec<PhaseResult>>,
    pub accuracy_before: Option<AccuracyReport>,
    pub accuracy_latest: Option<AccuracyReport>,
    pub accuracy_running: bool,
    /// (verdicts given, verdicts to give) of the accuracy check under way, or the last one.
    pub accuracy_progress: (usize, usize),
    /// Finished capacity searches, one entry per batch size.
    pub capacity: Vec<encbench_core::results::capacity::Capacity>,
    /// The batch size being searched, as it stands (its probes so far).
    pub searching: Option<encbench_core::results::capacity::Capacity>,
    /// What could not be measured and why (a statistics API that refused), each once.
    pub notices: Vec<String>,
    /// Until the common start (`--start-at`), while waiting for it.
    pub starts_in: Option<Duration>,
    /// Every span so far in which the endpoint could not be reached, the last one open
    /// (`back_at_s` none) while it still cannot; attempts over the whole span.
    pub endpoint_lost: Vec<encbench_core::reach::EndpointLost>,
}
