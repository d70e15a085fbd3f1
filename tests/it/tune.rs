//! `tune`: a local server restarted per configuration, against the reference endpoint (whose
//! capacity per configuration is queueing theory's answer, M/D/c, computed here) and the
//! real Hugging Face toolkit; a server that exits at once, Ctrl-C in the middle, and every
//! flag of tune's own mistyped.
//!
//! The known-answer tune uses `serve --replicas K` as `capacity.rs` does: K copies of one
//! queue behind one address, Poisson arrivals split at random staying Poisson, the answer
//! K times one copy's. Each configuration keeps workers × replicas at 16 (16 × 1, 8 × 2,
//! 4 × 4), so each probe reaches its requests in seconds at 450–700 req/s, light enough for
//! two shared cores, and the three differ only in how the workers share a queue.

use crate::common::{BIN, f, run, schema_violations, signal, stderr, stdout, tmp_path};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The reference endpoint as a tune's server: fixed service of `base_ms`, one shared queue
/// per replica, `{workers}` and `{replicas}` from the configuration.
fn serve_command(base_ms: u32) -> String {
    format!(
        "'{BIN}' serve --port {{port}} --workers {{workers}} --base-ms {base_ms} --per-token-ms 0 --queue shared --replicas {{replicas}}"
    )
}

/// `tune ARGS -o FILE` in-process, with its export (validated against the schema).
fn tune(args: &[&str]) -> (crate::common::Ran, Value) {
    let path = tmp_path("tune.json");
    let mut all = vec!["tune", "--headless", "-o", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run(&all);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no export ({e}): {}\n{}", stderr(&out), stdout(&out)));
    let e: Value = serde_json::from_str(&text).unwrap();
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    (out, e)
}

fn configurations(e: &Value) -> &Vec<Value> {
    e["tune"]["configurations"].as_array().unwrap()
}

/// The stationary distribution of the number in an M/D/c system at an arbitrary time,
/// `a` = λD: every D the c in service leave and a Poisson(a) number arrive, so the chain
/// N' = max(N − c, 0) + A, sampled D apart from any instant, has it as its own.
fn mdc_in_system(a: f64, c: usize) -> Vec<f64> {
    const STATES: usize = 600;
    let mut arrivals = vec![(-a).exp()];
    for k in 1..80 {
        arrivals.push(arrivals[k - 1] * a / k as f64);
    }
    let mut q = vec![0.0; STATES];
    q[0] = 1.0;
    for _ in 0..200_000 {
        let mut next = vec![0.0; STATES];
        for (n, &p) in q.iter().enumerate().filter(|(_, p)| **p > 0.0) {
            let left = n.saturating_sub(c);
            for (k, &pk) in arrivals.iter().enumerate() {
                if left + k < STATES {
                    next[left + k] += p * pk;
                }
            }
        }
        let moved: f64 = q.iter().zip(&next).map(|(x, y)| (x - y).abs()).sum();
        q = next;
        if moved < 1e-13 {
            break;
        }
    }
    q
}

/// P(wait ≤ x) in an M/D/c queue, FCFS (Crommelin; the derivation of Franx 2001). Those
/// who arrived by an arrival's instant t leave in arrival order, c each D; at t + u
/// (0 ≤ u < D) they are those waiting at t − (D − u), max(N − c, 0), plus the Poisson
/// arrivals of the D − u before t, plus the arrival itself. It has begun by t + mD + u when
/// at most (m + 1)c of them are left at t + u.
fn mdc_wait_within(lambda: f64, d: f64, c: usize, x: f64) -> f64 {
    let m = (x / d).floor();
    let u = x - m * d;
    let q = mdc_in_system(lambda * d, c);
    let r = lambda * (d - u);
    let mut arrivals = vec![(-r).exp()];
    for k in 1..80 {
        arrivals.push(arrivals[k - 1] * r / k as f64);
    }
    let limit = (m as usize + 1) * c;
    let mut p = 0.0;
    for (n, qn) in q.iter().enumerate() {
        let ahead = n.saturating_sub(c) + 1;
        for (k, pk) in arrivals
            .iter()
            .enumerate()
            .take_while(|(k, _)| ahead + k <= limit)
        {
            let _ = k;
            p += qn * pk;
        }
    }
    p
}

/// The highest λ whose sojourn (wait + D) is within `t` for 99 % of requests, by bisection.
fn mdc_capacity(d: f64, c: usize, t: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, c as f64 / d * (1.0 - 1e-9));
    for _ in 0..60 {
        let mid = f64::midpoint(lo, hi);
        if mdc_wait_within(mid, d, c, t - d) >= 0.99 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The general formula against M/D/1's own: P(W = 0) = 1 − ρ, and Erlang's closed form
/// P(W ≤ x) = (1 − ρ) Σ_{k ≤ x/D} (λ(kD − x))^k / k! · e^{−λ(kD − x)}; and a simulation
/// of M/D/4 (FCFS, the earliest free server) agreeing on the answer's p99.
#[test]
fn the_m_d_c_answer_is_m_d_1s_closed_form_and_a_simulations() {
    let (lambda, d) = (30.0, 0.02);
    assert!((mdc_wait_within(lambda, d, 1, 0.0) - (1.0 - lambda * d)).abs() < 1e-9);
    for x in [0.013, 0.05, 0.08] {
        let mut sum: f64 = 0.0;
        let mut k = 0;
        while f64::from(k) * d <= x {
            let y = lambda * (f64::from(k) * d - x);
            let fact: f64 = (1..=k).map(f64::from).product();
            sum += y.powi(k) / fact * (-y).exp();
            k += 1;
        }
        let closed = (1.0 - lambda * d) * sum;
        let general = mdc_wait_within(lambda, d, 1, x);
        assert!(
            (closed - general).abs() < 1e-9,
            "x {x}: {closed} vs {general}"
        );
    }
    let cap = mdc_capacity(d, 4, 0.1);
    assert!((cap - 173.95).abs() < 0.1, "{cap}");
    // 400,000 arrivals at that rate through four servers: the p99 sojourn is the bound.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut uniform = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut t, mut free, mut sojourn) = (0.0, [0.0f64; 4], Vec::new());
    for _ in 0..400_000 {
        t += -(1.0 - uniform()).ln() / cap;
        let i = (0..4).min_by(|&a, &b| free[a].total_cmp(&free[b])).unwrap();
        let start = free[i].max(t);
        free[i] = start + d;
        sojourn.push(start + d - t);
    }
    sojourn.sort_by(f64::total_cmp);
    let p99 = sojourn[sojourn.len() * 99 / 100];
    assert!((p99 - 0.1).abs() < 0.004, "p99 {p99}");
}

/// Workers 1, 2 and 4 of the reference endpoint (20 ms fixed, one queue), searched within
/// p99 ≤ 100 ms: each configuration's capacity near M/D/c's answer (per replica 28.04, 75.47
/// and 173.95 req/s), and the one that measured the most named. Probes of 4 s at 5 %
/// precision, 91 s for the three (probes of 10 s at 3 % took over 200 s).
///
/// The margin (docs/testing.md): at most 10 % above theory, the search's own noise (its
/// interval at 5 % precision is about two standard deviations); at most 25 % below, as a
/// loaded machine only lowers what the client can read: measured −0.7, −5.2 and −4.3 % at a
/// load average of 9, and −13 % for the four workers (700 req/s, the most CPU) with three
/// other tests beside it, twice that for the stated 3× slowdown. The precise answer at
/// default flags is M/M/4's, alone (`capacity::mm4_…`); this test is tune's, beside others.
#[test]
fn each_configurations_capacity_is_near_m_d_cs_answer_and_the_most_is_named() {
    let serve = serve_command(20);
    let started = Instant::now();
    let (out, e) = tune(&[
        "--serve",
        &serve,
        "--param",
        "workers=1,2,4",
        "--param",
        "replicas=16,8,4",
        "--zip",
        "--url",
        "http://127.0.0.1:{port}",
        "--no-accuracy",
        "--find-capacity",
        "--slo",
        "p99=100ms",
        "--concurrency",
        "256",
        "--warmup",
        "200",
        "--max-probe-secs",
        "4",
        "--capacity-precision",
        "5%",
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}\n{text}", stderr(&out));
    eprintln!("tune of three took {:?}", started.elapsed());
    for c in configurations(&e) {
        let workers: usize = c["values"]["workers"].as_str().unwrap().parse().unwrap();
        let replicas: f64 = c["values"]["replicas"].as_str().unwrap().parse().unwrap();
        let want = replicas * mdc_capacity(0.02, workers, 0.1);
        let got = f(&c["capacity"]["max_rate_per_s"]);
        eprintln!(
            "{}: {got:.1} req/s, M/D/{workers} × {replicas} {want:.1} ({:+.1} %)",
            c["label"],
            (got / want - 1.0) * 100.0
        );
        assert_eq!(c["status"], "measured", "{c}");
        assert!(
            (-0.25..=0.10).contains(&(got / want - 1.0)),
            "{c}: {got} vs {want}"
        );
        assert!(
            c["server_exit"]
                .as_str()
                .unwrap()
                .starts_with("stopped by SIGTERM"),
            "{c}"
        );
    }
    // Named: the most measured, which is the four workers' unless the load took more
    // than the 15 % between them and the two workers'.
    let most = configurations(&e)
        .iter()
        .max_by(|a, b| {
            f(&a["capacity"]["max_rate_per_s"]).total_cmp(&f(&b["capacity"]["max_rate_per_s"]))
        })
        .unwrap();
    let label = most["label"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "advice: most capacity within p99 ≤ 100 ms (no prices to compare costs): {label} at batch 1"
        )),
        "{text}"
    );
    // What tune printed is what report prints of its export.
    let path = tmp_path("tune-again.json");
    std::fs::write(&path, e.to_string()).unwrap();
    let again = run(&["report", path.to_str().unwrap()]);
    assert_eq!(stdout(&again), text);
}

/// Two workers on a cheaper instance against four on one that costs more: the two-worker
/// configuration is the cheaper per million samples and is named, though four take more.
/// Priced per configuration through a parameter of the client's alone (`--price-per-hour
/// '{price}'`): $3.84/h for 32 instances of two workers, $6.40/h for 16 of four; theory
/// gives 2,415 and 2,783 req/s, $0.442 and $0.639 per million, far enough apart for short
/// probes.
#[test]
fn prices_name_the_cheaper_configuration_per_million() {
    let serve = serve_command(20);
    let (out, e) = tune(&[
        "--serve",
        &serve,
        "--param",
        "workers=2,4",
        "--param",
        "replicas=32,16",
        "--param",
        "price=3.84,6.4",
        "--zip",
        "--url",
        "http://127.0.0.1:{port}",
        "--price-per-hour",
        "{price}",
        "--no-accuracy",
        "--find-capacity",
        "--slo",
        "p99=100ms",
        "--concurrency",
        "512",
        "--warmup",
        "200",
        "--min-probe-requests",
        "3000",
        "--max-probe-secs",
        "3",
        "--capacity-precision",
        "10%",
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}\n{text}", stderr(&out));
    let cost = |i: usize| f(&configurations(&e)[i]["capacity"]["cost_per_1m_usd"]);
    assert_eq!(configurations(&e)[1]["price_per_hour_usd"], 6.4);
    assert!(cost(0) < cost(1), "{} vs {}", cost(0), cost(1));
    assert!(
        text.contains(
            "advice: cheapest within p99 ≤ 100 ms: workers=2 replicas=32 price=3.84 at batch 1"
        ),
        "{text}"
    );
    assert!(text.contains("Pareto front"), "{text}");
    let html = tmp_path("tune.html");
    let path = tmp_path("priced.json");
    std::fs::write(&path, e.to_string()).unwrap();
    let drawn = run(&[
        "report",
        "--format",
        "html",
        path.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(drawn.status.success(), "{}", stderr(&drawn));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("data-chart=\"tune\""), "no tune chart");
    assert!(page.contains("$ per 1M samples"), "no cost axis");
}

/// A configuration whose server exits at once (a bad flag): a failed row with the server's
/// own words, the others measured, exit 0; resumed with `--fail-on failed`, the measured
/// row is taken from the export, the failed one tried again, and the exit is 3.
#[test]
fn a_server_that_exits_at_once_is_a_failed_row_and_the_rest_is_measured() {
    let serve =
        format!("'{BIN}' serve --port {{port}} --workers {{workers}} --base-ms 5 --per-token-ms 0");
    let base = [
        "--serve",
        serve.as_str(),
        "--param",
        "workers=1,0,2",
        "--url",
        "http://127.0.0.1:{port}",
        "--no-accuracy",
        "-n",
        "40",
        "--concurrency",
        "{workers}*2+1",
    ];
    let (out, e) = tune(&base);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = configurations(&e);
    let status: Vec<&str> = rows.iter().map(|c| c["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["measured", "failed", "measured"]);
    let bad = &rows[1];
    assert!(
        bad["reason"]
            .as_str()
            .unwrap()
            .contains("exited with status 2"),
        "{bad}"
    );
    let tail = bad["log_tail"].as_array().unwrap();
    assert!(
        tail.iter().any(|l| l
            .as_str()
            .unwrap()
            .contains("invalid value '0' for '--workers")),
        "{bad}"
    );
    let text = stdout(&out);
    assert!(
        text.contains("  | error: invalid value '0' for '--workers"),
        "{text}"
    );
    // Each configuration's own concurrency, computed from its workers.
    let concurrency: Vec<u64> = e["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(concurrency, [3, 5]);
    let path = tmp_path("resumed-from.json");
    std::fs::write(&path, e.to_string()).unwrap();
    let mut again = base.to_vec();
    again.extend(["--resume", path.to_str().unwrap(), "--fail-on", "failed"]);
    let (out, e) = tune(&again);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 of 1 thresholds breached"),
        "{}",
        stderr(&out)
    );
    let rows = configurations(&e);
    assert_eq!(rows[0]["resumed"], true);
    assert_eq!(rows[2]["resumed"], true);
    assert!(rows[1].get("resumed").is_none() && rows[1]["status"] == "failed");
    assert_eq!(
        e["phases"].as_array().unwrap().len(),
        2,
        "the resumed phases kept"
    );
    assert!(
        e["fail_on"][0]["summary"]
            .as_str()
            .unwrap()
            .contains("workers=0")
    );
}

/// The processes whose environment holds `marker` (ours: the servers inherit it), each with
/// its `ENCBENCH_PARAM_WORKERS` and process group.
fn marked(marker: &str) -> Vec<(u32, String, i32)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let env = String::from_utf8_lossy(&env);
        let vars: Vec<&str> = env.split('\0').collect();
        if !vars.contains(&marker) {
            continue;
        }
        let workers = vars
            .iter()
            .find_map(|v| v.strip_prefix("ENCBENCH_PARAM_WORKERS="))
            .unwrap_or("")
            .to_string();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let after = stat.rfind(')').map_or("", |i| &stat[i + 1..]);
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.first() == Some(&"Z") || workers.is_empty() {
            continue;
        }
        let group = fields.get(2).and_then(|g| g.parse().ok()).unwrap_or(0);
        out.push((pid, workers, group));
    }
    out
}

/// Ctrl-C while the second configuration loads: its server's whole process group is gone
/// when the tune exits, the export holds the first row measured and the second incomplete
/// with what it measured, the third not run.
#[test]
fn ctrl_c_during_the_second_configuration_stops_its_server_and_keeps_the_first() {
    let _turn = crate::common::load();
    let marker = format!("ENCBENCH_TEST_MARK=ctrlc-{}", std::process::id());
    let export = tmp_path("ctrl-c.json");
    let err = tmp_path("ctrl-c-stderr.txt");
    let serve = format!(
        "'{BIN}' serve --port {{port}} --workers {{workers}} --base-ms 10 --per-token-ms 0"
    );
    let (k, v) = marker.split_once('=').unwrap();
    let mut child = Command::new(BIN)
        .args([
            "tune",
            "--headless",
            "-o",
            export.to_str().unwrap(),
            "--serve",
            &serve,
        ])
        .args([
            "--param",
            "workers=1,2,4",
            "--url",
            "http://127.0.0.1:{port}",
        ])
        .args(["--no-accuracy", "--duration", "5", "--request-rate", "50"])
        .env(k, v)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let second = || marked(&marker).into_iter().find(|m| m.1 == "2");
    crate::common::wait_until("the second configuration's server", 60, || {
        second().is_some()
    });
    let (_, _, group) = second().unwrap();
    let log = || std::fs::read_to_string(&err).unwrap_or_default();
    crate::common::wait_until("its load", 30, || {
        log().contains("tune 2/3 workers=2: ready")
    });
    std::thread::sleep(Duration::from_millis(700));
    signal(child.id(), rustix::process::Signal::INT);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{}", log());
    assert!(
        marked(&marker).iter().all(|m| m.2 != group),
        "a process of the second server's group is left: {:?}",
        marked(&marker)
    );
    assert!(marked(&marker).is_empty(), "{:?}", marked(&marker));
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    let rows = configurations(&e);
    let status: Vec<&str> = rows.iter().map(|c| c["status"].as_str().unwrap()).collect();
    assert_eq!(status, ["measured", "incomplete", "not_run"], "{}", log());
    assert!(
        rows[1]["server_exit"]
            .as_str()
            .unwrap()
            .starts_with("stopped by SIGTERM")
    );
    let targets: BTreeSet<&str> = e["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, BTreeSet::from(["workers=1", "workers=2"]));
    assert_eq!(e["stopped_early"], true);
}

/// The real Hugging Face toolkit with its worker count as the parameter: both rows
/// measured on one port, never both servers at once, nothing of either left after, the
/// port free.
#[test]
fn the_hf_toolkits_workers_are_tuned_one_server_at_a_time() {
    let _one = crate::peers::one_at_a_time();
    crate::peers::install("smhf");
    let port = crate::peers::free_port();
    let marker = format!("ENCBENCH_TEST_MARK=hf-{}", std::process::id());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/peers/smhf.sh");
    let serve = format!("WORKERS={{workers}} bash '{}' run {port}", script.display());
    let url = format!("http://127.0.0.1:{port}");
    let export = tmp_path("hf-tune.json");
    let (k, v) = marker.split_once('=').unwrap();
    let mut child = Command::new(BIN)
        .args([
            "tune",
            "--headless",
            "-o",
            export.to_str().unwrap(),
            "--serve",
            &serve,
        ])
        .args(["--param", "workers=1,2", "--url", &url, "--engine", "hf"])
        .args(["--no-accuracy", "-n", "40", "--concurrency", "{workers}*2"])
        .args(["--ready-timeout", "120s"])
        .env(k, v)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut together = BTreeSet::new();
    while child.try_wait().unwrap().is_none() {
        let running: BTreeSet<String> = marked(&marker).into_iter().map(|m| m.1).collect();
        if running.len() > 1 {
            together.extend(running);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(together.is_empty(), "servers of {together:?} ran at once");
    assert!(marked(&marker).is_empty(), "left: {:?}", marked(&marker));
    assert!(
        std::net::TcpListener::bind(("127.0.0.1", port)).is_ok(),
        "port {port} still taken"
    );
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    for c in configurations(&e) {
        assert_eq!(c["status"], "measured", "{c}\n{said}");
    }
    for p in e["phases"].as_array().unwrap() {
        assert!(p["ok"].as_u64().unwrap() >= 40, "{p}");
    }
    let conc: Vec<u64> = e["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(conc, [2, 4]);
}

/// Each of tune's own flags mistyped, and what a tune refuses before any server starts: one
/// line naming the flag (and the configuration where one is to blame), exit 2.
#[test]
fn a_mistyped_tune_is_one_line_and_exit_2_before_any_server_starts() {
    let serve = "sleep 60 # {workers}";
    let ok = [
        "--serve",
        serve,
        "--param",
        "workers=1,2",
        "--url",
        "http://127.0.0.1:{port}",
    ];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--parm", "workers=1"], "--parm"),
        (vec!["--param", "workers"], "has no '='"),
        (vec!["--param", "2w=1"], "is not a name"),
        (vec!["--param", "w=1,,2"], "is not a value"),
        // Values stay values: shell syntax in one is refused, never run.
        (vec!["--param", "workers=1;touch pwned;#"], "is not a value"),
        (vec!["--param", "workers=$(id)"], "is not a value"),
        (vec!["--param", "workers=`id`"], "is not a value"),
        (vec!["--param", "workers=1 2"], "is not a value"),
        (vec!["--param", "workers='1'"], "is not a value"),
        (vec!["--param", "workers=\"1\""], "is not a value"),
        (vec!["--param", "workers=a|b"], "is not a value"),
        (
            vec![
                "--param",
                "price=1,2,3",
                "--zip",
                "--price-per-hour",
                "{price}",
            ],
            "--zip pairs the values in step",
        ),
        (vec!["--link", "concurrency=8"], "names no parameter"),
        (vec!["--link", "Conc!=workers"], "is not a run flag's name"),
        (vec!["--stop-grace", "-1"], "--stop-grace"),
        (vec!["--resume", "/nonexistent/tune.json"], "--resume"),
        (
            vec!["--concurrency", "{workers}/3"],
            "is not a whole number",
        ),
        (
            vec!["--concurrency", "{wokers}"],
            "{wokers} names no --param",
        ),
        (
            vec!["--param", "unused=1"],
            "--param unused: no placeholder",
        ),
        (vec!["--demo"], "cannot be used with '--demo'"),
        (vec!["--shard", "0/2"], "--shard"),
        (vec!["--concurrency", "{workers}*0"], "--concurrency"),
        (vec!["-o", "out-{workers}.json"], "takes no placeholder"),
        (
            vec!["--sweep-concurrency", "--find-capacity", "--slo", "p99=1s"],
            "tune workers=1: --find-capacity",
        ),
        (vec!["--fail-on", "slo"], "--fail-on"),
    ];
    for (extra, says) in cases {
        let mut args = vec!["tune"];
        args.extend_from_slice(&ok);
        args.extend_from_slice(&extra);
        let out = run(&args);
        let line = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {line}");
        assert!(line.contains(says), "{extra:?}: {line}");
        assert!(line.starts_with("error: "), "{extra:?}: {line}");
    }
    let no_url = run(&["tune", "--serve", serve, "--param", "workers=1"]);
    assert_eq!(no_url.status.code(), Some(2));
    assert!(stderr(&no_url).contains("--url: say where the started server answers"));
    let serve_typo = run(&[
        "tune",
        "--serve",
        "x {wokers}",
        "--param",
        "workers=1",
        "--url",
        "http://h:1/{workers}",
    ]);
    assert!(
        stderr(&serve_typo).contains("--serve: {wokers} names no --param"),
        "{}",
        stderr(&serve_typo)
    );
    // tune's own help, wherever --help stands.
    for args in [
        &["tune", "--help"][..],
        &["tune", "--param", "w=1", "-h"][..],
    ] {
        let help = run(args);
        assert_eq!(help.status.code(), Some(0), "{args:?}: {}", stderr(&help));
        assert!(stdout(&help).contains("--stop-grace"), "{}", stdout(&help));
    }
    // A run has no configurations to fail.
    let on_a_run = run(&["--url", "http://127.0.0.1:9", "--fail-on", "failed"]);
    assert_eq!(on_a_run.status.code(), Some(2));
    assert!(stderr(&on_a_run).contains("failed judges a tune's configurations"));
}
