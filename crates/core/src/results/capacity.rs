//! What a capacity search found, as exports keep it (the search itself is the capacity
//! module's, a layer above).

use crate::interval::Interval;
use crate::stats::LatencySummary;
use serde::{Deserialize, Serialize};

/// One phase of the search, as the export keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub rate_per_s: f64,
    pub n: u64,
    /// Scheduled latency over every request due, errors and unsent requests counted as
    /// late: the figures the SLO was judged on, so the row and its verdict say one p99.
    pub p50: f64,
    pub p99: f64,
    /// The 95 % intervals of `p50` and `p99`, from the order statistics over the same
    /// requests due (`interval`); absent in older exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ci95: Option<Interval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ci95: Option<Interval>,
    pub meets: bool,
    pub stable: bool,
    pub stop_reason: String,
    /// Whether the search took the probe as a bound. A probe cut short (the run stopped
    /// while it ran) measured too little to say anything: listed, never a bound.
    #[serde(default = "yes")]
    pub bound: bool,
    /// The objective the probe missed, with what it measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed: Option<String>,
}

fn yes() -> bool {
    true
}

/// One batch size's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// The compared target searched (`compare` exports only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// `--repeat`: which of the searches this answer is (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetition: Option<u32>,
    pub batch_size: usize,
    pub concurrency: usize,
    /// The SLO searched against ("p99 ≤ 100 ms").
    pub slo: String,
    /// Closed-loop throughput at the concurrency cap: the bracket's upper end.
    pub ceiling_per_s: Option<f64>,
    /// The highest offered rate that met the SLO; `None` when none did.
    pub max_rate_per_s: Option<f64>,
    /// The lowest rate probed that did not, above `max_rate_per_s`.
    pub failed_at_per_s: Option<f64>,
    /// A 95 % interval on the rate at which the endpoint meets the SLO, `[lo, hi]`: the
    /// bracket the search stopped in (`max_rate_per_s` to `failed_at_per_s`, or the
    /// ceiling), widened by the noise of its end probes (`capacity::uncertainty`). Absent
    /// when no rate met, for a search stopped before it converged, and in older exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate_ci95_per_s: Option<[f64; 2]>,
    /// The probes the answer pooled (those near it whose noise their own samples told) and
    /// the requests they measured (`capacity::pool`); absent where the answer is the
    /// highest rate that met (no probe near it could be weighed), and in older exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooled_probes: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooled_requests: Option<u64>,
    /// At `max_rate_per_s`: samples/s and goodput are the rate times the probe's shares of
    /// the requests due (ok, and ok within the bound), so neither can exceed the rate they
    /// stand beside; cost follows the samples/s. Latency is the probe's over the requests
    /// due (`Probe`), its intervals too.
    pub samples_per_s: Option<f64>,
    pub latency_ms: Option<LatencySummary>,
    pub goodput_per_s: Option<f64>,
    pub cost_per_1m_usd: Option<f64>,
    pub probes: Vec<Probe>,
    /// The answer in one line.
    pub verdict: String,
    /// False when the search was stopped before it converged.
    pub complete: bool,
}
