//! Helpers for the integration tests, over real HTTP on 127.0.0.1. Runs go in-process (the
//! command line parsed and run by the library, as `main` does) unless a test needs what only
//! a process has: its own environment, its stderr, signals or a terminal (`run_env`, `BIN`).
#![allow(dead_code)]

use encbench::app::{self, Stdout};
use encbench::cli;
use encbench::cli::Sub;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

pub mod args;
pub mod hostile;
pub mod hostile_grpc;
pub mod tmux;

pub use args::{Args, args};

pub const BIN: &str = env!("CARGO_BIN_EXE_encbench-tui");

// Turns on the machine are taken by the engine's tests too (crates/load/tests): written
// once, in the lowest layer whose tests take them.
#[path = "../../../crates/load/tests/common/mod.rs"]
mod turns;
pub use turns::{Load, load, lock_file, paired, timed};

/// A runtime as the binary's `main` builds it.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(encbench_wire::timing::tighten_timer_slack)
        .build()
        .unwrap()
}

/// The reference endpoint (`serve --port 0 ARGS`), in-process on a runtime of its own,
/// stopped on drop.
pub struct Serve {
    pub url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _load: Load,
}

impl Serve {
    /// One that answers in 1 ms whatever the input, with `extra` settings.
    pub fn one_ms(extra: &[&str]) -> Serve {
        let mut a = vec!["--base-ms", "1", "--per-token-ms", "0"];
        a.extend_from_slice(extra);
        Serve::start(&a)
    }

    /// One whose every request takes `base_ms` on one of `workers` workers, with `extra`
    /// settings.
    pub fn fixed(base_ms: u32, workers: usize, extra: &[&str]) -> Serve {
        let (base, workers) = (base_ms.to_string(), workers.to_string());
        let mut a = vec![
            "--base-ms",
            &base,
            "--per-token-ms",
            "0",
            "--workers",
            &workers,
        ];
        a.extend_from_slice(extra);
        Serve::start(&a)
    }

    pub fn start(serve_args: &[&str]) -> Serve {
        let turn = load();
        let all = ["encbench-tui", "serve", "--port", "0"]
            .into_iter()
            .chain(serve_args.iter().copied());
        let cli = cli::parse(all).unwrap_or_else(|e| panic!("serve {serve_args:?}: {e:?}"));
        let Some(Sub::Serve(a)) = cli.command else {
            unreachable!("parsed as serve")
        };
        let (cfg, tokenizer) = app::serve_config(&a).expect("serve settings");
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            runtime().block_on(async move {
                let server = encbench_serve::start(cfg, tokenizer)
                    .await
                    .expect("start the reference endpoint");
                url_tx.send(server.url()).unwrap();
                let _ = stopped.await;
            });
        });
        Serve {
            url: url_rx.recv().expect("the reference endpoint's URL"),
            stop: Some(stop),
            thread: Some(thread),
            _load: turn,
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How a run ended, in-process or as a process.
pub struct Ran {
    pub status: Status,
    pub stdout: String,
    /// A process's whole stderr; in-process, the error line only (progress goes to the
    /// test's own stderr).
    pub stderr: String,
}

pub struct Status(i32);

impl Status {
    pub fn success(&self) -> bool {
        self.0 == 0
    }

    #[allow(clippy::unnecessary_wraps, reason = "the shape of ExitStatus::code")]
    pub fn code(&self) -> Option<i32> {
        Some(self.0)
    }
}

impl From<Output> for Ran {
    fn from(o: Output) -> Ran {
        Ran {
            // A process killed by a signal has no code; -1 stands for it.
            status: Status(o.status.code().unwrap_or(-1)),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
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

/// `encbench-tui ARGS` in-process: parsed and run as `main` does, stdout captured.
pub fn run(args: &[&str]) -> Ran {
    let _turn = load();
    let all = std::iter::once("encbench-tui").chain(args.iter().copied());
    let cli = match cli::parse(all) {
        Ok(cli) => cli,
        Err((0, text)) => return ran(0, text, String::new()),
        Err((code, line)) => return ran(code, String::new(), line),
    };
    let mut out = Vec::new();
    let result = runtime().block_on(app::main(
        cli,
        &mut Stdout {
            writer: &mut out,
            is_terminal: false,
        },
    ));
    let stdout = String::from_utf8_lossy(&out).into_owned();
    match result {
        Ok(()) => ran(0, stdout, String::new()),
        Err(e) => ran(e.exit_code(), stdout, e.line()),
    }
}

fn ran(code: u8, stdout: String, stderr: String) -> Ran {
    Ran {
        status: Status(i32::from(code)),
        stdout,
        stderr,
    }
}

/// The variables the command line reads besides AWS_* (see `--help`): a user's own must not
/// change what a test's binary runs against.
pub const USER_SETTINGS: &[&str] = &[
    "ENCBENCH_URL",
    "ENCBENCH_ENDPOINT",
    "ENCBENCH_ENGINE",
    "ENCBENCH_MODEL",
    "ENCBENCH_INSTANCE_TYPE",
];

/// The binary, with `env` added, and without any AWS settings from this machine: no AWS_*
/// variables, no ~/.aws, no instance metadata lookups; nor the user's ENCBENCH_* settings.
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> Ran {
    let _turn = load();
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars() {
        if k.starts_with("AWS_") || USER_SETTINGS.contains(&k.as_str()) {
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
        .into()
}

/// The export of a run that completed: exit 0, or 4 exactly when no measured request of
/// any phase succeeded (a test of failures reads its export all the same).
fn read_export(out: &Ran, path: &std::path::Path) -> Value {
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 4)),
        "run failed: {}\n{}",
        out.stderr,
        out.stdout
    );
    let text = std::fs::read_to_string(path).expect("export written");
    let e: Value = serde_json::from_str(&text).expect("export is JSON");
    // Requests a stop abandoned are not the endpoint's failures.
    let refused = |p: &Value| {
        p["errors"]
            .as_object()
            .is_some_and(|e| e.iter().any(|(k, n)| k != "Abandoned" && n != 0))
    };
    let none_ok = e["phases"]
        .as_array()
        .is_some_and(|p| p.iter().all(|p| p["ok"] == 0) && p.iter().any(refused));
    assert_eq!(
        code == Some(4),
        none_ok,
        "exit 4 exactly when nothing succeeded: {}",
        out.stderr
    );
    e
}

/// A headless run of the binary with `args` (the target among them) and extra environment,
/// and its parsed export.
pub fn run_export_env(args: &[&str], env: &[(&str, &str)]) -> (Ran, Value) {
    let path = tmp_path("export.json");
    let mut all = vec!["--headless", "--export", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_env(&all, env);
    let export = read_export(&out, &path);
    (out, export)
}

/// A headless run against `url` with `args`, in-process, and its parsed export.
pub fn run_export(url: &str, args: &[&str]) -> (Ran, Value) {
    let path = tmp_path("export.json");
    let p = path.to_str().unwrap();
    let mut all = vec!["--headless", "--url", url, "--export", p];
    all.extend_from_slice(args);
    let out = run(&all);
    let export = read_export(&out, &path);
    (out, export)
}

pub fn stdout(o: &Ran) -> String {
    o.stdout.clone()
}

pub fn stderr(o: &Ran) -> String {
    o.stderr.clone()
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn get(url: &str, timeout: Option<std::time::Duration>) -> reqwest::Result<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut client = encbench_wire::client::tls::reqwest_builder();
    if let Some(t) = timeout {
        client = client.timeout(t);
    }
    let client = client.build().unwrap();
    rt.block_on(async { client.get(url).send().await?.text().await })
}

/// POST a JSON document over plain HTTP (moto's result queue), panicking on failure.
pub fn post_json(url: &str, body: &Value) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = encbench_wire::client::tls::reqwest_builder()
        .build()
        .unwrap();
    let status = rt
        .block_on(async { client.post(url).json(body).send().await.map(|r| r.status()) })
        .unwrap_or_else(|e| panic!("POST {url}: {e}"));
    assert!(status.is_success(), "POST {url}: {status}");
}

/// GET a body as text over plain HTTP; connection failures, and no answer within 2 s (a
/// multi-model-server after a worker crash accepts and never answers), read as empty.
pub fn get_text(url: &str) -> String {
    get(url, Some(std::time::Duration::from_secs(2))).unwrap_or_default()
}

/// GET a JSON document over plain HTTP (the reference endpoint's counters).
pub fn get_json(url: &str) -> Value {
    let text = get(url, None).unwrap_or_else(|e| panic!("{url}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{url}: not JSON: {e}"))
}

/// The reference endpoint's counters of what it saw.
pub fn counters(s: &Serve) -> Value {
    get_json(&format!("{}/_encbench/counters", s.url))
}

/// Schema violations of an export, as "path: message" lines (empty when valid).
pub fn schema_violations(export: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(encbench_core::assets::EXPORT_SCHEMA).unwrap();
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

/// Sends `signal` to process `pid`.
pub fn signal(pid: u32, signal: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(pid as i32).expect("a process id");
    rustix::process::kill_process(pid, signal).expect("kill");
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
