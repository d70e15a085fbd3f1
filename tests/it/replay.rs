//! `--replay`: recorded traffic sent at its recorded times, through the real binary against
//! the reference endpoint, which logs what arrived and when (`serve --request-log`). The
//! schedule the test compares with is the library's own plan of the same file and seed.

use crate::common::{self, Serve, f, run, run_export, stderr, tmp_path};
use base64::Engine as _;
use encbench::replay::{ReplayPlan, Speed, parse};
use serde_json::{Value, json};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// What the endpoint saw: (microseconds since it started, content type, body), in order of
/// arrival.
fn arrivals(log: &std::path::Path) -> Vec<(u64, String, Vec<u8>)> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut out: Vec<_> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["at_us"].as_u64().unwrap(),
                v["content_type"].as_str().unwrap().to_string(),
                B64.decode(v["body_base64"].as_str().unwrap()).unwrap(),
            )
        })
        .collect();
    out.sort_by_key(|a| a.0);
    out
}

/// One Data Capture record as an endpoint writes it to S3.
fn capture_line(body: &str, base64: bool, second: u32) -> String {
    let (data, encoding) = if base64 {
        (B64.encode(body), "BASE64")
    } else {
        (body.to_string(), "JSON")
    };
    json!({
        "captureData": {
            "endpointInput": {
                "observedContentType": "application/json",
                "mode": "INPUT",
                "data": data,
                "encoding": encoding
            },
            "endpointOutput": {
                "observedContentType": "application/json",
                "mode": "OUTPUT",
                "data": "W10=",
                "encoding": "BASE64"
            }
        },
        "eventMetadata": {
            "eventId": format!("e-{second}-{body}"),
            "inferenceTime": format!("2026-11-24T10:{:02}:{:02}Z", 20 + second / 60, second % 60)
        },
        "eventVersion": "0"
    })
    .to_string()
}

/// The phase's samples (samples/s over its duration) are `want`, to rounding.
fn assert_near_samples(p: &Value, want: usize) {
    let samples = f(&p["samples_per_s"]) * f(&p["duration_s"]);
    assert!(
        (samples / want as f64 - 1.0).abs() < 0.01,
        "{samples} samples, want {want}: {p}"
    );
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Gaps between consecutive times, sorted, in milliseconds.
fn sorted_gaps_ms(times_us: &[f64]) -> Vec<f64> {
    let mut g: Vec<f64> = times_us
        .windows(2)
        .map(|w| (w[1] - w[0]) / 1000.0)
        .collect();
    g.sort_by(f64::total_cmp);
    g
}

#[test]
fn a_data_capture_file_replays_its_bodies_at_the_recorded_seconds() {
    let _t = common::timed();
    // 20 recorded seconds: 10 requests a second, bursts of 60 and 50 in seconds 5 and 13,
    // a quiet second 17; every third body BASE64, the others JSON, each body unique.
    let mut lines = Vec::new();
    let mut per_second = [0usize; 20];
    for (s, count) in per_second.iter_mut().enumerate() {
        *count = match s {
            5 => 60,
            13 => 50,
            17 => 0,
            _ => 10,
        };
        for k in 0..*count {
            let body = if k % 4 == 0 {
                format!(r#"{{"inputs": ["request {s}.{k}", "and its pair"]}}"#)
            } else {
                format!(r#"{{"inputs": "request {s}.{k}"}}"#)
            };
            lines.push(capture_line(&body, lines.len() % 3 == 0, s as u32));
        }
    }
    let total: usize = per_second.iter().sum();
    assert!(total > 250, "a few hundred records: {total}");
    let file = tmp_path("capture.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let log = tmp_path("arrivals.jsonl");
    let s = Serve::fixed(2, 8, &["--request-log", log.to_str().unwrap()]);
    let (out, e) = run_export(
        &s.url,
        &[
            "--engine",
            "hf",
            "--no-accuracy",
            "--seed",
            "11",
            "--replay",
            file.to_str().unwrap(),
            "--replay-speed",
            "2",
        ],
    );
    let p = &e["phases"][0];
    let r = &e["config"]["replay"];
    assert_eq!(
        (
            r["format"].as_str(),
            r["records"].as_u64(),
            r["requests"].as_u64()
        ),
        (Some("data-capture"), Some(total as u64), Some(total as u64)),
        "{r}"
    );
    assert_eq!(r["spread_within_seconds"], true);
    assert_eq!(
        f(&r["duration_s"]),
        10.0,
        "20 recorded seconds at speed 2: {r}"
    );
    assert_eq!(
        (p["n"].as_u64(), p["ok"].as_u64()),
        (Some(total as u64), Some(total as u64)),
        "{p}"
    );
    assert_eq!(p["unsent"], 0, "{p}");
    assert!(
        (f(&p["offered_per_s"]) - total as f64 / 10.0).abs() < 0.5,
        "{p}"
    );
    // The header says what was replayed, and how.
    assert!(
        out.stdout.contains(&format!(
            "{total} requests, 20.0 s recorded, played at 2× in 10.0 s"
        )),
        "{}",
        out.stdout
    );
    // A pair's batch of 2 counts 2 samples: the captured body's inputs.
    let pairs = per_second.iter().map(|&c| c.div_ceil(4)).sum::<usize>();
    assert_near_samples(p, total + pairs);

    // The endpoint saw every captured body, byte for byte, under its content type.
    let seen = arrivals(&log);
    assert_eq!(seen.len(), total);
    assert!(seen.iter().all(|a| a.1 == "application/json"));
    let trace = parse(&lines.join("\n"), "capture").unwrap();
    let mut sent: Vec<Vec<u8>> = seen.iter().map(|a| a.2.clone()).collect();
    let mut recorded: Vec<Vec<u8>> = (trace.records.iter())
        .map(|r| match &r.body {
            encbench::replay::Body::Captured(c) => c.data.to_vec(),
            other => panic!("captured: {other:?}"),
        })
        .collect();
    sent.sort();
    recorded.sort();
    assert!(sent == recorded, "the same bodies");

    // Its arrival gaps are the schedule's: the plan of the same file and seed.
    let plan = ReplayPlan::new(
        trace,
        Speed {
            speed: 2.0,
            scale: 1,
        },
        11,
    )
    .unwrap();
    let planned: Vec<f64> = plan.at.iter().map(|d| d.as_secs_f64() * 1e6).collect();
    let observed: Vec<f64> = seen.iter().map(|a| a.0 as f64).collect();
    let (want, got) = (sorted_gaps_ms(&planned), sorted_gaps_ms(&observed));
    eprintln!(
        "replay: the dispatcher's largest lag {} ms",
        p["max_lag_ms"]
    );
    for q in [0.5, 0.99] {
        let (w, g) = (percentile(&want, q), percentile(&got, q));
        eprintln!(
            "replay gaps p{}: {g:.3} ms arrived, {w:.3} ms planned",
            q * 100.0
        );
        assert!(
            (w - g).abs() < 2.0,
            "p{}: gaps {g:.2} ms against the schedule's {w:.2} ms",
            q * 100.0
        );
    }
    // And gap by gap: each arrival's gap from the one before against the plan's.
    let mut misses: Vec<f64> = (planned.windows(2).zip(observed.windows(2)))
        .map(|(w, o)| ((o[1] - o[0]) - (w[1] - w[0])).abs() / 1000.0)
        .collect();
    misses.sort_by(f64::total_cmp);
    let (m50, m99) = (percentile(&misses, 0.5), percentile(&misses, 0.99));
    eprintln!("replay gap by gap, off the plan: p50 {m50:.3} ms, p99 {m99:.3} ms");
    // The tail gap by gap is the host's scheduling jitter twice over (two arrivals): 6.7 ms
    // at p99 with six compilers beside the test on two cores, so only the middle is held.
    assert!(
        m50 < 2.0,
        "gaps off the plan by {m50:.3} ms at p50 ({m99:.3} ms at p99)"
    );
    // Each recorded second (half a second at speed 2) kept its count: the arrivals well
    // inside it are at most its count, and those in it give or take 3 ms at least.
    let origin = observed[0] - planned[0];
    let half = 500_000.0;
    for (k, &count) in per_second.iter().enumerate() {
        let (start, end) = (origin + k as f64 * half, origin + (k + 1) as f64 * half);
        let within = |slack: f64| {
            (observed.iter())
                .filter(|&&t| t >= start + slack && t < end - slack)
                .count()
        };
        assert!(
            within(3000.0) <= count && count <= within(-3000.0),
            "second {k}: {count} recorded, {} to {} arrived",
            within(3000.0),
            within(-3000.0)
        );
    }
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
}

#[test]
fn a_stall_shows_as_dispatch_delay_and_latency_from_the_recorded_times() {
    let _t = common::timed();
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
fn bad_replay_input_is_one_line_and_exit_2() {
    let dir = tmp_path("replay-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let file = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let ok = file("ok.jsonl", "{\"timestamp_ms\": 0, \"texts\": [\"a\"]}\n");
    let missing = dir.join("nowhere.jsonl").to_str().unwrap().to_string();
    let cut = file(
        "cut.jsonl",
        "{\"timestamp_ms\": 0, \"texts\": [\"a\"]}\n{\"timestamp_ms\": 5, \"texts\": [\"b\"\n",
    );
    let untimed = file("untimed.jsonl", "{\"texts\": [\"a\"]}\n");
    let tokens = file(
        "tokens.jsonl",
        "{\"timestamp_ms\": 0, \"texts\": [\"a\"]}\n{\"timestamp_ms\": 5, \"tokens\": 128, \"batch_size\": 4}\n",
    );
    let target = ["--headless", "--url", "http://127.0.0.1:9", "--no-accuracy"];
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["--replay", &missing],
            vec!["--replay: cannot read", "nowhere.jsonl"],
        ),
        (vec!["--replay", &cut], vec!["cut.jsonl line 2: not JSON"]),
        (
            vec!["--replay", &untimed],
            vec!["untimed.jsonl line 1: no timestamp"],
        ),
        (
            vec!["--replay", &tokens],
            vec!["tokens.jsonl line 2", "--input-tokens"],
        ),
        (
            vec!["--replay", &ok, "--replay-speed", "0"],
            vec!["--replay-speed"],
        ),
        (
            vec!["--replay", &ok, "--replay-speed=-2"],
            vec!["--replay-speed"],
        ),
        (
            vec!["--replay", &ok, "--replay-scale", "0"],
            vec!["--replay-scale"],
        ),
        (vec!["--replay-speed", "2"], vec!["--replay"]),
        (
            vec!["--replay", &ok, "--request-rate", "50"],
            vec!["--replay", "--request-rate"],
        ),
        (
            vec!["--replay", &ok, "--sweep-batch"],
            vec!["--replay", "--sweep-batch"],
        ),
        (
            vec!["--replay", &ok, "--find-capacity", "--slo", "p99=100ms"],
            vec!["--replay", "--find-capacity"],
        ),
    ];
    for (args, want) in cases {
        let all: Vec<&str> = target.iter().copied().chain(args.iter().copied()).collect();
        let out = run(&all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        for w in want {
            assert!(err.contains(w), "{args:?}: want {w:?} in {err}");
        }
        // Ours are one line; clap's reports of flags that conflict add its usage line.
        let clap = err.contains("cannot be used with") || err.contains("required");
        assert!(clap || err.trim().lines().count() == 1, "{args:?}: {err}");
    }
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
