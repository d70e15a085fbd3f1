//! An endpoint that goes away mid-run (`reach`): the real binary against the reference
//! endpoint as a process of its own, killed with SIGKILL as a crashed server is, and in one
//! test brought back on its port. A closed loop and an open loop run against the same server
//! at once, so one server start serves both.
//!
//! The server plays Infinity's embedder, so the accuracy check before the load uses the
//! retrieval items: the check after it must use them too, whether or not anyone answers.

use crate::common::{BIN, assert_phase_accounted, schema_violations, tmp_path, wait_until};
use crate::faults::serve_on_with;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const INFINITY: &[&str] = &["--only", "infinity"];
const CLOSED: &[&str] = &["--concurrency", "4", "--duration", "8", "--timeout", "30"];
const OPEN: &[&str] = &[
    "--request-rate",
    "200",
    "--duration",
    "8",
    "--timeout",
    "30",
];
/// The retrieval items shipped: what the check before the load sends an embedder.
const RETRIEVAL_ITEMS: u64 = 10;

/// A run of the binary under way, its records (a line a request sent) streamed on stdout
/// and counted as they come; killed if the test ends without waiting for it.
struct Load {
    child: Option<Child>,
    export: PathBuf,
    sent: Arc<AtomicUsize>,
    reader: Option<std::thread::JoinHandle<()>>,
    spawned: Instant,
}

impl Load {
    /// Waits until it has sent `n` requests: its load is under way.
    fn wait_for(&self, n: usize) {
        wait_until(
            &format!("{n} requests of {}", self.export.display()),
            60,
            || self.sent.load(Ordering::Acquire) >= n,
        );
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A server process, killed however the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Server {
    /// SIGKILL, as a server that crashed.
    fn kill(&mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }
}

fn serve(port: u16) -> (Server, u16) {
    let (child, port) = serve_on_with(port, INFINITY);
    (Server(child), port)
}

fn start_load(url: &str, name: &str, pace: &[&str]) -> Load {
    let export = tmp_path(&format!("{name}.json"));
    let spawned = Instant::now();
    let mut child = Command::new(BIN)
        .args(["--headless", "--url", url])
        .args(["--export", export.to_str().unwrap(), "--records", "-"])
        .args(["--warmup", "0", "--seed", "7"])
        .args(pace)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sent = Arc::new(AtomicUsize::new(0));
    let (out, count) = (child.stdout.take().unwrap(), sent.clone());
    let reader = std::thread::spawn(move || {
        for _ in BufReader::new(out).lines() {
            count.fetch_add(1, Ordering::AcqRel);
        }
    });
    Load {
        child: Some(child),
        export,
        sent,
        reader: Some(reader),
        spawned,
    }
}

/// A finished run: its exit code, output, export and only phase.
struct Ran {
    code: Option<i32>,
    /// Progress, lines said, tables.
    stderr: String,
    e: Value,
    spawned: Instant,
}

impl Ran {
    fn phase(&self) -> &Value {
        &self.e["phases"][0]
    }

    /// The phase's one span, as the export has it.
    fn span(&self) -> &Value {
        let spans = self.phase()["endpoint_lost"].as_array();
        assert_eq!(
            spans.map(Vec::len),
            Some(1),
            "one span: {}\n{}",
            self.phase(),
            self.stderr
        );
        &self.phase()["endpoint_lost"][0]
    }

    /// Lines of stderr that begin with `start`.
    fn lines(&self, start: &str) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with(start))
            .collect()
    }

    /// Seconds of the timeline's per-second points that had ok requests.
    fn ok_seconds(&self) -> Vec<f64> {
        self.e["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["req_per_s"].as_f64().is_some_and(|r| r > 0.0))
            .map(|t| t["t_s"].as_f64().unwrap())
            .collect()
    }

    /// When the phase's measuring began, by the timeline.
    fn phase_start_s(&self) -> f64 {
        self.e["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| {
                t["event"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("phase 1"))
            })
            .and_then(|t| t["t_s"].as_f64())
            .expect("the phase's start in the timeline")
    }
}

fn finish(mut l: Load) -> Ran {
    let out = l.child.take().unwrap().wait_with_output().unwrap();
    if let Some(r) = l.reader.take() {
        r.join().unwrap();
    }
    // With the records on stdout, the tables are on stderr.
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = std::fs::read_to_string(&l.export).unwrap_or_else(|e| panic!("{e}\n{stderr}"));
    let e: Value = serde_json::from_str(&text).unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    for p in e["phases"].as_array().unwrap() {
        assert_phase_accounted(p);
    }
    // A request a closed-loop slot could not send has no line, and is not in `sent`.
    let records = l.sent.load(Ordering::Acquire) as u64;
    assert_eq!(Some(records), e["phases"][0]["sent"].as_u64(), "{stderr}");
    Ran {
        code: out.status.code(),
        stderr,
        e,
        spawned: l.spawned,
    }
}

/// Starts an open and a closed loop against `url`, and returns once both have sent a
/// second's worth of requests or more.
fn both_loads(url: &str, name: &str) -> (Load, Load) {
    let open = start_load(url, &format!("{name}-open"), OPEN);
    let closed = start_load(url, &format!("{name}-closed"), CLOSED);
    open.wait_for(200);
    closed.wait_for(1000);
    (open, closed)
}

/// The line said of the span, once, with the export's time and kind.
fn assert_lost_said(r: &Ran) {
    let span = r.span();
    let line = format!(
        "the endpoint stopped answering at {:.1} s: connection refused",
        span["at_s"].as_f64().unwrap()
    );
    assert_eq!(span["kind"], "refused", "{span}");
    assert_eq!(
        r.lines("the endpoint stopped answering"),
        vec![line.as_str()],
        "{}",
        r.stderr
    );
    // Nothing answered from a second after it on (a timeline point holds the second that
    // ends at its time), and requests had been answered until then.
    let at = span["at_s"].as_f64().unwrap();
    let back = span["back_at_s"].as_f64().unwrap_or(f64::INFINITY);
    let ok = r.ok_seconds();
    assert!(ok.iter().any(|&t| t <= at + 1.0), "{ok:?} at {at}");
    assert!(
        !ok.iter().any(|&t| t > at + 1.5 && t <= back),
        "nothing answered while lost: {ok:?} at {at}, back {back}"
    );
}

/// The closed loop's attempts are few and outside n: each slot pauses 10 ms doubling to 1 s
/// (±25 %), so over `down` seconds a slot tries at most 8 times in its first 0.95 s of
/// pauses and once per 0.75 s after; without the pauses it was 27,000 a second.
fn assert_closed_attempts(r: &Ran, down: f64) {
    let (p, span) = (r.phase(), r.span());
    let attempts = span["attempts"].as_u64().unwrap();
    let most = (4.0 * (8.0 + down / 0.75 + 1.0)) as u64;
    assert!(
        (4..=most).contains(&attempts),
        "{attempts} attempts over {down:.1} s: {span}"
    );
    // Only requests that went out failed, the attempts are not in n: the 4 in flight when
    // the server died, and one on each pooled connection it had closed, which took the
    // request before its reset was read (at most two a slot: 12 leaves room for a third).
    let errors: u64 = p["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(errors <= 12, "{errors} failed: {p}");
    assert_eq!(p["n"], p["sent"]);
}

/// The open loop keeps its schedule: every due request is sent or unsent, and each attempt
/// while lost is a request of n that failed as a `ConnectionError`, beside the few cut.
fn assert_open_attempts(r: &Ran) {
    let (p, span) = (r.phase(), r.span());
    let attempts = span["attempts"].as_u64().unwrap();
    let refused = p["errors"]["ConnectionError"].as_u64().unwrap_or(0);
    assert!(
        attempts >= 100,
        "half a second of 200 req/s at least: {span}"
    );
    assert!(
        refused >= attempts && refused - attempts <= 10,
        "{refused} ConnectionError for {attempts} attempts: {p}"
    );
    assert_eq!(
        p["sent"].as_u64().unwrap() + p["unsent"].as_u64().unwrap(),
        1600,
        "{p}"
    );
}

#[test]
fn a_server_killed_mid_run_is_said_once_recorded_and_exits_5() {
    let _turn = crate::common::load();
    let (mut server, port) = serve(0);
    let url = format!("http://127.0.0.1:{port}");
    let (open, closed) = both_loads(&url, "killed");
    // A closed loop with a count it cannot finish without the server: it waits --timeout.
    let counted = start_load(
        &url,
        "killed-counted",
        &["--concurrency", "2", "-n", "1000000", "--timeout", "2"],
    );
    counted.wait_for(500);
    let killed = Instant::now();
    server.kill();
    let counted = finish(counted);
    let waited = killed.elapsed().as_secs_f64();
    let (open, closed) = (finish(open), finish(closed));

    // The counted loop stopped 2 s after the endpoint was lost, well before the others' 8 s.
    assert_eq!(counted.code, Some(5), "{}", counted.stderr);
    assert_eq!(counted.e["stopped_early"], true);
    assert_lost_said(&counted);
    assert!(
        waited < 2.0 + 1.0 + 2.0 + 3.0,
        "ended {waited:.1} s after the kill"
    );
    // Said as it happened, before the run's last line of counts (the tables' heading,
    // on stderr here, says it again).
    let note = "note: the endpoint has not answered for 2 s (--timeout): the run stops";
    let (said, counts) = (
        counted.stderr.find(note),
        counted.stderr.find("stopped  1 phase"),
    );
    assert!(said.is_some() && said < counts, "{}", counted.stderr);

    for r in [&closed, &open] {
        assert_eq!(r.code, Some(5), "{}", r.stderr);
        assert_lost_said(r);
        let span = r.span();
        assert!(span["back_at_s"].is_null(), "{span}");
        // On the run's clock, which began after the process did: no later than the kill.
        let kill_s = (killed - r.spawned).as_secs_f64();
        let at = span["at_s"].as_f64().unwrap();
        assert!(
            at <= kill_s + 2.0,
            "lost at {at} s, killed at {kill_s:.1} s"
        );
        let last = r.stderr.lines().last().unwrap_or_default();
        assert_eq!(
            last,
            format!(
                "error: the endpoint stopped answering at {at:.1} s: connection refused and had not come back when the load ended ({} attempts to connect failed)",
                span["attempts"]
            ),
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains("Endpoint lost"), "{}", r.stderr);
        // The check after the load is the retrieval check made before it, its items not
        // sent to a server that is gone, and it says why.
        let (before, after) = (&r.e["accuracy"]["before"], &r.e["accuracy"]);
        assert_eq!(before["output"]["kind"], "vectors", "{before}");
        assert_eq!(before["total"], RETRIEVAL_ITEMS, "{before}");
        assert_eq!(after["output"], before["output"], "{after}");
        assert_eq!(
            (after["total"].as_u64(), after["passed"].as_u64()),
            (Some(RETRIEVAL_ITEMS), Some(0))
        );
        let note = after["note"].as_str().unwrap_or_default();
        assert!(
            note.contains("did not answer") && note.contains("10 retrieval items"),
            "{note}"
        );
    }
    let start = closed.phase_start_s();
    let down = start + 8.0 - closed.span()["at_s"].as_f64().unwrap();
    assert_closed_attempts(&closed, down);
    assert_open_attempts(&open);
    // The open loop's failures are most of its requests: the warning says what its
    // percentiles are of.
    let p = open.phase();
    let (n, ok) = (p["n"].as_u64().unwrap(), p["ok"].as_u64().unwrap());
    if (n - ok) * 2 > n {
        let said = format!("the percentiles and rates above are of the {ok} that succeeded");
        assert!(open.stderr.contains(&said), "{}", open.stderr);
    }
}

#[test]
fn a_server_back_after_2_s_is_said_with_its_time_and_the_run_goes_on() {
    let _turn = crate::common::load();
    let (mut first, port) = serve(0);
    let url = format!("http://127.0.0.1:{port}");
    let (open, closed) = both_loads(&url, "back");
    let killed = Instant::now();
    first.kill();
    std::thread::sleep(Duration::from_secs(2));
    let (second, again) = serve(port);
    // The new server listens no later than it says its address.
    let down = killed.elapsed().as_secs_f64();
    assert_eq!(again, port);
    let (open, closed) = (finish(open), finish(closed));
    drop(second);

    for (r, found_within) in [(&closed, 1.25), (&open, 0.1)] {
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_lost_said(r);
        let span = r.span();
        let (at, back) = (
            span["at_s"].as_f64().unwrap(),
            span["back_at_s"].as_f64().expect("back"),
        );
        // Lost from the kill to the restart: a closed loop's slot finds the server within
        // its longest pause, an open loop at its next due request; 3 s more for a machine
        // under load.
        let lost = back - at;
        assert!(
            lost >= down - 0.5 && lost <= down + found_within + 3.0,
            "lost {lost:.2} s, down {down:.2} s: {span}"
        );
        let line =
            format!("the endpoint answered again at {back:.1} s, {lost:.1} s after it stopped (");
        assert_eq!(
            r.lines("the endpoint answered again").len(),
            1,
            "{}",
            r.stderr
        );
        assert!(r.stderr.contains(&line), "{line}\n{}", r.stderr);
        // The run went on, and was answered again.
        assert!(
            r.ok_seconds().iter().any(|&t| t > back + 1.0),
            "{:?} back at {back}",
            r.ok_seconds()
        );
        // And the check after the load is the retrieval check again, answered.
        let after = &r.e["accuracy"];
        assert_eq!(after["output"]["kind"], "vectors", "{after}");
        assert_eq!(after["passed"], RETRIEVAL_ITEMS, "{after}");
    }
    assert_closed_attempts(&closed, down + 1.25);
    assert_open_attempts(&open);
}
