//! Per-request records (`--records FILE.jsonl`): one JSON line per request sent, streamed by
//! a writer thread of its own through a bounded channel, so memory stays bounded whatever
//! the run's length. A line is never dropped: when the writer falls behind, the request
//! that completes waits for room (a full disk's slowness becomes the client's, visibly).
//!
//! A regular file is written to a temporary file beside it and renamed over it when the
//! records are closed, as an export is (`write`); a FIFO or a character device is written
//! into as lines come, and so is stdout. A FIFO's reader may never come, or stop reading:
//! whoever opens one must be able to stop waiting (the binary opens it before the run,
//! waiting beside its signals, and hands it over with `to_opened`), and `give_up` ends a
//! close that waits on a reader that does not read.

use super::write::{Dest, rename_over, resolve, temp_beside};
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{
    Receiver, RecvTimeoutError, SyncSender, TryRecvError, TrySendError, sync_channel,
};
use std::time::{Duration, Instant};

/// Lines waiting for the writer at most: about a megabyte, and at a million requests a
/// second still a hundredth of a second of slack.
const QUEUED: usize = 8192;

/// How long the writer sleeps when it has caught up. It polls rather than waits on the
/// channel: a writer parked on it had every completed request wake it, a futex call and a
/// context switch each, which cost the client a third more CPU per request at 35,000 req/s
/// (BENCHMARKS.md). The queue holds 8192 lines: 5 ms of sleep overflows it only past
/// 1.6 million requests a second.
const POLL: Duration = Duration::from_millis(5);

/// How long a line may sit in the writer's buffer: a reader of a FIFO or of stdout sees a
/// quiet run's lines about as they come, and a busy run's are still written in large blocks.
const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// One request as it completed (or failed). Times are microseconds since the run's start.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// The phase's number as the run counts them (1 for the first).
    pub phase: u32,
    pub kind: &'static str,
    /// `--repeat`: which repetition of the phase.
    pub repetition: Option<u32>,
    /// The request's number in its phase, warmup included.
    pub idx: u64,
    pub intended_us: u64,
    pub sent_us: u64,
    pub done_us: u64,
    /// The error kind's key, as the export's `errors` counts it.
    pub error: Option<String>,
    pub batch_size: u32,
    /// Tokens in the request's inputs, where the client knows them.
    pub tokens: Option<u64>,
    pub request_bytes: u64,
    /// The reply's body, where one was read.
    pub reply_bytes: Option<u64>,
    pub measured: bool,
    /// `--slice`: the measured request's slice of its phase (0-based here, 1-based in the
    /// line as the tables number slices).
    pub slice: Option<usize>,
}

/// The line a record is written as: the export's unit, milliseconds, with microseconds kept.
#[derive(Serialize)]
struct Line<'a> {
    phase: u32,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    repetition: Option<u32>,
    idx: u64,
    intended_ms: f64,
    sent_ms: f64,
    done_ms: f64,
    latency_ms: f64,
    status: &'static str,
    error: Option<&'a str>,
    batch_size: u32,
    tokens: Option<u64>,
    request_bytes: u64,
    reply_bytes: Option<u64>,
    measured: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    slice: Option<usize>,
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl RequestRecord {
    /// The record as one JSON line, newline included.
    pub fn write_line(&self, out: &mut Vec<u8>) {
        let line = Line {
            phase: self.phase,
            kind: self.kind,
            repetition: self.repetition,
            idx: self.idx,
            intended_ms: ms(self.intended_us),
            sent_ms: ms(self.sent_us),
            done_ms: ms(self.done_us),
            latency_ms: ms(self.done_us.saturating_sub(self.intended_us)),
            status: if self.error.is_some() { "error" } else { "ok" },
            error: self.error.as_deref(),
            batch_size: self.batch_size,
            tokens: self.tokens,
            request_bytes: self.request_bytes,
            reply_bytes: self.reply_bytes,
            measured: self.measured,
            slice: self.slice.map(|s| s + 1),
        };
        serde_json::to_writer(&mut *out, &line).expect("a record serializes");
        out.push(b'\n');
    }
}

enum Msg {
    Line(RequestRecord),
    Close,
}

/// Where a request's completion hands its record; cloned into every part that sends.
#[derive(Clone)]
pub struct RecordsTx(SyncSender<Msg>);

impl RecordsTx {
    /// Waits while the writer is a full queue behind: a record is never dropped.
    pub fn send(&self, record: RequestRecord) {
        // After `close` nobody reads: the run is over, and what is sent then is not its.
        let _ = self.0.send(Msg::Line(record));
    }
}

/// Where the lines go.
enum Out {
    Stdout,
    /// A FIFO or a character device, opened already.
    Stream(File),
    /// A temporary file renamed over `path` at the end.
    File {
        tmp: PathBuf,
        file: File,
        path: PathBuf,
    },
}

/// The records of a run: the writer thread and the way to close it. Closed on drop too.
pub struct Records {
    tx: RecordsTx,
    /// The writer's result, once it has ended.
    written: Mutex<Option<Receiver<io::Result<u64>>>>,
    given_up: AtomicBool,
}

impl Records {
    /// Records streamed to stdout (`--records -`).
    pub fn to_stdout() -> Records {
        Records::start(Out::Stdout)
    }

    /// Records written to `path` (see the module's words on files, FIFOs and devices). The
    /// temporary file of a regular one is made now, so that a path that cannot take it
    /// fails before any load; a FIFO is opened now, which waits for its reader.
    pub fn to_path(path: &Path) -> io::Result<Records> {
        let out = match resolve(path)? {
            Dest::File(path) => {
                let (tmp, file) = temp_beside(&path)?;
                Out::File { tmp, file, path }
            }
            Dest::Stream(p) => Out::Stream(OpenOptions::new().write(true).open(p)?),
        };
        Ok(Records::start(out))
    }

    /// Records written into a FIFO or a device opened by the caller.
    pub fn to_opened(stream: File) -> Records {
        Records::start(Out::Stream(stream))
    }

    /// Whether `path` is a FIFO or a device, written as lines come (and whose open may wait).
    pub fn is_stream(path: &Path) -> bool {
        matches!(resolve(path), Ok(Dest::Stream(_)))
    }

    fn start(out: Out) -> Records {
        let (tx, rx) = sync_channel(QUEUED);
        let (done, written) = sync_channel(1);
        std::thread::Builder::new()
            .name("encbench-records".into())
            .spawn(move || {
                let _ = done.send(write_out(&rx, out));
            })
            .expect("a thread for the records");
        Records {
            tx: RecordsTx(tx),
            written: Mutex::new(Some(written)),
            given_up: AtomicBool::new(false),
        }
    }

    pub fn sender(&self) -> RecordsTx {
        self.tx.clone()
    }

    /// Writes what was sent so far and ends the file (renamed into place, for a regular
    /// one). Returns how many lines were written; `None` when it was closed before. Waits
    /// for the writer until it is done or `give_up` is called (a FIFO whose reader does not
    /// read would hold it forever).
    pub fn close(&self) -> io::Result<Option<u64>> {
        self.close_until(None)
    }

    /// `close`, giving up after `limit` (a second interrupt: exit now, with what is written).
    pub fn close_within(&self, limit: Duration) -> io::Result<Option<u64>> {
        self.close_until(Some(Instant::now() + limit))
    }

    fn close_until(&self, deadline: Option<Instant>) -> io::Result<Option<u64>> {
        let stop = || {
            self.given_up.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d)
        };
        let written = self
            .written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        let Some(written) = written else {
            return Ok(None);
        };
        let mut close = Msg::Close;
        loop {
            match self.tx.0.try_send(close) {
                Ok(()) | Err(TrySendError::Disconnected(_)) => break,
                Err(TrySendError::Full(again)) => close = again,
            }
            if stop() {
                return Err(not_read());
            }
            std::thread::sleep(POLL);
        }
        loop {
            match written.recv_timeout(POLL) {
                Ok(result) => return result.map(Some),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(io::Error::other("the records' writer failed"));
                }
                Err(RecvTimeoutError::Timeout) if stop() => {
                    return Err(not_read());
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Ends a `close` waiting on the writer: what it has not written is lost, and said.
    pub fn give_up(&self) {
        self.given_up.store(true, Ordering::Relaxed);
    }
}

fn not_read() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "stopped waiting for its reader, which did not read: lines not written are lost",
    )
}

impl Drop for Records {
    /// Closed if nobody did: a file's writer ends in moments, a FIFO's reader gets 2 s.
    fn drop(&mut self) {
        let _ = self.close_within(Duration::from_secs(2));
    }
}

fn write_out(rx: &Receiver<Msg>, out: Out) -> io::Result<u64> {
    match out {
        Out::Stdout => write_lines(rx, io::stdout().lock()),
        Out::Stream(f) => write_lines(rx, f),
        Out::File { tmp, file, path } => {
            let n = write_lines(rx, &file);
            match n {
                Ok(n) => rename_over(&tmp, &file, &path).map(|()| n),
                Err(e) => {
                    let _ = std::fs::remove_file(&tmp);
                    Err(e)
                }
            }
        }
    }
}

/// Writes every line that comes until `Close`. After a failed write the lines are still
/// received and counted, and the first failure is returned.
fn write_lines(rx: &Receiver<Msg>, out: impl Write) -> io::Result<u64> {
    let mut w = io::BufWriter::with_capacity(1 << 16, out);
    let mut failed = None;
    let mut n = 0;
    let mut line = Vec::with_capacity(512);
    let mut flushed = Instant::now();
    loop {
        let msg = match rx.try_recv() {
            Ok(m) => m,
            Err(TryRecvError::Empty) => {
                if flushed.elapsed() >= FLUSH_EVERY {
                    flush(&mut w, &mut failed, &mut flushed);
                }
                std::thread::sleep(POLL);
                continue;
            }
            Err(TryRecvError::Disconnected) => break,
        };
        let Msg::Line(r) = msg else { break };
        n += 1;
        if failed.is_none() {
            line.clear();
            r.write_line(&mut line);
            if let Err(e) = w.write_all(&line) {
                failed = Some(e);
            }
        }
        if flushed.elapsed() >= FLUSH_EVERY {
            flush(&mut w, &mut failed, &mut flushed);
        }
    }
    flush(&mut w, &mut failed, &mut flushed);
    match failed {
        Some(e) => Err(e),
        None => Ok(n),
    }
}

fn flush(w: &mut impl Write, failed: &mut Option<io::Error>, at: &mut Instant) {
    *at = Instant::now();
    if failed.is_none()
        && let Err(e) = w.flush()
    {
        *failed = Some(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn record(idx: u64, error: Option<&str>) -> RequestRecord {
        RequestRecord {
            phase: 1,
            kind: "batch",
            repetition: None,
            idx,
            intended_us: 1_000_001,
            sent_us: 1_000_250,
            done_us: 1_012_345,
            error: error.map(String::from),
            batch_size: 8,
            tokens: Some(96),
            request_bytes: 1234,
            reply_bytes: error.is_none().then_some(55),
            measured: idx > 0,
            slice: (idx > 0).then_some(2),
        }
    }

    #[test]
    fn records_land_in_the_file_at_close_every_line_with_microseconds() {
        let dir = std::env::temp_dir().join(format!("encbench-records-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.jsonl");
        let records = Records::to_path(&path).unwrap();
        let tx = records.sender();
        for i in 0..20_000 {
            tx.send(record(i, (i % 7 == 0).then_some("Http503")));
        }
        assert!(!path.exists(), "the file appears whole, at the end");
        assert_eq!(records.close().unwrap(), Some(20_000));
        assert_eq!(records.close().unwrap(), None, "closed once");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 20_000);
        let l = &lines[7];
        assert_eq!(l["intended_ms"], 1000.001);
        assert_eq!(l["latency_ms"], 12.344);
        assert_eq!(
            (l["status"].as_str(), l["error"].as_str()),
            (Some("error"), Some("Http503"))
        );
        assert_eq!(l["reply_bytes"], Value::Null);
        assert!(l.get("repetition").is_none(), "{l}");
        assert_eq!(lines[1]["status"], "ok");
        assert_eq!(lines[0]["measured"], false);
        // Nothing but the file: the temporary one was renamed.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
