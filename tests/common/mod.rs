//! Helpers for tests that drive the real binary over real HTTP on 127.0.0.1.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

pub mod tmux;

pub const BIN: &str = env!("CARGO_BIN_EXE_encbench-tui");

/// Timed known-answer tests run one at a time: two cores shared by parallel load tests
/// would measure each other.
pub static TIMED: Mutex<()> = Mutex::new(());

pub fn timed() -> std::sync::MutexGuard<'static, ()> {
    TIMED.lock().unwrap_or_else(|p| p.into_inner())
}

/// `encbench-tui serve --port 0 ARGS`, killed on drop.
pub struct Serve {
    child: Child,
    pub url: String,
}

impl Serve {
    pub fn start(args: &[&str]) -> Serve {
        let mut child = Command::new(BIN)
            .args(["serve", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the reference endpoint");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the listening line");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_string();
        Serve { child, url }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh path in a per-process temporary folder.
pub fn tmp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("encbench-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!(
        "{}-{name}",
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

pub fn run(args: &[&str]) -> Output {
    run_env(args, &[])
}

/// Runs the binary with `env` added, and without any AWS settings from this machine: no
/// AWS_* variables, no ~/.aws, no instance metadata lookups.
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") {
            cmd.env_remove(k);
        }
    }
    let home = tmp_path("home");
    std::fs::create_dir_all(&home).unwrap();
    cmd.env("HOME", &home)
        .env("AWS_EC2_METADATA_DISABLED", "true");
    cmd.envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run encbench-tui")
}

/// Like `run_export`, with the target given in `args` and extra environment.
pub fn run_export_env(args: &[&str], env: &[(&str, &str)]) -> (Output, Value) {
    let path = tmp_path("export.json");
    let mut all = vec!["--headless", "--export", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_env(&all, env);
    assert!(
        out.status.success(),
        "run failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let text = std::fs::read_to_string(&path).expect("export written");
    (out, serde_json::from_str(&text).expect("export is JSON"))
}

/// GET a JSON document over plain HTTP (the reference endpoint's counters).
pub fn get_json(url: &str) -> Value {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        reqwest::get(url)
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    })
}

/// Runs a headless run against `url` with `args` and returns its output and parsed export.
pub fn run_export(url: &str, args: &[&str]) -> (Output, Value) {
    let path = tmp_path("export.json");
    let p = path.to_str().unwrap();
    let mut all = vec!["--headless", "--url", url, "--export", p];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(
        out.status.success(),
        "run failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let export: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("export written"))
            .expect("export is JSON");
    (out, export)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// GET a body as text over plain HTTP; connection failures read as an empty body.
pub fn get_text(url: &str) -> String {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // A server that accepts and never answers (multi-model-server after a worker crash)
    // must not hang the test.
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(2))
        .build()
        .unwrap();
    rt.block_on(async {
        match client.get(url).send().await {
            Ok(r) => r.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    })
}

/// Schema violations of an export, as "path: message" lines (empty when valid).
pub fn schema_violations(export: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(encbench::assets::EXPORT_SCHEMA).unwrap();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    validator
        .iter_errors(export)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Polls `cond` every 50 ms; panics naming `what` after `secs`.
pub fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Every error of a phase, whatever its kind.
pub fn error_total(p: &Value) -> u64 {
    p["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

/// ok + every error = n = sent: no request of the phase silently dropped.
pub fn assert_phase_accounted(p: &Value) {
    let (ok, n) = (p["ok"].as_u64().unwrap(), p["n"].as_u64().unwrap());
    assert_eq!(ok + error_total(p), n, "phase {p}");
    assert_eq!(
        p["n"], p["sent"],
        "every request sent is accounted for: {p}"
    );
}
