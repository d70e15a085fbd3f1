//! Traffic that moves: a ramp that draws the knee in one run, where the capacity search
//! finds it on the same server, with the run cut into time slices; and every flag of it
//! mistyped.

use crate::common::{Serve, f, run, run_env, run_export, schema_violations, stderr, stdout};

/// A ramp 20..400 req/s over 30 s against M/D/4 queues (200 req/s at most in all): the
/// slices' offered rates follow the ramp, the phase offers exactly what the ramp expects
/// (210 × 30), and the rate where p99 crossed its bound lies where queueing puts it: at or
/// past the capacity search's answer on the same server (the steady state's, 174 by M/D/4),
/// and no further past the workers' 200 req/s than a queue growing at the ramp's excess can
/// stay under the bound. The issue asked for within 15 % of the search; at this slope the
/// queue lags the rate, since near saturation it takes seconds to build a steady state's
/// backlog: the crossing read 181–190 against a search's 183 on a quiet machine and 200
/// against 173 in CI (+16 %), inside the band.
///
/// The server is K = 5 random-routed copies of 4 workers of 100 ms, the bound p99 ≤ 500
/// ms: each copy is the same M/D/4 queue at a fifth of the traffic, so every rate is the
/// one of 4 workers of 20 ms and a bound of 100 ms, on a clock five times slower. This test
/// runs among others: with 20 ms and 100 ms a loaded machine's stalls of 100-250 ms put
/// its search at 124 req/s (probes at 142 and 149 read p99 263 and 110 ms); against 500
/// ms the same stalls stay inside the bound's margin.
#[test]
fn a_ramp_draws_the_knee_where_the_capacity_search_finds_it() {
    const K: f64 = 5.0;
    let s = Serve::fixed(100, 4, &["--replicas", "5"]);
    let common = ["--engine", "hf", "--no-accuracy", "--slo", "p99=500ms"];
    // Past saturation a copy's queue grows by its share of the ramp's excess,
    // (slope / K) × (t − t₄₀); it holds the bound's worth of work (20 requests at 40/s) once
    // ½ (slope / K) (t − t₄₀)² = 20: no later. In all, K times one copy's rate.
    let (per_copy_per_s, bound_s) = (4.0 / 0.100, 0.500);
    let fluid_at =
        |slope: f64| K * (per_copy_per_s + (2.0 * slope / K * per_copy_per_s * bound_s).sqrt());

    let mut search = common.to_vec();
    search.extend([
        "--find-capacity",
        "--max-probe-secs",
        "10",
        "--capacity-precision",
        "4%",
    ]);
    let (out, cap) = run_export(&s.url, &search);
    assert!(out.status.success(), "{}", stderr(&out));
    let capacity = f(&cap["capacity"][0]["max_rate_per_s"]);
    assert!(
        (150.0..200.0).contains(&capacity),
        "M/D/4 at 100 ms, K = 5: {capacity}"
    );

    let page = crate::common::tmp_path("ramp.html");
    let mut ramp = common.to_vec();
    ramp.extend(["--ramp", "20..400", "--duration", "30", "--slice", "1s"]);
    ramp.extend(["--report", page.to_str().unwrap()]);
    let (out, e) = run_export(&s.url, &ramp);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    assert_eq!(e["config"]["ramp"]["to_per_s"], 400.0);
    assert_eq!(e["config"]["slice_s"], 1.0);
    let p = &e["phases"][0];
    assert_eq!(p["ramp"]["shape"], "linear");
    assert!(
        (f(&p["request_rate"]) - 210.0).abs() < 1e-9,
        "the ramp's mean"
    );
    // Exactly what the ramp expects, as a steady --duration phase offers rate × duration.
    let due = p["sent"].as_u64().unwrap() + p["unsent"].as_u64().unwrap();
    assert_eq!(due, 6300, "{p}");

    let slices = p["slices"].as_array().unwrap();
    assert_eq!(slices.len(), 30);
    let sum = |k: &str| slices.iter().map(|s| s[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("ok"), p["ok"].as_u64().unwrap());
    assert_eq!(sum("ok") + sum("errors") + sum("unsent"), due);
    // Each 5 s of slices offered what the ramp expects in it, within Poisson noise.
    for k in 0..6u32 {
        let (a, b) = (5.0 * f64::from(k), 5.0 * f64::from(k) + 5.0);
        let want = 20.0 * (b - a) + 380.0 * (b * b - a * a) / 60.0;
        let got: f64 = slices[5 * k as usize..5 * k as usize + 5]
            .iter()
            .map(|s| f(&s["offered_per_s"]))
            .sum();
        assert!(
            (got - want).abs() < 4.0 * want.sqrt() + 3.0,
            "[{a}, {b}): {got} of {want}"
        );
    }

    let breaks = p["slo_breaks"].as_array().unwrap();
    assert_eq!(breaks.len(), 1, "{breaks:?}");
    let crossed = f(&breaks[0]["crossed_per_s"]);
    let fluid = fluid_at(380.0 / 30.0);
    assert!(
        0.95 * capacity <= crossed && crossed <= fluid,
        "p99 crossed 500 ms at {crossed} req/s; the search says {capacity}, the fluid bound {fluid:.1}"
    );
    // Between the two slices' offered rates, which a slice's Poisson count can put in
    // either order (CI: held at 200, broke at 189, crossed at 197).
    let (held, broke) = (f(&breaks[0]["held_per_s"]), f(&breaks[0]["offered_per_s"]));
    assert!(
        held.min(broke) <= crossed && crossed <= held.max(broke),
        "{breaks:?}"
    );
    let text = stdout(&out);
    assert!(text.contains("Slices of phase 1"), "{text}");
    assert!(text.contains("p99=500ms crossed at"), "{text}");
    assert!(text.contains("ramp 20→400 req/s linear"), "{text}");
    // The HTML report draws the knee curve and the slices over time.
    let html = std::fs::read_to_string(&page).unwrap();
    for kind in ["knee", "slices", "timeline"] {
        assert!(
            html.contains(&format!("data-chart=\"{kind}\"")),
            "no {kind} chart"
        );
    }
    assert!(
        html.contains("p99=500ms crossed at"),
        "the break is named on the page"
    );

    // Slices of 250 ms hold 5 to 100 requests on a ramp 20..400 over 10 s: too few to judge
    // p99 alone, so neighbouring ones are pooled to 100 requests, and the break is found
    // where queueing puts it (the search's answer up to the fluid bound at this slope, 38
    // req/s²: 287), each end widened by three standard deviations of a pooled span's
    // offered rate (100 requests: 10 %, Poisson). Judging only the slices that held 100 had
    // put it at the ramp's end, 380-400, or nowhere.
    let mut ramp = common.to_vec();
    ramp.extend(["--ramp", "20..400", "--duration", "10", "--slice", "250ms"]);
    let (out, e) = run_export(&s.url, &ramp);
    assert!(out.status.success(), "{}", stderr(&out));
    let p = &e["phases"][0];
    let breaks = p["slo_breaks"].as_array().unwrap();
    assert_eq!(breaks.len(), 1, "{breaks:?}");
    let b = &breaks[0];
    let (first, last) = (b["slice"].as_u64().unwrap(), b["to_slice"].as_u64());
    assert!(last.is_some_and(|l| l > first), "a pooled span: {b}");
    let fluid = fluid_at(380.0 / 10.0);
    let crossed = f(&b["crossed_per_s"]);
    eprintln!("250 ms slices, pooled: {b} (the search: {capacity})");
    assert!(
        0.95 * capacity * 0.7 <= crossed && crossed <= fluid * 1.3,
        "p99 crossed 500 ms at {crossed} req/s; the search says {capacity}, the fluid bound {fluid:.1}: {b}"
    );
    let (held, broke) = (f(&b["held_per_s"]), f(&b["offered_per_s"]));
    assert!(
        held.min(broke) <= crossed && crossed <= held.max(broke),
        "{b}"
    );
    let text = stdout(&out);
    assert!(
        text.contains("p99 needs 100: use --slice") && text.contains(", pooled ("),
        "{text}"
    );
}

/// Slices of a closed loop (no ramp): every request in one, the tables and `report` say so.
#[test]
fn a_closed_loop_cut_into_slices_accounts_for_every_request() {
    let s = Serve::one_ms(&[]);
    let (out, e) = run_export(
        &s.url,
        &[
            "--engine",
            "hf",
            "--no-accuracy",
            "--duration",
            "3",
            "--slice",
            "500ms",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let p = &e["phases"][0];
    let slices = p["slices"].as_array().unwrap();
    assert!((6..=7).contains(&slices.len()), "{}", slices.len());
    let ok: u64 = slices.iter().map(|s| s["ok"].as_u64().unwrap()).sum();
    assert_eq!(ok, p["ok"].as_u64().unwrap());
    assert!(
        slices.iter().all(|s| s["slo_missed"].is_null()),
        "no SLO, no verdict"
    );
    assert!(p["slo_breaks"].is_null());
    let path = crate::common::tmp_path("sliced.json");
    std::fs::write(&path, e.to_string()).unwrap();
    let shown = run(&["report", path.to_str().unwrap()]);
    assert!(
        stdout(&shown).contains("Slices of phase 1 (batch b=1 c=1;"),
        "{}",
        stdout(&shown)
    );
}

#[test]
fn a_ramp_or_slice_that_cannot_run_is_refused_in_one_line() {
    for (args, want) in [
        (&["--ramp", "20..400"][..], "--duration"),
        (&["--ramp", "0..400", "-z", "10"], "--ramp <FROM..TO>"),
        (&["--ramp", "20-400", "-z", "10"], "must be FROM..TO"),
        (
            &["--ramp", "20..400", "-z", "10", "--request-rate", "5"],
            "cannot be used with",
        ),
        (&["--ramp-shape", "exp"], "--ramp"),
        (
            &["--ramp", "1..2", "-z", "1", "--ramp-shape", "log"],
            "[possible values: linear, exp]",
        ),
        (&["--slice", "0"], "at least 1ms"),
        (&["--slice", "1ms", "-z", "1000"], "more than 100000 slices"),
        (&["--slce", "1s"], "a similar argument exists: '--slice'"),
        // A ramp shapes a --duration phase: beside -n or --replay it would have run a steady
        // FROM req/s; and a third dot is not the start of the second rate.
        (&["--ramp", "20..200", "-n", "100"], "--ramp with -n 100"),
        (
            &["--ramp", "20..200", "--replay", "t.jsonl"],
            "--ramp with --replay",
        ),
        (&["--ramp", "20...200", "-z", "10"], "exactly two dots"),
        (&["--ramp", "20..2..00", "-z", "10"], "exactly two dots"),
        (
            &["--rmap", "20..200", "-z", "10"],
            "a similar argument exists: '--ramp'",
        ),
    ] {
        let mut all = vec!["--demo", "--headless"];
        all.extend_from_slice(args);
        let out = run_env(&all, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(want), "{all:?}: want {want:?} in {err}");
        assert!(!err.contains("panicked"), "{err}");
        if want.starts_with("--ramp with") || want == "exactly two dots" {
            assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        }
    }
}
