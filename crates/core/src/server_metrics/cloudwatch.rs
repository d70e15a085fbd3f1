//! What SageMaker itself published for the endpoint over a phase: `AWS/SageMaker`'s
//! `ModelLatency` (the container's time), `OverheadLatency` (SageMaker's own, on top),
//! invocations and their errors, and `ModelSetupTime` (a serverless cold start), as a phase
//! records them (`phases[].cloudwatch`). Reading them is `client::cloudwatch`'s job.
//!
//! CloudWatch keeps one-minute periods and publishes them a minute or more late: the window
//! is widened to whole minutes and the figures say so.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub const NAMESPACE: &str = "AWS/SageMaker";
/// CloudWatch's finest period for SageMaker's metrics.
pub const PERIOD_S: u64 = 60;

/// One phase's figures (`phases[].cloudwatch`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloudWatchFigures {
    pub namespace: String,
    pub dimensions: BTreeMap<String, String>,
    pub period_s: u64,
    /// The phase's window widened to whole periods, RFC 3339.
    pub window_start: String,
    pub window_end: String,
    /// Metrics with at least one datapoint in the window.
    pub metrics: BTreeMap<String, CloudWatchMetric>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloudWatchMetric {
    /// `ms` (latencies) or `count`.
    pub unit: String,
    pub average: Option<f64>,
    pub max: Option<f64>,
    pub sample_count: f64,
    pub sum: f64,
    /// Periods with data.
    pub periods: usize,
}

/// `[start, end]` widened to whole periods: CloudWatch answers whole periods only.
pub fn whole_periods(start: SystemTime, end: SystemTime) -> (SystemTime, SystemTime) {
    let since = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let down = since(start).as_secs() / PERIOD_S * PERIOD_S;
    let end = since(end);
    let up = (end.as_secs() + u64::from(end.subsec_nanos() > 0)).div_ceil(PERIOD_S) * PERIOD_S;
    let at = |s: u64| UNIX_EPOCH + Duration::from_secs(s);
    (at(down), at(up.max(down + PERIOD_S)))
}

impl CloudWatchFigures {
    /// `model 21.0 · overhead 3.9 ms (CloudWatch, 1-min periods)`; `None` without latencies.
    pub fn latency_line(&self) -> Option<String> {
        let avg = |n: &str| self.metrics.get(n).and_then(|m| m.average);
        let (model, overhead) = (avg("ModelLatency"), avg("OverheadLatency"));
        if model.is_none() && overhead.is_none() {
            return None;
        }
        let ms = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.1}"));
        Some(format!(
            "model {} · overhead {} ms (CloudWatch, {}-min periods)",
            ms(model),
            ms(overhead),
            self.period_s / 60
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_widened_to_whole_minutes() {
        let t = |s: u64| UNIX_EPOCH + Duration::from_secs(s);
        assert_eq!(whole_periods(t(125), t(170)), (t(120), t(180)));
        assert_eq!(whole_periods(t(120), t(120)), (t(120), t(180)));
        assert_eq!(whole_periods(t(59), t(181)), (t(0), t(240)));
        let just_past = UNIX_EPOCH + Duration::from_millis(180_500);
        assert_eq!(whole_periods(t(130), just_past), (t(120), t(240)));
    }
}
