//! What an engine is started with: the target and its inputs, the plan of phases, the
//! pace, and how capacity searches run.

use crate::accuracy::AccuracySpec;
use encbench_core::arrival::Pace;
use encbench_core::input::Rankings;
use encbench_core::input::{Input, Shape};
use encbench_core::plan::{ProbeRule, RunPlan};
use encbench_core::ramp::Ramp;
use encbench_core::slo::Slo;
use encbench_wire::client::Target;
use encbench_wire::client::metrics::Scraper;
use encbench_wire::payload::Format;
use encbench_wire::tokenize::TokenCounter;
use std::sync::Arc;
use std::time::Duration;

pub struct EngineSpec {
    pub target: Arc<dyn Target>,
    pub texts: Vec<Input>,
    /// Counts each input's tokens once, for the phases' input lengths; `None` records none.
    pub tokenizer: Option<Arc<TokenCounter>>,
    /// A reranker's queries and documents: each phase's requests are made of them, D
    /// documents each, instead of batches of `texts`.
    pub rankings: Option<Arc<Rankings>>,
    pub format: Arc<dyn Format>,
    pub shape: Shape,
    /// Per-request timeout of warmup requests.
    pub warmup_timeout: Duration,
    /// How long a closed loop waits for an endpoint it lost to come back before the run
    /// stops (the request timeout: no request would wait longer for an answer).
    pub endpoint_wait: Duration,
    pub pace: Pace,
    pub plan: RunPlan,
    pub seed: u64,
    pub accuracy: Option<AccuracySpec>,
    pub price_per_hour: Option<f64>,
    /// Seconds of history in the "recent" latency view.
    pub window_s: usize,
    /// How often snapshots are published.
    pub tick: Duration,
    /// Threads that run requests (see `client_threads`); 1 keeps everything on the engine's
    /// thread.
    pub client_threads: usize,
    /// `--slo`: every phase is judged against it (empty: none).
    pub slo: Slo,
    /// How capacity searches run; `None` without an SLO (the `f` key then says so).
    pub search: Option<SearchSpec>,
    /// `--metrics-url`: the server's metrics, read around every phase.
    pub metrics: Option<Arc<Scraper>>,
    /// `--ramp`: every open-loop `--duration` phase's rate moves over its duration.
    pub ramp: Option<Ramp>,
    /// `--slice`: every phase cut into time slices this long.
    pub slice: Option<Duration>,
    /// `--replay`: the run's first phase sends these recorded requests at their times
    /// instead of drawing arrivals.
    pub replay: Option<Arc<encbench_core::replay::ReplayPlan>>,
    /// When the accuracy check before the load finds the route is none of the server's
    /// (every request 404 or 405), no load runs: it would only count the same refusal.
    pub stop_without_route: bool,
    /// `--records`: a line for every request sent, warmup included.
    pub records: Option<encbench_core::export::records::RecordsTx>,
}

/// How a capacity search runs (see `capacity`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchSpec {
    pub precision: f64,
    pub probe: ProbeRule,
    /// `--find-capacity`: search before anything else.
    pub at_start: bool,
}
