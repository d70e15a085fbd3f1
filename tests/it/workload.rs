//! Workload options through the real binary: duration stops, timeouts, tokenizer and texts
//! files, concurrency sweeps.

use crate::common;

use crate::common::{Serve, f, run_export, run_export_env, stdout, tmp_path};

#[test]
fn duration_stops_each_phase_after_that_many_measured_seconds() {
    let _t = common::paired();
    let s = Serve::fixed(2, 2, &[]);
    let (_, e) = run_export(
        &s.url,
        &[
            "--duration",
            "1.5",
            "--request-rate",
            "40",
            "--burstiness",
            "inf",
            "--no-accuracy",
        ],
    );
    let p = &e["phases"][0];
    // Exactly rate × duration, as the README says: the send due at the end is no one's.
    assert_eq!(p["n"], 60, "1.5 s at 40/s is 60 requests: {p}");
    assert_eq!(f(&p["offered_per_s"]), 40.0, "{p}");
    assert!(
        (f(&p["duration_s"]) - 1.5).abs() < 0.1,
        "{}",
        p["duration_s"]
    );
    assert_eq!(e["config"]["duration_s"], 1.5);
}

#[test]
fn slow_responses_past_the_timeout_count_as_timeouts_and_the_run_goes_on() {
    let s = Serve::fixed(300, 4, &[]);
    let (out, e) = run_export(
        &s.url,
        &[
            "-n",
            "4",
            "--warmup",
            "0",
            "--timeout",
            "0.1",
            "--no-accuracy",
            "--concurrency",
            "4",
        ],
    );
    let p = &e["phases"][0];
    assert_eq!(p["errors"]["Timeout"], 4, "{}", p["errors"]);
    assert_eq!(p["ok"], 0);
    assert!(stdout(&out).contains("Timeout 4"));
}

#[test]
fn tokenizer_and_texts_files_are_used() {
    let s = Serve::one_ms(&[]);
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/tokenizer.json");
    let texts = tmp_path("texts.jsonl");
    std::fs::write(
        &texts,
        "\"a short text\"\n{\"premise\": \"one two three\", \"hypothesis\": \"four\"}\n",
    )
    .unwrap();
    let (_, e) = run_export(
        &s.url,
        &[
            "-n",
            "5",
            "--no-accuracy",
            "--tokenizer",
            shipped,
            "--texts",
            texts.to_str().unwrap(),
        ],
    );
    // [CLS] a short text [SEP] = 5; [CLS] one two three [SEP] four [SEP] = 7.
    assert_eq!(e["config"]["natural_tokens_per_input"], 6.0);
    assert_eq!(e["config"]["tokenizer"], shipped);
    assert_eq!(e["phases"][0]["ok"], 5);
}

#[test]
fn concurrency_sweep_rows_and_saturation() {
    let _t = common::paired();
    // Two workers of 10 ms: at most 200 req/s. Closed loop at 1 loses the round trip between
    // requests; from 4 on requests queue at the workers and throughput is flat while p99
    // doubles.
    let s = Serve::fixed(10, 2, &[]);
    let (out, e) = run_export(
        &s.url,
        &[
            "--sweep-concurrency",
            "--concurrency-levels",
            "1",
            "4",
            "8",
            "-n",
            "200",
            "--warmup",
            "8",
            "--no-accuracy",
        ],
    );
    let rows = e["phases"].as_array().unwrap();
    let rps: Vec<f64> = rows.iter().map(|p| f(&p["req_per_s"])).collect();
    let p99: Vec<f64> = rows.iter().map(|p| f(&p["latency_ms"]["p99"])).collect();
    assert_eq!(
        rows.iter()
            .map(|p| p["concurrency"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 4, 8]
    );
    assert!(rps[0] > 80.0 && rps[0] <= 101.0, "{rps:?}");
    assert!((rps[1] / 200.0 - 1.0).abs() < 0.03, "{rps:?}");
    assert!((rps[2] / 200.0 - 1.0).abs() < 0.03, "{rps:?}");
    assert!(p99[2] > 1.6 * p99[1], "queueing doubles the tail: {p99:?}");
    let text = stdout(&out);
    assert!(text.contains("◀ saturated"), "{text}");
    assert!(text.contains("advice: concurrency cap 4: at 8"), "{text}");
}

#[test]
fn an_unhealthy_ping_is_waited_for_then_given_up_on() {
    let s = Serve::start(&[
        "--base-ms",
        "1",
        "--per-token-ms",
        "0",
        "--unhealthy-for-ms",
        "1200",
    ]);
    let started = std::time::Instant::now();
    // The binary: the wait is said on its stderr.
    let (out, e) = run_export_env(&["--url", &s.url, "-n", "5", "--no-accuracy"], &[]);
    assert!(started.elapsed() >= std::time::Duration::from_millis(1100));
    assert!(
        common::stderr(&out).contains("waiting for"),
        "{}",
        common::stderr(&out)
    );
    assert_eq!(e["phases"][0]["ok"], 5);

    let s = Serve::start(&["--unhealthy-for-ms", "60000"]);
    let out = common::run(&["--headless", "--url", &s.url, "--ready-timeout", "0.5"]);
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.contains("--url") && last.contains("not healthy") && last.contains("Unhealthy"),
        "{err}"
    );
}

/// Errors over the whole timeline (warmup included), from its per-second points.
pub fn timeline_errors(e: &serde_json::Value) -> u64 {
    e["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["errors"].as_u64())
        .sum()
}

#[test]
fn warmup_requests_get_the_warmup_timeout() {
    let s = Serve::fixed(300, 4, &[]);
    let (_, e) = run_export(
        &s.url,
        &[
            "--timeout",
            "0.1",
            "--warmup-timeout",
            "5",
            "--warmup",
            "2",
            "-n",
            "3",
            "--no-accuracy",
        ],
    );
    assert_eq!(
        e["phases"][0]["errors"]["Timeout"], 3,
        "measured requests keep --timeout"
    );
    assert_eq!(
        timeline_errors(&e),
        3,
        "the two warmup requests were allowed to finish"
    );
}
