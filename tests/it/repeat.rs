//! `--repeat`: a run's phases pooled with each repetition kept, and `compare`'s differences
//! judged across paired repetitions, against reference endpoints whose service models say
//! what the answer is.

use crate::common::*;
use serde_json::Value;

fn differences<'a>(e: &'a Value, a: &str, b: &str) -> Vec<&'a Value> {
    e["compare"]["differences"]
        .as_array()
        .expect("a compare export has its differences")
        .iter()
        .filter(|d| d["a"] == a && d["b"] == b)
        .collect()
}

fn interval(d: &Value) -> (f64, f64) {
    let ci = &d["ci95"];
    (f(&ci[0]), ci[1].as_f64().unwrap_or(f64::INFINITY))
}

/// Three endpoints of exponential service, 32 workers each, at 32 in flight (nothing
/// queues): two of 20 ms mean and one of 23 ms, 15 % slower. `compare --repeat 5`, the
/// targets taking turns: every headline difference between the two alike is "not
/// distinguishable", and the slower one's p50, p99 and req/s differences are significant
/// with intervals that hold 15 % slower (latency +15 %, throughput 1/1.15 − 1 = −13 %).
///
/// Each server draws its service times from a seed of its own, and a closed loop of this
/// count hands each repetition the same stretch of that stream: the figures are those of
/// these seeds run after run, give or take the loopback's jitter (measured 5 times: the
/// intervals' ends moved by under 1 point). The method's 95 % is the unit tests' to prove
/// (`significance`, `interval`); here the paired intervals contain the truth with margins
/// of 2 points or more at these seeds. 3,000 requests a repetition: a p99 interval of about
/// ±10 % across 5 repetitions (±6 % with the targets' draws paired by one seed, which would
/// hide the noise a deployment of its own has). 26-32 s.
#[test]
fn compare_repeat_tells_a_15_percent_slower_endpoint_apart_and_not_two_alike() {
    let _t = timed();
    let serve = |seed: &str, base_ms: &str| {
        Serve::start(&[
            "--seed",
            seed,
            "--workers",
            "32",
            "--queue",
            "shared",
            "--service-dist",
            "exp",
            "--base-ms",
            base_ms,
            "--per-token-ms",
            "0",
        ])
    };
    let servers = [serve("1", "20"), serve("2", "20"), serve("3", "23")];
    let path = tmp_path("repeat-compare.json");
    let targets: Vec<String> = ["a", "a2", "slow"]
        .iter()
        .zip(&servers)
        .map(|(name, s)| format!("name={name},url={},price=1.0", s.url))
        .collect();
    let mut args = vec![
        "compare",
        "--headless",
        "--no-accuracy",
        "--seed",
        "7",
        "--batch-sizes",
        "1",
        "--concurrency",
        "32",
        "--no-concurrency",
        "-n",
        "3000",
        "--warmup",
        "100",
        "--repeat",
        "5",
        "-o",
        path.to_str().unwrap(),
    ];
    for t in &targets {
        args.extend(["--target", t.as_str()]);
    }
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    let text = stdout(&out);

    // Each target's phase pools its five repetitions, which took turns A B C A B C ….
    for name in ["a", "a2", "slow"] {
        let p = e["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["target"] == name)
            .unwrap();
        let reps = p["repetitions"].as_array().unwrap();
        assert_eq!(reps.len(), 5, "{name}");
        assert_eq!(p["n"], 15_000, "{name}");
        for (k, r) in reps.iter().enumerate() {
            assert_eq!(
                (r["repetition"].as_u64(), r["n"].as_u64()),
                (Some(k as u64 + 1), Some(3000))
            );
        }
        assert_eq!(p["across"]["repetitions"], 5);
    }
    assert_eq!(e["config"]["repeat"], 5);

    for d in differences(&e, "a", "a2") {
        assert_eq!(d["basis"], "repetitions", "{d}");
        assert_eq!(d["repetitions"], 5);
        assert_eq!(d["significant"], false, "two alike told apart: {d}");
        // Past 1000 repetitions (a busy machine's noise) the advice says so instead.
        let needed = d["needed"].as_str().unwrap();
        assert!(
            needed.starts_with("--repeat ") || needed.contains("more than 1000 would be needed"),
            "{d}"
        );
    }
    for a in ["a", "a2"] {
        let judged = differences(&e, a, "slow");
        let figures: Vec<&str> = judged
            .iter()
            .map(|d| d["figure"].as_str().unwrap())
            .collect();
        assert_eq!(
            figures,
            ["p50_ms", "p99_ms", "req_per_s", "cost_per_1m_usd"]
        );
        for d in judged {
            let truth = match d["figure"].as_str().unwrap() {
                "p50_ms" | "p99_ms" | "cost_per_1m_usd" => 0.15,
                _ => 1.0 / 1.15 - 1.0,
            };
            let (lo, hi) = interval(d);
            assert_eq!(d["significant"], true, "{d}");
            assert!(lo < truth && truth < hi, "{a} vs slow: {truth} outside {d}");
        }
    }
    // The table and the advice: the two alike share the lead, ahead of the slower one.
    assert!(
        text.contains("95 % intervals across 5 paired repetitions"),
        "{text}"
    );
    let advice = text
        .lines()
        .find(|l| l.starts_with("advice: lowest p99 at b=1 c=32:"))
        .unwrap_or_else(|| panic!("no p99 advice in\n{text}"));
    assert!(
        advice.contains("not distinguishable at this n")
            && advice.contains("ahead of the rest")
            && advice.contains("against slow"),
        "{advice}"
    );
    assert!(!advice.contains(": slow "), "{advice}");
    // Across the repetitions: each figure's mean and interval.
    assert!(text.contains("Across repetitions (mean of 5"), "{text}");
}

/// A run's sweep three times over: two pooled phases in the sweep's order, each holding its
/// three repetitions in turn; a second host's export merges repetition by repetition.
#[test]
fn a_repeated_run_pools_its_repetitions_and_merges_them_by_repetition() {
    let _t = paired();
    let s = Serve::fixed(2, 4, &[]);
    let args = [
        "--no-accuracy",
        "--sweep-batch",
        "--batch-sizes",
        "1",
        "4",
        "-n",
        "40",
        "--warmup",
        "2",
        "--repeat",
        "3",
        "--price-per-hour",
        "1.0",
    ];
    let (out, e) = run_export(&s.url, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    let phases = e["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for (p, b) in phases.iter().zip([1, 4]) {
        assert_eq!(
            (p["batch_size"].as_u64(), p["n"].as_u64()),
            (Some(b), Some(120))
        );
        assert!(p.get("repetition").is_none());
        let reps = p["repetitions"].as_array().unwrap();
        let numbers: Vec<u64> = reps
            .iter()
            .map(|r| r["repetition"].as_u64().unwrap())
            .collect();
        assert_eq!(numbers, [1, 2, 3]);
        assert!(
            reps.iter()
                .all(|r| r["n"] == 40 && r["cost_per_1m_usd"].is_number())
        );
        let across = &p["across"];
        assert_eq!(across["repetitions"], 3);
        let mean = f(&across["p50_ms"]["mean"]);
        let want: f64 = reps.iter().map(|r| f(&r["latency_ms"]["p50"])).sum::<f64>() / 3.0;
        assert!((mean - want).abs() < 1e-9, "{mean} {want}");
        let [lo, hi] = [0, 1].map(|i| f(&across["p50_ms"]["ci95"][i]));
        assert!(lo <= mean && mean <= hi);
    }
    // Efficiency is against the pooled batch 1, as a sweep run once would have it.
    let eff = f(&phases[1]["samples_per_s"]) / f(&phases[0]["samples_per_s"]) / 4.0;
    assert!((f(&phases[1]["batch_efficiency"]) - eff).abs() < 1e-6);
    let text = stdout(&out);
    assert!(
        text.contains("each phase 3 times with fresh seeds"),
        "{text}"
    );
    assert!(text.contains("Across repetitions (mean of 3"), "{text}");

    // Two hosts' exports of the same workload add up repetition by repetition.
    let first = tmp_path("repeat-host-1.json");
    std::fs::write(&first, e.to_string()).unwrap();
    let (out, second) = run_export(&s.url, &args);
    assert!(out.status.success());
    let second_path = tmp_path("repeat-host-2.json");
    std::fs::write(&second_path, second.to_string()).unwrap();
    let merged_path = tmp_path("repeat-merged.json");
    let out = run(&[
        "report",
        "--merge",
        first.to_str().unwrap(),
        second_path.to_str().unwrap(),
        "-o",
        merged_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_path).unwrap()).unwrap();
    assert!(
        schema_violations(&merged).is_empty(),
        "{:?}",
        schema_violations(&merged)
    );
    for p in merged["phases"].as_array().unwrap() {
        assert_eq!(p["n"], 240);
        let reps = p["repetitions"].as_array().unwrap();
        assert!(reps.iter().all(|r| r["n"] == 80), "{reps:?}");
        assert_eq!(p["across"]["repetitions"], 3);
    }
}
