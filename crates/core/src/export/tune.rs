//! The `tune` part of an export: the server's command and parameters, and per configuration
//! its values, how it ended, what it cost, its capacity in short and its server's last log
//! lines. Its phases and capacity answers are the export's own `phases` and `capacity`,
//! each naming its configuration in `target`, as a comparison's name their targets.

use super::AccuracyExport;
use crate::results::capacity::Capacity;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneSection {
    /// `--serve` as given (placeholders unfilled), without a URL's password.
    pub serve: String,
    /// `--url` as given.
    pub url: String,
    pub params: Vec<TuneParam>,
    pub zip: bool,
    /// How long a server had after SIGTERM before SIGKILL.
    pub stop_grace_s: f64,
    pub configurations: Vec<TuneConfiguration>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneParam {
    pub name: String,
    pub values: Vec<String>,
}

/// How a configuration ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TuneStatus {
    /// Its server started, became ready, and its load ran to the end.
    Measured,
    /// Its server never became ready, or died during the load (`reason`, `log_tail`).
    Failed,
    /// Stopped (Ctrl-C) while it ran: what it measured is kept, and is not an answer.
    Incomplete,
    /// The tune stopped before its turn.
    NotRun,
}

impl TuneStatus {
    pub fn name(self) -> &'static str {
        match self {
            TuneStatus::Measured => "measured",
            TuneStatus::Failed => "failed",
            TuneStatus::Incomplete => "incomplete",
            TuneStatus::NotRun => "not run",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneConfiguration {
    /// "workers=4 threads=2": the `target` of its phases and capacity answers.
    pub label: String,
    pub values: BTreeMap<String, String>,
    pub status: TuneStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Its `--url` filled, without a password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub instance_type: Option<String>,
    pub price_per_hour_usd: Option<f64>,
    /// Its answer in short: the batch size with the most samples/s within the SLO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacitySummary>,
    /// From the start of its server to its ready route answering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_after_s: Option<f64>,
    /// How its server ended, in words ("stopped by SIGTERM after 0.4 s", "exited with
    /// status 2 before it was ready").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_exit: Option<String>,
    /// Where its server's output was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// The last lines of that output, made safe to show.
    pub log_tail: Vec<String>,
    /// Its run's settings, as a run's export records them in `config`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<AccuracyExport>,
    /// Taken from the export `--resume` named, not measured again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resumed: bool,
}

/// A configuration's capacity in one line of a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacitySummary {
    pub slo: String,
    pub batch_size: usize,
    pub max_rate_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate_ci95_per_s: Option<[f64; 2]>,
    pub samples_per_s: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub cost_per_1m_usd: Option<f64>,
    /// Searches behind it (more than one under `--repeat`: the figures are their mean).
    pub searches: usize,
}

/// The answer of `target`'s batch size with the most samples/s within the SLO: each batch
/// size's searches averaged (`--repeat`), the latencies its first search's.
pub fn summary(capacity: &[Capacity], target: &str) -> Option<CapacitySummary> {
    let mine: Vec<&Capacity> = capacity
        .iter()
        .filter(|c| c.target.as_deref() == Some(target))
        .collect();
    let mut sizes: Vec<usize> = mine.iter().map(|c| c.batch_size).collect();
    sizes.dedup();
    let mean = |xs: &[Option<f64>]| -> Option<f64> {
        let got: Vec<f64> = xs.iter().copied().collect::<Option<Vec<f64>>>()?;
        (!got.is_empty()).then(|| got.iter().sum::<f64>() / got.len() as f64)
    };
    sizes
        .into_iter()
        .map(|b| {
            let of: Vec<&&Capacity> = mine.iter().filter(|c| c.batch_size == b).collect();
            let first = of[0];
            let pick = |f: fn(&Capacity) -> Option<f64>| {
                mean(&of.iter().map(|c| f(c)).collect::<Vec<_>>())
            };
            CapacitySummary {
                slo: first.slo.clone(),
                batch_size: b,
                max_rate_per_s: pick(|c| c.max_rate_per_s),
                max_rate_ci95_per_s: if of.len() == 1 {
                    first.max_rate_ci95_per_s
                } else {
                    None
                },
                samples_per_s: pick(|c| c.samples_per_s),
                p50_ms: first.latency_ms.map(|l| l.p50),
                p99_ms: first.latency_ms.map(|l| l.p99),
                cost_per_1m_usd: pick(|c| c.cost_per_1m_usd),
                searches: of.len(),
            }
        })
        .max_by(|x, y| {
            x.samples_per_s
                .unwrap_or(0.0)
                .total_cmp(&y.samples_per_s.unwrap_or(0.0))
        })
}
