//! The flags of a run over several hosts through the real binary: the shard from an
//! Indexed Job's index, bad shards and starts refused naming the flag, the warmup before the
//! common start and the countdown to it, a host that reaches the start late, and a timed
//! (`--duration`) run's shards adding up to its rate.

use crate::common::{self, Serve};
use std::time::{Duration, SystemTime};

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| (*s).to_string()).collect()
}

#[test]
fn the_index_comes_from_the_indexed_job_and_bad_shards_and_starts_are_refused() {
    let s = Serve::one_ms(&[]);
    let base: Vec<String> = strings(&["--no-accuracy", "--url", &s.url, "--seed", "3"]);
    let with =
        |extra: &[&str]| -> Vec<String> { base.iter().cloned().chain(strings(extra)).collect() };

    // --shards N reads the pod's index as a Kubernetes Indexed Job sets it.
    let args = with(&["--shards", "4", "-n", "8", "-c", "4"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (out, e) = common::run_export_env(&args, &[("JOB_COMPLETION_INDEX", "2")]);
    assert!(
        out.stdout
            .contains("shard 2/4: this host's part of one run"),
        "the tables say which part: {}",
        out.stdout
    );
    assert_eq!(
        e["phases"][0]["shard"],
        serde_json::json!({"index": 2, "count": 4})
    );
    assert_eq!(e["phases"][0]["n"], 2, "shard 2 of 8 requests over 4 hosts");

    let refused = |args: &[&str], env: &[(&str, &str)], flag: &str| {
        let all = with(args);
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = common::run_env(&all, env);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
        let line = out.stderr.trim();
        assert_eq!(line.lines().count(), 1, "one line: {line}");
        assert!(line.contains(flag), "{args:?} should name {flag}: {line}");
    };
    refused(&["--shard", "4/4"], &[], "--shard");
    refused(&["--shard", "0/0"], &[], "--shard");
    refused(&["--shards", "4"], &[], "--shards");
    refused(
        &["--shards", "4"],
        &[("JOB_COMPLETION_INDEX", "4")],
        "--shards",
    );
    refused(&["--shard", "1/4", "-c", "2"], &[], "--concurrency");
    refused(&["--shard", "1/4", "-c", "4", "-n", "3"], &[], "--requests");
    refused(&["--start-at", "2026-13-01T00:00:00Z"], &[], "--start-at");
    refused(&["--start-at", "noon"], &[], "--start-at");
    let past = encbench_core::export::rfc3339(SystemTime::now() - Duration::from_secs(30));
    refused(&["--start-at", &past], &[], "--start-at");
    let out = common::run_env(&["--url", &s.url, "--shard", "1/4", "-c", "4"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stderr.contains("--shard") && out.stderr.contains("--seed"),
        "{}",
        out.stderr
    );
}

#[test]
fn hosts_warm_up_then_wait_for_the_common_start_with_a_countdown() {
    let s = Serve::one_ms(&[]);
    let started = std::time::Instant::now();
    let (out, e) = common::run_export_env(
        &[
            "--url",
            &s.url,
            "--no-accuracy",
            "-n",
            "5",
            "--warmup",
            "2",
            "--start-in",
            "7s",
        ],
        &[],
    );
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(7),
        "measured before the start: {took:?}"
    );
    assert!(
        out.stderr.contains("start in"),
        "a countdown while waiting: {}",
        out.stderr
    );
    let start = e["config"]["start_at"].as_str().unwrap_or_default();
    assert!(
        time::OffsetDateTime::parse(start, &time::format_description::well_known::Rfc3339).is_ok(),
        "the common start recorded: {}",
        e["config"]
    );
    // The warmup ran before the start, measuring after it.
    let events: Vec<&str> = e["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["event"].as_str())
        .collect();
    let at = |what: &str| events.iter().position(|e| e.contains(what));
    let (warm, wait, phase) = (
        at("warmup before the start"),
        at("waiting for the common start"),
        at("phase 1"),
    );
    assert!(
        warm.is_some() && warm < wait && wait < phase,
        "warmup, then the wait, then the phase: {events:?}"
    );
    assert_eq!(e["phases"][0]["n"], 5);
    assert_eq!(
        common::counters(&s)["invocations"],
        7,
        "2 warmup + 5 measured"
    );
}

#[test]
fn a_host_whose_warmup_ran_past_the_start_starts_at_once_and_says_it_is_not_aligned() {
    // Three warmup requests of a second each, one at a time: three seconds, and the start
    // is in one.
    let s = Serve::fixed(1000, 1, &[]);
    let (_, e) = common::run_export(
        &s.url,
        &[
            "--no-accuracy",
            "-n",
            "2",
            "-c",
            "1",
            "--warmup",
            "3",
            "--start-in",
            "1s",
        ],
    );
    let notices = e["notices"].to_string();
    assert!(
        notices.contains("not aligned with the other hosts"),
        "the late start is said: {notices}"
    );
    assert_eq!(e["phases"][0]["n"], 2, "and the run still measures");
}

#[test]
fn a_timed_run_sharded_offers_the_whole_rate_over_its_duration() {
    let s = Serve::one_ms(&[]);
    let mut offered = 0.0;
    let mut due = 0;
    for i in 0..4 {
        let shard = format!("{i}/4");
        let (_, e) = common::run_export(
            &s.url,
            &[
                "--no-accuracy",
                "-q",
                "200",
                "-z",
                "2s",
                "-c",
                "8",
                "--seed",
                "9",
                "--shard",
                &shard,
            ],
        );
        let p = &e["phases"][0];
        assert_eq!(common::f(&p["request_rate"]), 50.0, "a quarter of the rate");
        offered += common::f(&p["offered_per_s"]);
        due += p["sent"].as_u64().unwrap() + p["unsent"].as_u64().unwrap();
    }
    // 2 s of one schedule at 200/s, dealt four ways: each host's window starts at its own
    // first measured arrival, and holds its share of the schedule's 400.
    assert_eq!(due, 400, "due {due}");
    assert!((offered / 200.0 - 1.0).abs() < 0.05, "offered {offered}");
}
