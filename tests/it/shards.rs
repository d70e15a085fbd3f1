//! One endpoint loaded from several hosts as one run (`--shard`, `--start-at`): the union of
//! the hosts' sends is the arrival process asked for, which independent hosts' is not; the
//! merged export adds up to one run; `report --merge` takes every shard of a run once, or
//! refuses naming the shard.

use crate::common::{self, BIN, Serve, USER_SETTINGS, f, tmp_path};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime};

/// `encbench-tui ARGS` as a process of its own, started at once: the hosts of a run must
/// run together. No shared turn is taken: the caller holds the machine (`common::timed`).
fn start_host(args: &[String]) -> Child {
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_")
            || USER_SETTINGS.contains(&k.as_str())
            || k == "JOB_COMPLETION_INDEX"
        {
            cmd.env_remove(k);
        }
    }
    cmd.env("AWS_EC2_METADATA_DISABLED", "true")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start encbench-tui")
}

/// `count` hosts against `url`, host `i` with `host_args(i)`, all started together; their
/// exports once every one has finished.
fn run_hosts(
    count: u32,
    url: &str,
    host_args: impl Fn(u32) -> Vec<String>,
) -> Vec<(PathBuf, Value)> {
    let runs: Vec<(PathBuf, Child)> = (0..count)
        .map(|i| {
            let path = tmp_path(&format!("host-{i}.json"));
            let mut args: Vec<String> = [
                "--headless",
                "--url",
                url,
                "--no-accuracy",
                "--warmup",
                "0",
                "--client-threads",
                "1",
                "-o",
                path.to_str().unwrap(),
            ]
            .map(String::from)
            .to_vec();
            args.extend(host_args(i));
            (path, start_host(&args))
        })
        .collect();
    runs.into_iter()
        .map(|(path, child)| {
            let out = child.wait_with_output().expect("host ran");
            assert!(
                out.status.success(),
                "host failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = std::fs::read_to_string(&path).expect("export written");
            (path, serde_json::from_str(&text).expect("export is JSON"))
        })
        .collect()
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| (*s).to_string()).collect()
}

/// A common start `secs` from now, as --start-at takes it.
fn start_at(secs: u64) -> String {
    encbench_core::export::rfc3339(SystemTime::now() + Duration::from_secs(secs))
}

/// (count, cv) of the gaps between arrivals the endpoint saw.
fn arrival_gaps(s: &Serve) -> (u64, f64) {
    let g = &common::counters(s)["arrival_gaps"];
    (g["n"].as_u64().unwrap(), f(&g["cv"]))
}

/// Longest a host may fall behind its schedule, or wait for a reply of the 1 ms endpoint,
/// before the machine counts as stalled under the run: a stall leaves one long gap among
/// thousands of 1.25 ms ones, and one of 150 ms moves the cv by a quarter, one of 50 ms by
/// 3 % (at 400 req/s it took twice as long a stall, 100 ms, to move it 3 %). Undisturbed
/// runs here reported 7 to 28 ms, and 39 ms beside a core-long busy loop.
const STALL_MS: f64 = 50.0;

/// `count` hosts run with `host_args(i, start)` against a fresh endpoint that keeps every
/// host's slots free (1 ms on many workers): the cv of the gaps it saw, the hosts' exports and
/// the longest stall they report. Run again (three tries in all) after a stall: that is the
/// machine's, not the arrival process's.
fn arrivals_seen(
    count: u32,
    host_args: impl Fn(u32, &str) -> Vec<String>,
) -> (f64, Vec<(PathBuf, Value)>) {
    let mut attempt = 1;
    loop {
        let serve = Serve::fixed(1, 256, &[]);
        // Time for every host to start and connect on a busy machine: at a load of 3 the
        // hosts were waiting for the start 0.21 to 0.27 s after it was set.
        let at = start_at(2);
        let exports = run_hosts(count, &serve.url, |i| host_args(i, &at));
        let (n, cv) = arrival_gaps(&serve);
        assert_eq!(n, TOTAL - 1, "the endpoint saw every arrival of the run");
        let stall = exports
            .iter()
            .map(|(_, e)| {
                let p = &e["phases"][0];
                f(&p["max_lag_ms"]).max(f(&p["latency_ms"]["max"]))
            })
            .fold(0.0, f64::max);
        eprintln!(
            "{count} hosts: the endpoint's inter-arrival cv {cv:.3}, longest stall {stall:.1} ms"
        );
        if stall <= STALL_MS || attempt == 3 {
            return (cv, exports);
        }
        attempt += 1;
    }
}

/// Requests of the whole run, and the total rate: 7.5 s of arrivals. A seed's schedule is the
/// same gaps rescaled to the rate, so each scenario offers the cv it offered at 400 req/s,
/// where this test took 55 s (27 s at 800); measured at 800: four shards 1.999-2.012, one
/// host 2.006-2.020, four independent hosts 1.707-1.735 (at 400: 1.99-2.04, 2.00-2.02,
/// 1.71-1.76).
const TOTAL: u64 = 6000;
const RATE: f64 = 800.0;

#[test]
fn four_shards_offer_the_burstiness_asked_for_and_four_independent_hosts_do_not() {
    // Alone: gaps of 1.25 ms seen at the endpoint; a loaded machine's stalls add to their
    // spread (cv 2.27 at a load average of 12, where the test tells 2.0 from 1.7).
    let _alone = common::timed();
    // Burstiness 0.25: Gamma gaps with a coefficient of variation of 1/√0.25 = 2.
    let want_cv = 2.0;

    // One run sharded over four hosts: one schedule at 400 req/s from one seed. Service of
    // 1 ms on many workers keeps every host's slots free, so each sends on its schedule.
    let (cv_sharded, exports) = arrivals_seen(4, |i, at| {
        strings(&[
            "--shard",
            &format!("{i}/4"),
            "--seed",
            "42",
            "--start-at",
            at,
            "-q",
            &RATE.to_string(),
            "--burstiness",
            "0.25",
            "-c",
            "64",
            "-n",
            &TOTAL.to_string(),
        ])
    });
    assert!(
        (cv_sharded / want_cv - 1.0).abs() < 0.10,
        "four shards of one schedule at burstiness 0.25 should offer gaps of cv {want_cv}: the endpoint saw {cv_sharded:.3}"
    );

    // Each host its share: a quarter of the count, concurrency and rate, marked with its shard.
    for (i, (_, e)) in exports.iter().enumerate() {
        let p = &e["phases"][0];
        assert_eq!(p["shard"], serde_json::json!({"index": i, "count": 4}));
        assert_eq!(e["config"]["shard"], p["shard"]);
        assert_eq!(p["n"], TOTAL / 4, "host {i}: {p}");
        assert_eq!(p["concurrency"], 16);
        assert_eq!(f(&p["request_rate"]), RATE / 4.0);
        common::assert_phase_accounted(p);
        assert!(
            common::schema_violations(e).is_empty(),
            "{:?}",
            common::schema_violations(e)
        );
    }

    // Merged, they are one run: its count, cap and rate.
    let merged_path = tmp_path("merged.json");
    let mut args = vec!["report", "--merge"];
    args.extend(exports.iter().map(|(p, _)| p.to_str().unwrap()));
    args.extend(["-o", merged_path.to_str().unwrap()]);
    let out = common::run(&args);
    assert!(out.status.success(), "merge: {}", out.stderr);
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_path).unwrap()).unwrap();
    let p = &merged["phases"][0];
    assert_eq!(
        (p["n"].as_u64(), p["ok"].as_u64()),
        (Some(TOTAL), Some(TOTAL))
    );
    assert_eq!(p["concurrency"], 64);
    assert_eq!(f(&p["request_rate"]), RATE);
    assert_eq!(f(&merged["config"]["request_rate"]), RATE);
    assert!(p.get("shard").is_none() && merged["config"].get("shard").is_none());
    let parts: Vec<&Value> = merged["config"]["merged_from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["shard"]["index"])
        .collect();
    assert_eq!(
        parts,
        [0, 1, 2, 3],
        "the merge says which shard each source was"
    );
    // What the hosts offered together is the run's rate (each measured over its own span).
    let offered = f(&p["offered_per_s"]);
    assert!(
        (offered / RATE - 1.0).abs() < 0.1,
        "merged offered {offered} req/s, the run's rate is {RATE}"
    );
    let done = f(&p["req_per_s"]);
    assert!(
        (done / RATE - 1.0).abs() < 0.25,
        "merged {done} req/s against an endpoint that keeps up with {RATE}"
    );
    assert!(common::schema_violations(&merged).is_empty());

    // One host at the whole rate with the same seed draws the same schedule: the endpoint
    // sees the same arrivals, and its export the same run as the merged one.
    let (cv_one, one) = arrivals_seen(1, |_, _| {
        strings(&[
            "--seed",
            "42",
            "-q",
            &RATE.to_string(),
            "--burstiness",
            "0.25",
            "-c",
            "64",
            "-n",
            &TOTAL.to_string(),
        ])
    });
    let q = &one[0].1["phases"][0];
    for k in [
        "n",
        "ok",
        "sent",
        "concurrency",
        "request_rate",
        "burstiness",
        "closed_loop",
    ] {
        assert_eq!(p[k], q[k], "{k}: merged {} one host {}", p[k], q[k]);
    }
    let one_offered = f(&q["offered_per_s"]);
    assert!(
        (offered / one_offered - 1.0).abs() < 0.05,
        "offered: merged {offered}, one host {one_offered}"
    );

    // The same four hosts run independently, as before sharding: their own seeds at a
    // quarter of the rate each. Superposed, their gaps are smoother than the burstiness asked.
    let (cv_independent, _) = arrivals_seen(4, |i, at| {
        strings(&[
            "--seed",
            &(1 + i).to_string(),
            "--start-at",
            at,
            "-q",
            &(RATE / 4.0).to_string(),
            "--burstiness",
            "0.25",
            "-c",
            "16",
            "-n",
            &(TOTAL / 4).to_string(),
        ])
    });
    assert!(
        cv_independent < cv_sharded - 0.12 && cv_independent < 0.92 * want_cv,
        "independent hosts' superposed arrivals should be measurably closer to Poisson (cv 1): cv {cv_independent:.3}, sharded {cv_sharded:.3}"
    );
    // The shards offer what one host does, and independent hosts do not. A host that stalls
    // (a busy machine) leaves one long gap in its arrivals, which weighs on a cv of one host
    // more than on four shards, so the bound is loose and the comparison is the point.
    assert!(
        (cv_sharded / cv_one - 1.0).abs() < 0.15
            && (cv_sharded - cv_one).abs() < (cv_independent - cv_one).abs(),
        "four shards should offer what one host does (cv {cv_one:.3}): {cv_sharded:.3}, independent hosts {cv_independent:.3}"
    );
}

/// A sharded run's shards, each a few requests (in-process), by index.
fn shard_exports(url: &str, seed_of: impl Fn(u32) -> u64) -> Vec<String> {
    (0..4)
        .map(|i| {
            let path = tmp_path(&format!("shard-{i}.json"));
            let out = common::run(&[
                "--headless",
                "--url",
                url,
                "--no-accuracy",
                "--warmup",
                "1",
                "-q",
                "200",
                "-c",
                "4",
                "-n",
                "10",
                "--seed",
                &seed_of(i).to_string(),
                "--shard",
                &format!("{i}/4"),
                "-o",
                path.to_str().unwrap(),
            ]);
            assert!(out.status.success(), "shard {i}: {}", out.stderr);
            path.to_str().unwrap().to_string()
        })
        .collect()
}

fn merge(paths: &[&str]) -> common::Ran {
    let out = tmp_path("merged.json");
    let mut args = vec!["report", "--merge"];
    args.extend_from_slice(paths);
    args.extend(["-o", out.to_str().unwrap()]);
    common::run(&args)
}

#[test]
fn merge_takes_every_shard_once_and_refuses_naming_the_one_missing_or_repeated() {
    let s = Serve::one_ms(&[]);
    let shards = shard_exports(&s.url, |_| 7);
    let p: Vec<&str> = shards.iter().map(String::as_str).collect();

    let all = merge(&p);
    assert!(all.status.success(), "{}", all.stderr);

    let three = merge(&[p[0], p[1], p[2]]);
    assert_eq!(three.status.code(), Some(2));
    assert!(
        three.stderr.contains("shard 3/4 is missing"),
        "{}",
        three.stderr
    );
    let without_first = merge(&[p[1], p[2], p[3]]);
    assert!(without_first.stderr.contains("shard 0/4 is missing"));

    // A shard run twice (a pod retried) is there twice; so is one file given twice.
    let other = shard_exports(&s.url, |i| 7 + u64::from(i == 3));
    let twice = merge(&[p[0], p[1], p[2], p[3], &other[2]]);
    assert_eq!(twice.status.code(), Some(2));
    assert!(
        twice.stderr.contains("shard 2/4 is there twice"),
        "{}",
        twice.stderr
    );
    assert_eq!(
        merge(&[p[0], p[1], p[2], p[3], p[2]]).status.code(),
        Some(2)
    );

    // A shard of another run (another seed: another schedule) is not this run's.
    let mixed = merge(&[p[0], p[1], p[2], &other[3]]);
    assert_eq!(mixed.status.code(), Some(2));
    assert!(
        mixed.stderr.contains("seed 8") && mixed.stderr.contains("shard 3/4"),
        "{}",
        mixed.stderr
    );

    // Nor does a host of its own belong among shards.
    let (_, own) = common::run_export(&s.url, &["--no-accuracy", "-n", "5", "--seed", "7"]);
    let own_path = tmp_path("own.json");
    std::fs::write(&own_path, own.to_string()).unwrap();
    let with_own = merge(&[p[0], p[1], p[2], p[3], own_path.to_str().unwrap()]);
    assert_eq!(with_own.status.code(), Some(2));
    assert!(
        with_own.stderr.contains("a run of its own"),
        "{}",
        with_own.stderr
    );
}

#[test]
fn closed_loop_shards_split_the_concurrency_and_merge_back_into_the_whole_cap() {
    let s = Serve::fixed(2, 16, &[]);
    let mut paths = Vec::new();
    let mut caps = Vec::new();
    for i in 0..4 {
        let shard = format!("{i}/4");
        let (_, e) = common::run_export(
            &s.url,
            &[
                "--no-accuracy",
                "-c",
                "10",
                "-n",
                "40",
                "--seed",
                "5",
                "--shard",
                &shard,
            ],
        );
        let p = &e["phases"][0];
        assert_eq!(p["closed_loop"], true);
        assert_eq!(p["n"], 10, "a quarter of -n 40: {p}");
        caps.push(p["concurrency"].as_u64().unwrap());
        let path = tmp_path(&format!("closed-{i}.json"));
        std::fs::write(&path, e.to_string()).unwrap();
        paths.push(path);
    }
    assert_eq!(
        caps,
        [3, 3, 2, 2],
        "-c 10 over four hosts, the remainder to the first"
    );
    let out = tmp_path("closed-merged.json");
    let mut args = vec!["report", "--merge"];
    args.extend(paths.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", out.to_str().unwrap()]);
    let ran = common::run(&args);
    assert!(ran.status.success(), "{}", ran.stderr);
    let merged: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let p = &merged["phases"][0];
    assert_eq!(
        (p["n"].as_u64(), p["concurrency"].as_u64()),
        (Some(40), Some(10))
    );
    assert!(
        p["request_rate"].is_null(),
        "closed loop merged stays closed loop"
    );
}
