//! `--records FILE.jsonl`: a line per request sent, checked against the export of the same
//! run; `-` streaming while the run goes; a stop and a second interrupt still leaving the
//! file whole; paths refused before any load.

use crate::common::tmux::Tmux;
use crate::common::{BIN, Serve, get_json, run, run_export, signal, stderr, tmp_path, wait_until};
use rustix::process::Signal;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

const FIELDS: &[&str] = &[
    "phase",
    "kind",
    "idx",
    "intended_ms",
    "sent_ms",
    "done_ms",
    "latency_ms",
    "status",
    "error",
    "batch_size",
    "tokens",
    "request_bytes",
    "reply_bytes",
    "measured",
];

fn read_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("records written");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn ms(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

/// The nearest-rank percentile of sorted values, as HdrHistogram ranks them.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn invocations(s: &Serve) -> u64 {
    get_json(&format!("{}/_encbench/counters", s.url))["invocations"]
        .as_u64()
        .unwrap()
}

#[test]
fn every_request_sent_is_one_line_that_agrees_with_the_export() {
    let s = Serve::fixed(1, 4, &["--error-rate", "0.03"]);
    let path = tmp_path("records.jsonl");
    let (_, e) = run_export(
        &s.url,
        &[
            "-n",
            "3000",
            "--warmup",
            "40",
            "--concurrency",
            "4",
            "--no-accuracy",
            "--records",
            path.to_str().unwrap(),
            "--slice",
            "100ms",
        ],
    );
    let p = &e["phases"][0];
    let lines = read_lines(&path);
    let (sent, warmup) = (p["sent"].as_u64().unwrap(), p["warmup"].as_u64().unwrap());
    assert_eq!(lines.len() as u64, sent + warmup, "a line per request sent");
    assert_eq!(
        invocations(&s),
        sent + warmup,
        "as the endpoint counted them"
    );
    let measured: Vec<&Value> = lines.iter().filter(|l| l["measured"] == true).collect();
    assert_eq!(measured.len() as u64, sent, "warmup marked measured: false");
    let mut idx: Vec<u64> = lines.iter().map(|l| l["idx"].as_u64().unwrap()).collect();
    idx.sort_unstable();
    assert_eq!(idx, (0..sent + warmup).collect::<Vec<_>>(), "each idx once");
    for l in &lines {
        for f in FIELDS {
            assert!(l.get(*f).is_some(), "{f} missing: {l}");
        }
        assert_eq!(
            (l["phase"].as_u64(), l["kind"].as_str()),
            (Some(1), Some("batch"))
        );
        assert_eq!(l["batch_size"], 1);
        assert!(l["request_bytes"].as_u64().unwrap() > 0, "{l}");
        // The run's tokenizer counted the inputs, though the server tokenizes them.
        assert!(l["tokens"].as_u64().unwrap() > 0, "{l}");
        let (i, snt, d) = (ms(&l["intended_ms"]), ms(&l["sent_ms"]), ms(&l["done_ms"]));
        assert!(i <= snt && snt <= d, "intended ≤ sent ≤ done: {l}");
        assert!((ms(&l["latency_ms"]) - (d - i)).abs() < 0.0015, "{l}");
        // Nothing of the request's contents or headers: only figures and names, and a
        // measured request's slice.
        let slice = usize::from(l["measured"] == true);
        assert_eq!(l.as_object().unwrap().len(), FIELDS.len() + slice, "{l}");
    }
    // Each slice's ok requests are its measured ok lines.
    let slices = p["slices"].as_array().unwrap();
    for (k, s) in slices.iter().enumerate() {
        let ok = (measured.iter())
            .filter(|l| l["slice"] == k + 1 && l["status"] == "ok")
            .count();
        assert_eq!(ok as u64, s["ok"].as_u64().unwrap(), "slice {}", k + 1);
    }
    // Errors by kind, as the export counts them.
    let errors = p["errors"].as_object().unwrap();
    assert!(!errors.is_empty(), "the fault made errors: {p}");
    for (kind, n) in errors {
        let got = measured
            .iter()
            .filter(|l| l["error"] == kind.as_str())
            .count();
        assert_eq!(got as u64, n.as_u64().unwrap(), "{kind}");
    }
    for l in &lines {
        let failed = l["status"] == "error";
        assert_eq!(failed, !l["error"].is_null(), "{l}");
        assert_eq!(failed, l["reply_bytes"].is_null(), "{l}");
    }
    // The successful measured requests' latencies are the export's percentiles, to the
    // histogram's precision (three significant digits) and a microsecond of rounding.
    let mut ok: Vec<f64> = measured
        .iter()
        .filter(|l| l["status"] == "ok")
        .map(|l| ms(&l["latency_ms"]))
        .collect();
    ok.sort_by(f64::total_cmp);
    assert_eq!(ok.len() as u64, p["ok"].as_u64().unwrap());
    for (q, key) in [(0.5, "p50"), (0.99, "p99")] {
        let (ours, theirs) = (percentile(&ok, q), ms(&p["latency_ms"][key]));
        assert!(
            (ours - theirs).abs() <= theirs * 0.002 + 0.002,
            "{key}: records {ours} ms, export {theirs} ms"
        );
    }
}

#[test]
fn records_to_stdout_stream_while_the_run_goes_and_the_tables_go_to_stderr() {
    let s = Serve::fixed(1, 2, &[]);
    let export = tmp_path("streamed.json");
    let mut child = Command::new(BIN)
        .args([
            "--headless",
            "--url",
            &s.url,
            "--duration",
            "3",
            "--request-rate",
            "100",
            "--warmup",
            "5",
            "--no-accuracy",
            "--records",
            "-",
            "--export",
            export.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert!(
        child.try_wait().unwrap().is_none(),
        "a line came while the run still went"
    );
    let first: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(first["measured"], false, "the warmup comes first: {first}");
    let rest: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).expect("stdout holds the lines alone"))
        .collect();
    let done = child.wait_with_output().unwrap();
    assert!(done.status.success());
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(err.contains("Latency percentiles"), "the tables: {err}");
    assert_eq!(1 + rest.len() as u64, invocations(&s), "a line per request");
    // 3 s at 100/s after 5 of warmup: 300 due, each sent (a line) or counted unsent (a
    // loaded machine can leave the last one unsent at the phase's end).
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let (sent, unsent) = (&e["phases"][0]["sent"], &e["phases"][0]["unsent"]);
    let (sent, unsent) = (sent.as_u64().unwrap(), unsent.as_u64().unwrap());
    assert_eq!(sent + unsent, 300, "{}", e["phases"][0]);
    assert_eq!(1 + rest.len() as u64, 5 + sent, "a line per request sent");
}

#[test]
fn a_stop_and_a_second_interrupt_each_leave_the_records_whole() {
    // The second signal must find the first stop still draining: 300 ms requests then.
    for (twice, service_ms) in [(false, 20), (true, 300)] {
        let s = Serve::fixed(service_ms, 16, &[]);
        let (path, export) = (tmp_path("stopped.jsonl"), tmp_path("stopped.json"));
        let mut child = Command::new(BIN)
            .args(["--headless", "--url", &s.url, "--no-accuracy"])
            .args([
                "--duration",
                "60",
                "--request-rate",
                "40",
                "--concurrency",
                "16",
            ])
            .args(["--records", path.to_str().unwrap()])
            .args(["--export", export.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let before = invocations(&s);
        wait_until("load", 30, || invocations(&s) >= before + 20);
        signal(child.id(), Signal::TERM);
        if twice {
            std::thread::sleep(std::time::Duration::from_millis(20));
            signal(child.id(), Signal::TERM);
        }
        let status = child.wait().unwrap();
        assert_eq!(
            status.code(),
            Some(if twice { 130 } else { 0 }),
            "twice: {twice}"
        );
        let lines = read_lines(&path);
        let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
        let p = &e["phases"][0];
        let finished = p["n"].as_u64().unwrap() - p["errors"]["Abandoned"].as_u64().unwrap_or(0);
        let measured = lines.iter().filter(|l| l["measured"] == true).count() as u64;
        // Requests a second interrupt did not wait for have no line unless they finished
        // while the export was being made: at most the 16 in flight.
        assert!(
            finished <= measured && measured <= finished + 16,
            "twice: {twice}: {measured} lines for {p}"
        );
        if !twice {
            assert_eq!(measured, finished, "a stop waits for every request: {p}");
        }
        // A stop waits for the 20 seen sent; a second interrupt only for what has finished.
        assert!(lines.len() >= if twice { 1 } else { 20 }, "{}", lines.len());
        // The temporary file is `.NAME.PID.SERIAL.tmp` beside it (other tests' are there too).
        let ours = format!(".{}.", path.file_name().unwrap().to_string_lossy());
        let stray = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .filter_map(Result::ok)
            .any(|f| f.file_name().to_string_lossy().starts_with(&ours));
        assert!(!stray, "no temporary file left");
    }
}

#[test]
fn records_paths_that_cannot_work_are_refused_before_any_load() {
    // Nothing listens there: a refusal that came after the target was tried would say so.
    let url = "http://127.0.0.1:9";
    let dir = tmp_path("records-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let export = tmp_path("same.json");
    let (d, e) = (dir.to_str().unwrap(), export.to_str().unwrap());
    let missing = tmp_path("no-such-dir").join("r.jsonl");
    for (args, says) in [
        (vec!["--records", d], "is a directory"),
        (vec!["--records", missing.to_str().unwrap()], "cannot write"),
        (vec!["--records", e, "--export", e], "--export's file too"),
        (vec!["--records", e, "--report", e], "--report's file too"),
        (
            vec!["--records", "-", "--export", "-"],
            "--export - takes already",
        ),
    ] {
        let mut all = vec!["--headless", "--url", url, "-n", "3"];
        all.extend(args.iter().copied());
        let out = run(&all);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: --records"), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    assert!(!export.exists());
}

#[test]
fn records_to_stdout_are_refused_beside_the_live_screen() {
    // Nothing listens there: the refusal comes before the target is tried.
    let t = Tmux::start(
        "records-live",
        120,
        10,
        &format!("{BIN} --url http://127.0.0.1:9 -n 3 --records -"),
    );
    assert_eq!(t.wait_exit(20), 2);
    // With the scrollback: tmux's own "Pane is dead" line may push the screen up.
    let screen = t.history(50);
    assert!(
        screen.contains("--records: - writes to stdout, which the live screen draws on"),
        "{screen}"
    );
}
