//! The server's own account of a phase, beside the client's: its Prometheus metrics
//! (`--metrics-url`, `--metric`) read before and after every phase and diffed, Triton's
//! statistics API (`stats`), and (`cloudwatch`) what SageMaker published for the endpoint
//! over the phase's window, and (`headers`) the time each reply's headers say the server
//! spent on it. Reading them from the server, and the Prometheus text format, is the
//! clients' job (`encbench_wire::client`).
//!
//! Triton's `nv_inference_*` family is understood without being named: per successful
//! request, the time in the queue and in compute (input + infer + output), and the batch
//! factor (inferences per model execution: how much the dynamic batcher merged). Any other
//! counter, gauge, histogram or summary is reported when `--metric` names it.

pub mod cloudwatch;
pub mod headers;
pub mod prometheus;
pub mod stats;

use prometheus::{Exposition, Family, bucket_quantile, increase};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// What the metrics endpoint said over one phase (`phases[].server_metrics`). The Triton
/// figures are there when the server exposes its `nv_inference_*` family.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerMetrics {
    /// Seconds between the two scrapes the figures are the difference of.
    pub interval_s: f64,
    /// Successful and failed requests the server counted (warmup included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_ms_per_request: Option<f64>,
    /// Input, infer and output together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_ms_per_request: Option<f64>,
    /// From the request's arrival to its response, all of it inside the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_ms_per_request: Option<f64>,
    /// Inferences per model execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_factor: Option<f64>,
    /// Every `--metric` found in the scrape, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, NamedMetric>,
}

/// A metric the user named, over the phase: counters as their increase, gauges as their
/// value at the end, histograms and summaries as their observations' count, sum and mean
/// (and a histogram's p50 and p99, interpolated in its buckets).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedMetric {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub increase: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
}

/// One scrape and when it was taken.
#[derive(Debug, Clone)]
pub struct Reading {
    pub at: Instant,
    pub exposition: Exposition,
}

fn round(v: f64, places: i32) -> f64 {
    let k = 10f64.powi(places);
    (v * k).round() / k
}

/// The phase between two readings, for the Triton family and the metrics in `names`.
pub fn diff(before: &Reading, after: &Reading, names: &[String]) -> ServerMetrics {
    let (b, a) = (&before.exposition, &after.exposition);
    let seconds = after.at.saturating_duration_since(before.at).as_secs_f64();
    let delta = |name: &str| Some(increase(b.total(name)?, a.total(name)?));
    let success = delta("nv_inference_request_success");
    let per_request = |names: &[&str]| {
        let ok = success.filter(|&n| n > 0.0)?;
        let us = names.iter().map(|n| delta(n)).sum::<Option<f64>>()?;
        Some(round(us / ok / 1000.0, 4))
    };
    let executions = delta("nv_inference_exec_count");
    let mut m = ServerMetrics {
        interval_s: round(seconds, 3),
        requests: success.map(|n| n as u64),
        failures: delta("nv_inference_request_failure").map(|n| n as u64),
        executions: executions.map(|n| n as u64),
        queue_ms_per_request: per_request(&["nv_inference_queue_duration_us"]),
        compute_ms_per_request: per_request(&[
            "nv_inference_compute_input_duration_us",
            "nv_inference_compute_infer_duration_us",
            "nv_inference_compute_output_duration_us",
        ]),
        request_ms_per_request: per_request(&["nv_inference_request_duration_us"]),
        batch_factor: delta("nv_inference_count")
            .zip(executions.filter(|&e| e > 0.0))
            .map(|(i, e)| round(i / e, 4)),
        metrics: BTreeMap::new(),
    };
    for name in names {
        if let Some(x) = named(b.families.get(name), a.families.get(name), seconds) {
            m.metrics.insert(name.clone(), x);
        }
    }
    m
}

fn named(before: Option<&Family>, after: Option<&Family>, seconds: f64) -> Option<NamedMetric> {
    let rate = |d: f64| (seconds > 0.0).then(|| round(d / seconds, 4));
    let counted = |kind: &str, d: f64| NamedMetric {
        kind: kind.into(),
        increase: Some(d),
        per_s: rate(d),
        ..NamedMetric::default()
    };
    let observed = |kind: &str, sum: f64, count: f64| NamedMetric {
        kind: kind.into(),
        increase: Some(count),
        per_s: rate(count),
        sum: Some(sum),
        mean: (count > 0.0).then(|| round(sum / count, 6)),
        ..NamedMetric::default()
    };
    Some(match (before, after?) {
        (_, Family::Gauge(v)) => NamedMetric {
            kind: "gauge".into(),
            value: Some(*v),
            ..NamedMetric::default()
        },
        (Some(Family::Counter(x)), Family::Counter(y)) => counted("counter", increase(*x, *y)),
        (Some(Family::Untyped(x)), Family::Untyped(y)) => counted("untyped", increase(*x, *y)),
        (
            Some(Family::Histogram {
                buckets: b0,
                sum: s0,
                count: c0,
            }),
            Family::Histogram {
                buckets: b1,
                sum: s1,
                count: c1,
            },
        ) => NamedMetric {
            p50: bucket_quantile(b0, b1, 0.5).map(|v| round(v, 6)),
            p99: bucket_quantile(b0, b1, 0.99).map(|v| round(v, 6)),
            ..observed("histogram", increase(*s0, *s1), increase(*c0, *c1))
        },
        (Some(Family::Summary { sum: s0, count: c0 }), Family::Summary { sum: s1, count: c1 }) => {
            observed("summary", increase(*s0, *s1), increase(*c0, *c1))
        }
        // Absent before (the server's first request creates many series): from zero.
        (None, after) => return named(Some(&zero(after)), Some(after), seconds),
        // The type changed between scrapes: nothing comparable.
        _ => return None,
    })
}

/// A family of the same type with nothing counted yet.
fn zero(f: &Family) -> Family {
    match f {
        Family::Counter(_) => Family::Counter(0.0),
        Family::Gauge(_) => Family::Gauge(0.0),
        Family::Untyped(_) => Family::Untyped(0.0),
        Family::Histogram { buckets, .. } => Family::Histogram {
            buckets: buckets.iter().map(|&(le, _)| (le, 0.0)).collect(),
            sum: 0.0,
            count: 0.0,
        },
        Family::Summary { .. } => Family::Summary {
            sum: 0.0,
            count: 0.0,
        },
    }
}

impl ServerMetrics {
    /// The Triton figures in one line, as the screen and the tables show them:
    /// `queue 0.41 · compute 3.20 ms · batch ×2.1`; `None` without them.
    pub fn triton_line(&self) -> Option<String> {
        let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
        if self.queue_ms_per_request.is_none() && self.compute_ms_per_request.is_none() {
            return None;
        }
        Some(format!(
            "queue {} · compute {} ms · batch ×{}",
            ms(self.queue_ms_per_request),
            ms(self.compute_ms_per_request),
            self.batch_factor.map_or("-".into(), |b| format!("{b:.1}"))
        ))
    }
}
