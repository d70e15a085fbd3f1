//! A trace of texts, in the target's format, and a capture through SageMaker's runtime API.

use super::{arrivals, assert_near_samples, capture_line};
use crate::common::{self, Serve, run_export, tmp_path};
use serde_json::{Value, json};

/// `{"tokens": N, "batch_size": B}` records: B texts of exactly N tokens each, built by
/// `--input-tokens`' builder, as the endpoint's own tokenizer counts them.
#[test]
fn a_trace_of_lengths_sends_texts_of_exactly_those_lengths() {
    let lines: Vec<String> = (0..12)
        .map(|i| {
            json!({"timestamp_ms": i * 20, "tokens": 40 + 8 * i, "batch_size": 1 + i % 3})
                .to_string()
        })
        .collect();
    let file = tmp_path("lengths.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let s = Serve::one_ms(&[]);
    let (out, e) = run_export(
        &s.url,
        &[
            "--engine",
            "hf",
            "--no-accuracy",
            "--replay",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let p = &e["phases"][0];
    assert_eq!(p["ok"].as_u64(), Some(12), "{p}");
    let (inputs, tokens) = (0..12u64).fold((0, 0), |(n, t), i| {
        let b = 1 + i % 3;
        (n + b, t + b * (40 + 8 * i))
    });
    let c = &common::counters(&s)["input_tokens"];
    assert_eq!(
        (c["inputs"].as_u64(), c["tokens"].as_u64()),
        (Some(inputs), Some(tokens)),
        "{c}"
    );
}

#[test]
fn a_trace_of_texts_goes_out_in_the_targets_format_scale_times() {
    // 30 records over 1.45 s, every fifth a batch of 2 texts; each sent twice.
    let lines: Vec<String> = (0..30)
        .map(|i| {
            let texts = if i % 5 == 0 {
                json!([format!("text {i}"), format!("text {i} again")])
            } else {
                json!([format!("text {i}")])
            };
            json!({"timestamp_ms": 1_000_000 + i * 50, "texts": texts}).to_string()
        })
        .collect();
    let file = tmp_path("trace.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let log = tmp_path("trace-arrivals.jsonl");
    let s = Serve::one_ms(&["--request-log", log.to_str().unwrap()]);
    let (_, e) = run_export(
        &s.url,
        &[
            "--engine",
            "hf",
            "--no-accuracy",
            "--replay",
            file.to_str().unwrap(),
            "--replay-scale",
            "2",
        ],
    );
    let (p, r) = (&e["phases"][0], &e["config"]["replay"]);
    assert_eq!(
        (r["format"].as_str(), r["scale"].as_u64()),
        (Some("trace"), Some(2))
    );
    assert_eq!(
        (r["records"].as_u64(), r["requests"].as_u64()),
        (Some(30), Some(60))
    );
    assert_eq!(r["spread_within_seconds"], false);
    assert_eq!(
        (p["n"].as_u64(), p["ok"].as_u64()),
        (Some(60), Some(60)),
        "{p}"
    );
    assert_near_samples(p, 2 * (30 + 6));
    let seen = arrivals(&log);
    assert_eq!(seen.len(), 60);
    // The Hugging Face format's body, with the record's texts as its batch, twice each.
    for i in [0, 7, 29] {
        let want = format!("text {i}");
        let with: Vec<&(u64, String, Vec<u8>)> = (seen.iter())
            .filter(|a| {
                let v: Value = serde_json::from_slice(&a.2).unwrap();
                v["inputs"][0] == want.as_str()
            })
            .collect();
        assert_eq!(with.len(), 2, "record {i} sent twice");
        // Both copies at the record's time: 50 ms a record from the first.
        let first = seen[0].0 as f64;
        for a in with {
            let at_ms = (a.0 as f64 - first) / 1000.0;
            assert!(
                (at_ms - 50.0 * f64::from(i)).abs() < 15.0,
                "record {i} at {at_ms} ms"
            );
        }
    }

    // At 10000× 300 records 10 ms apart fall due within 0.3 ms: more than the client sends
    // in that time, never more than the 1024 slots. Each is sent, late, none unsent.
    let lines: Vec<String> = (0..300)
        .map(|i| json!({"timestamp_ms": i * 10, "texts": [format!("fast {i}")]}).to_string())
        .collect();
    let fast = tmp_path("fast.jsonl");
    std::fs::write(&fast, lines.join("\n")).unwrap();
    let (_, e) = run_export(
        &s.url,
        &[
            "--engine",
            "hf",
            "--no-accuracy",
            "--replay",
            fast.to_str().unwrap(),
            "--replay-speed",
            "10000",
        ],
    );
    let p = &e["phases"][0];
    eprintln!(
        "replay at 10000x: the largest lag {} ms in a phase of {} s",
        p["max_lag_ms"], p["duration_s"]
    );
    assert_eq!(
        (p["n"].as_u64(), p["ok"].as_u64(), p["unsent"].as_u64()),
        (Some(300), Some(300), Some(0)),
        "{p}"
    );
}

#[test]
fn a_capture_replays_through_sagemakers_runtime_api_signed() {
    const KEY: &str = "AKIDENCBENCHTEST";
    const SECRET: &str = "reference-endpoint-secret";
    let lines: Vec<String> = (0..20)
        .map(|i| {
            capture_line(
                &format!(r#"{{"inputs": "captured {i}"}}"#),
                i % 2 == 0,
                i / 5,
            )
        })
        .collect();
    let file = tmp_path("sm-capture.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let log = tmp_path("sm-arrivals.jsonl");
    let s = Serve::start(&[
        "--access-key",
        KEY,
        "--secret-key",
        SECRET,
        "--base-ms",
        "1",
        "--per-token-ms",
        "0",
        "--request-log",
        log.to_str().unwrap(),
    ]);
    let env = [
        ("AWS_ACCESS_KEY_ID", KEY),
        ("AWS_SECRET_ACCESS_KEY", SECRET),
        ("AWS_REGION", "us-east-1"),
    ];
    let (_, e) = common::run_export_env(
        &[
            "--endpoint",
            "nli-ep",
            "--endpoint-url",
            &s.url,
            "--no-accuracy",
            "--replay",
            file.to_str().unwrap(),
            "--replay-speed",
            "4",
        ],
        &env,
    );
    let p = &e["phases"][0];
    assert_eq!(
        (p["n"].as_u64(), p["ok"].as_u64()),
        (Some(20), Some(20)),
        "{p}"
    );
    assert_eq!(p["variants"]["AllTraffic"], 20, "{p}");
    // Setup's own readiness request aside, what arrived is what was captured.
    let seen: Vec<_> = (arrivals(&log).into_iter())
        .filter(|a| String::from_utf8_lossy(&a.2).contains("captured"))
        .collect();
    assert_eq!(seen.len(), 20);
    assert!(
        seen.iter().all(|a| a.1 == "application/json"),
        "{:?}",
        seen[0].1
    );
    let mut bodies: Vec<String> = seen
        .iter()
        .map(|a| String::from_utf8(a.2.clone()).unwrap())
        .collect();
    bodies.sort();
    let mut want: Vec<String> = (0..20)
        .map(|i| format!(r#"{{"inputs": "captured {i}"}}"#))
        .collect();
    want.sort();
    assert_eq!(bodies, want);
}
