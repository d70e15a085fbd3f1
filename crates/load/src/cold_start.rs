//! The cold-start probe: after an idle period, how long until an endpoint answers at all,
//! how many attempts that took, and how the first answer compares with steady state
//! (measured on SageMaker: scale-to-zero 471 s and 95 retries, 15,422× the steady p50;
//! serverless 43.2 s, 364×).

use encbench_core::export::rfc3339;
pub use encbench_core::results::cold_start::{ColdStartExport, ColdStartProbe, ColdStartResult};
use encbench_core::stats::{ABANDONED, LatencySummary, phase_histogram};
use encbench_wire::client::{Failure, Target};
use encbench_wire::payload::Prepared;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

/// What the probe tells while it goes, for the front-end to show: a long idle wait or a
/// long run of failures must not look like a hang.
#[derive(Clone, Copy)]
pub enum Progress<'a> {
    /// The idle wait before the first attempt, this much of it left: told about once a
    /// second.
    IdleLeft(Duration),
    /// The idle wait is over.
    IdleOver,
    /// An attempt failed, `after` the first attempt went.
    Failed {
        attempt: u64,
        failure: &'a Failure,
        after: Duration,
    },
}

/// What the probe has seen so far, kept when it is stopped part way.
struct Seen {
    started_at: Option<String>,
    attempts: u64,
    failures: BTreeMap<String, u64>,
    /// Time to first success and that attempt's latency.
    first: Option<(Duration, Duration)>,
    /// Which stage's request is out, if one is: a stop abandons it there.
    in_flight: Option<Stage>,
    steady: Histogram<u64>,
    steady_sent: u64,
    steady_failures: BTreeMap<String, u64>,
}

#[derive(Clone, Copy)]
enum Stage {
    Attempt,
    Steady,
}

async fn probe(
    target: &dyn Target,
    body: &Prepared,
    p: &ColdStartProbe,
    seen: &mut Seen,
    progress: &mut impl FnMut(Progress<'_>),
) {
    countdown(p.idle_wait, progress).await;
    seen.started_at = Some(rfc3339(SystemTime::now()));
    let t0 = Instant::now();
    while t0.elapsed() < p.give_up {
        seen.attempts += 1;
        let sent = Instant::now();
        seen.in_flight = Some(Stage::Attempt);
        let answer = target.invoke(body).await;
        seen.in_flight = None;
        match answer {
            Ok(_) => {
                seen.first = Some((t0.elapsed(), sent.elapsed()));
                break;
            }
            Err(failure) => {
                *seen.failures.entry(failure.kind.key()).or_default() += 1;
                progress(Progress::Failed {
                    attempt: seen.attempts,
                    failure: &failure,
                    after: t0.elapsed(),
                });
                let left = p.give_up.saturating_sub(t0.elapsed());
                tokio::time::sleep(p.retry_interval.min(left)).await;
            }
        }
    }
    if seen.first.is_none() {
        return;
    }
    for _ in 0..p.steady_n {
        let sent = Instant::now();
        seen.steady_sent += 1;
        seen.in_flight = Some(Stage::Steady);
        let answer = target.invoke(body).await;
        seen.in_flight = None;
        match answer {
            Ok(_) => seen
                .steady
                .saturating_record((sent.elapsed().as_micros() as u64).max(1)),
            // Counted, not retried: a steady phase that fails is part of the answer (a
            // second worker still loading its model, say), as in a run.
            Err(failure) => *seen.steady_failures.entry(failure.kind.key()).or_default() += 1,
        }
    }
}

/// The probe, until it ends or `stop` does; stopped, it keeps every attempt made so far.
pub async fn run(
    target: &dyn Target,
    body: Prepared,
    p: &ColdStartProbe,
    stop: impl Future<Output = ()>,
    mut progress: impl FnMut(Progress<'_>),
) -> ColdStartResult {
    let mut seen = Seen {
        started_at: None,
        attempts: 0,
        failures: BTreeMap::new(),
        first: None,
        in_flight: None,
        steady: phase_histogram(),
        steady_sent: 0,
        steady_failures: BTreeMap::new(),
    };
    let stopped = tokio::select! {
        // Stop first: a signal that came with the last answer still stops the steady phase.
        biased;
        () = stop => true,
        () = probe(target, &body, p, &mut seen, &mut progress) => false,
    };
    match seen.in_flight {
        Some(Stage::Attempt) => *seen.failures.entry(ABANDONED.into()).or_default() += 1,
        Some(Stage::Steady) => *seen.steady_failures.entry(ABANDONED.into()).or_default() += 1,
        None => {}
    }
    let h = &seen.steady;
    let steady = (!h.is_empty()).then(|| LatencySummary::of(h));
    let first_success = seen.first.map(|f| f.0.as_secs_f64());
    ColdStartResult {
        started_at: seen.started_at,
        attempts: seen.attempts,
        failures: seen.failures,
        first_success,
        first_success_latency_ms: seen.first.map(|f| f.1.as_secs_f64() * 1000.0),
        ratio: steady.and_then(|s| first_success.map(|f| f * 1000.0 / s.p50)),
        steady_ms: steady,
        steady_ok: h.len(),
        steady_sent: seen.steady_sent,
        steady_failures: seen.steady_failures,
        stopped_early: stopped,
    }
}

/// The idle wait, told as it goes.
async fn countdown(wait: Duration, progress: &mut impl FnMut(Progress<'_>)) {
    if wait.is_zero() {
        return;
    }
    let end = Instant::now() + wait;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        progress(Progress::IdleLeft(left));
        tokio::time::sleep(left.min(Duration::from_secs(1))).await;
    }
    progress(Progress::IdleOver);
}
