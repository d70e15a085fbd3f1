//! `compare` against reference endpoints with known service models: the rows, their order,
//! the cost column and the verdict diff are checked against what the models and prices say.

use crate::common::*;
use serde_json::Value;

fn compare(args: &[&str], env: &[(&str, &str)]) -> (Ran, Value) {
    let path = tmp_path("compare.json");
    let mut all = vec!["compare", "--headless", "--export", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_env(&all, env);
    assert!(
        out.status.success(),
        "compare failed: {}\n{}",
        stderr(&out),
        stdout(&out)
    );
    let text = std::fs::read_to_string(&path).expect("export written");
    (out, serde_json::from_str(&text).expect("export is JSON"))
}

fn phase<'a>(e: &'a Value, target: &str, kind: &str, b: u64, c: u64) -> &'a Value {
    e["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            p["target"] == target
                && p["kind"] == kind
                && p["batch_size"] == b
                && p["concurrency"] == c
        })
        .unwrap_or_else(|| panic!("no {kind} b={b} c={c} phase for {target}"))
}

/// The target names of a table's rows, in printed order.
fn table_order(out: &str, title_start: &str) -> Vec<String> {
    let mut lines = out.lines().skip_while(|l| !l.starts_with(title_start));
    lines
        .next()
        .unwrap_or_else(|| panic!("no table '{title_start}' in\n{out}"));
    lines.next(); // column headers
    lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn three_reference_endpoints_rows_order_and_cost() {
    let _t = paired();
    // Service time at b tokens×inputs padded to 512: base + per_token × 512 × b.
    let models = [
        ("slow", 12.0, 0.004),
        ("fast", 2.0, 0.001),
        ("mid", 6.0, 0.002),
    ];
    let servers: Vec<Serve> = models
        .iter()
        .map(|(_, base, pt)| {
            Serve::start(&[
                "--base-ms",
                &base.to_string(),
                "--per-token-ms",
                &pt.to_string(),
            ])
        })
        .collect();
    let specs = [
        format!("name=slow,url={},instance=ml.g5.xlarge", servers[0].url),
        format!("name=fast,url={},price=3.5", servers[1].url),
        format!("name=mid,url={},instance=ml.c6i.2xlarge", servers[2].url),
    ];
    let mut args = vec!["-n", "25", "--seed", "7"];
    for s in &specs {
        args.extend(["--target", s.as_str()]);
    }
    let (out, e) = compare(&args, &[]);
    let text = stdout(&out);
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );

    // Interleaved, and the output says so and why.
    assert_eq!(e["compare"]["order"], "interleaved");
    assert!(text.contains("interleaved phase by phase"), "{text}");
    // Every target measured b=1, b=8 and concurrency 8, padded, n each.
    assert_eq!(e["phases"].as_array().unwrap().len(), 9);
    for (name, base, pt) in models {
        for (kind, b, c) in [("batch", 1, 1), ("batch", 8, 1), ("concurrency", 1, 8)] {
            let p = phase(&e, name, kind, b, c);
            assert_eq!(p["n"], 25, "{name} {kind} b={b}");
            assert_eq!(p["ok"], 25);
            assert_eq!(p["pad_to_max"], true);
        }
        let service = |b: f64| base + pt * 512.0 * b;
        let p50 = f(&phase(&e, name, "batch", 1, 1)["latency_ms"]["p50"]);
        assert!(
            p50 >= service(1.0) && p50 < service(1.0) + 3.0,
            "{name}: b=1 p50 {p50} for a {} ms model",
            service(1.0)
        );
        let p50_8 = f(&phase(&e, name, "batch", 8, 1)["latency_ms"]["p50"]);
        assert!(
            p50_8 >= service(8.0) && p50_8 < service(8.0) + 4.0,
            "{name}: b=8 p50 {p50_8}"
        );
        // One worker: eight in flight queue behind each other.
        let c8 = f(&phase(&e, name, "concurrency", 1, 8)["latency_ms"]["p50"]);
        assert!(c8 > 6.0 * service(1.0), "{name}: c=8 p50 {c8}");
    }

    // Ordered by p50, fastest first, in every latency table.
    assert_eq!(
        table_order(&text, "Latency at batch 1"),
        ["fast", "mid", "slow"]
    );
    assert_eq!(
        table_order(&text, "Latency at batch 8"),
        ["fast", "mid", "slow"]
    );
    assert_eq!(table_order(&text, "Concurrency 8"), ["fast", "mid", "slow"]);

    // Cost: the configured prices, and $/1M from samples/s at b=8 and that price.
    // fast's price keeps its $/1M at b=8 (0.74 + 0.12 per ms the client adds to each
    // request) well apart from slow's (1.39 + 0.05): at $5.752 the two met at 1.1 ms of
    // client overhead, which a loaded machine adds, and their difference was a coin toss.
    let prices = [("slow", 1.408), ("fast", 3.5), ("mid", 0.408)];
    let mut costs = vec![];
    for (name, price) in prices {
        let t = e["compare"]["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap();
        assert_eq!(f(&t["price_per_hour_usd"]), price);
        let p = phase(&e, name, "batch", 8, 1);
        let sps = f(&p["samples_per_s"]);
        let cost = f(&p["cost_per_1m_usd"]);
        let want = price / (sps * 3600.0) * 1e6;
        assert!(
            (cost - want).abs() < 0.01 + want * 1e-3,
            "{name}: {cost} vs {want}"
        );
        costs.push((name, cost));
    }
    costs.sort_by(|a, b| a.1.total_cmp(&b.1));
    let cheapest: Vec<&str> = costs.iter().map(|c| c.0).collect();
    assert_eq!(table_order(&text, "Cost per million"), cheapest);
    // The cost row shows the instance type the price came from.
    let cost_table: String = text
        .lines()
        .skip_while(|l| !l.starts_with("Cost per million"))
        .take(5)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        cost_table.contains("ml.c6i.2xlarge") && cost_table.contains("0.408"),
        "{cost_table}"
    );

    // ×b=1 in the throughput table is samples/s at b=8 over b=1.
    let slow1 = f(&phase(&e, "slow", "batch", 1, 1)["samples_per_s"]);
    let slow8 = f(&phase(&e, "slow", "batch", 8, 1)["samples_per_s"]);
    let row = text
        .lines()
        .skip_while(|l| !l.starts_with("Throughput"))
        .find(|l| l.starts_with("slow"))
        .unwrap();
    assert!(row.ends_with(&format!("{:.2}", slow8 / slow1)), "{row}");

    // The same model everywhere: no verdict diff.
    assert_eq!(e["compare"]["verdict_diff"], serde_json::json!([]));
    assert!(text.contains("slow    4/4       yes"), "{text}");

    // Differences from one run: each figure's own interval. Service times this far apart
    // tell every median apart; 25 requests bound no p99 from above, so no p99 is told.
    let diffs = e["compare"]["differences"].as_array().unwrap();
    // 3 pairs × 3 phases × p50, p99, req/s and $/1M.
    assert_eq!(diffs.len(), 36);
    for d in diffs {
        assert_eq!(d["basis"], "samples", "{d}");
        let significant = d["significant"] == true;
        match d["figure"].as_str().unwrap() {
            "p99_ms" => {
                assert!(!significant, "{d}");
                assert!(
                    d["needed"]
                        .as_str()
                        .unwrap()
                        .contains("no upper bound: -n "),
                    "{d}"
                );
            }
            _ => assert!(significant, "{d}"),
        }
    }
    assert!(
        text.contains("95 % intervals from each figure's own samples: one run"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("advice: most req/s at b=8 c=1: fast (+")),
        "{text}"
    );
}

#[test]
fn a_flipped_target_is_flagged_by_the_verdict_diff() {
    let good = Serve::one_ms(&[]);
    let flipped = Serve::one_ms(&["--flip-labels"]);
    let a = format!("name=good,url={}", good.url);
    let b = format!("name=flipped,url={}", flipped.url);
    let (out, e) = compare(
        &[
            "-n",
            "5",
            "--batch-sizes",
            "1",
            "--no-concurrency",
            "--target",
            &a,
            "--target",
            &b,
            "--order",
            "sequential",
        ],
        &[],
    );
    let diff = e["compare"]["verdict_diff"].as_array().unwrap();
    assert_eq!(diff.len(), 1, "{diff:?}");
    assert_eq!(diff[0]["target"], "flipped");
    let samples = diff[0]["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 4);
    for s in samples {
        assert_ne!(s["predicted"], s["others"]);
        assert_eq!(s["others"], s["expected"]);
    }
    assert!(diff[0]["hint"].as_str().unwrap().contains("tokenization"));
    let text = stdout(&out);
    assert!(text.contains("NO: 4 sample(s) differ"), "{text}");
    assert!(
        text.contains("flipped disagrees with the other targets"),
        "{text}"
    );
    assert!(
        text.contains("hint: the same model should give the same verdicts"),
        "{text}"
    );
    assert!(text.contains("targets one after another"), "{text}");
    assert_eq!(e["compare"]["order"], "sequential");
}

#[test]
fn co_hosting_schemes_route_through_the_sagemaker_runtime_api() {
    let s = Serve::start(&[
        "--base-ms",
        "1",
        "--per-token-ms",
        "0",
        "--access-key",
        "AKIDCOMPARE",
        "--secret-key",
        "compare-secret",
    ]);
    let env = [
        ("AWS_ACCESS_KEY_ID", "AKIDCOMPARE"),
        ("AWS_SECRET_ACCESS_KEY", "compare-secret"),
        ("AWS_REGION", "us-east-1"),
    ];
    let (out, e) = compare(
        &[
            "-n",
            "4",
            "--warmup",
            "1",
            "--concurrency-levels",
            "2",
            "--endpoint-url",
            &s.url,
            "--mc",
            "cpu-mc:onnx-container@ml.c6i.2xlarge",
            "--ic",
            "shared-gpu:mdeberta-ic@ml.g6.12xlarge",
            "--lmi",
            "lmi-ep:mdeberta.tar.gz@ml.g5.xlarge",
        ],
        &env,
    );
    let routed = &get_json(&format!("{}/_encbench/counters", s.url))["routed"];
    // Per target: warmup 1 + 4 measured at b=1, b=8 and c=2, plus 5 + 5 accuracy requests
    // (a plain text that says what the model answers, then the 4 samples), plus the
    // pre-flight probe.
    for key in [
        "cpu-mc x-amzn-sagemaker-target-container-hostname=onnx-container",
        "shared-gpu x-amzn-sagemaker-inference-component=mdeberta-ic",
        "lmi-ep x-amzn-sagemaker-target-model=mdeberta.tar.gz",
    ] {
        assert_eq!(routed[key], 3 * 5 + 10 + 1, "{key}: {routed}");
    }
    let names: Vec<&str> = e["compare"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["mc/onnx-container", "ic/mdeberta-ic", "lmi/mdeberta.tar.gz"]
    );
    let ic = &e["compare"]["targets"][1];
    assert_eq!(ic["target"]["endpoint"], "shared-gpu");
    assert_eq!(ic["target"]["inference_component"], "mdeberta-ic");
    assert_eq!(ic["instance_type"], "ml.g6.12xlarge");
    assert_eq!(f(&ic["price_per_hour_usd"]), 5.752);
    let text = stdout(&out);
    assert!(!text.contains("compare-secret") && !stderr(&out).contains("compare-secret"));
    assert!(
        !serde_json::to_string(&e)
            .unwrap()
            .contains("compare-secret")
    );
    assert!(text.contains("Concurrency 2, batch 1"), "{text}");
}

#[test]
fn bad_compare_input_is_one_line_naming_the_flag() {
    let s = Serve::start(&["--base-ms", "1"]);
    let one = format!("url={}", s.url);
    let dead = "name=dead,url=http://127.0.0.1:9";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["--target", &one],
            "--target: compare needs at least two targets",
        ),
        (
            vec!["--target", &one, "--target", &one],
            "two targets are named",
        ),
        (
            vec!["--target", &one, "--target", "url=http://x,colour=red"],
            "unknown key 'colour'",
        ),
        (
            vec!["--target", &one, "--ic", "endpoint-only"],
            "--ic: 'endpoint-only' is not ENDPOINT:NAME",
        ),
        (
            vec![
                "--target",
                &one,
                "--target",
                "name=b,url=http://a,instance=ml.nope",
            ],
            "--target b: --instance-type: no shipped price for 'ml.nope'",
        ),
        (vec!["--target", &one, "--target", dead], "--target dead:"),
    ];
    for (args, want) in cases {
        let mut all = vec!["compare", "--headless"];
        all.extend(args);
        let out = run(&all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{all:?}: {err}");
        assert!(err.contains(want), "{all:?}: want {want:?} in {err}");
    }
}

#[test]
fn demo_reproduces_the_seed_cost_table() {
    let _t = paired();
    let (out, e) = compare(&["--demo", "-n", "12", "--no-concurrency"], &[]);
    // The reference measurements (docs/measurement.md): b=1 p50 and b=8 samples/s; $/1M = price /
    // (samples/s × 3600) × 1e6 (LMI $3.76 vs IC $20.48 per million).
    for (name, p50, sps, cost) in [
        ("mc/cpu-onnx", 58.3, 27.0, 4.20),
        ("ic/gpu-mdeberta", 25.8, 78.0, 20.48),
        ("lmi/gpu-mdeberta", 49.7, 104.0, 3.76),
    ] {
        let b1 = f(&phase(&e, name, "batch", 1, 1)["latency_ms"]["p50"]);
        // Above it by the loopback round trip: up to 2.9 ms on a busy host here.
        assert!(
            b1 >= p50 - 0.5 && b1 < p50 + 3.5,
            "{name}: b=1 p50 {b1} vs {p50}"
        );
        let b8 = phase(&e, name, "batch", 8, 1);
        let got = f(&b8["samples_per_s"]);
        assert!(
            (got - sps).abs() < sps * 0.03,
            "{name}: b=8 {got}/s vs {sps}/s"
        );
        let c = f(&b8["cost_per_1m_usd"]);
        assert!(
            (c - cost).abs() < cost * 0.03,
            "{name}: ${c}/1M vs ${cost}/1M"
        );
    }
    assert_eq!(
        table_order(&stdout(&out), "Cost per million"),
        ["lmi/gpu-mdeberta", "mc/cpu-onnx", "ic/gpu-mdeberta"]
    );
}

/// A headless compare of two targets, interrupted with SIGINT each time the next of `when`
/// holds (given the compare's stderr so far); returns its output and its export.
fn interrupted(urls: [&str; 2], extra: &[&str], when: &[&dyn Fn(&str) -> bool]) -> (Ran, Value) {
    let path = tmp_path("compare-sigint.json");
    let err_path = tmp_path("compare-sigint.err");
    let a = format!("name=a,url={}", urls[0]);
    let b = format!("name=b,url={}", urls[1]);
    let child = std::process::Command::new(BIN)
        .args(["compare", "--headless", "--export"])
        .arg(&path)
        .args(["--target", &a, "--target", &b])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let stderr_so_far = || std::fs::read_to_string(&err_path).unwrap_or_default();
    for cond in when {
        wait_until("the moment to interrupt", 30, || cond(&stderr_so_far()));
        signal(child.id(), rustix::process::Signal::INT);
    }
    let mut out: Ran = child.wait_with_output().unwrap().into();
    out.stderr = stderr_so_far();
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(e["stopped_early"], true);
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    (out, e)
}

#[test]
fn sigint_stops_a_headless_compare_and_keeps_what_was_measured() {
    let fast = Serve::one_ms(&[]);
    let slow = Serve::start(&["--base-ms", "20", "--per-token-ms", "0"]);
    let measuring = |_: &str| counters(&fast)["invocations"].as_u64().unwrap() > 100;
    let (out, e) = interrupted([&fast.url, &slow.url], &["-n", "100000"], &[&measuring]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let p = &e["phases"][0];
    assert_eq!(p["target"], "a");
    assert!(p["n"].as_u64().unwrap() > 10, "{p}");
    assert!(
        stdout(&out).contains("Latency at batch 1"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_second_sigint_exits_a_compare_at_once_with_what_was_finished() {
    let slow = Serve::start(&["--base-ms", "4000", "--per-token-ms", "0"]);
    let in_flight = |_: &str| counters(&slow)["invocations"].as_u64().unwrap() >= 1;
    let stopping = |err: &str| err.contains("stopping:");
    let (out, e) = interrupted(
        [&slow.url, &slow.url],
        &["--no-accuracy"],
        &[&in_flight, &stopping],
    );
    // 130, not 0: it did not wait out the stop grace for the 4 s request in flight.
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(e["error"].as_str().unwrap().contains("interrupted twice"));
}
