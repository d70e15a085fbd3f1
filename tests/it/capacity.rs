//! SLOs, goodput and the capacity search, against reference endpoints whose answers are
//! queueing theory's.
//!
//! The known answers run at default flags, the path users take: one queue, no
//! `--min-probe-requests`. A p99 from a queue's correlated samples needs tens of thousands
//! of requests to be within a few percent, so a search at default flags takes minutes; the
//! search's own statistics (how near theory, how often its interval holds it) are measured
//! over thousands of simulated searches in `capacity::sim_tests`, and here the real engine,
//! client and server are held to them.

use crate::common::{
    Serve, assert_phase_accounted, counters, f, run_export, schema_violations, timed,
};
use serde_json::Value;

fn search(s: &Serve, extra: &[&str]) -> Value {
    let mut args = vec!["--no-accuracy", "--find-capacity"];
    args.extend_from_slice(extra);
    let (out, e) = run_export(&s.url, &args);
    assert!(out.status.success(), "{}", crate::common::stderr(&out));
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    for p in e["phases"].as_array().unwrap() {
        assert_eq!(p["kind"], "capacity");
        assert_phase_accounted(p);
    }
    e
}

/// Erlang C's answer for M/M/c, workers of service rate `mu`: the highest λ with P(sojourn >
/// t) ≤ 1 %.
fn mmc_capacity(mu: f64, c: usize, t: f64) -> f64 {
    encbench_core::capacity::theory::mmc_capacity(mu, c, 0.99, t)
}

/// A search at default flags, as the user ran it: `--find-capacity --slo OBJ
/// --concurrency 64` and the seed, nothing else.
fn default_search(s: &Serve, slo: &str, seed: u64) -> Value {
    search(
        s,
        &[
            "--slo",
            slo,
            "--concurrency",
            "64",
            "--seed",
            &seed.to_string(),
        ],
    )
}

/// What a user checks of a search at default flags: its answer near theory's `want`, its
/// interval holding theory (within `allowance` of it: the machine's own latency beside the
/// model's), every probe of the planned size (or its time bound), never more probes than
/// bisection's 6, and the verdict naming the probes it pooled. The answer's error.
fn assert_default_answer(e: &Value, want: f64, allowance: f64) -> f64 {
    let c = &e["capacity"][0];
    let got = f(&c["max_rate_per_s"]);
    let probes = c["probes"].as_array().unwrap();
    let ci = c["max_rate_ci95_per_s"]
        .as_array()
        .unwrap_or_else(|| panic!("no interval: {c}"));
    let (lo, hi) = (f(&ci[0]), f(&ci[1]));
    eprintln!(
        "capacity {got:.1} req/s [{lo:.1}, {hi:.1}] (theory {want:.1}, {:+.1} %) after {} probes: {}",
        (got / want - 1.0) * 100.0,
        probes.len(),
        c["verdict"]
    );
    for p in probes {
        eprintln!("  probe {p}");
    }
    assert_eq!(c["complete"], true, "{c}");
    assert!(lo <= got && got <= hi, "{c}");
    assert!(
        lo <= want * (1.0 + allowance) && want * (1.0 - allowance) <= hi,
        "theory's {want} within {allowance} of [{lo}, {hi}]"
    );
    assert!(probes.len() <= 6, "{c}");
    for p in probes {
        let reason = p["stop_reason"].as_str().unwrap();
        assert!(
            (reason == "count" && f(&p["n"]) >= 10_000.0)
                || reason == "time"
                || (reason == "overloaded" && f(&p["n"]) >= 2_500.0),
            "a p99 probe plans 10,000 requests at least, and is judged overloaded past a quarter of them: {p}"
        );
        assert_eq!(p["stable"], false, "{p}");
    }
    let pooled = c["pooled_probes"].as_u64().unwrap_or_else(|| panic!("{c}"));
    assert!(pooled >= 1 && f(&c["pooled_requests"]) >= 10_000.0, "{c}");
    assert!(
        c["verdict"]
            .as_str()
            .unwrap()
            .contains(&format!("where {pooled} probe")),
        "{c}"
    );
    got / want - 1.0
}

/// An endpoint of queueing theory for the known answers: `workers` of `ms` mean service
/// (`exp`, or `fixed`), one queue, seeded.
fn queue(ms: u32, workers: u32, dist: &str, seed: u64) -> Serve {
    let (ms, workers, seed) = (ms.to_string(), workers.to_string(), seed.to_string());
    Serve::start(&[
        "--base-ms",
        &ms,
        "--per-token-ms",
        "0",
        "--service-dist",
        dist,
        "--workers",
        &workers,
        "--queue",
        "shared",
        "--seed",
        &seed,
    ])
}

/// M/M/4 on one queue at default flags (no `--min-probe-requests`, no replicas): Erlang C's
/// answer. 2 ms mean service and p99 ≤ 20 ms: the same queue as 10 ms and 100 ms on a
/// clock five times as fast (theory 5 × 350.09 = 1,750.4 req/s), so its probes take a fifth
/// of the time: about 85 s alone, where 10 ms took about 6 minutes. A millisecond of the
/// machine's own in every latency moves this answer by 0.8 % (ε ≈ 6 at the answer).
/// Simulated at default flags (`capacity::sim_tests`, 1,000 searches) the answer's
/// standard deviation is 1.7 % and its interval holds theory in 96.5 % of them: held to
/// its interval, within 3 % for the machine, the test fails about once in 300 runs.
/// Measured: −1.1 %, interval [1661, 1804], 6 probes.
#[test]
fn mm4_capacity_at_default_flags_is_erlang_cs_answer() {
    let _t = timed();
    let s = queue(2, 4, "exp", 7);
    let e = default_search(&s, "p99=20ms", 1);
    let want = 5.0 * mmc_capacity(100.0, 4, 0.1);
    assert!((want - 1750.45).abs() < 0.1, "{want}");
    let err = assert_default_answer(&e, want, 0.03);
    assert!(err.abs() <= 0.10, "{err}");
}

/// The known answers at default flags, five seeds each (BENCHMARKS.md): M/M/1 (one
/// worker), M/M/4 (four on one queue) and M/D/1 (one worker of fixed time) at
/// `ENCBENCH_KA_MS` (10) milliseconds of service and a p99 bound of ten times it. Each
/// answer's interval holds theory (within 3 % for the machine); how many land within 5 % of
/// it is printed: measured 5 of 5 (M/D/1), 4 of 5 (M/M/4, M/M/1). Within 5 % is not asserted:
/// simulated at default flags an M/M/1's answer lands there in 81 % of searches (its p99
/// grows slowly with load, so its rate is pinned four times less tightly than its latency),
/// so five in a row would fail two runs in three. About 2½ hours at 10 ms, the models one
/// after another; a model at a time with `ENCBENCH_KA_MODELS=mm1` (or `mm4`, `md1`,
/// comma-separated), some seeds with `ENCBENCH_KA_SEEDS=3,4,5`:
/// `cargo test --test it capacity::known_answers_at_default_flags -- --ignored --nocapture`.
#[test]
#[ignore = "hours: 15 searches at default flags"]
fn known_answers_at_default_flags_for_five_seeds() {
    let ms: u32 = std::env::var("ENCBENCH_KA_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let models = std::env::var("ENCBENCH_KA_MODELS").unwrap_or_else(|_| "mm1,mm4,md1".into());
    let seeds: Vec<u64> = std::env::var("ENCBENCH_KA_SEEDS")
        .unwrap_or_else(|_| "1,2,3,4,5".into())
        .split(',')
        .map(|s| {
            s.parse()
                .expect("ENCBENCH_KA_SEEDS: seeds, comma-separated")
        })
        .collect();
    let scale = 10.0 / f64::from(ms);
    let slo = format!("p99={}ms", 10 * ms);
    let mut tally = Vec::new();
    for model in models.split(',') {
        let mut within = 0;
        let (workers, dist, want) = match model {
            "mm1" => (1, "exp", scale * (100.0 - 100f64.ln() / 0.1)),
            "mm4" => (4, "exp", scale * mmc_capacity(100.0, 4, 0.1)),
            "md1" => (
                1,
                "fixed",
                scale * encbench_core::capacity::theory::md1_capacity(0.01, 0.99, 0.1),
            ),
            other => panic!("ENCBENCH_KA_MODELS: {other} is none of mm1, mm4, md1"),
        };
        for &seed in &seeds {
            let started = std::time::Instant::now();
            let s = queue(ms, workers, dist, seed);
            let e = default_search(&s, &slo, seed);
            let err = assert_default_answer(&e, want, 0.03);
            let c = &e["capacity"][0];
            println!(
                "{model} seed {seed}: {:.1} req/s, theory {want:.1}, {:+.1} %, interval {}, {} probes, {:.0} s",
                f(&c["max_rate_per_s"]),
                err * 100.0,
                c["max_rate_ci95_per_s"],
                c["probes"].as_array().unwrap().len(),
                started.elapsed().as_secs_f64()
            );
            within += usize::from(err.abs() <= 0.05);
        }
        tally.push(format!("{model}: {within} of {} within 5 %", seeds.len()));
    }
    println!("{}", tally.join(", "));
}

/// Every request takes 10 ms: a p99 of 5 ms is out of reach at any rate. The search says
/// so after a few probes instead of halving the rate for ever.
///
/// Four random-routed copies of the worker at concurrency 4, the probes' time bound divided
/// by four: as many requests per probe, four times as fast (one worker at concurrency 1
/// took 18-32 s, here 5.8-6.0 s). Per copy the ceiling reads 58 req/s and the probes run at
/// 43 (three quarters of it) and 22 (the line through the first probe and the ceiling points
/// below zero: half), and the search says "no rate" after two: p99 over the bound 7.6 times
/// at the first and 6.1 at the second (with bisection's first probe at half the ceiling,
/// 5.1-7.4 and 4.2-5.0; one worker: 9.2 then 5.1, just enough to stop, or 12.1 and 5.1 and
/// a third probe).
#[test]
fn an_slo_below_the_service_time_has_no_rate_that_meets_it() {
    let s = Serve::fixed(10, 1, &["--replicas", "4"]);
    let started = std::time::Instant::now();
    let e = search(
        &s,
        &[
            "--slo",
            "p99=5ms",
            "--concurrency",
            "4",
            "--min-probe-requests",
            "100",
            "--max-probe-secs",
            "2500ms",
            "--warmup",
            "5",
        ],
    );
    let c = &e["capacity"][0];
    eprintln!("ceiling {} req/s; {}", c["ceiling_per_s"], c["verdict"]);
    for p in c["probes"].as_array().unwrap() {
        eprintln!("  probe at {} req/s: p99 {} ms", p["rate_per_s"], p["p99"]);
    }
    assert!(c["max_rate_per_s"].is_null(), "{c}");
    assert!(
        c["verdict"]
            .as_str()
            .unwrap()
            .starts_with("no rate meets p99 ≤ 5 ms"),
        "{c}"
    );
    assert!(c["probes"].as_array().unwrap().len() <= 3, "{c}");
    // The ceiling and three probes of at most 10 s each.
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}

/// Ctrl-C while a probe runs: that probe measured too little (fewer than its minimum, not
/// stable) to bound anything. It is listed as cut short, the bracket holds only what the
/// finished phases found, and the answer names it.
///
/// Fixed 5 ms on four workers: the ceiling (throughput only) is stable once it has its
/// 3,000 requests, about 4 s; a probe at half of it needs 7.5 s for as many. The headless
/// progress line (every 5 s off a terminal) says when a probe is under way.
#[test]
fn a_probe_cut_short_by_ctrl_c_is_not_a_bound() {
    let s = Serve::fixed(5, 4, &["--queue", "shared"]);
    let export = crate::common::tmp_path("cut.json");
    let err = crate::common::tmp_path("cut-stderr.txt");
    let tables = crate::common::tmp_path("cut-stdout.txt");
    let mut child = std::process::Command::new(crate::common::BIN)
        .args([
            "--headless",
            "--url",
            &s.url,
            "-o",
            export.to_str().unwrap(),
        ])
        .args(["--no-accuracy", "--find-capacity", "--slo", "p99=50ms"])
        .args(["--concurrency", "8", "--warmup", "20"])
        .args(["--min-probe-requests", "3000", "--max-probe-secs", "30"])
        .stdout(std::fs::File::create(&tables).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let probing = || {
        let text = std::fs::read_to_string(&err).unwrap_or_default();
        text.lines().last().is_some_and(|l| {
            let sent = l
                .split("sent ")
                .nth(1)
                .and_then(|r| r.split_whitespace().next()?.parse::<u64>().ok());
            l.contains(" capacity b=1") && !l.contains("[phase 1 ") && sent >= Some(100)
        })
    };
    crate::common::wait_until("a probe under way", 30, probing);
    crate::common::signal(child.id(), rustix::process::Signal::INT);
    let status = child.wait().unwrap();
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(status.code(), Some(0), "{text}");
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    let c = &e["capacity"][0];
    let probes = c["probes"].as_array().unwrap();
    let cut = probes.last().unwrap_or_else(|| panic!("no probe: {c}"));
    assert_eq!(cut["stop_reason"], "stopped", "{c}");
    assert_eq!(cut["bound"], false, "{c}");
    assert_eq!(cut["meets"], false, "{c}");
    assert!(f(&cut["n"]) < 3000.0, "{c}");
    let rate = f(&cut["rate_per_s"]);
    let is_rate = |v: &Value| v.as_f64().is_some_and(|r| (r - rate).abs() < 1e-3 * rate);
    assert!(
        !is_rate(&c["failed_at_per_s"]) && !is_rate(&c["max_rate_per_s"]),
        "the cut probe bounds nothing: {c}"
    );
    for p in &probes[..probes.len() - 1] {
        assert_eq!(p["bound"], true, "{p}");
    }
    assert_eq!(c["complete"], false);
    let verdict = c["verdict"].as_str().unwrap();
    assert!(
        verdict.contains("was cut short") && verdict.contains("is not a bound"),
        "{verdict}"
    );
    // The probes table says so too.
    let tables = std::fs::read_to_string(&tables).unwrap();
    assert!(
        tables
            .lines()
            .any(|l| l.contains(" cut short ") && l.contains("not a bound")),
        "{tables}"
    );
}

/// A fifth of the requests fail: goodput is the ok requests within the bound, its share of
/// n is what the server's own count of failures leaves, and the SLO is missed (an error is
/// a miss however fast it comes back).
#[test]
fn goodput_is_what_the_servers_failures_leave() {
    let s = Serve::fixed(2, 4, &["--error-rate", "0.2", "--seed", "7"]);
    let (_, e) = run_export(
        &s.url,
        &[
            "--no-accuracy",
            "-n",
            "400",
            "--warmup",
            "0",
            "--concurrency",
            "4",
            "--slo",
            "p99=10s",
            "--slo",
            "errors=50%",
        ],
    );
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    let p = &e["phases"][0];
    let failed = counters(&s)["rate_errors"].as_u64().unwrap();
    assert!(failed > 40, "{failed}");
    let share = f(&p["goodput_share"]);
    assert!(
        (share - (400 - failed) as f64 / 400.0).abs() < 1e-9,
        "goodput share {share} with {failed} of 400 failed"
    );
    let gps = f(&p["goodput_per_s"]);
    assert!((gps / f(&p["req_per_s"]) - 1.0).abs() < 1e-3, "{p}");
    assert_eq!(p["slo_met"], false);
    assert!(p["slo_missed"].as_str().unwrap().starts_with("p99"), "{p}");
    // The same run judged on errors alone meets it.
    let (_, e) = run_export(
        &s.url,
        &[
            "--no-accuracy",
            "-n",
            "100",
            "--warmup",
            "0",
            "--slo",
            "errors=50%",
        ],
    );
    assert_eq!(e["phases"][0]["slo_met"], true, "{}", e["phases"][0]);
}

/// `--until-stable`: sweep phases end once the thirds of what they measured agree.
#[test]
fn until_stable_sweep_phases_end_when_stable() {
    // Alone: stability is the thirds' p99 agreeing, and beside a paired neighbour the tail
    // of 5 ms requests moved enough that a phase ran its 20 s out.
    let _t = timed();
    let s = Serve::fixed(5, 2, &[]);
    let (_, e) = run_export(
        &s.url,
        &[
            "--no-accuracy",
            "--sweep-batch",
            "--batch-sizes",
            "1",
            "2",
            "--concurrency",
            "2",
            "--until-stable",
            "--min-probe-requests",
            "150",
            "--max-probe-secs",
            "20",
        ],
    );
    let phases = e["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for p in phases {
        assert_eq!(p["stop_reason"], "stable", "{p}");
        assert_eq!(p["stable"], true);
        assert!(f(&p["n"]) >= 150.0, "{p}");
        assert_phase_accounted(p);
    }
}

/// Two deployments of the same model: one worker at $1/h, and four at $2/h. The second costs
/// twice as much per hour and takes four times the traffic within the SLO, so it is the
/// cheaper per million samples, and `compare --slo` names it.
///
/// Each deployment is `K` random-routed instances (`serve --replicas`) at K times the
/// price, searched at K times the concurrency: every instance is the same queue at the same
/// load, so each answer is K times that of one instance, its cost per million samples the
/// same, and the probes reach the same request counts K times as fast with the time bound
/// divided by K. With one instance each this test took 98 s alone, most of it probes of one
/// worker at 50-75 req/s running out their 10 s; with four, 26-31 s. Per instance, one
/// worker met the SLO up to 37.6, 44.4 and 50.0 req/s and four workers up to 333, 332 and
/// 334 (one instance each: 55.5 and 309). The search simulated 2,000 times against one
/// worker (fixed 10 ms, 1 ms of overhead) lands under 30 req/s per instance 0.8 % of the
/// time with one instance and 0.3 % with four: the shorter probes cost nothing in noise.
#[test]
fn compare_names_the_cheapest_deployment_within_the_slo() {
    const K: u32 = 4;
    let _t = timed();
    let k = K.to_string();
    let one = Serve::fixed(10, 1, &["--replicas", &k]);
    let four = Serve::fixed(10, 4, &["--queue", "shared", "--replicas", &k]);
    let path = crate::common::tmp_path("compare-slo.json");
    let out = crate::common::run(&[
        "compare",
        "--headless",
        "--export",
        path.to_str().unwrap(),
        "--no-accuracy",
        "--target",
        &format!("name=one,url={},price={}", one.url, f64::from(K)),
        "--target",
        &format!("name=four,url={},price={}", four.url, 2.0 * f64::from(K)),
        "--batch-sizes",
        "1",
        "--concurrency-levels",
        &(8 * K).to_string(),
        "-n",
        "50",
        "--slo",
        "p99=40ms",
        "--min-probe-requests",
        "200",
        "--max-probe-secs",
        &format!("{}ms", 10_000 / K),
    ]);
    let text = crate::common::stdout(&out);
    assert!(
        out.status.success(),
        "{}\n{text}",
        crate::common::stderr(&out)
    );
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    let cap = e["capacity"].as_array().unwrap();
    let of = |name: &str| {
        cap.iter()
            .find(|c| c["target"] == name)
            .unwrap_or_else(|| panic!("no capacity for {name}: {e}"))
    };
    let (r1, r4) = (
        f(&of("one")["max_rate_per_s"]),
        f(&of("four")["max_rate_per_s"]),
    );
    // Fixed 10 ms service: one worker completes 100/s, four 400/s. Under Poisson arrivals
    // one queue's p99 reaches 40 ms near half its capacity (49.3 req/s was measured), while
    // four workers on one queue pool their idle time and keep the tail short much closer to
    // theirs.
    eprintln!(
        "capacity within p99 ≤ 40 ms: one {r1:.1} req/s, four {r4:.1} req/s ({K} instances each)"
    );
    let (r1, r4) = (r1 / f64::from(K), r4 / f64::from(K));
    assert!((30.0..=100.0).contains(&r1), "one, per instance: {r1}");
    assert!((150.0..=400.0).contains(&r4), "four, per instance: {r4}");
    assert!(r4 > 4.0 * r1, "pooling: {r4} vs 4 × {r1}");
    assert!(f(&of("four")["cost_per_1m_usd"]) < f(&of("one")["cost_per_1m_usd"]));
    assert!(
        text.contains("cheapest within p99 ≤ 40 ms: four at batch 1"),
        "{text}"
    );
    // Four times the capacity at twice the price: the searches' intervals tell them apart.
    assert!(!text.contains("no winner"), "{text}");
    // The workload's own phases are judged too, in the tables and the export.
    assert!(
        text.lines()
            .any(|l| l.starts_with("target") && l.trim_end().ends_with("SLO")),
        "{text}"
    );
    assert!(
        e["phases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["slo_met"].is_boolean())
    );
}
