//! A trace of texts, in the target's format, and a capture through SageMaker's runtime API.

use super::{arrivals, assert_near_samples, capture_line};
use crate::common::{self, Serve, f, run_export, tmp_path};
use serde_json::{Value, json};

/// The `--records` file's lines as (batch size, tokens), sorted.
fn batches_and_tokens(records: &std::path::Path) -> Vec<(u64, Option<u64>)> {
    let mut out: Vec<(u64, Option<u64>)> = std::fs::read_to_string(records)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["batch_size"].as_u64().unwrap(), v["tokens"].as_u64())
        })
        .collect();
    out.sort_unstable();
    out
}

/// The nearest-rank percentile of `sorted`, as the lengths' histogram reads it (exact below
/// 2048 tokens).
fn rank(sorted: &[u64], q: f64) -> u64 {
    sorted[((q * sorted.len() as f64).ceil() as usize).max(1) - 1]
}

/// `{"tokens": N, "batch_size": B}` records: B texts of exactly N tokens each, built by
/// `--input-tokens`' builder, as the endpoint's own tokenizer counts them; a record over
/// `--max-len` sent at it, and said. The run reports what it sent: the lengths' percentiles
/// and each request's tokens exactly the trace's, its batch the trace's mean with the range
/// named.
#[test]
fn a_trace_of_lengths_sends_texts_of_exactly_those_lengths() {
    // 12 records of 40 + 8i tokens in batches of 1, 2, 3; then one of 600 tokens.
    let mut asked: Vec<(u64, u64)> = (0..12).map(|i| (1 + i % 3, 40 + 8 * i)).collect();
    asked.push((1, 600));
    let lines: Vec<String> = (asked.iter().enumerate())
        .map(|(i, &(b, n))| {
            json!({"timestamp_ms": i * 20, "tokens": n, "batch_size": b}).to_string()
        })
        .collect();
    let file = tmp_path("lengths.jsonl");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let records = tmp_path("lengths-records.jsonl");
    let s = Serve::one_ms(&[]);
    let (out, e) = run_export(
        &s.url,
        &[
            "--engine",
            "hf",
            "--no-accuracy",
            "--replay",
            file.to_str().unwrap(),
            "--records",
            records.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let p = &e["phases"][0];
    assert_eq!(p["ok"].as_u64(), Some(13), "{p}");
    // What went out: the record over --max-len 512 at 512 tokens.
    let sent: Vec<(u64, u64)> = (asked.iter()).map(|&(b, n)| (b, n.min(512))).collect();
    let mut each: Vec<u64> = (sent.iter())
        .flat_map(|&(b, n)| std::iter::repeat_n(n, b as usize))
        .collect();
    each.sort_unstable();
    let (inputs, tokens) = (each.len() as u64, each.iter().sum::<u64>());
    let c = &common::counters(&s)["input_tokens"];
    assert_eq!(
        (c["inputs"].as_u64(), c["tokens"].as_u64()),
        (Some(inputs), Some(tokens)),
        "the endpoint's own count, untruncated: {c}"
    );
    let note = "--replay: 1 record of more than --max-len 512 tokens (up to 600) sent at 512";
    // Said with the tables (and on stderr before the load, which a process has).
    assert!(
        out.stdout.contains(&format!("note: {note}")),
        "{}",
        out.stdout
    );
    assert!(
        e["notices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(note)),
        "{}",
        e["notices"]
    );
    // The phase's lengths are the trace's, exactly.
    let l = &p["input_tokens"];
    assert_eq!(
        (l["p50"].as_u64(), l["p90"].as_u64(), l["max"].as_u64()),
        (Some(rank(&each, 0.5)), Some(rank(&each, 0.9)), Some(512)),
        "{l}"
    );
    let per = |x: u64, n: usize| (x as f64 / n as f64 * 10.0).round() / 10.0;
    assert_eq!(f(&l["mean"]), per(tokens, each.len()), "{l}");
    assert_eq!(f(&l["mean_per_request"]), per(tokens, 13), "{l}");
    // Every request's line: its batch and its inputs' tokens.
    let mut want: Vec<(u64, Option<u64>)> = sent.iter().map(|&(b, n)| (b, Some(b * n))).collect();
    want.sort_unstable();
    assert_eq!(batches_and_tokens(&records), want);
    // The batch column is the trace's mean (25 inputs in 13 requests), the range named.
    assert_eq!(p["batch_size"], 2, "{p}");
    let b = &e["config"]["replay"]["batch_sizes"];
    assert_eq!(
        (b["min"].as_u64(), b["max"].as_u64()),
        (Some(1), Some(3)),
        "{b}"
    );
    assert!((f(&b["mean"]) - 25.0 / 13.0).abs() < 1e-3, "{b}");
    assert_near_samples(p, 25);
    let text = &out.stdout;
    for want in [
        "batches of 1 to 3 inputs, 1.92 on average",
        &format!("the trace's inputs; sent p50 {} ", rank(&each, 0.5)),
    ] {
        assert!(text.contains(want), "want {want:?} in {text}");
    }
    assert!(!text.contains("natural length"), "{text}");
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
    let records = tmp_path("trace-records.jsonl");
    let s = Serve::one_ms(&["--request-log", log.to_str().unwrap()]);
    let (out, e) = run_export(
        &s.url,
        &[
            "--engine",
            "hf",
            "--no-accuracy",
            "--replay",
            file.to_str().unwrap(),
            "--replay-scale",
            "2",
            "--records",
            records.to_str().unwrap(),
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
    // The texts' lengths are the trace's by the run's tokenizer, as the endpoint counted
    // them: in every request's line, the phase's input lengths and the heading.
    let lines = batches_and_tokens(&records);
    assert_eq!(lines.len(), 60);
    let total: u64 = lines.iter().map(|l| l.1.expect("a text's tokens")).sum();
    let c = &common::counters(&s)["input_tokens"];
    assert_eq!(
        (c["inputs"].as_u64(), c["tokens"].as_u64()),
        (Some(2 * (30 + 6)), Some(total)),
        "{c}"
    );
    let l = &p["input_tokens"];
    assert!(
        (f(&l["mean_per_request"]) - total as f64 / 60.0).abs() < 0.05,
        "{l}"
    );
    assert!(l["max"].as_u64().unwrap() < 10, "short texts: {l}");
    assert_eq!(p["batch_size"], 1, "{p}");
    assert!(
        out.stdout.contains("the trace's inputs; sent p50"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("natural length"), "{}", out.stdout);
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
