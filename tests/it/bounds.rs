//! Numbers no run can honour are refused up front: one line naming the flag and exit 2,
//! never a panic (`Duration::from_secs_f64` of 1e300) or a 300-digit rate in the tables.

use crate::common::{run_env, stderr};

fn refused(args: &[&str], flag: &str) {
    let out = run_env(args, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
    assert!(err.contains(flag), "{args:?}: names {flag}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn rates_and_burstiness_outside_their_ranges_are_refused() {
    for (flag, v) in [
        ("--request-rate", "1e-20"),
        ("--request-rate", "1e300"),
        ("--request-rate", "NaN"),
        ("--burstiness", "1e-300"),
        ("--burstiness", "1e300"),
        ("--burstiness", "0"),
    ] {
        refused(&["--headless", "--demo", flag, v, "-n", "5"], flag);
    }
}

#[test]
fn times_and_sizes_outside_their_ranges_are_refused() {
    let run = |flag: &'static str, v: &'static str| vec!["--headless", "--demo", flag, v];
    for (args, flag) in [
        (run("--timeout", "1e20"), "--timeout"),
        (run("--duration", "1e300"), "--duration"),
        (run("--warmup-timeout", "1e300"), "--warmup-timeout"),
        (run("--ready-timeout", "1e300"), "--ready-timeout"),
        (run("--concurrency", "1000000000"), "--concurrency"),
        (run("-n", "100000000000"), "--requests"),
        (run("--warmup", "100000000000"), "--warmup"),
        (run("--max-len", "1000000000"), "--max-len"),
        (run("--client-threads", "100000"), "--client-threads"),
        (
            vec!["compare", "--headless", "--demo", "--timeout", "1e300"],
            "--timeout",
        ),
    ] {
        refused(&args, flag);
    }
    for flag in ["--timeout", "--idle-wait", "--retry-interval", "--give-up"] {
        refused(&["cold-start", "--endpoint", "ep", flag, "1e300"], flag);
    }
    for flag in [
        "--base-ms",
        "--per-token-ms",
        "--model-load-ms",
        "--unhealthy-for-ms",
    ] {
        refused(&["serve", "--port", "0", flag, "1e300"], flag);
    }
    for (a, b) in [
        ("--stall-at", "--stall-ms"),
        ("--error-burst-at", "--error-burst-ms"),
    ] {
        refused(&["serve", "--port", "0", a, "1e300", b, "10"], a);
        refused(&["serve", "--port", "0", a, "1", b, "1e300"], b);
    }
}
