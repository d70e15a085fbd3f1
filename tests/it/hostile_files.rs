//! Hostile destinations and inputs, through the real binary: exports to FIFOs, device nodes,
//! symlinks and sockets (made here, never the system's); stdout closed or full; merges of
//! exports that would add up to figures nobody measured; and a stopped cold start.

use crate::common::{
    BIN, Ran, Serve, load, run_env, run_export, schema_violations, signal, tmp_path, wait_until,
};
use serde_json::{Value, json};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A fresh folder of this test's own.
fn folder(name: &str) -> PathBuf {
    let d = tmp_path(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(ok.success(), "mkfifo {}", path.display());
}

/// Reads a FIFO to its end on a thread of its own, as a consumer of the export would.
fn drain(fifo: &Path) -> std::thread::JoinHandle<String> {
    let fifo = fifo.to_path_buf();
    std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
}

/// Ends a reader still waiting for a writer (the binary never opened the FIFO) with an
/// empty stream; a reader that is done is left alone (non-blocking: no reader, no wait).
fn release(fifo: &Path) {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(fifo);
}

fn one_error_line(out: &Ran) -> String {
    let errors: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("error"))
        .collect();
    assert_eq!(errors.len(), 1, "one error line: {}", out.stderr);
    errors[0].to_string()
}

/// A headless run of five requests against `url`, exported to `to`.
fn run_to(url: &str, to: &Path) -> Ran {
    run_env(
        &[
            "--headless",
            "--url",
            url,
            "-n",
            "5",
            "--no-accuracy",
            "-o",
            s(to),
        ],
        &[],
    )
}

/// Two exports of one workload (two hosts), written as `a.json` and `b.json` in `dir`.
fn two_hosts(url: &str, dir: &Path) -> (PathBuf, PathBuf) {
    let host = |seed: &str, name: &str| {
        let (_, e) = run_export(url, &["-n", "20", "--no-accuracy", "--seed", seed]);
        let p = dir.join(name);
        std::fs::write(&p, e.to_string()).unwrap();
        p
    };
    (host("1", "a.json"), host("2", "b.json"))
}

#[test]
fn an_export_to_a_fifo_is_written_through_it_and_the_fifo_stays() {
    let server = Serve::one_ms(&[]);
    let dir = folder("fifo");
    let (a, b) = two_hosts(&server.url, &dir);
    let target = |name: &str| format!("name={name},url={}", server.url);
    let (ta, tb) = (target("a"), target("b"));
    let runs: [(&str, Vec<&str>); 3] = [
        (
            "run",
            vec![
                "--headless",
                "--url",
                &server.url,
                "-n",
                "5",
                "--no-accuracy",
            ],
        ),
        (
            "compare",
            vec![
                "compare",
                "--headless",
                "--target",
                &ta,
                "--target",
                &tb,
                "-n",
                "5",
                "--batch-sizes",
                "1",
                "--no-concurrency",
                "--no-accuracy",
            ],
        ),
        ("merge", vec!["report", "--merge", s(&a), s(&b)]),
    ];
    for (what, mut args) in runs {
        let fifo = dir.join(format!("{what}.fifo"));
        mkfifo(&fifo);
        let reader = drain(&fifo);
        args.extend(["-o", s(&fifo)]);
        let out = run_env(&args, &[]);
        assert!(out.status.success(), "{what}: {}", out.stderr);
        // Before the reader is waited for: a FIFO renamed over leaves it waiting forever.
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{what}: the FIFO was replaced");
        release(&fifo);
        let text = reader.join().unwrap();
        let e: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(!e["phases"].as_array().unwrap().is_empty(), "{what}: {e}");
        if what != "compare" {
            assert_eq!(schema_violations(&e), Vec::<String>::new(), "{what}");
        }
    }
    assert_eq!(
        names_in(&dir),
        ["a.json", "b.json", "compare.fifo", "merge.fifo", "run.fifo"],
        "no temporary file is left beside a FIFO"
    );
}

#[test]
fn an_export_through_a_symlink_replaces_the_target_and_the_link_stays() {
    let server = Serve::one_ms(&[]);
    let (links, files) = (folder("links"), folder("files"));
    let target = files.join("t.json");
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = links.join("l.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    // A link to a file not there yet: the file is made where the link points.
    let dangling = links.join("d.json");
    std::os::unix::fs::symlink(files.join("new.json"), &dangling).unwrap();
    let (a, b) = two_hosts(&server.url, &files);

    for (what, out) in [
        ("run", run_to(&server.url, &link)),
        ("run to a dangling link", run_to(&server.url, &dangling)),
        (
            "merge",
            run_env(&["report", "--merge", s(&a), s(&b), "-o", s(&link)], &[]),
        ),
    ] {
        assert!(out.status.success(), "{what}: {}", out.stderr);
        for l in [&link, &dangling] {
            assert!(
                std::fs::symlink_metadata(l).unwrap().is_symlink(),
                "{what}: {} is still a link",
                l.display()
            );
        }
        let e: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
        assert_eq!(schema_violations(&e), Vec::<String>::new(), "{what}");
    }
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
    assert_eq!(e["config"]["merged_from"].as_array().unwrap().len(), 2);
    let mode = std::fs::metadata(&target).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the target keeps its mode");
    assert_eq!(names_in(&links), ["d.json", "l.json"]);
    assert_eq!(
        names_in(&files),
        ["a.json", "b.json", "new.json", "t.json"],
        "temporary files go beside the target, and none is left"
    );
}

#[test]
fn a_socket_or_a_directory_as_export_is_refused_before_anything_is_sent() {
    let server = Serve::one_ms(&[]);
    let dir = folder("refuse");
    let (a, b) = two_hosts(&server.url, &dir);
    let seen = crate::common::counters(&server)["invocations"].clone();
    let socket = dir.join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    for (to, why) in [(&socket, "is a socket"), (&dir, "is a directory")] {
        for out in [
            run_to(&server.url, to),
            run_env(&["report", "--merge", s(&a), s(&b), "-o", s(to)], &[]),
        ] {
            assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
            let line = one_error_line(&out);
            assert!(line.contains(why) && line.contains(s(to)), "{line}");
        }
    }
    assert_eq!(
        crate::common::counters(&server)["invocations"],
        seen,
        "a refused export is refused before the first request"
    );
    let kind = std::fs::symlink_metadata(&socket).unwrap().file_type();
    assert!(kind.is_socket(), "the socket was not replaced");
}

/// A character device node of this test's own (`mknod`, root only), or None to skip: a
/// mount with `nodev` has device nodes nobody can open.
fn char_device(dir: &Path, name: &str, major_minor: (u32, u32)) -> Option<PathBuf> {
    let path = dir.join(name);
    let made = Command::new("mknod")
        .arg(&path)
        .arg("c")
        .arg(major_minor.0.to_string())
        .arg(major_minor.1.to_string())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let usable = made && std::fs::OpenOptions::new().write(true).open(&path).is_ok();
    usable.then_some(path)
}

#[test]
fn an_export_to_a_character_device_is_written_through_it() {
    let server = Serve::one_ms(&[]);
    let dir = folder("devices");
    // The numbers of /dev/null and /dev/full on Linux.
    let (Some(null), Some(full)) = (
        char_device(&dir, "null", (1, 3)),
        char_device(&dir, "full", (1, 7)),
    ) else {
        eprintln!("skipped: cannot make a usable device node here (not root, or nodev)");
        return;
    };
    let out = run_to(&server.url, &null);
    assert!(out.status.success(), "{}", out.stderr);
    let out = run_to(&server.url, &full);
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    let line = one_error_line(&out);
    assert!(line.contains("No space left"), "{line}");
    assert!(
        out.stdout.contains("p50"),
        "the tables still print when the export cannot be written: {}",
        out.stdout
    );
    for node in [&null, &full] {
        let kind = std::fs::symlink_metadata(node).unwrap().file_type();
        assert!(kind.is_char_device(), "{} was replaced", node.display());
    }
    assert_eq!(names_in(&dir), ["full", "null"]);
}

/// The binary with its stdout on `stdout`, after a turn on the machine.
fn with_stdout(args: &[&str], stdout: impl Into<Stdio>) -> Output {
    let _turn = load();
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .output()
        .expect("run encbench-tui")
}

fn closed_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

fn dev_full() -> std::fs::File {
    std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("open /dev/full for writing")
}

#[test]
fn a_closed_stdout_ends_quietly_and_a_full_one_is_one_line() {
    let server = Serve::one_ms(&[]);
    let report = [
        "report",
        "tests/fixtures/run.json",
        "tests/fixtures/compare.json",
    ];
    for args in [&report[..], &["--help"]] {
        let o = with_stdout(args, closed_pipe());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?} | head: {err}");
        assert_eq!(err, "", "{args:?} | head: nothing on stderr");

        let o = with_stdout(args, dev_full());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?} > /dev/full: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("cannot write to stdout"), "{err}");
    }
    // A run whose tables cannot be printed still keeps its export.
    for (stdout, code) in [(Stdio::from(closed_pipe()), 0), (dev_full().into(), 1)] {
        let export = tmp_path("run.json");
        let o = with_stdout(
            &[
                "--headless",
                "--url",
                &server.url,
                "-n",
                "5",
                "--no-accuracy",
                "-o",
                s(&export),
            ],
            stdout,
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
        assert_eq!(e["phases"][0]["ok"], 5);
    }
}

#[test]
fn merge_refuses_exports_that_would_add_up_to_figures_nobody_measured() {
    let server = Serve::one_ms(&[]);
    let dir = folder("forged");
    let (a, b) = two_hosts(&server.url, &dir);
    let good: Value = serde_json::from_str(&std::fs::read_to_string(&b).unwrap()).unwrap();
    let forged = |name: &str, edit: &dyn Fn(&mut Value)| {
        let mut e = good.clone();
        edit(&mut e);
        let p = dir.join(name);
        std::fs::write(&p, e.to_string()).unwrap();
        p
    };
    let big_rate = forged("rate.json", &|e| e["phases"][0]["req_per_s"] = json!(1e308));
    let wrapped = forged("ok.json", &|e| e["phases"][0]["ok"] = json!(u64::MAX));
    let errors = forged("errors.json", &|e| {
        e["phases"][0]["errors"] = json!({"ModelError(500)": u64::MAX, "Timeout": 1});
    });
    let unaccounted = forged("n.json", &|e| {
        e["phases"][0]["n"] = json!(e["phases"][0]["n"].as_u64().unwrap() + 1);
    });
    let invalid = forged("schema.json", &|e| e["phases"][0]["req_per_s"] = json!(-1));
    let inflated = forged("inflated.json", &|e| {
        e["phases"][0]["n"] = json!(999_999);
        e["phases"][0]["ok"] = json!(200);
    });
    // Timeline rates within the schema, whose sum over two hosts is not a number JSON holds.
    let huge_points = |e: &mut Value| {
        for p in e["timeline"].as_array_mut().unwrap() {
            if p.get("req_per_s").is_some() {
                p["req_per_s"] = json!(1e308);
            }
        }
    };
    let tl_a = forged("tl-a.json", &|e| {
        huge_points(e);
        e["config"]["seed"] = json!(7);
    });
    let tl_b = forged("tl-b.json", &huge_points);
    let copy = dir.join("copy.json");
    std::fs::copy(&a, &copy).unwrap();

    let merged = dir.join("m.json");
    let cases: [(Vec<&Path>, &[&str]); 8] = [
        (
            vec![&a, &big_rate],
            &["rate.json: phase 1: req_per_s 1e+308"],
        ),
        (
            vec![&a, &wrapped],
            &["ok.json: phase 1: ok 18446744073709551615"],
        ),
        (vec![&a, &errors], &["errors.json: phase 1:", "past 2^64"]),
        (vec![&a, &unaccounted], &["n.json: phase 1:", "is not n"]),
        (
            vec![&a, &invalid],
            &["schema.json: does not match the export schema: /phases/0/req_per_s"],
        ),
        (
            vec![&tl_a, &tl_b],
            &["tl-b.json: timeline point", "too large"],
        ),
        (
            vec![&a, &b, &a],
            &["a.json holds the same export as a.json"],
        ),
        (
            vec![&a, &copy],
            &["copy.json holds the same export as a.json"],
        ),
    ];
    for (files, want) in cases {
        let mut args = vec!["report", "--merge"];
        args.extend(files.iter().map(|p| s(p)));
        args.extend(["-o", s(&merged)]);
        let out = run_env(&args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
        let line = one_error_line(&out);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        for w in want {
            assert!(line.contains(w), "want {w:?} in {line}");
        }
        assert!(
            !merged.exists(),
            "{args:?}: nothing is written for a refused merge"
        );
    }
    let out = run_env(&["report", "--merge", s(&a), s(&b), "-o", s(&merged)], &[]);
    assert!(
        out.status.success(),
        "the honest two still merge: {}",
        out.stderr
    );
    // Shown alone, each is held to the same checks: one line naming the file, exit 2.
    for (file, want) in [
        (
            &inflated,
            "inflated.json: phase 1: ok 200 + errors 0 is not n 999999",
        ),
        (&unaccounted, "n.json: phase 1:"),
        (&wrapped, "ok.json: phase 1: ok 18446744073709551615"),
        (&big_rate, "rate.json: phase 1: req_per_s 1e+308"),
        (&invalid, "schema.json: does not match the export schema"),
    ] {
        for format in ["terminal", "html"] {
            let out = run_env(&["report", s(file), "--format", format], &[]);
            assert_eq!(out.status.code(), Some(2), "{format}: {}", out.stderr);
            assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
            assert!(out.stdout.is_empty(), "nothing shown of {}", s(file));
            assert!(
                one_error_line(&out).contains(want),
                "want {want:?} in {}",
                out.stderr
            );
        }
    }
    let out = run_env(&["report", s(&a), s(&b)], &[]);
    assert!(
        out.status.success(),
        "the honest ones still show: {}",
        out.stderr
    );
}

const KEY: &str = "AKIDENCBENCHTEST";
const SECRET: &str = "reference-endpoint-secret";

/// `cold-start` signed as the SDK signs, against the reference endpoint's SageMaker API at
/// `url`, exporting to `export`: no `AWS_*` of the host, no profile, no instance metadata.
fn cold_start(url: &str, export: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("AWS_")) {
        cmd.env_remove(k);
    }
    cmd.args([
        "cold-start",
        "--endpoint",
        "scale-to-zero",
        "--endpoint-url",
        url,
    ])
    .args(["--export", s(export)])
    .args(extra)
    .env("HOME", folder("home"))
    .env("AWS_EC2_METADATA_DISABLED", "true")
    .env("AWS_ACCESS_KEY_ID", KEY)
    .env("AWS_SECRET_ACCESS_KEY", SECRET)
    .env("AWS_REGION", "us-east-1")
    .stdin(Stdio::null());
    cmd
}

fn signed_serve(extra: &[&str]) -> Serve {
    let mut args = vec!["--access-key", KEY, "--secret-key", SECRET];
    args.extend_from_slice(extra);
    Serve::start(&args)
}

/// `cold-start` against a SageMaker endpoint of the reference endpoint whose model takes ten
/// minutes to load, stopped with SIGTERM once `stderr` shows `when`.
fn stopped_cold_start(extra: &[&str], when: &str) -> (Output, Value) {
    let server = signed_serve(&[
        "--base-ms",
        "2",
        "--per-token-ms",
        "0",
        "--model-load-ms",
        "600000",
    ]);
    let (export, err) = (tmp_path("cold.json"), tmp_path("cold-stderr.txt"));
    let child = cold_start(&server.url, &export, &["--retry-interval", "0.1"])
        .args(["--give-up", "600", "-n", "5"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    wait_until(when, 60, || {
        std::fs::read_to_string(&err).is_ok_and(|t| t.contains(when))
    });
    signal(child.id(), rustix::process::Signal::TERM);
    let out = child.wait_with_output().unwrap();
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let e: Value = serde_json::from_str(
        &std::fs::read_to_string(&export).unwrap_or_else(|e| panic!("no export: {e}\n{stderr}")),
    )
    .unwrap();
    assert_eq!(e["kind"], "cold_start");
    assert_eq!(e["cold_start"]["stopped_early"], true, "{e}");
    (out, e)
}

/// Two workers loading their model one after the other (300 ms each): the first success
/// comes from the first worker, and steady requests routed to the second fail until it has
/// loaded. Each is counted: `steady_ok` + the failures by kind = the `-n` asked for = what
/// the server saw after the attempts (half of them were once left out of every count).
#[test]
fn cold_start_counts_every_steady_request() {
    let server = signed_serve(&["--base-ms", "2", "--workers", "2", "--model-load-ms", "300"]);
    let export = tmp_path("cold-steady.json");
    let out = cold_start(
        &server.url,
        &export,
        &["--retry-interval", "0.05", "-n", "20"],
    )
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let cs = &e["cold_start"];
    let sum = |v: &Value| -> u64 {
        v.as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum()
    };
    let (ok, failed) = (
        cs["steady_ok"].as_u64().unwrap(),
        sum(&cs["steady_failures"]),
    );
    assert_eq!(ok + failed, 20, "{cs}");
    assert_eq!(cs["steady_sent"], 20, "{cs}");
    assert!(failed > 0, "the second worker was still loading: {cs}");
    assert!(
        cs["steady_failures"]["ModelNotReadyException"]
            .as_u64()
            .is_some(),
        "{cs}"
    );
    let invocations = crate::common::counters(&server)["invocations"]
        .as_u64()
        .unwrap();
    assert_eq!(invocations, cs["attempts"].as_u64().unwrap() + 20, "{cs}");
    assert!(
        text.contains(&format!(
            "steady requests        20 ({failed} failed: ModelNotReadyException {failed})"
        )),
        "{text}"
    );
    assert!(text.contains(&format!("(n={ok},")), "{text}");
}

#[test]
fn sigterm_during_cold_start_retries_keeps_the_attempts_so_far() {
    let (out, e) = stopped_cold_start(&[], "attempt 2:");
    let cs = &e["cold_start"];
    let attempts = cs["attempts"].as_u64().unwrap();
    assert!(attempts >= 2, "{cs}");
    let failed: u64 = cs["failures"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(
        failed, attempts,
        "every attempt is a failure, none lost: {cs}"
    );
    assert!(
        cs["failures"]["ModelNotReadyException"].as_u64().unwrap() >= 2,
        "{cs}"
    );
    assert!(
        cs["first_success"].is_null() && cs["started_at"].is_string(),
        "{cs}"
    );
    let table = String::from_utf8_lossy(&out.stdout);
    let shown = table
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("attempts"))
        .and_then(|rest| rest.split_whitespace().next());
    assert_eq!(shown, Some(attempts.to_string().as_str()), "{table}");
    assert!(table.contains("stopped"), "{table}");
}

#[test]
fn sigterm_during_the_cold_start_countdown_writes_that_nothing_was_sent() {
    let (out, e) = stopped_cold_start(&["--idle-wait", "600"], "idle wait");
    let cs = &e["cold_start"];
    assert_eq!(cs["attempts"], 0, "{cs}");
    assert!(cs["started_at"].is_null(), "{cs}");
    assert_eq!(e["probe"]["idle_wait"], 600.0);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("no success before the stop"), "{table}");
}

/// Nobody reading stderr (`2>&1 | head -1`, `2>/dev/full`) is no reason to fail: progress
/// lines and notices are dropped, the run completes, its export and tables are whole.
#[test]
fn a_closed_or_full_stderr_costs_nothing() {
    for stderr in [Stdio::from(closed_pipe()), dev_full().into()] {
        // Unhealthy at first, so the run says it is waiting on stderr before it starts.
        let server = Serve::one_ms(&["--unhealthy-for-ms", "300"]);
        let export = tmp_path("quiet.json");
        let o = std::process::Command::new(crate::common::BIN)
            .args([
                "--headless",
                "--url",
                &server.url,
                "-n",
                "20",
                "--no-accuracy",
            ])
            .args(["--request-rate", "20", "-o", s(&export)])
            .stderr(stderr)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{out}");
        assert!(out.contains("Latency breakdown"), "{out}");
        let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
        assert_eq!(e["phases"][0]["ok"], 20);
        assert!(e["error"].is_null(), "{e}");
    }
}
