//! Live segments through the real screen: every change of rate or burstiness from the keys
//! closes the segment under way and opens one with its own statistics, and the export, the
//! tables printed on exit and `report` all list the same segments with their settings.

use crate::common::tmux::{Tmux, percentiles_n as panel_n};
use crate::common::{self, BIN, Serve, tmp_path};
use serde_json::Value;

/// The Live table's rows of a printed report: (pace, n).
fn live_rows(report: &str) -> Vec<(String, u64)> {
    let table = report
        .split("Live segments")
        .nth(1)
        .expect("a Live segments table")
        .split("\n\n")
        .next()
        .unwrap();
    table
        .lines()
        .skip(2)
        .map(|l| {
            let cells: Vec<&str> = l
                .split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            // batch, conc, pace, n, …
            (cells[2].to_string(), cells[3].parse().unwrap())
        })
        .collect()
}

#[test]
fn each_live_change_opens_a_segment_that_export_tables_and_report_agree_on() {
    let server = Serve::start(&["--workers", "4"]);
    let export = tmp_path("segments.json");
    let command = format!(
        "{BIN} --url {} --no-accuracy --request-rate 20 --concurrency 4 --warmup 2 --export {}",
        server.url,
        export.display()
    );
    let tmux = Tmux::start("segments", 120, 40, &command);

    let mut before = tmux.wait_for("the first segment measured", 30, |s| {
        s.contains("phase 1 live") && panel_n(s) >= 15
    });
    // Rate twice, then burstiness: each one a new segment whose percentiles start from zero.
    for (key, phase) in [("Up", 2), ("Up", 3), ("Right", 4)] {
        let n_before = panel_n(&before);
        tmux.keys(key);
        let s = tmux.wait_for("the next segment", 10, |s| {
            s.contains(&format!("phase {phase} live"))
        });
        assert!(
            panel_n(&s) < n_before,
            "the percentiles restart with segment {phase}: n {} after {n_before}\n{s}",
            panel_n(&s)
        );
        before = tmux.wait_for("the segment measured", 30, |s| {
            s.contains(&format!("phase {phase} live")) && panel_n(s) >= 15
        });
    }
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(20), 0);
    let printed = tmux.history(400);

    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert!(common::schema_violations(&e).is_empty());
    let phases = e["phases"].as_array().unwrap();
    let settings: Vec<(&str, f64, Value, u64, u64)> = phases
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().unwrap(),
                common::f(&p["request_rate"]),
                p["burstiness"].clone(),
                p["concurrency"].as_u64().unwrap(),
                p["warmup"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        settings,
        [
            ("live", 20.0, 1.0.into(), 4, 2),
            ("live", 25.0, 1.0.into(), 4, 0),
            ("live", 31.25, 1.0.into(), 4, 0),
            ("live", 31.25, 2.0.into(), 4, 0),
        ],
        "four segments, the first with the warmup"
    );
    for p in phases {
        common::assert_phase_accounted(p);
        assert!(p["n"].as_u64().unwrap() >= 15, "{p}");
        assert_eq!(p["n"], p["ok"]);
    }

    // The tables printed on exit and `report` of the export: the same four rows.
    let ran = common::run(&["report", export.to_str().unwrap()]);
    assert!(ran.status.success(), "{}", common::stderr(&ran));
    let report = common::stdout(&ran);
    let rows = live_rows(&report);
    let want: Vec<(String, u64)> = [
        "20.0 Poisson",
        "25.0 Poisson",
        "31.2 Poisson",
        "31.2 burst 2",
    ]
    .iter()
    .zip(phases)
    .map(|(pace, p)| ((*pace).to_string(), p["n"].as_u64().unwrap()))
    .collect();
    assert_eq!(rows, want, "{report}");
    assert_eq!(live_rows(&printed), want, "{printed}");
}
