//! The headless front-end: drives the engine to its end with progress on stderr. The tables
//! that follow are the report's (`crate::report`), rendered from the run's export.

use crate::engine::{Command, Engine, Snapshot};
use crate::fmt;
use crate::results::RunReport;
use crate::signals::{Abort, abort_now, wait_for_signal};
use std::io::IsTerminal;
use std::time::Duration;

fn progress_line(s: &Snapshot) -> String {
    let phase = match &s.phase {
        Some(p) => {
            let of = p.planned.map(|n| format!("/{n}")).unwrap_or_default();
            format!(
                "phase {}{of} {} b={} c={}",
                p.index,
                p.kind.name(),
                p.batch_size,
                p.concurrency
            )
        }
        None => "starting".into(),
    };
    let c = &s.current;
    let errors: u64 = c.errors.values().sum();
    let behind = s
        .schedule
        .and_then(|q| fmt::behind(q.offered_per_s, c.req_per_s, q.backlog, q.lag, q.overloaded))
        .map(|t| format!("  {t}"))
        .unwrap_or_default();
    format!(
        "[{phase}] {:>6.1} s  {:<9} sent {:>6}  ok {:>6}  err {:>4}  p50 {:>8.1} ms  p99 {:>8.1} ms  {:>8.1} req/s{behind}",
        s.elapsed.as_secs_f64(),
        s.state.label(),
        s.phase.as_ref().map_or(0, |p| p.sent),
        c.ok,
        errors,
        c.latency.p50,
        c.latency.p99,
        c.req_per_s
    )
}

/// What of the capacity searches has been printed: a line per probe and per answer, as
/// they come, so a long search says where it stands.
#[derive(Default)]
struct SearchSaid {
    answers: usize,
    /// (batch size, probes printed) of the search under way.
    probes: (usize, usize),
    notices: usize,
}

impl SearchSaid {
    fn news(&mut self, s: &Snapshot) -> Vec<String> {
        let mut out: Vec<String> = s.notices[self.notices.min(s.notices.len())..]
            .iter()
            .map(|n| format!("note: {n}"))
            .collect();
        self.notices = s.notices.len();
        let probe_line = |b: usize, p: &crate::capacity::Probe| {
            format!(
                "capacity b={b}: probe {} req/s {} (p99 {} ms, n {}, {})",
                fmt::sig3(p.rate_per_s),
                if p.meets { "meets" } else { "misses" },
                fmt::ms(p.p99),
                p.n,
                if p.stable {
                    "stable"
                } else {
                    p.stop_reason.as_str()
                }
            )
        };
        // The probes of `c` not printed yet.
        let unsaid = |printed: (usize, usize), c: &crate::capacity::Capacity| {
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
            out.push(format!("capacity b={}: {}", c.batch_size, c.verdict));
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

/// Drives the engine to its end, printing progress, and stops it on SIGINT/SIGTERM; a
/// second signal exits at once through `abort`.
pub async fn run(engine: Engine, abort: Abort) -> RunReport {
    let mut snaps = engine.snapshots();
    let commands = engine.commands();
    let tty = std::io::stderr().is_terminal();
    let every = if tty {
        Duration::from_secs(1)
    } else {
        Duration::from_secs(5)
    };
    let progress = tokio::spawn(async move {
        let mut iv = tokio::time::interval(every);
        iv.tick().await;
        let mut said = SearchSaid::default();
        loop {
            iv.tick().await;
            if snaps.has_changed().is_err() {
                break;
            }
            let snap = snaps.borrow_and_update().clone();
            for line in said.news(&snap) {
                if tty {
                    crate::failure::say_raw(format_args!("\r\x1b[K"));
                }
                crate::failure::say(format_args!("{line}"));
            }
            let line = progress_line(&snap);
            if tty {
                crate::failure::say_raw(format_args!("\r{line}\x1b[K"));
            } else {
                crate::failure::say(format_args!("{line}"));
            }
        }
    });
    let interim = engine.interim();
    let signals = tokio::spawn(async move {
        wait_for_signal().await;
        crate::failure::say(format_args!(
            "\nstopping: waiting briefly for requests in flight, then writing results (again to exit at once)"
        ));
        let _ = commands.send(Command::Stop);
        wait_for_signal().await;
        abort_now(&abort, &interim);
    });
    let report = engine.finish().await;
    progress.abort();
    signals.abort();
    if tty {
        crate::failure::say(format_args!(""));
    }
    report
}
