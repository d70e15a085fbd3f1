//! The headless front-end: progress on stderr, the seed-style phase tables on stdout.

use crate::accuracy::AccuracyReport;
use crate::arrival::Pace;
use crate::engine::{Command, Engine, Interim, PhaseResult, RunReport, Snapshot};
use crate::sweep::PhaseKind;
use crate::sweep::analysis;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::time::Duration;

/// What the tables say about the run besides its phases.
#[derive(Debug, Clone)]
pub struct Header {
    pub target: String,
    pub engine: String,
    pub pace: Pace,
    pub pad_to_max: bool,
    pub max_len: usize,
    /// Mean natural length of the inputs, in tokens.
    pub natural_tokens: f64,
    pub simulated: bool,
    pub price: Option<(String, f64)>,
    pub knee: f64,
}

pub fn describe_pace(p: &Pace, concurrency: usize) -> String {
    match p.rate_per_s {
        None => {
            format!("closed loop at concurrency {concurrency} (rate inf: latency is service time)")
        }
        Some(r) => {
            let arrivals = if p.burstiness.is_infinite() {
                "fixed interval".to_string()
            } else if p.burstiness == 1.0 {
                "Poisson".to_string()
            } else {
                format!("Gamma burstiness {}", p.burstiness)
            };
            format!("open loop {r:.1} req/s, {arrivals}, concurrency cap {concurrency}")
        }
    }
}

fn progress_line(s: &Snapshot) -> String {
    let phase = match &s.phase {
        Some(p) => {
            let of = p.planned.map(|n| format!("/{n}")).unwrap_or_default();
            let kind = format!("{:?}", p.kind).to_lowercase();
            format!(
                "phase {}{of} {kind} b={} c={}",
                p.index, p.batch_size, p.concurrency
            )
        }
        None => "starting".into(),
    };
    let c = &s.current;
    let errors: u64 = c.errors.values().sum();
    format!(
        "[{phase}] {:>6.1} s  {:<9} sent {:>6}  ok {:>6}  err {:>4}  p50 {:>8.1} ms  p99 {:>8.1} ms  {:>8.1} req/s",
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

/// What a second Ctrl-C does: write what was measured so far, then the process exits at
/// once (code 130) instead of waiting for requests in flight or an accuracy check.
pub type Abort = Box<dyn Fn(&RunReport) + Send + Sync>;

/// Exit code after a second Ctrl-C (128 + SIGINT, as shells report it).
pub const ABORT_EXIT_CODE: i32 = 130;

/// Writes the interim report through `abort` and exits the process.
pub fn abort_now(abort: &Abort, interim: &Interim) -> ! {
    let mut report = interim.report();
    report.error = Some("interrupted twice: requests in flight were not waited for".into());
    abort(&report);
    std::process::exit(ABORT_EXIT_CODE)
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
        loop {
            iv.tick().await;
            if snaps.has_changed().is_err() {
                break;
            }
            let line = progress_line(&snaps.borrow_and_update());
            if tty {
                eprint!("\r{line}\x1b[K")
            } else {
                eprintln!("{line}")
            }
        }
    });
    let interim = engine.interim();
    let signals = tokio::spawn(async move {
        wait_for_signal().await;
        eprintln!(
            "\nstopping: waiting briefly for requests in flight, then writing results (again to exit at once)"
        );
        let _ = commands.send(Command::Stop);
        wait_for_signal().await;
        abort_now(&abort, &interim);
    });
    let report = engine.finish().await;
    progress.abort();
    signals.abort();
    if tty {
        eprintln!();
    }
    report
}

/// Every SIGINT/SIGTERM from now on, one message each: the first stops, a second means now.
pub fn signals() -> tokio::sync::mpsc::UnboundedReceiver<()> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            wait_for_signal().await;
            if tx.send(()).is_err() {
                break;
            }
        }
    });
    rx
}

pub async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.prec$}"))
}

fn errors_of(p: &PhaseResult) -> u64 {
    p.errors.values().sum()
}

/// The seed's tables: batch (samples/s, ×b=1, efficiency, $/1M), concurrency (percentiles,
/// tail ratio, req/s), the latency breakdown, errors by kind and accuracy.
pub fn tables(report: &RunReport, h: &Header) -> String {
    let mut out = String::new();
    let sim = if h.simulated {
        " (simulated endpoint)"
    } else {
        ""
    };
    let shape = if h.pad_to_max {
        format!("inputs padded to {} tokens", h.max_len)
    } else {
        format!("natural length, {:.0} tokens per input", h.natural_tokens)
    };
    let _ = writeln!(
        out,
        "encbench-tui {} — {}{sim} — engine {}",
        env!("CARGO_PKG_VERSION"),
        h.target,
        h.engine
    );
    let conc = report.phases.first().map_or(1, |p| p.concurrency);
    let _ = writeln!(out, "{} — {shape}", describe_pace(&h.pace, conc));
    if let Some((name, price)) = &h.price {
        let _ = writeln!(out, "price {name} ${price:.3}/h");
    }

    let batch: Vec<&PhaseResult> = report
        .phases
        .iter()
        .filter(|p| p.kind == PhaseKind::Batch)
        .collect();
    if !batch.is_empty() {
        let _ = writeln!(
            out,
            "\nBatch (n = measured requests per row; p99 at n=100 is nearly the maximum)"
        );
        let _ = writeln!(
            out,
            "{:>6} {:>5} {:>7} {:>9} {:>9} {:>8} {:>9} {:>10} {:>6} {:>10} {:>8} {:>6}",
            "batch",
            "conc",
            "n",
            "p50 ms",
            "p99 ms",
            "p99/p50",
            "req/s",
            "samples/s",
            "×b=1",
            "efficiency",
            "$/1M",
            "errors"
        );
        let sweep = analysis::latest_sweep(&report.phases, PhaseKind::Batch);
        let knee_row = analysis::knee(&sweep, h.knee).map(|k| sweep[k]);
        for p in &batch {
            let is_knee = knee_row.is_some_and(|k| std::ptr::eq(k, *p));
            let mark = if is_knee { "  ◀ knee" } else { "" };
            // ×b=1 is efficiency × batch size: both compare with the same sweep's batch-1 row.
            let x = p.batch_efficiency.map(|e| e * p.batch_size as f64);
            let _ = writeln!(
                out,
                "{:>6} {:>5} {:>7} {:>9.1} {:>9.1} {:>8} {:>9.1} {:>10.1} {:>6} {:>10} {:>8} {:>6}",
                p.batch_size,
                p.concurrency,
                p.n,
                p.latency_ms.p50,
                p.latency_ms.p99,
                opt(p.p99_over_p50, 2),
                p.req_per_s,
                p.samples_per_s,
                opt(x, 2),
                opt(p.batch_efficiency, 2),
                opt(p.cost_per_1m_usd, 2),
                errors_of(p)
            );
            out.pop();
            let _ = writeln!(out, "{mark}");
        }
        if sweep.len() > 1
            && let Some(advice) = analysis::batch_advice(&sweep, h.knee)
        {
            let _ = writeln!(out, "advice: {advice}");
        }
    }

    let live: Vec<&PhaseResult> = report
        .phases
        .iter()
        .filter(|p| p.kind == PhaseKind::Live)
        .collect();
    if !live.is_empty() {
        let _ = writeln!(
            out,
            "\nLive phases (as steered from the screen; see the timeline for changes)"
        );
        let _ = writeln!(
            out,
            "{:>6} {:>5} {:>7} {:>9} {:>9} {:>8} {:>9} {:>10} {:>6}",
            "batch", "conc", "n", "p50 ms", "p99 ms", "p99/p50", "req/s", "samples/s", "errors"
        );
        for p in live {
            let _ = writeln!(
                out,
                "{:>6} {:>5} {:>7} {:>9.1} {:>9.1} {:>8} {:>9.1} {:>10.1} {:>6}",
                p.batch_size,
                p.concurrency,
                p.n,
                p.latency_ms.p50,
                p.latency_ms.p99,
                opt(p.p99_over_p50, 2),
                p.req_per_s,
                p.samples_per_s,
                errors_of(p)
            );
        }
    }

    let conc: Vec<&PhaseResult> = report
        .phases
        .iter()
        .filter(|p| p.kind == PhaseKind::Concurrency)
        .collect();
    if !conc.is_empty() {
        let _ = writeln!(out, "\nConcurrency (batch {})", conc[0].batch_size);
        let _ = writeln!(
            out,
            "{:>5} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9} {:>10} {:>8} {:>6}",
            "conc",
            "n",
            "p50 ms",
            "p90 ms",
            "p95 ms",
            "p99 ms",
            "p99/p50",
            "req/s",
            "samples/s",
            "$/1M",
            "errors"
        );
        let sweep = analysis::latest_sweep(&report.phases, PhaseKind::Concurrency);
        let saturated = analysis::saturation(&sweep).map(|k| sweep[k]);
        for p in &conc {
            let is_saturated = saturated.is_some_and(|k| std::ptr::eq(k, *p));
            let mark = if is_saturated { "  ◀ saturated" } else { "" };
            let l = &p.latency_ms;
            let _ = writeln!(
                out,
                "{:>5} {:>7} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8} {:>9.1} {:>10.1} {:>8} {:>6}",
                p.concurrency,
                p.n,
                l.p50,
                l.p90,
                l.p95,
                l.p99,
                opt(p.p99_over_p50, 2),
                p.req_per_s,
                p.samples_per_s,
                opt(p.cost_per_1m_usd, 2),
                errors_of(p)
            );
            out.pop();
            let _ = writeln!(out, "{mark}");
        }
        if let Some(advice) = analysis::concurrency_advice(&sweep) {
            let _ = writeln!(out, "advice: {advice}");
        }
    }

    if !report.phases.is_empty() {
        let _ = writeln!(
            out,
            "\nLatency breakdown: scheduled = dispatch delay (waiting to be sent) + service"
        );
        let _ = writeln!(
            out,
            "{:>6} {:>5} {:>15} {:>15} {:>15}",
            "batch", "conc", "scheduled p50/p99", "service p50/p99", "dispatch p50/p99"
        );
        for p in &report.phases {
            let pair = |s: &crate::stats::LatencySummary| format!("{:.1}/{:.1}", s.p50, s.p99);
            let _ = writeln!(
                out,
                "{:>6} {:>5} {:>17} {:>15} {:>16}",
                p.batch_size,
                p.concurrency,
                pair(&p.latency_ms),
                pair(&p.service_ms),
                pair(&p.dispatch_delay_ms)
            );
        }
    }

    let with_errors: Vec<&PhaseResult> =
        report.phases.iter().filter(|p| errors_of(p) > 0).collect();
    if !with_errors.is_empty() {
        let _ = writeln!(out, "\nErrors by kind");
        for p in with_errors {
            let kinds: Vec<String> = p.errors.iter().map(|(k, v)| format!("{k} {v}")).collect();
            let _ = writeln!(
                out,
                "  batch {} conc {}: {}",
                p.batch_size,
                p.concurrency,
                kinds.join(", ")
            );
        }
    }

    let tokenized: Vec<&PhaseResult> = report
        .phases
        .iter()
        .filter(|p| p.tokenize_ms.is_some() || p.server.is_some())
        .collect();
    if !tokenized.is_empty() {
        let _ = writeln!(
            out,
            "\nClient tokenization and server side (ms per request; server from KServe v2 statistics, warmup included)"
        );
        let _ = writeln!(
            out,
            "{:>6} {:>5} {:>15} {:>9} {:>9} {:>9} {:>9} {:>13}",
            "batch",
            "conc",
            "tokenize p50/p99",
            "queue",
            "c.input",
            "c.infer",
            "c.output",
            "batch factor"
        );
        for p in tokenized {
            let tok = p
                .tokenize_ms
                .map_or("-".to_string(), |t| format!("{:.2}/{:.2}", t.p50, t.p99));
            let (q, ci, cf, co, bf) = match &p.server {
                Some(s) => (
                    format!("{:.2}", s.queue_ms),
                    format!("{:.2}", s.compute_input_ms),
                    format!("{:.2}", s.compute_infer_ms),
                    format!("{:.2}", s.compute_output_ms),
                    opt(s.batch_factor, 2),
                ),
                None => ("-".into(), "-".into(), "-".into(), "-".into(), "-".into()),
            };
            let _ = writeln!(
                out,
                "{:>6} {:>5} {:>16} {:>9} {:>9} {:>9} {:>9} {:>13}",
                p.batch_size, p.concurrency, tok, q, ci, cf, co, bf
            );
        }
    }

    let with_variants: Vec<&PhaseResult> = report
        .phases
        .iter()
        .filter(|p| !p.variants.is_empty())
        .collect();
    if !with_variants.is_empty() {
        let _ = writeln!(out, "\nInvoked production variants");
        for p in with_variants {
            let v: Vec<String> = p.variants.iter().map(|(k, n)| format!("{k} {n}")).collect();
            let _ = writeln!(
                out,
                "  batch {} conc {}: {}",
                p.batch_size,
                p.concurrency,
                v.join(", ")
            );
        }
    }

    if report.accuracy_before.is_some() || report.accuracy_after.is_some() {
        let _ = writeln!(out);
        let line = |label: &str, r: &Option<AccuracyReport>| {
            r.as_ref()
                .map(|r| format!("{label} {}/{}", r.passed, r.total))
                .unwrap_or_default()
        };
        let _ = writeln!(
            out,
            "Accuracy: {}  {}",
            line("before load", &report.accuracy_before),
            line("after load", &report.accuracy_after)
        );
        if let Some(r) = report
            .accuracy_after
            .as_ref()
            .or(report.accuracy_before.as_ref())
        {
            for v in &r.samples {
                let mark = if v.ok { "ok      " } else { "MISMATCH" };
                let predicted = v
                    .predicted
                    .clone()
                    .or(v.error.clone())
                    .unwrap_or_else(|| "-".into());
                let _ = writeln!(
                    out,
                    "  {mark} expected {:<13} predicted {:<13} {}",
                    v.expected,
                    predicted,
                    short(&v.hypothesis, 48)
                );
            }
            if r.passed < r.total {
                let _ = writeln!(
                    out,
                    "  verdicts differ from the expected ones: check the label mapping (--labels), tokenization and payload construction"
                );
            }
        }
    }
    if report.stopped_early
        && report
            .phases
            .last()
            .is_some_and(|p| p.kind != PhaseKind::Live)
    {
        let _ = writeln!(
            out,
            "\nstopped before the plan finished: the last phase is partial"
        );
    }
    out
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}
