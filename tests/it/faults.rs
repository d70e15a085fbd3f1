//! The fault matrix: the reference endpoint fails in each way an endpoint under load does,
//! and every run goes on, counts each failure by kind, loses no request (ok + errors = sent,
//! and with no warmup and no accuracy check, sent = what the server saw) and writes a valid
//! export.

use crate::common;

use crate::common::{
    BIN, Ran, Serve, args, assert_phase_accounted, get_json, run_env, run_export, run_export_env,
    schema_violations, stderr, tmp_path,
};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn count(p: &Value, kind: &str) -> u64 {
    p["errors"][kind].as_u64().unwrap_or(0)
}

/// ok + every error = n = sent, and the export is valid: nothing silently dropped.
pub(crate) fn assert_nothing_lost(e: &Value) {
    assert!(
        schema_violations(e).is_empty(),
        "{:?}",
        schema_violations(e)
    );
    for p in e["phases"].as_array().unwrap() {
        assert_phase_accounted(p);
    }
}

fn invocations(s: &Serve) -> u64 {
    get_json(&format!("{}/_encbench/counters", s.url))["invocations"]
        .as_u64()
        .unwrap()
}

/// Runs `load` with no warmup and no accuracy check, so every request the server sees is a
/// measured one, and checks that nothing was lost. Returns the output, the phase and the
/// server's counters after the run.
fn measured_run(s: &Serve, load: &[&str], seed: &str) -> (Ran, Value, Value) {
    // The binary: a panic would show on its stderr.
    let mut args = vec!["--url", &s.url];
    args.extend_from_slice(load);
    args.extend(["--warmup", "0", "--no-accuracy", "--seed", seed]);
    let (out, e) = run_export_env(&args, &[]);
    assert_nothing_lost(&e);
    let counters = get_json(&format!("{}/_encbench/counters", s.url));
    (out, e["phases"][0].clone(), counters)
}

#[test]
fn http_500_bursts_and_random_model_errors_are_counted_and_the_run_recovers() {
    let s = Serve::fixed(
        2,
        4,
        &[
            "--error-rate",
            "0.05",
            "--seed",
            "7",
            "--error-burst-at",
            "0.5",
            "--error-burst-ms",
            "500",
        ],
    );
    let load = ["-n", "300", "--request-rate", "200", "--concurrency", "4"];
    let (_, ref p, c) = measured_run(&s, &load, "1");
    let burst = c["burst_errors"].as_u64().unwrap();
    assert!(burst > 20, "half a second at 200/s fails in the burst: {c}");
    assert!(
        count(p, "ModelError(500)") > burst,
        "burst plus random errors: {p}"
    );
    assert!(
        p["ok"].as_u64().unwrap() > 100,
        "the run goes on after the burst: {p}"
    );
    assert_eq!(p["sent"], 300);
    assert_eq!(invocations(&s), 300);
}

#[test]
fn throttles_are_counted_and_nothing_is_lost() {
    let s = Serve::fixed(5, 8, &["--throttle-above", "1"]);
    let load = ["-n", "150", "--request-rate", "400", "--concurrency", "4"];
    let (_, ref p, c) = measured_run(&s, &load, "2");
    assert!(count(p, "ThrottlingException") > 0, "{p}");
    assert_eq!(
        count(p, "ThrottlingException"),
        c["throttled"].as_u64().unwrap()
    );
    assert_eq!(invocations(&s), 150);
}

#[test]
fn a_stall_past_the_timeout_gives_timeouts_and_the_run_goes_on() {
    let s = Serve::fixed(2, 4, &["--stall-at", "0.4", "--stall-ms", "1500"]);
    let load = [
        "-n",
        "150",
        "--request-rate",
        "50",
        "--concurrency",
        "8",
        "--timeout",
        "0.5",
    ];
    let (_, ref p, _) = measured_run(&s, &load, "3");
    assert!(count(p, "Timeout") > 0, "{p}");
    assert!(
        p["ok"].as_u64().unwrap() > 50,
        "requests after the stall succeed: {p}"
    );
}

#[test]
fn resets_mid_response_and_bodies_that_are_not_responses_are_bad_responses() {
    let s = Serve::fixed(
        2,
        4,
        &[
            "--reset-rate",
            "0.15",
            "--garbage-rate",
            "0.15",
            "--seed",
            "11",
        ],
    );
    let (out, ref p, c) = measured_run(&s, &["-n", "200", "--concurrency", "4"], "4");
    let mangled = c["mangled"].as_u64().unwrap();
    assert!(mangled > 20, "{c}");
    // Each cut-off or replaced 200 is one BadResponse; none passes as a success.
    assert_eq!(count(p, "BadResponse"), mangled, "{p}");
    assert_eq!(p["ok"].as_u64().unwrap() + mangled, 200);
    assert!(!stderr(&out).contains("panicked"));
}

#[test]
fn a_json_body_under_a_wrong_content_type_still_counts_as_a_response() {
    // Servers label JSON text/plain or worse; the body decides, as the HF toolkit's
    // clients do.
    let s = Serve::start(&[
        "--base-ms",
        "1",
        "--per-token-ms",
        "0",
        "--wrong-content-type",
    ]);
    let (out, e) = run_export(&s.url, &["-n", "20"]);
    assert_nothing_lost(&e);
    assert_eq!(e["phases"][0]["ok"], 20);
    assert_eq!(
        e["accuracy"]["passed"], 4,
        "verdicts read through text/html"
    );
    assert!(common::stdout(&out).contains("after load 4/4"));
}

/// A reference endpoint on a fixed port, so it can be killed and brought back on that port.
pub(crate) fn serve_on(port: u16) -> (Child, u16) {
    serve_on_with(port, &[])
}

/// [`serve_on`] with `extra` settings (`--only infinity`): 2 ms on 4 workers, as a process
/// of its own that SIGKILL ends as it would a real server.
pub(crate) fn serve_on_with(port: u16, extra: &[&str]) -> (Child, u16) {
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--port",
            &port.to_string(),
            "--base-ms",
            "2",
            "--per-token-ms",
            "0",
        ])
        .args(["--workers", "4"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    (child, port)
}

fn wait_until(what: &str, secs: u64, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn seen(url: &str) -> u64 {
    let text = common::get_text(&format!("{url}/_encbench/counters"));
    serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v["invocations"].as_u64())
        .unwrap_or(0)
}

#[test]
fn a_server_killed_mid_run_is_counted_as_connection_errors_and_the_run_recovers_on_its_return() {
    let _turn = crate::common::load();
    let (mut first, port) = serve_on(0);
    let url = format!("http://127.0.0.1:{port}");
    let path = tmp_path("killed.json");
    let mut load = Command::new(BIN)
        .args([
            "--headless",
            "--url",
            &url,
            "--export",
            path.to_str().unwrap(),
        ])
        .args([
            "--duration",
            "8",
            "--request-rate",
            "40",
            "--concurrency",
            "4",
        ])
        .args([
            "--timeout",
            "2",
            "--warmup",
            "0",
            "--no-accuracy",
            "--seed",
            "5",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("requests before the kill", 30, || seen(&url) >= 20);
    // Up to --concurrency of these may be in flight when the server dies.
    let before = seen(&url) - 4;
    first.kill().unwrap();
    first.wait().unwrap();
    // Down long enough for a few dozen sends to be refused.
    std::thread::sleep(Duration::from_millis(1500));
    let (mut second, again) = serve_on(port);
    assert_eq!(again, port);
    let status = load.wait().unwrap();
    let after = seen(&url);
    second.kill().unwrap();
    second.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut load.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_nothing_lost(&e);
    let p = &e["phases"][0];
    assert!(count(p, "ConnectionError") > 0, "refused while down: {p}");
    assert!(after > 0, "the restarted server is used");
    assert!(
        p["ok"].as_u64().unwrap() >= before + after,
        "successes before the kill and after the restart: {p}, after {after}"
    );
}

#[test]
fn connection_refused_at_start_is_one_line_exit_2_and_an_export_with_the_error() {
    // Bind then drop: a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let path = tmp_path("refused.json");
    let url = format!("http://127.0.0.1:{port}");
    // The binary: its whole stderr is read.
    let out = run_env(
        &["--headless", "--url", &url, "-o", path.to_str().unwrap()],
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // The error is one line, first: the cause before the export written on the way out.
    let lines: Vec<&str> = err.trim_end().lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("error: --url") && lines[0].contains("refused"),
        "{err}"
    );
    assert_eq!(lines[1], format!("results written to {}", path.display()));
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(schema_violations(&e).is_empty());
    assert!(e["error"].as_str().unwrap().contains("unreachable"), "{e}");
    assert_eq!(e["phases"], serde_json::json!([]));
}

/// A listener that answers anything with a plain-text HTTP 400, as an HTTP-only port does.
fn plain_http_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut conn in listener.incoming().flatten() {
            let mut hello = [0u8; 4096];
            let _ = conn.read(&mut hello);
            let _ = conn.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    port
}

/// `https://` to a port that speaks plain HTTP: both clients go through TLS (a client built
/// without a TLS provider would panic here) and the user gets one line saying so.
#[test]
fn https_to_a_plain_http_port_is_a_one_line_tls_error_through_both_clients() {
    let url = format!("https://127.0.0.1:{}", plain_http_port());
    let creds = [
        ("AWS_ACCESS_KEY_ID", "AKIDTLS"),
        ("AWS_SECRET_ACCESS_KEY", "tls-secret"),
        ("AWS_REGION", "us-east-1"),
    ];
    let runs = [
        ("--url", args().opt("--url", &url)),
        ("--endpoint", args().endpoint("ep", &url)),
    ];
    for (flag, target) in runs {
        let load = args().arg("--headless").and(&target).n(2).no_accuracy();
        let out = run_env(&load.strs(), &creds);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{flag}: {err}");
        assert!(
            err.contains(flag) && err.contains("corrupt message"),
            "{flag}: {err}"
        );
        assert!(!err.contains("tls-secret"), "{flag}: {err}");
    }
}
