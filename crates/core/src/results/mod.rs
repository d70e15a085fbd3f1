//! What a finished phase and a finished run amount to: the records exports are made of, and
//! (`analysis`) what a finished sweep says.

pub mod analysis;
pub mod capacity;
mod client_cpu;
pub mod cold_start;
mod derive;
pub mod repeat;

pub use client_cpu::ClientCpu;
pub use derive::{batch_efficiency, derive, tail_ratio};

use crate::arrival::Pace;
use crate::input::Shape;
use crate::plan::{PhaseKind, PhaseSpec};
use crate::slo::{Measured, Slo};
use crate::stats::{LatencySummary, PhaseRecorder, TimelineEntry, round3};
use crate::verdicts::AccuracyReport;
use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::SystemTime;

/// One row of a results table; field names are the export contract
/// (`assets/export.schema.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseResult {
    /// The compared target this phase measured (`compare` exports only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub kind: PhaseKind,
    /// `--repeat`: which of the phase's repetitions this is (1-based); absent on a phase
    /// measured once and on a pooled phase, which holds its repetitions instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetition: Option<u32>,
    /// `--shard`: which part of a run over several hosts this phase is. Its concurrency,
    /// counts and rates are this host's share; `report --merge` adds the shards up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::shard::Shard>,
    pub batch_size: usize,
    pub concurrency: usize,
    /// `null` is an infinite rate: closed loop at the concurrency cap.
    pub request_rate: Option<f64>,
    /// `null` is infinite burstiness: a fixed interval between sends.
    pub burstiness: Option<f64>,
    pub closed_loop: bool,
    pub pad_to_max: bool,
    pub max_len: usize,
    pub warmup: u64,
    /// Measured requests that completed (ok + errors); warmup excluded.
    pub n: u64,
    /// Measured requests sent. Equal to `n` in a finished phase (unanswered ones are counted
    /// as `Abandoned` errors); an export written mid-phase has the difference in flight.
    #[serde(default)]
    pub sent: u64,
    /// Open loop: measured requests due before the phase ended that never got a slot.
    #[serde(default)]
    pub unsent: u64,
    pub ok: u64,
    pub errors: BTreeMap<String, u64>,
    /// The server's own words with the first error of each kind that had any (the start of
    /// its reply body, scrubbed, in one line, at most 200 characters).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub error_bodies: BTreeMap<String, String>,
    /// Successful requests by SageMaker's invoked production variant (SageMaker targets).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variants: BTreeMap<String, u64>,
    pub latency_ms: LatencySummary,
    pub service_ms: LatencySummary,
    pub dispatch_delay_ms: LatencySummary,
    /// Client-side tokenization (triton, vllm), part of the latency above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenize_ms: Option<LatencySummary>,
    /// Tokens per input sent and per request (see `lengths`), whatever the inputs' source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<crate::lengths::InputTokens>,
    /// The server's time per request from its replies' headers (TEI's `x-queue-time`,
    /// `x-inference-time`, `x-tokenization-time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_time_ms: Option<crate::server_metrics::headers::ServerTimeSummary>,
    /// The client's CPU time per request over the phase, user and system, in ms (the
    /// process's, from getrusage at the phase's start and end: see `ClientCpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cpu_ms_per_request: Option<ClientCpu>,
    /// Server-side breakdown from KServe v2 statistics, diffed around the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerBreakdown>,
    /// `--metrics-url`: the server's Prometheus metrics, diffed around the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_metrics: Option<crate::server_metrics::ServerMetrics>,
    /// `--cloudwatch-wait`: SageMaker's own metrics for the endpoint over the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloudwatch: Option<crate::server_metrics::cloudwatch::CloudWatchFigures>,
    /// When the phase ran, by the wall clock: CloudWatch's window. Not exported (the
    /// timeline has it relative to the run's start).
    #[serde(skip)]
    pub wall: Option<(std::time::SystemTime, std::time::SystemTime)>,
    /// A phase that kept its samples (a capacity probe): how noisy each percentile is,
    /// which the search weighs the probe by. Not exported: a figure for the search alone.
    #[serde(skip)]
    pub quantile_noise: Option<crate::stats::QuantileNoise>,
    pub p99_over_p50: Option<f64>,
    pub duration_s: f64,
    pub req_per_s: f64,
    /// Open loop: measured requests due per second (sent plus unsent); `None` closed loop.
    #[serde(default)]
    pub offered_per_s: Option<f64>,
    /// Open loop: the schedule lag or the server's queue lag kept growing (see
    /// `stats::ScheduleOutcome`).
    #[serde(default)]
    pub overloaded: bool,
    #[serde(default)]
    pub max_lag_ms: Option<f64>,
    /// Open loop: the server's queue lag at the phase's end (see `stats::queue_lag`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_lag_ms: Option<f64>,
    pub samples_per_s: f64,
    /// Fewer measured requests than the concurrency cap: every request may have been in
    /// flight at once, so req/s (and samples/s, cost) is one latency's worth, not a rate.
    #[serde(default)]
    pub rate_not_meaningful: bool,
    /// Under `--slo`: whether the phase met every objective (see `slo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_met: Option<bool>,
    /// The first objective missed, with what was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_missed: Option<String>,
    /// Ok requests within the SLO's latency bound, per second and as a share of those due.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput_share: Option<f64>,
    /// Phases that run until stable (capacity probes, `--until-stable`): whether they were,
    /// and why they ended (`stable`, `time`, `overloaded`, `stopped`, `max_requests`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    pub batch_efficiency: Option<f64>,
    pub cost_per_1m_usd: Option<f64>,
    /// Scheduled latency in microseconds, HdrHistogram V2 (deflate-free) serialization, base64.
    pub histogram_hdr_b64: String,
    /// Service time and dispatch delay histograms, same encoding: `report --merge` combines
    /// them exactly too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_hdr_b64: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatch_delay_hdr_b64: Option<String>,
    /// `--repeat`: this phase pools these repetitions (every request of each), and `across`
    /// is how its headline figures spread from one repetition to the next.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repetitions: Vec<PhaseResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub across: Option<repeat::Across>,
    /// `--ramp`: the rate moved over the phase (`request_rate` is then its mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<crate::ramp::Ramp>,
    /// `--slice`: the phase cut into time slices (see `slices`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slices: Vec<crate::slices::SliceResult>,
    /// `--slice` under `--slo`: where each objective first broke, slice by slice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slo_breaks: Vec<crate::slices::SloBreak>,
    /// Spans of the phase in which connecting to the endpoint kept failing (see `reach`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoint_lost: Vec<crate::reach::EndpointLost>,
}

/// HdrHistogram V2 (no deflate) in standard base64: the export's histogram encoding.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2Serializer::new()
        .serialize(h, &mut buf)
        .expect("serializing to memory cannot fail");
    base64::engine::general_purpose::STANDARD.encode(&buf)
}

pub fn decode_histogram(b64: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| format!("not base64: {e}"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| format!("not an HdrHistogram: {e:?}"))
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl PhaseResult {
    /// Errors of every kind.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Requests sent and still unanswered when nobody will wait for them any more (the
    /// process exits at once) become `Abandoned` errors, so `n = sent` holds in the export.
    pub fn abandon_in_flight(&mut self) {
        let missing = self.sent.saturating_sub(self.n);
        if missing > 0 {
            *self
                .errors
                .entry(crate::stats::ABANDONED.into())
                .or_default() += missing;
            self.n = self.sent;
        }
    }

    pub fn new(spec: &PhaseSpec, pace: Pace, shape: Shape, rec: &PhaseRecorder) -> PhaseResult {
        let latency = LatencySummary::of(&rec.scheduled);
        PhaseResult {
            target: None,
            kind: spec.kind,
            repetition: spec.repetition.map(|r| r.0),
            shard: None,
            batch_size: spec.batch_size,
            concurrency: spec.concurrency,
            request_rate: pace.rate_per_s,
            burstiness: finite(pace.burstiness),
            closed_loop: pace.is_closed_loop(),
            pad_to_max: shape.pad_to_max,
            max_len: shape.max_len,
            warmup: spec.warmup,
            n: rec.completed(),
            sent: rec.sent,
            unsent: rec.schedule.map_or(0, |s| s.unsent),
            ok: rec.ok,
            errors: rec.errors.clone(),
            error_bodies: rec.said.clone(),
            variants: rec.variants.clone(),
            latency_ms: latency,
            service_ms: LatencySummary::of(&rec.service),
            dispatch_delay_ms: LatencySummary::of(&rec.dispatch_delay),
            tokenize_ms: (!rec.tokenize.is_empty()).then(|| LatencySummary::of(&rec.tokenize)),
            input_tokens: rec.input_tokens.summary(),
            server_time_ms: rec.server_time.as_ref().map(|r| r.summary()),
            client_cpu_ms_per_request: None,
            server: None,
            server_metrics: None,
            cloudwatch: None,
            wall: None,
            quantile_noise: rec.probe.as_ref().map(|p| p.noise(&rec.scheduled)),
            p99_over_p50: tail_ratio(latency.p50, latency.p99),
            duration_s: round3(rec.measured_interval().as_secs_f64()),
            req_per_s: rec.req_per_s(),
            offered_per_s: rec.schedule.map(|s| s.offered_per_s),
            overloaded: rec.schedule.is_some_and(|s| s.overloaded),
            max_lag_ms: rec
                .schedule
                .map(|s| round3(s.max_lag.as_secs_f64() * 1000.0)),
            queue_lag_ms: rec
                .schedule
                .map(|s| round3(s.queue_lag.as_secs_f64() * 1000.0)),
            samples_per_s: rec.samples_per_s(),
            rate_not_meaningful: false,
            slo_met: None,
            slo_missed: None,
            goodput_per_s: None,
            goodput_share: None,
            stable: None,
            stop_reason: None,
            batch_efficiency: None,
            cost_per_1m_usd: None,
            histogram_hdr_b64: encode_histogram(&rec.scheduled),
            service_hdr_b64: Some(encode_histogram(&rec.service)),
            dispatch_delay_hdr_b64: Some(encode_histogram(&rec.dispatch_delay)),
            repetitions: Vec::new(),
            across: None,
            ramp: None,
            slices: Vec::new(),
            slo_breaks: Vec::new(),
            endpoint_lost: Vec::new(),
        }
    }
}

impl PhaseResult {
    /// Judges the phase against `slo` from its scheduled-latency histogram (see `slo`).
    pub fn judge(&mut self, slo: &Slo, scheduled: &Histogram<u64>) {
        if slo.is_empty() {
            return;
        }
        let j = slo.judge(&Measured {
            scheduled,
            ok: self.ok,
            errors: self.error_count(),
            unsent: self.unsent,
            overloaded: self.overloaded,
            req_per_s: self.req_per_s,
        });
        self.slo_breaks = crate::slices::first_breaks(&self.slices, slo);
        self.slo_met = Some(j.met);
        self.slo_missed = j.missed;
        self.goodput_per_s = Some(round3(j.goodput_per_s));
        self.goodput_share = Some((j.goodput_share * 1e4).round() / 1e4);
    }
}

/// Where a request's time went inside the server (Triton's statistics), per request, in
/// milliseconds; warmup requests of the phase are included.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ServerBreakdown {
    pub inference_count: u64,
    pub execution_count: u64,
    /// Inputs per model execution: how much the server's batcher merged.
    pub batch_factor: Option<f64>,
    pub queue_ms: f64,
    pub compute_input_ms: f64,
    pub compute_infer_ms: f64,
    pub compute_output_ms: f64,
}

impl ServerBreakdown {
    pub fn from_stats(s: &crate::server_metrics::stats::ServerStats) -> ServerBreakdown {
        let per = |ns: u64| {
            if s.success_count > 0 {
                ns as f64 / s.success_count as f64 / 1e6
            } else {
                0.0
            }
        };
        ServerBreakdown {
            inference_count: s.inference_count,
            execution_count: s.execution_count,
            batch_factor: (s.execution_count > 0)
                .then(|| s.inference_count as f64 / s.execution_count as f64),
            queue_ms: per(s.queue_ns),
            compute_input_ms: per(s.compute_input_ns),
            compute_infer_ms: per(s.compute_infer_ns),
            compute_output_ms: per(s.compute_output_ns),
        }
    }
}

/// Everything a run produced; the export is this plus the configuration.
#[derive(Debug, Clone)]
pub struct RunReport {
    pub started_at: SystemTime,
    pub ended_at: SystemTime,
    pub phases: Vec<PhaseResult>,
    /// Capacity searches: one answer per batch size searched.
    pub capacity: Vec<capacity::Capacity>,
    pub accuracy_before: Option<AccuracyReport>,
    pub accuracy_after: Option<AccuracyReport>,
    pub timeline: Vec<TimelineEntry>,
    /// Set when the run was stopped (Ctrl-C, `q`) before its plan finished.
    pub stopped_early: bool,
    pub error: Option<String>,
    /// What the run could not measure and why, each said once.
    pub notices: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::phase_row as row;

    #[test]
    fn efficiency_against_batch_one_at_same_concurrency() {
        let r = |kind, b, c, sps: f64| {
            let mut p = row(kind, b, c, sps / b as f64, 1.0, 1.0, None);
            p.samples_per_s = sps;
            p
        };
        let mut rows = vec![
            r(PhaseKind::Batch, 1, 1, 55.2),
            r(PhaseKind::Batch, 8, 1, 408.6),
            r(PhaseKind::Batch, 8, 2, 500.0),
            r(PhaseKind::Concurrency, 1, 4, 100.0),
            r(PhaseKind::Batch, 8, 1, 300.0),
            r(PhaseKind::Batch, 1, 1, 50.0),
        ];
        derive(&mut rows, Some(1.408));
        assert!((rows[0].batch_efficiency.unwrap() - 1.0).abs() < 1e-12);
        assert!((rows[1].batch_efficiency.unwrap() - 0.925).abs() < 1e-3);
        assert_eq!(rows[2].batch_efficiency, None);
        assert_eq!(rows[3].batch_efficiency, None);
        // A later sweep compares with its own batch-1 row, wherever it is in the sweep.
        assert!((rows[4].batch_efficiency.unwrap() - 0.75).abs() < 1e-12);
        assert!((rows[1].cost_per_1m_usd.unwrap() - 1.408 / (408.6 * 3600.0) * 1e6).abs() < 1e-9);
    }
}
