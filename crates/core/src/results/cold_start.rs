//! What a cold-start probe amounts to, and the export `cold-start -o` writes: read back by
//! `report`, so the records live here, below both.

use crate::stats::LatencySummary;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::time::Duration;

/// The version of the cold-start export's shape (its own, apart from a run's).
pub const SCHEMA_VERSION: u32 = 1;
/// The export's `kind`: what tells it from a run's export, which has none.
pub const KIND: &str = "cold_start";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColdStartProbe {
    #[serde(serialize_with = "secs", deserialize_with = "from_secs")]
    pub idle_wait: Duration,
    #[serde(serialize_with = "secs", deserialize_with = "from_secs")]
    pub retry_interval: Duration,
    #[serde(serialize_with = "secs", deserialize_with = "from_secs")]
    pub give_up: Duration,
    pub steady_n: u64,
}

fn secs<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn from_secs<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let v = f64::deserialize(d)?;
    Duration::try_from_secs_f64(v)
        .map_err(|_| serde::de::Error::custom(format!("{v} is not a duration in seconds")))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Steady-state requests sent: `steady_ok` plus `steady_failures` (`-n`, unless stopped).
    /// Absent from exports written before it was counted.
    #[serde(default)]
    pub steady_sent: u64,
    /// Failed steady-state requests by error kind; one in flight at a stop is `Abandoned`.
    #[serde(default)]
    pub steady_failures: BTreeMap<String, u64>,
    /// Time to first success over the steady-state p50.
    pub ratio: Option<f64>,
    /// Stopped by SIGINT/SIGTERM: the figures above are the attempts so far.
    pub stopped_early: bool,
}

/// The file `cold-start -o` writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColdStartExport {
    pub schema_version: u32,
    pub tool: String,
    pub tool_version: String,
    pub kind: String,
    /// The endpoint as the probe named it (never credentials).
    pub target: String,
    pub probe: ColdStartProbe,
    pub cold_start: ColdStartResult,
    /// `--cloudwatch-wait`: what SageMaker published over the attempts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloudwatch: Option<crate::server_metrics::cloudwatch::CloudWatchFigures>,
}

impl ColdStartExport {
    pub fn new(target: &str, probe: &ColdStartProbe, result: &ColdStartResult) -> Self {
        ColdStartExport {
            schema_version: SCHEMA_VERSION,
            tool: "encbench-tui".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            kind: KIND.into(),
            target: target.into(),
            probe: probe.clone(),
            cold_start: result.clone(),
            cloudwatch: None,
        }
    }
}
