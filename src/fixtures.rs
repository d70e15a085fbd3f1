//! Fixed values for the screen tests and the frame benchmark (nothing in the binary calls
//! them, so the linker leaves them out of it): the snapshot the screen tests draw (a live
//! phase after a batch and a concurrency sweep, with errors, modelled on mDeBERTa on an
//! ml.g6.12xlarge inference component), and the lower layers' phase rows.

use crate::tui::state::Info;
use encbench_core::arrival::Pace;
pub use encbench_core::fixtures::{all_correct, phase_row};
use encbench_core::plan::{PhaseKind, StopAt};
use encbench_core::results::{PhaseResult, derive};
use encbench_core::stats::{LatencySummary, TimelineEntry, view_histogram};
use encbench_load::engine::{LiveStats, PhaseView, RunState, Snapshot};
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub fn info() -> Info {
    Info {
        target: "http://127.0.0.1:8080".into(),
        format: "hf".into(),
        simulated: true,
        lengths: None,
        knee: 0.8,
        window_s: 10,
        rerank: false,
    }
}

/// What changes between the snapshots of a live phase; the rest is fixed.
pub struct Live {
    pub elapsed: Duration,
    /// The live phase's place among the run's phases (1-based).
    pub phase_index: usize,
    pub rate_per_s: f64,
    pub concurrency: usize,
    pub in_flight: usize,
    pub schedule: Option<encbench_load::engine::ScheduleStatus>,
    pub sent: u64,
    pub current: LiveStats,
    pub recent_latency: Histogram<u64>,
    pub run_latency: Histogram<u64>,
    pub timeline_tail: Vec<TimelineEntry>,
    pub phases: Vec<PhaseResult>,
}

/// The snapshot of a running live phase at batch 1 with Poisson arrivals and every verdict
/// right before and after.
pub fn live_snapshot(l: Live) -> Snapshot {
    let accuracy = all_correct();
    Snapshot {
        elapsed: l.elapsed,
        state: RunState::Running,
        target: "http://127.0.0.1:8080".into(),
        pace: Pace {
            rate_per_s: Some(l.rate_per_s),
            burstiness: 1.0,
        },
        concurrency: l.concurrency,
        concurrency_default: false,
        batch_size: 1,
        in_flight: l.in_flight,
        schedule: l.schedule,
        phase: Some(PhaseView {
            kind: PhaseKind::Live,
            index: l.phase_index,
            step: None,
            batch_size: 1,
            concurrency: l.concurrency,
            warmup: 3,
            stop: StopAt::Never,
            repetition: None,
            sent: l.sent,
        }),
        current: l.current,
        recent_latency: l.recent_latency,
        run_latency: l.run_latency,
        run_errors: 0,
        timeline_tail: l.timeline_tail,
        phases: Arc::new(l.phases),
        accuracy_before: Some(accuracy.clone()),
        accuracy_latest: Some(accuracy),
        accuracy_running: false,
        accuracy_progress: (0, 0),
        capacity: Vec::new(),
        searching: None,
        notices: Vec::new(),
        starts_in: None,
        endpoint_lost: Vec::new(),
    }
}

/// The screen tests' snapshot: 83 s into a live phase at 50 req/s after both sweeps.
pub fn snapshot() -> Snapshot {
    let mut recent = view_histogram();
    let mut run = view_histogram();
    // A deterministic spread around 26 ms with a tail.
    for i in 0..1000u64 {
        let v = 24_000 + (i * 37 % 4_000) + if i % 50 == 0 { 20_000 } else { 0 };
        recent.record(v).unwrap();
        run.record(v).unwrap();
        run.record(v * 2).unwrap();
    }
    let timeline_tail = (0..120)
        .map(|i| {
            if i == 60 {
                TimelineEntry::Event {
                    t_s: 60.5,
                    event: "request_rate 40.0 -> 50.0".into(),
                }
            } else {
                let r = if i < 60 { 40.0 } else { 50.0 } + f64::from(i % 7);
                TimelineEntry::Point {
                    t_s: f64::from(i),
                    req_per_s: r,
                    samples_per_s: r,
                    p50_ms: Some(26.0),
                    p99_ms: Some(44.0),
                    errors: u64::from(i % 30 == 0),
                }
            }
        })
        .collect();
    let mut phases = vec![
        phase_row(PhaseKind::Batch, 1, 1, 38.3, 26.1, 26.3, Some(1.0)),
        phase_row(PhaseKind::Batch, 8, 1, 9.7, 103.3, 103.4, Some(0.25)),
        phase_row(PhaseKind::Batch, 32, 1, 2.7, 367.6, 367.9, Some(0.07)),
        phase_row(PhaseKind::Concurrency, 1, 1, 38.0, 26.1, 26.4, None),
        phase_row(PhaseKind::Concurrency, 1, 2, 75.1, 26.2, 26.9, None),
        phase_row(PhaseKind::Concurrency, 1, 4, 148.0, 26.9, 28.0, None),
        phase_row(PhaseKind::Concurrency, 1, 8, 151.0, 52.0, 55.0, None),
    ];
    derive(&mut phases, Some(5.752));
    let mut errors = BTreeMap::new();
    errors.insert("ThrottlingException".to_string(), 3);
    errors.insert("ModelError(500)".to_string(), 1);
    // The segment's figures as the engine derives them, intervals included.
    let latency = LatencySummary::of(&recent);
    let mut dispatch = view_histogram();
    for i in 0..1000u64 {
        dispatch.record(20 + i * 7 % 100).unwrap();
    }
    live_snapshot(Live {
        elapsed: Duration::from_secs(83),
        phase_index: 9,
        rate_per_s: 50.0,
        concurrency: 2,
        in_flight: 1,
        schedule: Some(encbench_load::engine::ScheduleStatus {
            offered_per_s: 50.0,
            backlog: 0,
            lag: Duration::ZERO,
            queued: 0,
            queue_lag: Duration::ZERO,
            overloaded: false,
        }),
        sent: 1004,
        current: LiveStats {
            n: 1000,
            ok: 996,
            errors,
            said: std::collections::BTreeMap::new(),
            latency,
            // Closed loop: nothing waits to be sent, so service time is the latency.
            service: latency,
            tokenize: None,
            dispatch_delay: LatencySummary::of(&dispatch),
            req_per_s: 49.8,
            samples_per_s: 49.8,
            slo: None,
            server: None,
            server_time: None,
        },
        recent_latency: recent,
        run_latency: run,
        timeline_tail,
        phases,
    })
}
