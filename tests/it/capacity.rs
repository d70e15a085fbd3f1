//! SLOs, goodput and the capacity search, against reference endpoints whose answers are
//! queueing theory's.
//!
//! The known-answer searches use `serve --replicas`: K independent copies of the queue
//! behind one address, each request routed to one at random. Poisson arrivals split at
//! random stay Poisson, so every copy is the same M/M/c queue at λ/K and the latency of the
//! whole is that queue's, with the answer K times as high. The copies are there for time,
//! not for the theory: a p99 from a queue's correlated samples needs tens of thousands of
//! requests to be within a few percent (simulated: the rate at which an M/M/1's empirical
//! p99 crosses 100 ms has a 11.5 % standard deviation over 3000 requests, 4.1 % over
//! 16000), and K copies deliver them K times as fast.

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

/// P(sojourn > t) in an M/M/c queue with service rate μ per worker (Erlang C for the wait,
/// plus the exponential service).
fn mmc_tail(lambda: f64, mu: f64, c: u32, t: f64) -> f64 {
    let a = lambda / mu;
    let rho = a / f64::from(c);
    let mut term = 1.0;
    let mut sum = 0.0;
    for k in 0..c {
        if k > 0 {
            term *= a / f64::from(k);
        }
        sum += term;
    }
    let last = term * a / f64::from(c) / (1.0 - rho);
    let erlang_c = last / (sum + last);
    let g = f64::from(c) * mu - lambda;
    if (g - mu).abs() < 1e-9 {
        return (-mu * t).exp() * (1.0 + erlang_c * mu * t);
    }
    (-mu * t).exp() + erlang_c * mu / (g - mu) * ((-mu * t).exp() - (-g * t).exp())
}

/// The highest λ with P(sojourn > t) ≤ 1 %, by bisection on the closed form.
fn mmc_capacity(mu: f64, c: u32, t: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, f64::from(c) * mu * (1.0 - 1e-9));
    for _ in 0..200 {
        let mid = f64::midpoint(lo, hi);
        if mmc_tail(mid, mu, c, t) <= 0.01 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

fn assert_capacity_near(e: &Value, want: f64) {
    let c = &e["capacity"][0];
    let got = f(&c["max_rate_per_s"]);
    let probes = c["probes"].as_array().unwrap();
    eprintln!(
        "capacity {got:.1} req/s (theory {want:.1}, {:+.1} %) after {} probes: {}",
        (got / want - 1.0) * 100.0,
        probes.len(),
        c["verdict"]
    );
    for p in probes {
        eprintln!("  probe {p}");
    }
    assert_eq!(c["complete"], true);
    assert!(
        (got / want - 1.0).abs() <= 0.10,
        "{got} req/s is not within 10 % of {want}: {c}"
    );
    assert!(!probes.is_empty() && probes.iter().all(|p| f(&p["n"]) > 0.0));
    assert!(
        probes.iter().any(|p| p["meets"] == true) && probes.iter().any(|p| p["meets"] == false)
    );
    // The answer's interval holds the bracket it stopped in, and theory's answer.
    let ci = c["max_rate_ci95_per_s"]
        .as_array()
        .unwrap_or_else(|| panic!("no interval: {c}"));
    let (lo, hi) = (f(&ci[0]), f(&ci[1]));
    let top = c["failed_at_per_s"]
        .as_f64()
        .unwrap_or_else(|| f(&c["ceiling_per_s"]));
    eprintln!(
        "  interval [{lo:.0}, {hi:.0}] ({:+.1} %, {:+.1} %)",
        (lo / want - 1.0) * 100.0,
        (hi / want - 1.0) * 100.0
    );
    assert!(
        lo <= got && top <= hi,
        "the bracket [{got}, {top}] in [{lo}, {hi}]"
    );
    assert!(lo <= want && want <= hi, "theory's {want} in [{lo}, {hi}]");
}

fn mm(workers: &str, queue: &str, replicas: &str) -> Serve {
    Serve::start(&[
        "--base-ms",
        "10",
        "--per-token-ms",
        "0",
        "--service-dist",
        "exp",
        "--workers",
        workers,
        "--queue",
        queue,
        "--replicas",
        replicas,
    ])
}

/// M/M/1, 10 ms mean service, p99 ≤ 100 ms: λ ≤ μ − ln 100 / T = 53.95 per queue.
///
/// 64 replicas: 3,453 req/s at the answer. With 16 this test took 258 s alone (a closed-loop
/// ceiling and six probes of about 35 s at 863 req/s); with 64, 64-66 s. Each probe still
/// measures 30,000 requests of the same queue at the same load per replica; the warmup and
/// the time bound scale with the replicas, so each probe gets as many warmup requests per
/// queue, and a probe cut by time as many requests, as with 16 (this search simulated
/// against 16 and 64 replicas, 1,000 runs each: the answer's sd is 2.7 % of theory in
/// both). The client keeps up at that rate on 2 cores: achieved within 1.2 % of offered,
/// dispatch delay p99 0.3-3.6 ms (up to 5.5 ms beside a core-long busy loop), at most 5 of
/// 30,000 unsent at a probe's end; the ceiling reads 4,750-4,970 req/s, the machine's limit
/// rather than the replicas' 6,400, still 1.4 times the answer. Measured: -1.0, -1.5, -0.5,
/// -0.4 % (and -1.2 % beside the busy loop).
///
/// The interpolating search (2026-12-05) needs 3 probes where bisection took 6: 35.7 s alone
/// instead of 64-66 (the answers +1.1 and +1.7 %, their intervals -5.1 to +7.8 % and -4.6
/// to +7.5 % of theory). Beside other engineers' builds (load average 3-6) it has also
/// taken 5 and 10 probes and landed 7 % under theory, as bisection did then (-5.8, -8.1 %,
/// `BENCHMARKS.md`).
#[test]
fn mm1_capacity_is_queueing_theorys_answer() {
    let _t = timed();
    let replicas = 64;
    let s = mm("1", "per-worker", &replicas.to_string());
    let e = search(
        &s,
        &[
            "--slo",
            "p99=100ms",
            "--concurrency",
            "256",
            "--warmup",
            &(100 * replicas / 16).to_string(),
            "--min-probe-requests",
            "30000",
            "--max-probe-secs",
            &(40 * 16 / replicas).to_string(),
            "--capacity-precision",
            "3%",
        ],
    );
    let want = f64::from(replicas) * (100.0 - 100f64.ln() / 0.1);
    assert!((want / f64::from(replicas) - 53.95).abs() < 0.01);
    assert_capacity_near(&e, want);
}

/// M/M/4 (one queue, four workers), 10 ms mean, p99 ≤ 100 ms: Erlang C's answer. Not
/// p99 ≤ 50 ms: the service alone has a p99 of 46 ms (10 ms × ln 100), so a few
/// milliseconds of the machine's own (loopback, two processes on 2 cores) moved that answer
/// by a quarter (3 ms: 242 → 177 per replica), and the test measured the machine instead of
/// the search; at 100 ms, 5 ms moves it under 1 % (350.1 → 347.0).
///
/// 12 replicas: 4,201 req/s at the answer. With 4 (1,400 req/s) this test took 185 s alone;
/// with 8, 118-127 s (errors -0.1, -1.6, +1.2 %); with 12, 75-83 s. As for M/M/1, the
/// warmup and the time bound scale with the replicas, and each probe measures 30,000
/// requests. 12 is as far as this machine goes with margin: the closed-loop ceiling reads
/// 4,445-4,491 req/s (the replicas' own is 4,800), 7 % above the answer; the search still
/// lands within 10 % as long as the machine completes 3,900 a second, the answer less its
/// precision and tolerance. At 4,200 req/s the client kept up: achieved within 2 % of
/// offered, dispatch delay p99 2.3-4.4 ms (7.1 ms beside a core-long busy loop), at most 17
/// of 57,000 unsent at a probe's end. Measured: +0.0, -0.8, +0.1 % (and -1.4 % beside the
/// busy loop).
///
/// The interpolating search (2026-12-05) needs 4-5 probes where bisection took 6: 53.8 s
/// alone instead of 75-83 (-0.7 %, the interval -6.9 to +3.6 % of theory). Beside other
/// engineers' builds (load average over 3) one search landed at -21.7 %, the machine's own
/// latency in every probe.
#[test]
fn mm4_capacity_is_erlang_cs_answer() {
    let _t = timed();
    let replicas: u32 = 12;
    let s = mm("4", "shared", &replicas.to_string());
    let e = search(
        &s,
        &[
            "--slo",
            "p99=100ms",
            "--concurrency",
            "512",
            "--warmup",
            &(200 * replicas / 4).to_string(),
            "--min-probe-requests",
            "30000",
            "--max-probe-secs",
            &format!("{}ms", 40_000 * 4 / replicas),
            "--capacity-precision",
            "3%",
        ],
    );
    let per_replica = mmc_capacity(100.0, 4, 0.1);
    assert!((per_replica - 350.09).abs() < 0.05, "{per_replica}");
    assert_capacity_near(&e, f64::from(replicas) * per_replica);
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
    let _t = timed();
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
