//! A stalled endpoint during a replay: late sends and latency from the recorded times, and
//! what was never sent counted.

use crate::common::{self, Serve, f, run_export, tmp_path};
use serde_json::json;

#[test]
fn a_stall_shows_as_dispatch_delay_and_latency_from_the_recorded_times() {
    let _t = common::paired();
    // 50 a second for 4 s; the server freezes for 1 s from 1 s after its first request, and
    // 4 slots fill at once: the sends due meanwhile wait, late, not dropped.
    let lines: Vec<String> = (0..200)
        .map(|i| json!({"timestamp_ms": i * 20, "texts": [format!("t{i}")]}).to_string())
        .collect();
    let file = tmp_path("steady.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let s = Serve::fixed(2, 4, &["--stall-at", "1", "--stall-ms", "1000"]);
    let (_, e) = run_export(
        &s.url,
        &[
            "--engine",
            "hf",
            "--no-accuracy",
            "--concurrency",
            "4",
            "--replay",
            file.to_str().unwrap(),
        ],
    );
    let p = &e["phases"][0];
    let due = p["n"].as_u64().unwrap() + p["unsent"].as_u64().unwrap();
    assert_eq!(
        due, 200,
        "every recorded request sent or counted unsent: {p}"
    );
    // The offered rate is the recording's, whatever the server did.
    assert!((f(&p["offered_per_s"]) - 50.0).abs() < 0.5, "{p}");
    assert!(
        f(&p["max_lag_ms"]) > 800.0,
        "the sends waited out the stall: {p}"
    );
    assert!(f(&p["dispatch_delay_ms"]["p99"]) > 500.0, "{p}");
    assert!(
        f(&p["latency_ms"]["max"]) > 900.0 && f(&p["latency_ms"]["p99"]) > 500.0,
        "latency from the recorded times holds the stall: {p}"
    );
    assert!(f(&p["service_ms"]["p50"]) < 20.0, "{p}");
}

#[test]
fn requests_a_stalled_endpoint_kept_from_being_sent_are_counted_unsent() {
    // 50 a second for 2 s; from 0.5 s the server holds every request for 3 s, and 2 slots
    // fill at once: what fell due after them was never sent, and is counted.
    let lines: Vec<String> = (0..100)
        .map(|i| json!({"timestamp_ms": i * 20, "texts": [format!("t{i}")]}).to_string())
        .collect();
    let file = tmp_path("stalled.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let s = Serve::fixed(2, 2, &["--stall-at", "0.5", "--stall-ms", "3000"]);
    let (out, e) = run_export(
        &s.url,
        &[
            "--engine",
            "hf",
            "--no-accuracy",
            "--concurrency",
            "2",
            "--replay",
            file.to_str().unwrap(),
        ],
    );
    let p = &e["phases"][0];
    let (n, unsent) = (p["n"].as_u64().unwrap(), p["unsent"].as_u64().unwrap());
    assert_eq!(n + unsent, 100, "{p}");
    // Due from 0.5 s to 2 s: 75, less the two that went out into the stall.
    assert!(
        (68..=77).contains(&unsent),
        "the last 1.5 s's 75 less the 2 sent: {p}"
    );
    assert_eq!(p["overloaded"], true, "{p}");
    assert!(out.stdout.contains("unsent"), "{}", out.stdout);
}
