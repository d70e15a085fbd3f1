//! What a newcomer meets in a CI log and in `report` (issue 21): headless progress as plain
//! lines whose counts are the export's, `report` of a merged export's summed rate.

use crate::common::*;

/// The number after `label ` in a progress line.
fn count(line: &str, label: &str) -> Option<u64> {
    let rest = line.split(&format!("{label} ")).nth(1)?;
    rest.split_whitespace().next()?.parse().ok()
}

#[test]
fn headless_progress_in_a_log_is_plain_lines_with_the_exports_counts() {
    let s = Serve::one_ms(&[]);
    // Six seconds: the log gets a line while the run goes (every 5 s) and one at its end.
    let (out, e) = run_export_env(
        &[
            "--url",
            &s.url,
            "--request-rate",
            "50",
            "-n",
            "300",
            "--warmup",
            "3",
            "--no-accuracy",
        ],
        &[],
    );
    let err = stderr(&out);
    assert!(!err.contains('\r'), "stderr is not a terminal: {err:?}");
    let progress: Vec<&str> = err.lines().filter(|l| l.contains("sent ")).collect();
    assert!(
        progress.len() >= 2,
        "a line while running and one at the end: {err}"
    );
    let p = &e["phases"][0];
    let (n, ok) = (p["n"].as_u64().unwrap(), p["ok"].as_u64().unwrap());
    assert_eq!(n, 300);
    // While running, the counts are the measured ones: never the warmup's on top.
    let during = progress[0];
    assert!(count(during, "sent").unwrap() < n, "{during}");
    assert!(!during.contains("sent 303"), "{during}");
    let last = progress.last().unwrap();
    assert_eq!(count(last, "sent"), p["sent"].as_u64(), "{last}");
    assert_eq!(count(last, "ok"), Some(ok), "{last}");
    assert_eq!(count(last, "err"), Some(error_total(p)), "{last}");
    assert!(last.contains("warmup 3 not counted"), "{last}");
}

#[test]
fn headless_progress_shows_the_accuracy_checks_own_progress() {
    // Four shipped samples at 1.4 s each: the check before the load is under way at the
    // first line (5 s), the one after it at the second (10 s).
    let s = Serve::fixed(1400, 1, &[]);
    let (out, e) = run_export_env(&["--url", &s.url, "-n", "1", "--warmup", "0"], &[]);
    let err = stderr(&out);
    let total = e["accuracy"]["total"].as_u64().unwrap();
    for when in ["before", "after"] {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("accuracy {when}: ")))
            .unwrap_or_else(|| panic!("no progress of the check {when} the load: {err}"));
        assert!(line.contains(&format!("/{total} answered")), "{line}");
        // No measured counts beside it: they would be zeros, or the load's.
        assert!(!line.contains("sent ") && !line.contains("ok "), "{line}");
    }
}

#[test]
fn a_merged_exports_rate_is_the_hosts_rates_added() {
    let s = Serve::one_ms(&[]);
    let dir = tmp_path("merge-rate");
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = Vec::new();
    for seed in ["1", "2"] {
        let workload = [
            "-n",
            "20",
            "--request-rate",
            "40",
            "--no-accuracy",
            "--seed",
            seed,
        ];
        let (_, e) = run_export(&s.url, &workload);
        assert_eq!(f(&e["phases"][0]["request_rate"]), 40.0);
        let p = dir.join(format!("host-{seed}.json"));
        std::fs::write(&p, e.to_string()).unwrap();
        paths.push(p);
    }
    let merged = dir.join("merged.json");
    let (a, b, m) = (
        paths[0].to_str().unwrap(),
        paths[1].to_str().unwrap(),
        merged.to_str().unwrap(),
    );
    let out = run(&["report", "--merge", a, b, "-o", m, "--format", "csv"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let e: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(f(&e["phases"][0]["request_rate"]), 80.0);
    assert_eq!(f(&e["config"]["request_rate"]), 80.0);
    let csv = stdout(&out);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "request_rate").unwrap();
    assert_eq!(row[col], "80", "{csv}");
    // The terminal table's pace beside the summed req/s.
    let text = stdout(&run(&["report", m]));
    assert!(
        text.contains("80 Poisson") || text.contains("80.0 Poisson"),
        "{text}"
    );
    assert!(
        !text.contains("40 Poisson") && !text.contains("40.0 Poisson"),
        "{text}"
    );
    // Beside the rate the hosts offered together, the cap each ran under and their count.
    assert!(
        text.contains(
            "req/s in all, Poisson, concurrency cap 1024 per host × 2 hosts (the open loop's default)"
        ),
        "{text}"
    );
}

#[test]
fn headless_progress_on_a_narrow_terminal_is_one_line_rewritten_in_place() {
    let s = Serve::one_ms(&[]);
    let width = 60;
    let command = format!(
        "{BIN} --headless --url {} --request-rate 50 -n 200 --no-accuracy >/dev/null",
        s.url
    );
    let tmux = tmux::Tmux::start("progress", width, 12, &command);
    // What discovery found is said once, before the progress starts.
    let progress_rows = |screen: &str| {
        screen
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with("found "))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    tmux.wait_for("a progress line", 10, |s| s.contains("sent "));
    // Two rewrites later, still one row: nothing wrapped, nothing left behind.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let rows = progress_rows(&tmux.screen());
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert!(rows[0].chars().count() < usize::from(width), "{}", rows[0]);
    assert!(
        rows[0].contains("running") && rows[0].contains("ok "),
        "{}",
        rows[0]
    );
    assert_eq!(tmux.wait_exit(20), 0);
    // With the scrollback: tmux's own "Pane is dead" line may push the screen up.
    let rows: Vec<String> = progress_rows(&tmux.history(50))
        .into_iter()
        .filter(|l| !l.starts_with("Pane is dead"))
        .collect();
    assert_eq!(rows.len(), 2, "the last line and the exit code: {rows:#?}");
    assert!(
        rows[0].starts_with("done") && rows[0].contains("sent 200"),
        "{rows:#?}"
    );
}
