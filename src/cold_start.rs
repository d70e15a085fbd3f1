//! The cold-start probe: after an idle period, how long until an endpoint answers at all,
//! how many attempts that took, and how the first answer compares with steady state
//! (measured on SageMaker: scale-to-zero 471 s and 95 retries, 15,422× the steady p50;
//! serverless 43.2 s, 364×).

use crate::export::rfc3339;
use crate::payload::Prepared;
use crate::stats::{ABANDONED, LatencySummary, phase_histogram};
use crate::target::Target;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::time::{Duration, Instant, SystemTime};

#[derive(Debug, Clone, Serialize)]
pub struct ColdStartProbe {
    #[serde(serialize_with = "secs")]
    pub idle_wait: Duration,
    #[serde(serialize_with = "secs")]
    pub retry_interval: Duration,
    #[serde(serialize_with = "secs")]
    pub give_up: Duration,
    pub steady_n: u64,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

#[derive(Debug, Clone, Serialize)]
pub struct ColdStartResult {
    /// When the first attempt was sent; null when the probe was stopped before it.
    pub started_at: Option<String>,
    /// Attempts up to and including the first success.
    pub attempts: u64,
    /// Failed attempts by error kind; one still in flight when the probe was stopped is
    /// `Abandoned`.
    pub failures: BTreeMap<String, u64>,
    /// From the first attempt's send to the first success's last byte, in seconds.
    pub first_success: Option<f64>,
    /// The successful attempt's own latency, in milliseconds.
    pub first_success_latency_ms: Option<f64>,
    pub steady_ms: Option<LatencySummary>,
    pub steady_ok: u64,
    /// Time to first success over the steady-state p50.
    pub ratio: Option<f64>,
    /// Stopped by SIGINT/SIGTERM: the figures above are the attempts so far.
    pub stopped_early: bool,
}

/// What the probe has seen so far, kept when it is stopped part way.
struct Seen {
    started_at: Option<String>,
    attempts: u64,
    failures: BTreeMap<String, u64>,
    /// Time to first success and that attempt's latency.
    first: Option<(Duration, Duration)>,
    in_flight: bool,
    steady: Histogram<u64>,
}

async fn probe(target: &dyn Target, body: &Prepared, p: &ColdStartProbe, seen: &mut Seen) {
    countdown(p.idle_wait).await;
    seen.started_at = Some(rfc3339(SystemTime::now()));
    let t0 = Instant::now();
    while t0.elapsed() < p.give_up {
        seen.attempts += 1;
        let sent = Instant::now();
        seen.in_flight = true;
        let answer = target.invoke(body).await;
        seen.in_flight = false;
        match answer {
            Ok(_) => {
                seen.first = Some((t0.elapsed(), sent.elapsed()));
                break;
            }
            Err(kind) => {
                *seen.failures.entry(kind.key()).or_default() += 1;
                crate::failure::say(format_args!(
                    "attempt {}: {} after {:.1} s",
                    seen.attempts,
                    kind.key(),
                    t0.elapsed().as_secs_f64()
                ));
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
        if target.invoke(body).await.is_ok() {
            seen.steady
                .saturating_record((sent.elapsed().as_micros() as u64).max(1));
        }
    }
}

/// The probe, until it ends or `stop` does; stopped, it keeps every attempt made so far.
pub async fn run(
    target: &dyn Target,
    body: Prepared,
    p: &ColdStartProbe,
    stop: impl Future<Output = ()>,
) -> ColdStartResult {
    let mut seen = Seen {
        started_at: None,
        attempts: 0,
        failures: BTreeMap::new(),
        first: None,
        in_flight: false,
        steady: phase_histogram(),
    };
    let stopped = tokio::select! {
        // Stop first: a signal that came with the last answer still stops the steady phase.
        biased;
        () = stop => true,
        () = probe(target, &body, p, &mut seen) => false,
    };
    if seen.in_flight {
        *seen.failures.entry(ABANDONED.into()).or_default() += 1;
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
        stopped_early: stopped,
    }
}

/// A visible countdown on stderr, so a long idle wait does not look like a hang.
async fn countdown(wait: Duration) {
    if wait.is_zero() {
        return;
    }
    let end = Instant::now() + wait;
    let tty = std::io::stderr().is_terminal();
    let mut first = true;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let line = format!("idle wait: {} s left", left.as_secs_f64().ceil());
        if tty {
            crate::failure::say_raw(format_args!("\r{line}\x1b[K"));
        } else if first || left.as_secs().is_multiple_of(10) {
            // The first line at once: up to ten silent seconds look like a hang.
            crate::failure::say(format_args!("{line}"));
        }
        first = false;
        tokio::time::sleep(left.min(Duration::from_secs(1))).await;
    }
    if tty {
        crate::failure::say(format_args!(""));
    }
}

pub fn table(target: &str, r: &ColdStartResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "cold start — {target}");
    let failed: Vec<String> = r.failures.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let _ = writeln!(
        out,
        "  attempts               {} ({} failed{})",
        r.attempts,
        r.attempts - u64::from(r.first_success.is_some()),
        if failed.is_empty() {
            String::new()
        } else {
            format!(": {}", failed.join(", "))
        }
    );
    match (r.first_success, r.first_success_latency_ms) {
        (Some(t), Some(l)) => {
            let _ = writeln!(out, "  time to first success  {t:.2} s");
            let _ = writeln!(out, "  first-success latency  {l:.1} ms");
        }
        _ if r.stopped_early => {
            let _ = writeln!(out, "  no success before the stop");
        }
        _ => {
            let _ = writeln!(out, "  no success before giving up");
        }
    }
    if let Some(s) = &r.steady_ms {
        let _ = writeln!(
            out,
            "  steady-state p50       {:.1} ms (n={}, p99 {:.1} ms)",
            s.p50, r.steady_ok, s.p99
        );
    }
    if r.stopped_early {
        let _ = writeln!(out, "  stopped (SIGINT/SIGTERM): the attempts so far");
    }
    if let Some(x) = r.ratio {
        let _ = writeln!(
            out,
            "  ratio                  {x:.0}× (time to first success / steady p50)"
        );
    }
    out
}

pub fn export(target: &str, p: &ColdStartProbe, r: &ColdStartResult) -> serde_json::Value {
    serde_json::json!({
        "schema_version": 1,
        "tool": "encbench-tui",
        "tool_version": env!("CARGO_PKG_VERSION"),
        "kind": "cold_start",
        "target": target,
        "probe": p,
        "cold_start": r,
    })
}
