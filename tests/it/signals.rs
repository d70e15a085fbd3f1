//! SIGINT and SIGTERM, headless and on the live screen: the run stops, the terminal is
//! restored, the export is written whole with every request accounted for; a second Ctrl-C
//! exits at once (code 130) with what was measured so far.

use crate::common::tmux::Tmux;
use crate::common::{
    BIN, Serve, assert_phase_accounted, get_json, schema_violations, signal, tmp_path, wait_until,
};
use rustix::process::Signal;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn invocations(s: &Serve) -> u64 {
    get_json(&format!("{}/_encbench/counters", s.url))["invocations"]
        .as_u64()
        .unwrap()
}

fn read_export(path: &Path) -> Value {
    let e: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("export written"))
        .expect("export is whole JSON");
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    e
}

/// A stopped run still accounts for every request it sent.
fn assert_stopped_and_nothing_lost(e: &Value) {
    assert_eq!(e["stopped_early"], true);
    let phases = e["phases"].as_array().unwrap();
    assert!(!phases.is_empty(), "{e}");
    for p in phases {
        assert_phase_accounted(p);
    }
}

/// A headless run with stderr in a file, so the test can see when a signal was handled.
fn headless(url: &str, export: &Path, extra: &[&str]) -> (Child, PathBuf) {
    let err = tmp_path("stderr.txt");
    let child = Command::new(BIN)
        .args([
            "--headless",
            "--url",
            url,
            "--export",
            export.to_str().unwrap(),
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    (child, err)
}

#[test]
fn sigint_sigterm_and_sighup_stop_a_headless_run_with_a_complete_export() {
    for sig in [Signal::INT, Signal::TERM, Signal::HUP] {
        let s = Serve::fixed(20, 4, &[]);
        let export = tmp_path("signal.json");
        let (mut child, err) = headless(
            &s.url,
            &export,
            &[
                "--duration",
                "60",
                "--request-rate",
                "40",
                "--concurrency",
                "4",
            ],
        );
        // Past the accuracy check and the warmup, into the measured load.
        wait_until("load", 30, || invocations(&s) >= 30);
        signal(child.id(), sig);
        let status = child.wait().unwrap();
        let text = std::fs::read_to_string(&err).unwrap();
        assert_eq!(status.code(), Some(0), "signal {sig:?}: {text}");
        assert!(text.contains("stopping:"), "{text}");
        assert!(!text.contains("panicked"), "{text}");
        let e = read_export(&export);
        assert_stopped_and_nothing_lost(&e);
        assert!(e["phases"][0]["ok"].as_u64().unwrap() > 0);
    }
}

/// Ctrl-C during the accuracy check before the load, against an endpoint that takes 4 s a
/// request: the check stops at once, no load runs and no check "after" it, the export says
/// so. Before, the check ran to its end, then 10 s of a check after a load that never ran,
/// the progress saying `accuracy after: 2/4 answered` beside a timeline that said skipped.
#[test]
fn ctrl_c_during_the_accuracy_check_before_the_load_ends_at_once() {
    let s = Serve::start(&["--base-ms", "4000", "--per-token-ms", "0"]);
    let export = tmp_path("before-check.json");
    let (mut child, err) = headless(&s.url, &export, &["--duration", "60"]);
    wait_until("the check's first request", 30, || invocations(&s) >= 1);
    let asked = std::time::Instant::now();
    signal(child.id(), Signal::INT);
    let status = child.wait().unwrap();
    let took = asked.elapsed();
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(took < Duration::from_secs(3), "{took:?} to stop: {stderr}");
    assert!(!stderr.contains("accuracy after"), "{stderr}");
    let e = read_export(&export);
    assert_eq!(e["stopped_early"], true);
    assert_eq!(e["phases"].as_array().unwrap().len(), 0, "no load ran");
    assert!(
        e["accuracy"].is_null(),
        "no check finished: {}",
        e["accuracy"]
    );
    let events: Vec<&str> = e["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["event"].as_str())
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e.starts_with("accuracy before load stopped")),
        "{events:?}"
    );
    assert!(!events.iter().any(|e| e.contains("after")), "{events:?}");
}

#[test]
fn requests_still_in_flight_when_a_stop_gives_up_on_them_are_counted_as_abandoned() {
    // Each request takes a minute: none can finish within the stop's grace period.
    let s = Serve::fixed(60000, 8, &[]);
    let export = tmp_path("abandoned.json");
    let (mut child, err) = headless(
        &s.url,
        &export,
        &["--warmup", "0", "--no-accuracy", "--concurrency", "4"],
    );
    wait_until("four requests in flight", 30, || invocations(&s) >= 4);
    signal(child.id(), Signal::INT);
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "{}",
        std::fs::read_to_string(&err).unwrap()
    );
    let e = read_export(&export);
    assert_stopped_and_nothing_lost(&e);
    let p = &e["phases"][0];
    assert_eq!(p["sent"], 4, "{p}");
    assert_eq!(p["errors"]["Abandoned"], 4, "{p}");
    assert_eq!(p["ok"], 0);
}

#[test]
fn a_second_ctrl_c_exits_at_once_with_what_was_measured() {
    // The server freezes a second after its first request, in the load (a stop during
    // the check before it ends at once): the first stop then waits for the requests in
    // flight and for the check after the load.
    let s = Serve::start(&["--stall-at", "1", "--stall-ms", "600000"]);
    let export = tmp_path("twice.json");
    let (mut child, err) = headless(&s.url, &export, &["--timeout", "300"]);
    wait_until("the first request", 30, || invocations(&s) >= 1);
    std::thread::sleep(Duration::from_millis(1500));
    let stderr = || std::fs::read_to_string(&err).unwrap();
    // The handler is installed once the engine runs: repeat until it says it is stopping.
    wait_until("the first Ctrl-C handled", 30, || {
        signal(child.id(), Signal::INT);
        std::thread::sleep(Duration::from_millis(200));
        stderr().contains("stopping:")
    });
    signal(child.id(), Signal::INT);
    let mut status = None;
    // Far below the 300 s the first stop would wait for.
    wait_until("exit after the second Ctrl-C", 20, || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    assert_eq!(status.unwrap().code(), Some(130), "{}", stderr());
    assert!(stderr().contains("interrupted twice"), "{}", stderr());
    let e = read_export(&export);
    assert_eq!(e["stopped_early"], true);
    assert!(
        e["error"].as_str().unwrap().contains("interrupted twice"),
        "{e}"
    );
}

fn assert_restored(screen: &str) {
    assert!(
        !screen.contains("╭ latency"),
        "alternate screen left behind:\n{screen}"
    );
}

#[test]
fn sigint_sigterm_and_sighup_on_the_live_screen_restore_the_terminal_and_export() {
    for (name, sig) in [
        ("int", Signal::INT),
        ("term", Signal::TERM),
        ("hup", Signal::HUP),
    ] {
        let s = Serve::fixed(5, 4, &[]);
        let export = tmp_path("tui-signal.json");
        let tmux = Tmux::start(
            name,
            120,
            40,
            &format!(
                "{BIN} --url {} --request-rate 30 --concurrency 2 --export {}",
                s.url,
                export.display()
            ),
        );
        wait_until("the live screen", 30, || {
            tmux.screen().contains("╭ latency")
        });
        wait_until("load", 30, || invocations(&s) >= 30);
        signal(tmux.binary_pid(), sig);
        assert_eq!(tmux.wait_exit(30), 0, "{}", tmux.screen());
        let after = tmux.screen();
        assert_restored(&after);
        assert!(
            after.contains("Latency breakdown"),
            "tables printed after the screen:\n{after}"
        );
        assert_stopped_and_nothing_lost(&read_export(&export));
    }
}

/// The live screen's tmux session killed mid-run (an ssh connection dropped is the same):
/// the export is written whole and the exit code is SIGHUP's, 0. Once with the SIGHUP the
/// kernel sends when the pane's shell dies of it, and once in a shell that ignores it (`trap
/// '' HUP`), where only reads and writes on the dead terminal failing (EIO) tell. The code is
/// written by a shell that survives the session: the binary's own is printed nowhere anyone
/// can read. Before, either way: terminal restore failed, its message failed, abort (134).
#[test]
fn killing_the_live_screens_tmux_session_keeps_the_run() {
    let s = Serve::fixed(5, 4, &[]);
    for (name, sighup) in [("killed", true), ("nohup", false)] {
        let export = tmp_path("tui-killed.json");
        let code = tmp_path("tui-killed.code");
        let run = format!(
            "{BIN} --url {} --request-rate 30 --concurrency 2 -o {}",
            s.url,
            export.display()
        );
        // The pane's shell is the session leader: only it is sent SIGHUP when the terminal
        // hangs up, and its death sends SIGHUP to the rest, the binary in its own right.
        let command = if sighup {
            format!(
                "sh -c 'trap \"\" HUP; env --default-signal=HUP {run}; echo $? > {}'",
                code.display()
            )
        } else {
            format!("trap '' HUP; {run}; echo $? > {}", code.display())
        };
        let tmux = Tmux::start(name, 100, 30, &command);
        wait_until("the live screen", 30, || {
            tmux.screen().contains("╭ latency")
        });
        let before = invocations(&s);
        wait_until("load", 30, || invocations(&s) >= before + 30);
        tmux.cmd(&["kill-session", "-t", "ui"]);
        wait_until("the exit code", 30, || {
            std::fs::read_to_string(&code).is_ok_and(|c| c.ends_with('\n'))
        });
        let exit = std::fs::read_to_string(&code).unwrap();
        assert_eq!(exit.trim(), "0", "{name}: exit code");
        assert_stopped_and_nothing_lost(&read_export(&export));
    }
}

#[test]
fn a_second_ctrl_c_key_on_the_live_screen_exits_at_once_and_restores_the_terminal() {
    // Frozen a second into the load, as in the headless test above.
    let s = Serve::start(&["--stall-at", "1", "--stall-ms", "600000"]);
    let export = tmp_path("tui-twice.json");
    let tmux = Tmux::start(
        "twice",
        120,
        40,
        &format!(
            "{BIN} --url {} --timeout 300 --export {}",
            s.url,
            export.display()
        ),
    );
    wait_until("the live screen", 30, || {
        tmux.screen().contains("╭ latency")
    });
    wait_until("the first request", 30, || invocations(&s) >= 1);
    std::thread::sleep(Duration::from_millis(1500));
    tmux.cmd(&["send-keys", "-t", "ui", "C-c"]);
    wait_until("the stopping notice", 10, || {
        tmux.screen().contains("Ctrl-C again")
    });
    tmux.cmd(&["send-keys", "-t", "ui", "C-c"]);
    assert_eq!(tmux.wait_exit(20), 130, "{}", tmux.screen());
    assert_restored(&tmux.screen());
    let e = read_export(&export);
    assert!(
        e["error"].as_str().unwrap().contains("interrupted twice"),
        "{e}"
    );
}

/// Two SIGTERMs 0.3 s apart against a server that never answers, four requests in flight:
/// the export written on the way out counts those four as abandoned, not as nothing.
#[test]
fn a_second_sigterm_counts_the_requests_in_flight_as_abandoned() {
    let s = Serve::fixed(600_000, 8, &[]);
    let export = tmp_path("twice-term.json");
    let (mut child, err) = headless(
        &s.url,
        &export,
        &["--warmup", "0", "--no-accuracy", "--concurrency", "4"],
    );
    wait_until("four requests in flight", 30, || invocations(&s) >= 4);
    let stderr = || std::fs::read_to_string(&err).unwrap();
    signal(child.id(), Signal::TERM);
    wait_until("the first SIGTERM handled", 10, || {
        stderr().contains("stopping:")
    });
    std::thread::sleep(Duration::from_millis(300));
    signal(child.id(), Signal::TERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{}", stderr());
    let e = read_export(&export);
    let p = &e["phases"][0];
    assert_phase_accounted(p);
    assert_eq!(p["sent"], 4, "{p}");
    assert_eq!(p["errors"]["Abandoned"], 4, "{p}");
}

/// A panic inside the engine (a fault only a test build can inject) is a failure: one line,
/// exit 1, and an export that holds what was measured and says what went wrong; on the live
/// screen the terminal is restored first.
#[test]
fn an_engine_panic_is_exit_1_with_an_export_that_says_so() {
    let s = Serve::fixed(2, 4, &[]);
    let export = tmp_path("panic.json");
    let out = Command::new(BIN)
        .args([
            "--headless",
            "--url",
            &s.url,
            "--export",
            export.to_str().unwrap(),
        ])
        .args(["--request-rate", "200", "-n", "100", "--no-accuracy"])
        .env("ENCBENCH_TEST_FAULT", "engine-panic")
        .env_remove("RUST_BACKTRACE")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let last = err.trim().lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: internal failure in the engine: injected fault"),
        "{err}"
    );
    assert!(
        !err.contains("panicked") && !err.contains("stack backtrace"),
        "{err}"
    );
    let e = read_export(&export);
    assert!(
        e["error"].as_str().unwrap().contains("injected fault"),
        "{e}"
    );
    let p = &e["phases"][0];
    assert!(
        p["sent"].as_u64().unwrap() >= 5,
        "what was measured is kept: {p}"
    );

    let export = tmp_path("panic-live.json");
    let tmux = Tmux::start(
        "panic",
        120,
        40,
        &format!(
            "ENCBENCH_TEST_FAULT=engine-panic {BIN} --url {} --request-rate 50 --export {}",
            s.url,
            export.display()
        ),
    );
    assert_eq!(tmux.wait_exit(30), 1, "{}", tmux.screen());
    let after = tmux.screen();
    assert_restored(&after);
    assert!(after.contains("internal failure in the engine"), "{after}");
    assert!(
        read_export(&export)["error"]
            .as_str()
            .unwrap()
            .contains("injected fault")
    );
}

/// `--records FIFO`: the run waits for a reader before anything is sent, and a signal ends
/// the wait (exit 1, nothing sent); a reader that opens it and never reads holds the
/// records' end until a signal, which writes the export and says what was lost.
#[test]
fn a_fifo_nobody_reads_holds_no_run_past_a_signal() {
    let s = Serve::one_ms(&[]);
    let fifo = tmp_path("records.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let fifo_arg = fifo.to_str().unwrap();

    // Nobody reads.
    let export = tmp_path("fifo-unread.json");
    let (mut child, err) = headless(&s.url, &export, &["-n", "30", "--records", fifo_arg]);
    let said = || std::fs::read_to_string(&err).unwrap_or_default();
    wait_until("the wait for a reader", 30, || {
        said().contains("waiting for a reader")
    });
    signal(child.id(), Signal::INT);
    let status = wait_exit(&mut child, 10);
    assert_eq!(status, Some(1), "{}", said());
    assert!(
        said().contains("stopped while waiting for a reader; nothing was sent"),
        "{}",
        said()
    );
    assert_eq!(invocations(&s), 0, "nothing sent");
    assert!(!export.exists());

    // A reader that never reads: more lines than the pipe holds.
    let reader = Command::new("sh")
        .arg("-c")
        .arg(format!("exec sleep 60 < '{fifo_arg}'"))
        .spawn()
        .unwrap();
    let export = tmp_path("fifo-stalled.json");
    let (mut child, err) = headless(
        &s.url,
        &export,
        &[
            "-n",
            "3000",
            "-c",
            "8",
            "--no-accuracy",
            "--records",
            fifo_arg,
        ],
    );
    let said = || std::fs::read_to_string(&err).unwrap_or_default();
    wait_until("the run's end", 60, || said().contains("done  1 phase"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "held by the records: {}",
        said()
    );
    signal(child.id(), Signal::TERM);
    let status = wait_exit(&mut child, 10);
    let mut reader = reader;
    let _ = reader.kill();
    let _ = reader.wait();
    assert_eq!(status, Some(1), "{}", said());
    assert!(said().contains("lines not written are lost"), "{}", said());
    let e = read_export(&export);
    assert_eq!(e["phases"][0]["ok"], 3000, "what was measured is kept");
}

/// The child's exit code, once it has exited within `secs` (a margin far above the 2 s the
/// stop takes: a loaded machine's scheduling), or a failure naming the wait.
fn wait_exit(child: &mut Child, secs: u64) -> Option<i32> {
    let until = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if std::time::Instant::now() > until {
            let _ = child.kill();
            panic!("still running {secs} s after the signal");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
