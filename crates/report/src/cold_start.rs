//! A cold-start probe's export (`cold-start -o`) as tables: the figures one by one for the
//! terminal and a document, a row per export for a spreadsheet. The probe prints its own
//! result through this too, so `report` of its export reads the same.

use super::table::{Cell, Estimate, Table};
use encbench_core::percentile::Percentile;
use encbench_core::results::cold_start::{ColdStartExport, ColdStartResult, KIND, SCHEMA_VERSION};
use serde_json::Value;
use std::collections::BTreeMap;

/// Whether this JSON is a cold-start export rather than a run's.
pub fn is_one(json: &Value) -> bool {
    json["kind"] == KIND
}

/// JSON as a cold-start export of the version this one reads, its counts adding up.
pub fn parse(mut json: Value) -> Result<ColdStartExport, String> {
    let counted = json["cold_start"].get("steady_sent").is_some();
    let mut e: ColdStartExport = serde_json::from_value(json.take())
        .map_err(|e| format!("not an encbench-tui cold-start export: {e}"))?;
    if e.schema_version != SCHEMA_VERSION {
        return Err(format!(
            "cold-start schema_version {} (this version reads {SCHEMA_VERSION})",
            e.schema_version
        ));
    }
    let r = &mut e.cold_start;
    if !counted {
        // Written before failed steady requests were counted: only the successes are known.
        r.steady_sent = r.steady_ok;
    }
    counts_add_up(&e)?;
    Ok(e)
}

/// Refuses an export whose counts contradict each other (edited by hand, or forged), as a
/// run's export is refused: a table of them would show figures nobody measured.
fn counts_add_up(e: &ColdStartExport) -> Result<(), String> {
    let r = &e.cold_start;
    let attempts_failed: u64 = r.failures.values().sum();
    if attempts_failed != failed(r) {
        return Err(format!(
            "cold-start counts do not add up: {} attempts{} but {attempts_failed} failed",
            r.attempts,
            if r.first_success.is_some() {
                ", one successful,"
            } else {
                ""
            }
        ));
    }
    let steady_failed = steady_failed(r);
    if r.steady_ok + steady_failed != r.steady_sent || r.steady_sent > e.probe.steady_n {
        return Err(format!(
            "cold-start counts do not add up: {} steady requests ok and {steady_failed} failed, \
             but {} sent of the {} asked for",
            r.steady_ok, r.steady_sent, e.probe.steady_n
        ));
    }
    if r.steady_sent > 0 && r.first_success.is_none() {
        return Err(
            "cold-start counts do not add up: steady requests without a first success".into(),
        );
    }
    Ok(())
}

fn failed(r: &ColdStartResult) -> u64 {
    r.attempts
        .saturating_sub(u64::from(r.first_success.is_some()))
}

fn steady_failed(r: &ColdStartResult) -> u64 {
    r.steady_failures.values().sum()
}

/// `n (k failed: Kind n, …)`, the way a count and its failures by kind read.
fn with_failures(n: u64, failed: u64, kinds: &BTreeMap<String, u64>) -> String {
    let kinds: Vec<String> = kinds.iter().map(|(k, v)| format!("{k} {v}")).collect();
    if kinds.is_empty() {
        format!("{n} ({failed} failed)")
    } else {
        format!("{n} ({failed} failed: {})", kinds.join(", "))
    }
}

pub fn heading(e: &ColdStartExport) -> Vec<String> {
    let p = &e.probe;
    vec![
        format!("cold start — {}", e.target),
        format!(
            "encbench-tui {} — {}",
            e.tool_version,
            e.cold_start.started_at.as_ref().map_or_else(
                || "stopped before the first attempt".to_string(),
                |t| format!("first attempt {t}")
            )
        ),
        format!(
            "after {} s idle: an attempt every {} s, giving up after {} s; then {}",
            p.idle_wait.as_secs_f64(),
            p.retry_interval.as_secs_f64(),
            p.give_up.as_secs_f64(),
            encbench_core::text::count(p.steady_n, "steady request")
        ),
    ]
}

pub fn tables(e: &ColdStartExport) -> Vec<Table> {
    let r = &e.cold_start;
    let mut t = Table::new("cold start", &["figure", "value"]);
    let mut row = |k: &str, v: String| t.row(vec![k.into(), v]);
    row(
        "attempts",
        with_failures(r.attempts, failed(r), &r.failures),
    );
    if let (Some(first), Some(latency)) = (r.first_success, r.first_success_latency_ms) {
        row("time to first success", format!("{first:.2} s"));
        row("first-success latency", format!("{latency:.1} ms"));
    }
    if r.steady_sent > 0 {
        row(
            "steady requests",
            with_failures(r.steady_sent, steady_failed(r), &r.steady_failures),
        );
    }
    if let Some(s) = &r.steady_ms {
        let at = |q| Estimate::of(s, q, 1).shown();
        row(
            "steady-state p50",
            format!(
                "{} ms (n={}, p99 {} ms; 95 % intervals)",
                at(Percentile::P50),
                r.steady_ok,
                at(Percentile::P99)
            ),
        );
    }
    if let Some(x) = r.ratio {
        row(
            "ratio",
            format!("{x:.0}× (time to first success / steady p50)"),
        );
    }
    match (r.first_success, r.stopped_early) {
        (None, true) => t.notes.push("no success before the stop".into()),
        (None, false) => t.notes.push("no success before giving up".into()),
        (Some(_), _) => {}
    }
    if r.stopped_early {
        t.notes
            .push("stopped (SIGINT/SIGTERM): the attempts so far".into());
    }
    if let Some(c) = &e.cloudwatch {
        let m = |name: &str| c.metrics.get(name);
        let ms = |name: &str| {
            m(name).map(|x| {
                format!(
                    "avg {} · max {} ms (n {})",
                    encbench_core::text::num(x.average, 1),
                    encbench_core::text::num(x.max, 1),
                    x.sample_count
                )
            })
        };
        for (name, label) in [
            ("ModelSetupTime", "CloudWatch model setup"),
            ("ModelLatency", "CloudWatch model latency"),
            ("OverheadLatency", "CloudWatch overhead"),
        ] {
            if let Some(v) = ms(name) {
                t.row(vec![label.into(), v]);
            }
        }
        t.notes.push(format!(
            "CloudWatch {} over {} – {} ({}-s periods)",
            c.namespace, c.window_start, c.window_end, c.period_s
        ));
    }
    vec![t]
}

const CSV_HEADERS: [&str; 17] = [
    "source",
    "target",
    "started_at",
    "idle_wait_s",
    "retry_interval_s",
    "give_up_s",
    "attempts",
    "failed",
    "first_success_s",
    "first_success_latency_ms",
    "steady_sent",
    "steady_ok",
    "steady_failed",
    "steady_p50_ms",
    "steady_p99_ms",
    "ratio",
    "stopped_early",
];

/// A row per export, full precision.
pub fn csv_table(exports: &[(String, &ColdStartExport)]) -> Table {
    let mut t = Table::new("cold starts", &CSV_HEADERS);
    let o = |x: Option<f64>| Cell::Text(x.map(|v| v.to_string()).unwrap_or_default());
    let text = |s: String| Cell::Text(s);
    for (source, e) in exports {
        let (p, r) = (&e.probe, &e.cold_start);
        // Without steady requests the percentile's three fields are empty.
        let steady = |q| -> Cell {
            r.steady_ms
                .map_or(Estimate::MISSING, |s| Estimate::of(&s, q, 0).full())
                .into()
        };
        t.row(vec![
            text(source.clone()),
            text(e.target.clone()),
            text(r.started_at.clone().unwrap_or_default()),
            text(p.idle_wait.as_secs_f64().to_string()),
            text(p.retry_interval.as_secs_f64().to_string()),
            text(p.give_up.as_secs_f64().to_string()),
            text(r.attempts.to_string()),
            text(failed(r).to_string()),
            o(r.first_success),
            o(r.first_success_latency_ms),
            text(r.steady_sent.to_string()),
            text(r.steady_ok.to_string()),
            text(steady_failed(r).to_string()),
            steady(Percentile::P50),
            steady(Percentile::P99),
            o(r.ratio),
            text(r.stopped_early.to_string()),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Loaded, ReportFormat, render_loaded};
    use encbench_core::results::cold_start::ColdStartProbe;
    use encbench_core::stats::LatencySummary;
    use std::time::Duration;

    /// A probe's export as the probe serialises it, read back as `report` reads a file.
    fn written(r: &ColdStartResult) -> Loaded {
        let probe = ColdStartProbe {
            idle_wait: Duration::from_mins(15),
            retry_interval: Duration::from_secs(5),
            give_up: Duration::from_mins(20),
            steady_n: 50,
        };
        let json = serde_json::to_value(ColdStartExport::new("sagemaker:ep", &probe, r)).unwrap();
        assert!(is_one(&json));
        let back = parse(json).unwrap();
        assert_eq!(back.probe, probe);
        Loaded::ColdStart(back)
    }

    fn stopped_before_success() -> ColdStartResult {
        ColdStartResult {
            started_at: Some("2026-12-02T05:00:00Z".into()),
            attempts: 3,
            failures: [
                ("ModelNotReadyException".to_string(), 2),
                ("Abandoned".into(), 1),
            ]
            .into(),
            first_success: None,
            first_success_latency_ms: None,
            steady_ms: None,
            steady_ok: 0,
            steady_sent: 0,
            steady_failures: BTreeMap::new(),
            ratio: None,
            stopped_early: true,
        }
    }

    #[test]
    fn the_heading_counts_in_words_that_agree() {
        let probe = |steady_n| ColdStartProbe {
            idle_wait: Duration::ZERO,
            retry_interval: Duration::from_secs(5),
            give_up: Duration::from_mins(15),
            steady_n,
        };
        let line = |n| {
            heading(&ColdStartExport::new(
                "ep",
                &probe(n),
                &stopped_before_success(),
            ))[2]
                .clone()
        };
        assert!(line(1).ends_with("; then 1 steady request"), "{}", line(1));
        assert!(
            line(20).ends_with("; then 20 steady requests"),
            "{}",
            line(20)
        );
    }

    #[test]
    fn a_probe_stopped_before_its_first_success_says_so_in_every_format() {
        let files = [("cold.json".to_string(), written(&stopped_before_success()))];
        let text = render_loaded(&files, ReportFormat::Terminal).unwrap();
        assert!(text.starts_with("cold start — sagemaker:ep\n"), "{text}");
        assert!(
            text.contains("after 900 s idle: an attempt every 5 s"),
            "{text}"
        );
        assert!(
            text.contains("3 (3 failed: Abandoned 1, ModelNotReadyException 2)"),
            "{text}"
        );
        assert!(text.contains("no success before the stop"), "{text}");
        assert!(!text.contains("time to first success"), "{text}");
        let md = render_loaded(&files, ReportFormat::Markdown).unwrap();
        assert!(md.contains("| attempts | 3 (3 failed"), "{md}");
        let csv = render_loaded(&files, ReportFormat::Csv).unwrap();
        let rows: Vec<&str> = csv.lines().collect();
        // Each steady percentile beside its interval's ends.
        assert!(
            rows[0].ends_with(
                ",steady_p50_ms,steady_p50_lo_ms,steady_p50_hi_ms,\
                 steady_p99_ms,steady_p99_lo_ms,steady_p99_hi_ms,ratio,stopped_early"
            ),
            "{csv}"
        );
        assert_eq!(rows[0].split(',').count(), CSV_HEADERS.len() + 4);
        assert!(
            rows[1].starts_with("cold.json,sagemaker:ep,2026-12-02T05:00:00Z,900,5,1200,3,3,,")
        );
        assert!(rows[1].ends_with(",true"), "{csv}");
    }

    /// Half the steady requests failed: the table says so beside the p50 of the rest, the
    /// CSV counts both, and an export whose counts were edited apart is refused.
    #[test]
    fn failed_steady_requests_are_counted_and_forged_counts_refused() {
        let r = ColdStartResult {
            first_success: Some(2.0),
            first_success_latency_ms: Some(28.0),
            attempts: 3,
            failures: [("ModelNotReadyException".to_string(), 2)].into(),
            steady_ms: Some(LatencySummary::of(&{
                let mut h = encbench_core::stats::phase_histogram();
                h.saturating_record(27_000);
                h
            })),
            steady_ok: 10,
            steady_sent: 20,
            steady_failures: [("ModelNotReadyException".to_string(), 10)].into(),
            ratio: Some(74.0),
            stopped_early: false,
            ..stopped_before_success()
        };
        let files = [("cold.json".to_string(), written(&r))];
        let text = render_loaded(&files, ReportFormat::Terminal).unwrap();
        assert!(
            text.contains("steady requests        20 (10 failed: ModelNotReadyException 10)"),
            "{text}"
        );
        // One sample bounds no percentile from above: each is at least it.
        assert!(
            text.contains("≥ 27.0 ms (n=10, p99 ≥ 27.0 ms; 95 % intervals)"),
            "{text}"
        );
        let csv = render_loaded(&files, ReportFormat::Csv).unwrap();
        // 27 ms reads back as the histogram's bucket: 26.992 up to 27.007.
        assert!(
            csv.contains(",20,10,10,27.007,26.992,,27.007,26.992,,74,"),
            "{csv}"
        );
        let probe = ColdStartProbe {
            idle_wait: Duration::ZERO,
            retry_interval: Duration::from_secs(5),
            give_up: Duration::from_mins(15),
            steady_n: 20,
        };
        let forged = |edit: &dyn Fn(&mut Value)| {
            let mut json = serde_json::to_value(ColdStartExport::new("ep", &probe, &r)).unwrap();
            edit(&mut json["cold_start"]);
            parse(json).unwrap_err()
        };
        assert!(forged(&|c| c["steady_ok"] = 19.into()).contains("do not add up"));
        assert!(forged(&|c| c["steady_sent"] = 21.into()).contains("do not add up"));
        assert!(forged(&|c| c["attempts"] = 30.into()).contains("do not add up"));
        // Written before failed steady requests were counted: read as all of them ok.
        let mut old = serde_json::to_value(ColdStartExport::new("ep", &probe, &r)).unwrap();
        let c = old["cold_start"].as_object_mut().unwrap();
        c.remove("steady_sent");
        c.remove("steady_failures");
        assert_eq!(parse(old).unwrap().cold_start.steady_sent, 10);
    }

    #[test]
    fn another_version_and_a_csv_of_both_kinds_are_refused() {
        let Loaded::ColdStart(e) = written(&stopped_before_success()) else {
            unreachable!()
        };
        let mut json = serde_json::to_value(&e).unwrap();
        json["schema_version"] = 2.into();
        assert!(parse(json).unwrap_err().contains("schema_version 2"));

        let run = crate::parse(
            serde_json::from_str(include_str!("../../../tests/fixtures/run.json")).unwrap(),
        )
        .unwrap();
        let both = [
            ("run.json".to_string(), Loaded::Run(run)),
            ("cold.json".to_string(), Loaded::ColdStart(e)),
        ];
        let err = render_loaded(&both, ReportFormat::Csv).unwrap_err();
        assert!(err.contains("not both"), "{err}");
        // The other formats take both, each under its own name.
        let text = render_loaded(&both, ReportFormat::Terminal).unwrap();
        assert!(
            text.contains("cold.json: cold start — sagemaker:ep"),
            "{text}"
        );
    }
}
