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
