//! Against real third-party servers: moto (the SageMaker runtime API, with SigV4 checked in
//! its IAM mode) and the Hugging Face SageMaker inference toolkit on multi-model-server (the
//! container contract). The peers are installed on first use by scripts/peers/install.sh
//! into target/peers (PyPI only; about a minute and 1.1 GB the first time).

mod common;

use common::{f, run_env, run_export_env, stderr};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Once;

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scripts/peers")
        .join(name)
}

fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let out = Command::new("bash")
            .arg(script("install.sh"))
            .args(["moto", "smhf"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "peer install failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// A free port below 32768: multi-model-server refuses higher ones ("Invalid port number").
fn free_port() -> u16 {
    let start = 20_000 + (std::process::id() % 5_000) as u16;
    (start..32_000)
        .find(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .expect("a free port")
}

/// A running peer, stopped on drop.
struct Peer {
    script: &'static str,
    port: u16,
}

/// One peer test at a time.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    common::timed()
}

impl Peer {
    fn start(script_name: &'static str, args: &[&str], env: &[(&str, &str)]) -> Peer {
        install();
        // Each peer test holds the lock for its whole life (see `timed`): two JVMs and
        // several Python workers starting at once on two cores time each other out.
        let port = free_port();
        let out = Command::new("bash")
            .arg(script(script_name))
            .args(["start", &port.to_string()])
            .args(args)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script_name} start failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Peer {
            script: script_name,
            port,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script(self.script))
            .args(["stop", &self.port.to_string()])
            .output();
    }
}

fn peers_home() -> PathBuf {
    std::env::var_os("ENCBENCH_PEERS_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/peers"))
}

#[test]
fn moto_runtime_api_through_the_sdk() {
    let _one = one_at_a_time();
    let moto = Peer::start("moto.sh", &[], &[]);
    let env = [
        ("AWS_ACCESS_KEY_ID", "AKIDMOTO"),
        ("AWS_SECRET_ACCESS_KEY", "anything"),
        ("AWS_REGION", "us-east-1"),
    ];
    // moto answers every invocation with the literal body "body": no verdicts to check.
    let (_, e) = run_export_env(
        &[
            "--endpoint",
            "moto-ep",
            "--endpoint-url",
            &moto.url(),
            "-n",
            "20",
            "--no-accuracy",
        ],
        &env,
    );
    let p = &e["phases"][0];
    assert_eq!(p["ok"], 20, "{p}");
    assert!(f(&p["latency_ms"]["p50"]) > 0.0);
}

#[test]
fn moto_iam_mode_refuses_a_wrong_secret_as_an_auth_error() {
    let _one = one_at_a_time();
    let moto = Peer::start("moto.sh", &["--auth"], &[]);
    let key: Value = serde_json::from_str(
        &std::fs::read_to_string(peers_home().join(format!("moto-{}-key.json", moto.port)))
            .unwrap(),
    )
    .unwrap();
    let id = key["AccessKeyId"].as_str().unwrap();
    let secret = key["SecretAccessKey"].as_str().unwrap();
    let good = [
        ("AWS_ACCESS_KEY_ID", id),
        ("AWS_SECRET_ACCESS_KEY", secret),
        ("AWS_REGION", "us-east-1"),
    ];
    let (_, e) = run_export_env(
        &[
            "--endpoint",
            "moto-ep",
            "--endpoint-url",
            &moto.url(),
            "-n",
            "5",
            "--no-accuracy",
        ],
        &good,
    );
    assert_eq!(e["phases"][0]["ok"], 5);

    let bad = [
        ("AWS_ACCESS_KEY_ID", id),
        ("AWS_SECRET_ACCESS_KEY", "wrong-secret"),
        ("AWS_REGION", "us-east-1"),
    ];
    let out = run_env(
        &[
            "--headless",
            "--endpoint",
            "moto-ep",
            "--endpoint-url",
            &moto.url(),
        ],
        &bad,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("authentication failed") && err.contains("SignatureDoesNotMatch"),
        "{err}"
    );
    assert!(!err.contains(secret) && !err.contains("wrong-secret"));
}

#[test]
fn hf_toolkit_accepts_batched_hf_payloads() {
    let _one = one_at_a_time();
    let smhf = Peer::start("smhf.sh", &[], &[("WORKERS", "1")]);
    let (_, e) = run_export_env(
        &["--url", &smhf.url(), "--batch-size", "4", "-n", "20"],
        &[],
    );
    let p = &e["phases"][0];
    assert_eq!(p["ok"], 20, "{p}");
    assert_eq!(p["batch_size"], 4);
    // The toolkit's stand-in model gives its own verdicts; each must parse as a label.
    let acc = &e["accuracy"];
    assert_eq!(acc["total"], 4);
    for v in acc["samples"].as_array().unwrap() {
        let label = v["predicted"]
            .as_str()
            .unwrap_or_else(|| panic!("no verdict: {v}"));
        assert!(
            ["entailment", "neutral", "contradiction"].contains(&label),
            "{label}"
        );
    }
}

#[test]
fn hf_toolkit_overload_503s_are_counted_and_the_run_goes_on() {
    let _one = one_at_a_time();
    let smhf = Peer::start(
        "smhf.sh",
        &[],
        &[
            ("WORKERS", "1"),
            ("FAKE_DELAY_MS", "50"),
            ("QUEUE_SIZE", "2"),
        ],
    );
    let (_, e) = run_export_env(
        &[
            "--url",
            &smhf.url(),
            "-n",
            "80",
            "--warmup",
            "0",
            "--concurrency",
            "12",
            "--no-accuracy",
            "--timeout",
            "30",
        ],
        &[],
    );
    let p = &e["phases"][0];
    let errors = p["errors"].as_object().unwrap();
    let unavailable = errors
        .get("ServiceUnavailable")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let total_errors: u64 = errors.values().filter_map(Value::as_u64).sum();
    assert!(unavailable > 0, "expected 503s: {errors:?}");
    assert!(p["ok"].as_u64().unwrap() > 0);
    assert_eq!(
        p["ok"].as_u64().unwrap() + total_errors,
        80,
        "nothing lost: {p}"
    );
}

#[test]
fn hf_toolkit_unhealthy_ping_is_not_ready() {
    let _one = one_at_a_time();
    let smhf = Peer::start("smhf.sh", &[], &[("WORKERS", "1")]);
    // Killing the worker leaves the frontend answering 200 {"status": "Unhealthy"}.
    let pattern = format!("smhf-{}/tmp/.mms.sock", smhf.port);
    let _ = Command::new("pkill")
        .args(["-KILL", "-f", &pattern])
        .status();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let body = common::get_text(&format!("{}/ping", smhf.url()));
        if body.contains("Unhealthy") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "/ping never said Unhealthy: {body}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let out = run_env(
        &[
            "--headless",
            "--url",
            &smhf.url(),
            "--ready-timeout",
            "1.5",
            "-n",
            "5",
        ],
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not healthy") && err.contains("Unhealthy"),
        "{err}"
    );
}
