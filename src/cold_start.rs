//! The cold-start probe: after an idle period, how long until an endpoint answers at all,
//! how many attempts that took, and how the first answer compares with steady state
//! (measured on SageMaker: scale-to-zero 471 s and 95 retries, 15,422× the steady p50;
//! serverless 43.2 s, 364×).

use crate::export::rfc3339;
use crate::payload::Prepared;
use crate::stats::{LatencySummary, phase_histogram};
use crate::target::Target;
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
    pub started_at: String,
    /// Attempts up to and including the first success.
    pub attempts: u64,
    /// Failed attempts by error kind.
    pub failures: BTreeMap<String, u64>,
    /// From the first attempt's send to the first success's last byte, in seconds.
    pub first_success: Option<f64>,
    /// The successful attempt's own latency, in milliseconds.
    pub first_success_latency_ms: Option<f64>,
    pub steady_ms: Option<LatencySummary>,
    pub steady_ok: u64,
    /// Time to first success over the steady-state p50.
    pub ratio: Option<f64>,
}

pub async fn run(target: &dyn Target, body: Prepared, p: &ColdStartProbe) -> ColdStartResult {
    countdown(p.idle_wait).await;
    let started_at = rfc3339(SystemTime::now());
    let t0 = Instant::now();
    let (mut attempts, mut failures) = (0u64, BTreeMap::<String, u64>::new());
    let mut first = None;
    while t0.elapsed() < p.give_up {
        attempts += 1;
        let sent = Instant::now();
        match target.invoke(&body).await {
            Ok(_) => {
                first = Some((t0.elapsed(), sent.elapsed()));
                break;
            }
            Err(kind) => {
                *failures.entry(kind.key()).or_default() += 1;
                eprintln!(
                    "attempt {attempts}: {} after {:.1} s",
                    kind.key(),
                    t0.elapsed().as_secs_f64()
                );
                let left = p.give_up.saturating_sub(t0.elapsed());
                tokio::time::sleep(p.retry_interval.min(left)).await;
            }
        }
    }
    let mut result = ColdStartResult {
        started_at,
        attempts,
        failures,
        first_success: first.map(|f| f.0.as_secs_f64()),
        first_success_latency_ms: first.map(|f| f.1.as_secs_f64() * 1000.0),
        steady_ms: None,
        steady_ok: 0,
        ratio: None,
    };
    if first.is_none() {
        return result;
    }
    let mut h = phase_histogram();
    for _ in 0..p.steady_n {
        let sent = Instant::now();
        if target.invoke(&body).await.is_ok() {
            h.saturating_record((sent.elapsed().as_micros() as u64).max(1));
        }
    }
    result.steady_ok = h.len();
    if !h.is_empty() {
        let steady = LatencySummary::of(&h);
        result.ratio = result.first_success.map(|f| f * 1000.0 / steady.p50);
        result.steady_ms = Some(steady);
    }
    result
}

/// A visible countdown on stderr, so a long idle wait does not look like a hang.
async fn countdown(wait: Duration) {
    if wait.is_zero() {
        return;
    }
    let end = Instant::now() + wait;
    let tty = std::io::stderr().is_terminal();
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let line = format!("idle wait: {} s left", left.as_secs_f64().ceil());
        if tty {
            eprint!("\r{line}\x1b[K");
        } else if left.as_secs().is_multiple_of(10) {
            eprintln!("{line}");
        }
        tokio::time::sleep(left.min(Duration::from_secs(1))).await;
    }
    if tty {
        eprintln!();
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
