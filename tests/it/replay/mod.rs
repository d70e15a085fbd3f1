//! `--replay`: recorded traffic sent at its recorded times, through the real binary against
//! the reference endpoint, which logs what arrived and when (`serve --request-log`). The
//! schedule the test compares with is the library's own plan of the same file and seed.
//! Here a Data Capture file's replay; a trace's and one through SageMaker's runtime API in
//! `formats`, stalls in `stalls`, bad input in `bad_input`.

mod bad_input;
mod formats;
mod stalls;

use crate::common::{self, Serve, f, run_export, tmp_path};
use base64::Engine as _;
use encbench_core::replay::{ReplayPlan, Speed, parse};
use serde_json::{Value, json};

pub(super) const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// What the endpoint saw: (microseconds since it started, content type, body), in order of
/// arrival.
pub(super) fn arrivals(log: &std::path::Path) -> Vec<(u64, String, Vec<u8>)> {
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
pub(super) fn capture_line(body: &str, base64: bool, second: u32) -> String {
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
pub(super) fn assert_near_samples(p: &Value, want: usize) {
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
    let _t = common::paired();
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
            encbench_core::replay::Body::Captured(c) => c.data.to_vec(),
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
