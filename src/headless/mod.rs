//! The headless front-end: drives the engine to its end with progress on stderr. The tables
//! that follow are the report's (`encbench_report`), rendered from the run's export.

pub(crate) mod progress;
pub mod views;

use crate::signals::{Abort, Hangup, abort_now, stop_asked, wait_for_signal};
use encbench_core::reach::EndpointLost;
use encbench_core::results::RunReport;
use encbench_core::text;
use encbench_load::engine::{Command, Engine, Snapshot};
use std::io::IsTerminal;
use std::time::Duration;

/// Where the progress goes: one line rewritten in place on a terminal, plain lines every few
/// seconds for a log (a CI log shows every `\r` rewrite as a line of its own).
#[derive(Clone, Copy)]
struct Out {
    tty: bool,
}

impl Out {
    /// The terminal's width less one column: a line that ends in the last column leaves the
    /// cursor waiting to wrap, and some terminals then wrap at the next `\r`.
    fn width(self) -> Option<usize> {
        self.tty
            .then(|| crossterm::terminal::size().map_or(80, |(w, _)| usize::from(w).max(2) - 1))
    }

    /// `false` when the terminal it is drawn on has gone (a log's reader going away is not
    /// a reason to stop: a progress line is not worth a run).
    fn progress(self, fields: &[progress::Field]) -> bool {
        let line = progress::fit(fields, self.width());
        if self.tty {
            let said = crate::stderr::try_say_raw(format_args!("\r{line}\x1b[K"));
            return !said.is_err_and(|e| crate::stderr::terminal_gone(&e));
        }
        crate::stderr::say(format_args!("{line}"));
        true
    }

    /// A line that stays, above the progress line on a terminal.
    fn line(self, text: &str) {
        if self.tty {
            crate::stderr::say_raw(format_args!("\r\x1b[K"));
        }
        crate::stderr::say(format_args!("{text}"));
    }
}

/// What of the capacity searches has been printed: a line per probe and per answer, as
/// they come, so a long search says where it stands.
#[derive(Default)]
pub(crate) struct SearchSaid {
    /// "D" for a reranker's documents per query, "b" for a batch.
    size: &'static str,
    answers: usize,
    /// (batch size, probes printed) of the search under way.
    probes: (usize, usize),
    notices: usize,
}

impl SearchSaid {
    /// Nothing said yet; a reranker's batch is named D.
    pub(crate) fn new(rerank: bool) -> SearchSaid {
        SearchSaid {
            size: if rerank { "D" } else { "b" },
            ..SearchSaid::default()
        }
    }

    /// The notices, probes and answers `s` has that were not said yet, a line each.
    pub(crate) fn news(&mut self, s: &Snapshot) -> Vec<String> {
        let mut out: Vec<String> = s.notices[self.notices.min(s.notices.len())..]
            .iter()
            .map(|n| format!("note: {n}"))
            .collect();
        self.notices = s.notices.len();
        let size = self.size;
        let probe_line = |b: usize, p: &encbench_core::capacity::Probe| {
            format!(
                "capacity {size}={b}: probe {} req/s {} (p99 {} ms{}, n {}, {})",
                text::sig3(p.rate_per_s),
                match (p.bound, p.meets) {
                    (false, _) => "cut short, not a bound",
                    (true, true) => "meets",
                    (true, false) => "misses",
                },
                text::ms(p.p99),
                p.p99_ci95
                    .map(|i| format!(" {}", i.shown()))
                    .unwrap_or_default(),
                p.n,
                if p.stable {
                    "stable"
                } else {
                    p.stop_reason.as_str()
                }
            )
        };
        // The probes of `c` not printed yet.
        let unsaid = |printed: (usize, usize), c: &encbench_core::capacity::Capacity| {
            let from = if printed.0 == c.batch_size {
                printed.1
            } else {
                0
            };
            c.probes
                .iter()
                .skip(from)
                .map(|p| probe_line(c.batch_size, p))
                .collect::<Vec<_>>()
        };
        for c in s.capacity.iter().skip(self.answers) {
            out.extend(unsaid(self.probes, c));
            let verdict = if size == "D" {
                encbench_report::answer_in_documents(&c.verdict)
            } else {
                c.verdict.clone()
            };
            out.push(format!("capacity {size}={}: {verdict}", c.batch_size));
            self.probes = (0, 0);
        }
        self.answers = s.capacity.len();
        if let Some(c) = &s.searching {
            out.extend(unsaid(self.probes, c));
            self.probes = (c.batch_size, c.probes.len());
        }
        out
    }
}

/// The endpoint's losses and returns said so far: a line each, once, with its time.
#[derive(Default)]
pub(crate) struct LostSaid {
    lost: usize,
    back: usize,
}

impl LostSaid {
    /// The lines `spans` (the run's so far) have that were not said yet.
    pub(crate) fn news(&mut self, spans: &[EndpointLost]) -> Vec<String> {
        let mut out = Vec::new();
        for (i, span) in spans.iter().enumerate() {
            if i >= self.lost {
                out.push(span.lost_line());
            }
            if i >= self.back
                && let Some(line) = span.back_line()
            {
                out.push(line);
                self.back = i + 1;
            }
        }
        self.lost = self.lost.max(spans.len());
        out
    }
}

/// Drives the engine to its end, printing progress, and stops it on SIGINT/SIGTERM/SIGHUP or
/// when the terminal of its progress line goes; a second signal exits at once through `abort`.
/// `rerank`: a reranker's batch is named D on the progress line.
pub async fn run(engine: Engine, abort: Abort, rerank: bool) -> RunReport {
    let mut snaps = engine.snapshots();
    let commands = engine.commands();
    let out = Out {
        tty: std::io::stderr().is_terminal(),
    };
    let every = if out.tty {
        Duration::from_secs(1)
    } else {
        Duration::from_secs(5)
    };
    let (finished, mut stop_ticking) = tokio::sync::oneshot::channel::<()>();
    let hangup = Hangup::default();
    let gone = hangup.clone();
    let ticker = tokio::spawn(async move {
        let mut iv = tokio::time::interval(every);
        iv.tick().await;
        let mut said = SearchSaid::new(rerank);
        let mut lost = LostSaid::default();
        loop {
            tokio::select! {
                _ = iv.tick() => {}
                _ = &mut stop_ticking => break,
            }
            if snaps.has_changed().is_err() {
                break;
            }
            let snap = snaps.borrow_and_update().clone();
            for line in lost.news(&snap.endpoint_lost) {
                out.line(&line);
            }
            for line in said.news(&snap) {
                out.line(&line);
            }
            if !out.progress(&progress::fields(&snap, rerank)) {
                gone.hang_up();
            }
        }
        (said, lost)
    });
    let interim = engine.interim();
    let signals = tokio::spawn(async move {
        stop_asked(&hangup).await;
        crate::stderr::say(format_args!(
            "\nstopping: waiting briefly for requests in flight, then writing results (again to exit at once)"
        ));
        let _ = commands.send(Command::Stop);
        wait_for_signal().await;
        abort_now(&abort, &interim);
    });
    let report = engine.finish().await;
    // Awaited: a line printed after the last one would not be the export's counts.
    let _ = finished.send(());
    let (said, mut lost) = ticker.await.unwrap_or_default();
    // What came after the last tick (a short run's server refusal, an endpoint lost in its
    // last seconds) is said all the same, before the counts.
    let spans = encbench_core::reach::pooled(report.phases.iter().flat_map(|p| &p.endpoint_lost));
    for line in lost.news(&spans) {
        out.line(&line);
    }
    for note in report.notices.iter().skip(said.notices) {
        out.line(&format!("note: {note}"));
    }
    signals.abort();
    // The last line has the export's counts: a log's reader need not open the export to
    // see what was measured.
    let _ = out.progress(&progress::done(&report));
    if out.tty {
        crate::stderr::say(format_args!(""));
    }
    report
}
