//! The versioned JSON export: field names are the contract, and
//! `assets/export.schema.json` describes them. Written atomically: a reader sees the old file
//! or the new one, never half of one, even when the run is interrupted (`write`).

mod config;
pub mod records;
pub mod tune;
mod write;

pub use config::{Detected, ReplayBatches, ReplayConfig, RunConfig, TargetConfig};
pub use write::{check_writable, write_atomic, write_text_atomic};

use crate::results::{PhaseResult, RunReport};
use crate::stats::TimelineEntry;
use crate::verdicts::AccuracyReport;
use crate::verdicts::diff::Disagreement;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::SystemTime;
use time::format_description::well_known::Rfc3339;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyExport {
    pub passed: usize,
    pub total: usize,
    pub samples: Vec<crate::verdicts::Verdict>,
    /// What the endpoint answers: labels, or vectors of some length.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output: Option<crate::verdicts::Output>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
    /// The form the check before the load switched the run's bodies to, in words.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub switched: Option<String>,
    /// The check before the load, when the figures above are from the check after it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub before: Option<AccuracyReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Export {
    pub schema_version: u32,
    pub tool: String,
    pub tool_version: String,
    pub started_at: String,
    pub ended_at: String,
    /// Every option that shaped the run; never credentials.
    pub config: Value,
    pub phases: Vec<PhaseResult>,
    /// Capacity searches (`--find-capacity`, the key f): one answer per batch size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity: Vec<crate::results::capacity::Capacity>,
    pub accuracy: Option<AccuracyExport>,
    pub timeline: Vec<TimelineEntry>,
    pub stopped_early: bool,
    pub error: Option<String>,
    /// What the run could not measure and why, said once (a statistics API that refused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// `--fail-on`: each threshold, whether it was breached, and what was measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_on: Vec<crate::thresholds::Outcome>,
    /// Present in the export of `compare`: its targets, their verdicts and the diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<CompareSection>,
    /// Present in the export of `tune`: its parameters and each configuration's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune: Option<tune::TuneSection>,
}

/// How `compare` takes turns between its targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompareOrder {
    Interleaved,
    Sequential,
}

impl crate::choice::Choice for CompareOrder {
    const ALL: &'static [CompareOrder] = &[CompareOrder::Interleaved, CompareOrder::Sequential];

    fn name(self) -> &'static str {
        match self {
            CompareOrder::Interleaved => "interleaved",
            CompareOrder::Sequential => "sequential",
        }
    }
}

crate::parse_by_name!(CompareOrder);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareTarget {
    pub name: String,
    /// The target as a plain run's export records it (`config.target`).
    pub target: Value,
    pub instance_type: Option<String>,
    pub price_per_hour_usd: Option<f64>,
    pub accuracy: Option<AccuracyExport>,
}

/// The `compare` part of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareSection {
    pub order: CompareOrder,
    pub order_note: String,
    pub targets: Vec<CompareTarget>,
    /// Targets whose verdicts differ from the others'; empty when all agree.
    pub verdict_diff: Vec<Disagreement>,
    /// Embedders: how alike each pair of targets' vectors for the same texts are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vector_agreement: Vec<crate::verdicts::agreement::Agreement>,
    /// Rerankers: how alike each pair of targets ranks the same queries' documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub score_agreement: Vec<crate::verdicts::rank_agreement::RankAgreement>,
    /// Each pair of targets in each headline figure of each phase: how far apart, its 95 %
    /// interval, and whether the data tell them apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<crate::differences::Difference>,
}

pub fn rfc3339(t: SystemTime) -> String {
    time::OffsetDateTime::from(t)
        .format(&Rfc3339)
        .unwrap_or_default()
}

impl AccuracyExport {
    /// The check after the load when there was one (with the one before beside it), else the
    /// one before.
    pub fn of(
        before: &Option<AccuracyReport>,
        after: &Option<AccuracyReport>,
    ) -> Option<AccuracyExport> {
        match (before, after) {
            (before, Some(after)) => Some(AccuracyExport {
                passed: after.passed,
                total: after.total,
                samples: after.samples.clone(),
                output: after.output.or(before.as_ref().and_then(|b| b.output)),
                note: after.note.clone(),
                switched: before.as_ref().and_then(|b| b.switched.clone()),
                before: before.clone(),
            }),
            (Some(before), None) => Some(AccuracyExport {
                passed: before.passed,
                total: before.total,
                samples: before.samples.clone(),
                output: before.output,
                note: before.note.clone(),
                switched: before.switched.clone(),
                before: None,
            }),
            (None, None) => None,
        }
    }
}

impl Export {
    pub fn new(report: &RunReport, config: Value) -> Export {
        let accuracy = AccuracyExport::of(&report.accuracy_before, &report.accuracy_after);
        Export {
            schema_version: SCHEMA_VERSION,
            tool: "encbench-tui".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            started_at: rfc3339(report.started_at),
            ended_at: rfc3339(report.ended_at),
            config,
            phases: report.phases.clone(),
            capacity: report.capacity.clone(),
            accuracy,
            timeline: report.timeline.clone(),
            stopped_early: report.stopped_early,
            error: report.error.clone(),
            notices: report.notices.clone(),
            fail_on: vec![],
            compare: None,
            tune: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339() {
        let s = rfc3339(SystemTime::UNIX_EPOCH);
        assert_eq!(s, "1970-01-01T00:00:00Z");
    }
}
