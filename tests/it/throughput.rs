//! What a phase could do and what it was asked to do: closed-loop throughput that cannot
//! exceed the server, and open-loop runs that say how far behind the schedule they fell.

use crate::common::{Serve, assert_phase_accounted, f, paired, run_export, run_export_env};

/// 8 workers × 100 ms complete at most 80 requests a second. A closed loop at concurrency 8
/// keeps them all busy; with the warmup the size of the concurrency every slot runs in step
/// (all sent at once, all done at once), where counting the warmup requests that finish
/// inside the interval read 114 req/s at `-n 16`. Whatever the count or a duration, the
/// figure must be the server's 80, and agree with the phase's own interval.
#[test]
fn closed_loop_req_per_s_is_what_eight_workers_of_100_ms_can_do_at_any_count() {
    let _t = paired();
    let s = Serve::fixed(100, 8, &[]);
    for stop in [
        ["-n", "16"],
        ["-n", "8"],
        ["-n", "200"],
        ["--duration", "3"],
    ] {
        let (_, e) = run_export(
            &s.url,
            &[
                "--concurrency",
                "8",
                "--warmup",
                "8",
                "--no-accuracy",
                stop[0],
                stop[1],
            ],
        );
        let p = &e["phases"][0];
        assert_phase_accounted(p);
        let (rps, ok, secs) = (f(&p["req_per_s"]), f(&p["ok"]), f(&p["duration_s"]));
        eprintln!("{stop:?}: {rps:.2} req/s, {ok} ok in {secs} s");
        // Never above 80 by more than 3 % (what counting the warmup did). Below it by the
        // host's round trip, which on a loaded machine costs each slot a few ms per 100
        // (77.5 req/s once in CI), and at `-n 8` the phase is one 100 ms round that carries
        // a whole stall of the machine: 8 ms of one read 73.9 req/s with three builds
        // beside the suite.
        let under = if stop[1] == "8" { 0.85 } else { 0.95 };
        assert!(
            (under..=1.03).contains(&(rps / 80.0)),
            "{stop:?}: {rps} req/s, want 80, at most 3 % over and {:.0} % under",
            (1.0 - under) * 100.0
        );
        assert!(
            (ok / secs / rps - 1.0).abs() < 0.01,
            "{stop:?}: {ok} ok over {secs} s is not {rps} req/s"
        );
        assert_eq!(p["unsent"], 0);
        assert!(p["offered_per_s"].is_null() && p["max_lag_ms"].is_null());
    }
}

/// A cap far above the server's workers: 4 workers of 25 ms do at most 160 a second, and
/// answer in step, four at a time. With a warmup of the cap, 50 requests in rounds of 4 leave
/// a partial last round, which the span rule alone read as a whole one (161.2 at cap 8 and
/// 161.6 at 16 where the mean latency allows 155): no closed loop may read more than its
/// slots over the mean latency (Little's law). With a warmup of 3, thirteen measured requests
/// went out in the slots' fill and the sweep read 193: the rate leaves the fill out.
#[test]
fn a_cap_above_the_servers_workers_reads_what_the_workers_can_do() {
    let _t = paired();
    let s = Serve::fixed(25, 4, &[]);
    for warmup in ["16", "3"] {
        let (_, e) = run_export(
            &s.url,
            &[
                "--sweep-concurrency",
                "--concurrency-levels",
                "8",
                "16",
                "--warmup",
                warmup,
                "-n",
                "50",
                "--no-accuracy",
            ],
        );
        for p in e["phases"].as_array().unwrap() {
            assert_phase_accounted(p);
            let c = p["concurrency"].as_u64().unwrap();
            let rps = f(&p["req_per_s"]);
            let little = c as f64 / (f(&p["latency_ms"]["mean"]) / 1000.0);
            eprintln!("c={c}: {rps:.1} req/s, slots over mean latency {little:.1}");
            // With the fill measured, the rounds after it can still end in a partial one that
            // Little's bound cannot see (the fill's latencies are short): at most one round
            // of the nine, against the 193 the fill itself had read.
            let over = if warmup == "16" { 1.01 } else { 1.05 };
            assert!(
                rps <= 160.0 * over,
                "c={c}, warmup {warmup}: {rps} req/s from 4 workers of 25 ms"
            );
            assert!(rps >= 160.0 * 0.9, "c={c}: {rps} req/s, want about 160");
            if warmup == "16" {
                assert!(rps <= little * 1.001, "c={c}: {rps} over Little's {little}");
            }
        }
    }
}

fn open_loop_against_one_worker_of_10_ms(rate: u32) -> serde_json::Value {
    let s = Serve::fixed(10, 1, &[]);
    let (_, e) = run_export(
        &s.url,
        &[
            "--request-rate",
            &rate.to_string(),
            "--duration",
            "5",
            "--concurrency",
            "4",
            "--no-accuracy",
        ],
    );
    e["phases"][0].clone()
}

/// One worker of 10 ms serves 100 requests a second. Offered 200 a second for 5 s, half the
/// schedule can never be sent: those requests are counted as unsent (not silently left out
/// of the tail), the phase is marked overloaded, and offered and achieved rates are both there.
#[test]
fn open_loop_over_capacity_counts_unsent_requests_and_says_it_is_overloaded() {
    let _t = paired();
    let p = open_loop_against_one_worker_of_10_ms(200);
    assert_phase_accounted(&p);
    let (sent, unsent) = (f(&p["sent"]), f(&p["unsent"]));
    let (offered, achieved) = (f(&p["offered_per_s"]), f(&p["req_per_s"]));
    let lag = f(&p["max_lag_ms"]);
    eprintln!(
        "over capacity: sent {sent} unsent {unsent}, offered {offered:.1}/s achieved \
         {achieved:.1}/s, max lag {lag} ms"
    );
    assert!(unsent > 0.0, "{p}");
    assert_eq!(
        sent + unsent,
        1000.0,
        "sent + unsent is not the 1000 intended send times in 5 s at 200/s"
    );
    assert_eq!(p["overloaded"], true, "{p}");
    assert!((offered / 200.0 - 1.0).abs() < 0.03, "offered {offered}");
    assert!((85.0..=102.0).contains(&achieved), "achieved {achieved}");
    // Behind by about half the run: 2.5 s at the end.
    assert!((1500.0..=3500.0).contains(&lag), "max lag {lag} ms");
}

#[test]
fn open_loop_under_capacity_sends_everything_and_is_not_overloaded() {
    let _t = paired();
    let p = open_loop_against_one_worker_of_10_ms(50);
    assert_phase_accounted(&p);
    assert_eq!(p["unsent"], 0, "{p}");
    assert_eq!(p["overloaded"], false, "{p}");
    let (sent, offered) = (f(&p["sent"]), f(&p["offered_per_s"]));
    // Exactly 250 intended sends would fall in the window; 242 were seen once under the
    // whole suite (with unsent 0), cause not found, so the bound is 5 %.
    assert!(
        (sent / 250.0 - 1.0).abs() < 0.05,
        "sent {sent} in 5 s at 50/s"
    );
    assert!((offered / 50.0 - 1.0).abs() < 0.03, "offered {offered}");
    assert!((f(&p["req_per_s"]) / 50.0 - 1.0).abs() < 0.03, "{p}");
    assert!(f(&p["max_lag_ms"]) < 100.0, "{p}");
}

/// A short open-loop run far over capacity: the warmup requests still queued when measuring
/// begins finish inside the interval, and counting them read above what one worker can do.
#[test]
fn a_short_open_loop_over_capacity_reads_no_more_than_the_server_can_do() {
    let _t = paired();
    let s = Serve::fixed(10, 1, &[]);
    for n in ["8", "16", "50"] {
        let (_, e) = run_export(
            &s.url,
            &[
                "--request-rate",
                "1000",
                "-n",
                n,
                "--concurrency",
                "4",
                "--no-accuracy",
            ],
        );
        let p = &e["phases"][0];
        assert_phase_accounted(p);
        let rps = f(&p["req_per_s"]);
        assert!(
            rps <= 100.0 * 1.01,
            "-n {n}: {rps} req/s from one worker of 10 ms"
        );
        // Below it by the warmup still queued ahead (3 of n + 3 requests' time at -n 8).
        assert!(rps >= 60.0, "-n {n}: {rps} req/s");
    }
}

/// Without `--concurrency` a rate gets no practical cap, as `AIPerf` and `vllm bench serve`
/// put none on one: at the seed's cap of 1, 50 req/s fell 2.3 s behind a server that could
/// do more (114 unsent). 4 workers of 20 ms do 200 a second: 50 a second is sent in full, on
/// time, and the export says the cap was 1024 and the default. A cap given holds, also 1;
/// a closed loop keeps the default of 1.
#[test]
fn a_rate_without_concurrency_has_no_practical_cap_and_a_server_that_keeps_up_is_not_overloaded() {
    let _t = paired();
    let s = Serve::fixed(20, 4, &[]);
    let (out, e) = run_export(
        &s.url,
        &["--request-rate", "50", "-z", "5s", "--no-accuracy"],
    );
    let p = &e["phases"][0];
    assert_phase_accounted(p);
    assert_eq!(
        (
            &e["config"]["concurrency"],
            &e["config"]["concurrency_default"]
        ),
        (&serde_json::json!(1024), &serde_json::json!(true))
    );
    assert_eq!(p["concurrency"], 1024, "{p}");
    assert_eq!(
        (&p["unsent"], &p["overloaded"]),
        (&0.into(), &false.into()),
        "{p}"
    );
    assert!(
        f(&p["max_lag_ms"]) < 100.0 && f(&p["queue_lag_ms"]) < 100.0,
        "{p}"
    );
    assert!((f(&p["sent"]) / 250.0 - 1.0).abs() < 0.05, "{p}");
    // Far more than one latency's worth of requests: a rate, not `n<c`.
    assert_eq!(p["rate_not_meaningful"], false, "{p}");
    assert!(
        out.stdout
            .contains("concurrency cap 1024 (the open loop's default)"),
        "{}",
        out.stdout
    );

    for (args, cap, default) in [
        (
            &["--request-rate", "50", "--concurrency", "1"][..],
            1,
            false,
        ),
        (&[][..], 1, true),
    ] {
        let mut all = vec!["-n", "20", "--no-accuracy"];
        all.extend_from_slice(args);
        let (_, e) = run_export(&s.url, &all);
        assert_eq!(e["phases"][0]["concurrency"], cap, "{args:?}");
        assert_eq!(e["config"]["concurrency_default"], default, "{args:?}");
    }
}

/// Under the default cap a server that cannot keep up leaves the client's schedule on time
/// (nothing unsent, no lag) and queues the backlog itself: one worker of 100 ms does 10 a
/// second of the 50 offered. In flight grows as completions fall behind sends, and that
/// marks the phase overloaded, in the progress line as it runs and in the export. The
/// timeout bounds the drain (and sheds the backlog, which must not hide it).
#[test]
fn a_backlog_queued_at_the_server_marks_the_phase_overloaded() {
    let _t = paired();
    let s = Serve::fixed(100, 1, &[]);
    let (out, e) = run_export_env(
        &[
            "--url",
            &s.url,
            "--request-rate",
            "50",
            "-z",
            "6s",
            "--timeout",
            "2s",
            "--no-accuracy",
        ],
        &[],
    );
    let p = &e["phases"][0];
    assert_phase_accounted(p);
    eprintln!("{p}");
    assert_eq!(
        (&p["concurrency"], &p["unsent"]),
        (&1024.into(), &0.into()),
        "{p}"
    );
    assert!(
        f(&p["max_lag_ms"]) < 100.0,
        "the client kept its schedule: {p}"
    );
    assert_eq!(p["overloaded"], true, "{p}");
    assert!(f(&p["queue_lag_ms"]) > 1000.0, "{p}");
    // The progress line every 5 s of a log, while the phase runs.
    let said = out
        .stderr
        .lines()
        .find(|l| l.contains("OVERLOADED"))
        .unwrap_or_else(|| panic!("no progress line says so:\n{}", out.stderr));
    assert!(said.contains("at the server"), "{said}");
    assert!(out.stdout.contains("◀ overloaded"), "{}", out.stdout);
}
