//! Fixed values for the unit tests of every layer and the frame benchmark (nothing in the
//! binary calls them, so the linker leaves them out of it): phase rows and a full accuracy
//! check.

use crate::arrival::Pace;
use crate::input::{Shape, shipped_samples};
use crate::plan::{PhaseKind, PhaseSpec, StopAt};
use crate::results::PhaseResult;
use crate::stats::PhaseRecorder;
use crate::verdicts::{AccuracyReport, Verdict};

/// A finished closed-loop phase of 100 requests, padded to 512 tokens, with the given
/// throughput, median, tail and efficiency.
pub fn phase_row(
    kind: PhaseKind,
    b: usize,
    c: usize,
    rps: f64,
    p50: f64,
    p99: f64,
    eff: Option<f64>,
) -> PhaseResult {
    let spec = PhaseSpec {
        kind,
        batch_size: b,
        concurrency: c,
        warmup: 3,
        stop: StopAt::Count(100),
        repetition: None,
    };
    let pace = Pace {
        rate_per_s: None,
        burstiness: 1.0,
    };
    let shape = Shape {
        pad_to_max: true,
        max_len: 512,
    };
    let mut r = PhaseResult::new(&spec, pace, shape, &PhaseRecorder::default());
    r.n = 100;
    r.ok = 100;
    r.req_per_s = rps;
    r.samples_per_s = rps * b as f64;
    r.latency_ms.p50 = p50;
    r.latency_ms.p99 = p99;
    // As an n = 100 phase's would be: the median within a few percent, p99 only from below.
    let i = crate::interval::Interval;
    r.latency_ms.ci95 = Some(crate::interval::Ci95 {
        p50: i(p50 * 0.98, Some(p50 * 1.03)),
        p90: i(p50, Some(p99)),
        p95: i(p50, None),
        p99: i(p99 * 0.95, None),
        p999: i(p99 * 0.95, None),
    });
    r.p99_over_p50 = Some(p99 / p50);
    r.batch_efficiency = eff;
    r
}

/// The shipped samples, every verdict right.
pub fn all_correct() -> AccuracyReport {
    let samples: Vec<Verdict> = shipped_samples()
        .into_iter()
        .map(|s| Verdict {
            premise: s.premise,
            hypothesis: s.hypothesis,
            predicted: Some(s.expected.clone()),
            expected: s.expected,
            ok: true,
            error: None,
            candidates: vec![],
            ranking: vec![],
        })
        .collect();
    AccuracyReport::of(samples)
}
