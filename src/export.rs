//! The versioned JSON export: field names are the contract, and
//! `assets/export.schema.json` describes them. Written atomically: a reader sees the old file
//! or the new one, never half of one, even when the run is interrupted.

use crate::accuracy::AccuracyReport;
use crate::accuracy::diff::Disagreement;
use crate::results::{PhaseResult, RunReport};
use crate::stats::TimelineEntry;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::time::SystemTime;
use time::format_description::well_known::Rfc3339;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyExport {
    pub passed: usize,
    pub total: usize,
    pub samples: Vec<crate::accuracy::Verdict>,
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
    pub accuracy: Option<AccuracyExport>,
    pub timeline: Vec<TimelineEntry>,
    pub stopped_early: bool,
    pub error: Option<String>,
    /// Present in the export of `compare`: its targets, their verdicts and the diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<CompareSection>,
}

/// How `compare` takes turns between its targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompareOrder {
    Interleaved,
    Sequential,
}

impl CompareOrder {
    pub fn name(self) -> &'static str {
        match self {
            CompareOrder::Interleaved => "interleaved",
            CompareOrder::Sequential => "sequential",
        }
    }
}

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
                before: before.clone(),
            }),
            (Some(before), None) => Some(AccuracyExport {
                passed: before.passed,
                total: before.total,
                samples: before.samples.clone(),
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
            accuracy,
            timeline: report.timeline.clone(),
            stopped_early: report.stopped_early,
            error: report.error.clone(),
            compare: None,
        }
    }
}

fn temp_beside(path: &Path) -> std::path::PathBuf {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "export".into(), |n| n.to_string_lossy().into_owned());
    dir.join(format!(".{name}.{}.tmp", std::process::id()))
}

/// Checks before the run that `write_atomic` will be able to write `path`: a run of an
/// hour must not end with results that cannot be saved.
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::other("is a directory"));
    }
    let tmp = temp_beside(path);
    std::fs::File::create(&tmp)?;
    std::fs::remove_file(&tmp)
}

/// Writes `value` as pretty JSON to a temporary file beside `path`, syncs it and renames it
/// over `path`.
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let tmp = temp_beside(path);
    let result = (|| {
        // Buffered: straight into the file it was one write(2) per JSON token, and a whole
        // serialized copy first would raise the run's peak memory by the export's size.
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        serde_json::to_writer_pretty(&mut f, value)?;
        f.write_all(b"\n")?;
        f.into_inner()
            .map_err(std::io::IntoInnerError::into_error)?
            .sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_file() {
        let dir = std::env::temp_dir().join(format!("encbench-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        write_atomic(&path, &serde_json::json!({"a": 1})).unwrap();
        write_atomic(&path, &serde_json::json!({"a": 2})).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["a"], 2);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        assert!(write_atomic(&dir.join("missing/x.json"), &1).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let s = rfc3339(SystemTime::UNIX_EPOCH);
        assert_eq!(s, "1970-01-01T00:00:00Z");
    }
}
