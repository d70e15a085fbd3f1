//! A fixed snapshot for screen tests: a live phase after a batch and a concurrency sweep,
//! with errors and a full accuracy check. Values follow the seed's figures.

use super::app::Info;
use crate::accuracy::{AccuracyReport, Verdict, shipped_samples};
use crate::arrival::Pace;
use crate::engine::{LiveStats, PhaseView, RunState, Snapshot};
use crate::stats::{LatencySummary, TimelineEntry, view_histogram};
use crate::sweep::analysis::tests::row;
use crate::sweep::{PhaseKind, StopAt};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub fn info() -> Info {
    Info {
        target: "http://127.0.0.1:8080".into(),
        engine: "hf".into(),
        simulated: true,
        knee: 0.8,
        window_s: 10,
    }
}

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
                let r = if i < 60 { 40.0 } else { 50.0 } + (i % 7) as f64;
                TimelineEntry::Point {
                    t_s: i as f64,
                    req_per_s: r,
                    samples_per_s: r,
                    p50_ms: Some(26.0),
                    p99_ms: Some(44.0),
                    errors: (i % 30 == 0) as u64,
                }
            }
        })
        .collect();
    let mut phases = vec![
        row(PhaseKind::Batch, 1, 1, 38.3, 26.1, 26.3, Some(1.0)),
        row(PhaseKind::Batch, 8, 1, 9.7, 103.3, 103.4, Some(0.25)),
        row(PhaseKind::Batch, 32, 1, 2.7, 367.6, 367.9, Some(0.07)),
        row(PhaseKind::Concurrency, 1, 1, 38.0, 26.1, 26.4, None),
        row(PhaseKind::Concurrency, 1, 2, 75.1, 26.2, 26.9, None),
        row(PhaseKind::Concurrency, 1, 4, 148.0, 26.9, 28.0, None),
        row(PhaseKind::Concurrency, 1, 8, 151.0, 52.0, 55.0, None),
    ];
    crate::engine::report::derive(&mut phases, Some(5.752));
    let samples: Vec<Verdict> = shipped_samples()
        .into_iter()
        .map(|s| Verdict {
            premise: s.premise,
            hypothesis: s.hypothesis,
            predicted: Some(s.expected.clone()),
            expected: s.expected,
            ok: true,
            error: None,
        })
        .collect();
    let accuracy = AccuracyReport {
        passed: 4,
        total: 4,
        samples,
    };
    let mut errors = BTreeMap::new();
    errors.insert("ThrottlingException".to_string(), 3);
    errors.insert("ModelError(500)".to_string(), 1);
    let latency = LatencySummary {
        min: 24.0,
        mean: 26.4,
        p50: 25.9,
        p90: 27.1,
        p95: 27.6,
        p99: 44.1,
        p999: 45.9,
        max: 46.0,
    };
    Snapshot {
        elapsed: Duration::from_secs(83),
        state: RunState::Running,
        target: "http://127.0.0.1:8080".into(),
        pace: Pace {
            rate_per_s: Some(50.0),
            burstiness: 1.0,
        },
        concurrency: 2,
        batch_size: 1,
        in_flight: 1,
        phase: Some(PhaseView {
            kind: PhaseKind::Live,
            index: 9,
            planned: None,
            batch_size: 1,
            concurrency: 2,
            warmup: 3,
            stop: StopAt::Never,
            sent: 1004,
        }),
        current: LiveStats {
            n: 1000,
            ok: 996,
            errors,
            latency,
            service: LatencySummary {
                p50: 25.8,
                ..latency
            },
            tokenize: None,
            dispatch_delay: LatencySummary {
                p99: 0.12,
                ..LatencySummary::default()
            },
            req_per_s: 49.8,
            samples_per_s: 49.8,
        },
        recent_latency: recent,
        run_latency: run,
        timeline_tail,
        phases: Arc::new(phases),
        accuracy_before: Some(accuracy.clone()),
        accuracy_latest: Some(accuracy),
        accuracy_running: false,
    }
}
