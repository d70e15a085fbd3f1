//! `compare`: prepare every target as a plain run would, check that all are ready before
//! anything is measured, then drive the comparison from the live screen or headless.

use super::{AppError, prepare, usage};
use crate::cli::CompareArgs;
use crate::compare::{self, CompareView, Entry, RowState, spec};
use crate::export::{Export, check_writable, write_atomic};
use crate::headless::ABORT_EXIT_CODE;
use crate::report::render;
use crate::serve::{self, ServeConfig, model::ServiceModel};
use crate::tokenize::TokenCounter;
use std::io::IsTerminal;
use std::time::Duration;
use tokio::sync::watch;

pub(super) async fn main(a: CompareArgs) -> Result<(), AppError> {
    let mut demo_servers = Vec::new();
    let mut demo = Vec::new();
    if a.demo {
        for (name, base_ms, per_token_ms, instance) in spec::DEMO {
            let cfg = ServeConfig {
                workers: 1,
                service: ServiceModel {
                    base_ms,
                    per_token_ms,
                    saturation_tokens: 512,
                },
                ..ServeConfig::default()
            };
            let server = serve::start(cfg, TokenCounter::shipped())
                .await
                .map_err(|e| {
                    AppError::Failed(format!("--demo: cannot start a reference endpoint: {e}"))
                })?;
            demo.push(spec::local(name, server.url(), instance));
            demo_servers.push(server);
        }
    }
    let specs = spec::targets(&a, demo).map_err(|(flag, msg)| usage(&flag, msg))?;
    if let Some(p) = &a.export {
        check_writable(p)
            .map_err(|e| usage("--export", format!("{}: cannot write: {e}", p.display())))?;
    }
    // One seed for all: every target gets the same inputs in the same order.
    let seed = a.seed.unwrap_or_else(rand::random);
    let mut entries = Vec::with_capacity(specs.len());
    for t in &specs {
        let mut r = spec::run_args(&a, t);
        r.seed = Some(seed);
        let named = |e: AppError| AppError::Usage(format!("{} {}: {e}", t.flag, t.name));
        let prepared = prepare(&r).await.map_err(named)?;
        entries.push(Entry {
            name: t.name.clone(),
            prepared,
        });
    }
    for (t, e) in specs.iter().zip(&entries) {
        if let Err(err) = e.prepared.target.check_ready().await {
            return Err(usage(&format!("{} {}", t.flag, t.name), err));
        }
    }

    let live = !a.headless && std::io::stdout().is_terminal();
    let (view_tx, view_rx) = watch::channel(compare::initial_view(&a, &entries));
    let (stop_tx, stop_rx) = watch::channel(false);
    // A second interrupt: write the phases finished so far; the front-end then exits at once.
    let abort = |v: &CompareView| {
        if let Some(path) = &a.export {
            match write_atomic(path, &compare::interim_export(&a, &entries, v)) {
                Ok(()) => eprintln!(
                    "interrupted twice: results so far written to {}",
                    path.display()
                ),
                Err(e) => eprintln!("error: --export {}: cannot write: {e}", path.display()),
            }
        }
    };
    let work = compare::run(&a, &entries, view_tx, stop_rx);
    let export = if live {
        crate::tui::compare::run(view_rx, stop_tx, work, &abort)
            .await
            .map_err(|e| AppError::Failed(format!("cannot drive the terminal: {e}")))?
    } else {
        headless(view_rx, stop_tx, work, &abort).await
    };
    if let Some(path) = &a.export {
        write_atomic(path, &export).map_err(|e| {
            AppError::Failed(format!("--export {}: cannot write: {e}", path.display()))
        })?;
        eprintln!("results written to {}", path.display());
    }
    print!(
        "{}",
        render(
            &[("compare".into(), export)],
            crate::cli::ReportFormat::Terminal
        )
    );
    Ok(())
}

fn progress_line(v: &CompareView) -> String {
    let running = v.rows.iter().find_map(|r| match &r.state {
        RowState::Running(step) => Some((r, step)),
        _ => None,
    });
    let what = match running {
        Some((r, step)) => match &r.live {
            Some((state, s)) => format!(
                "{} {} {:<9} n {:>5}  p50 {:>7.1} ms  p99 {:>7.1} ms  {:>7.1} req/s  err {}",
                r.name,
                step.label(),
                state.label(),
                s.n,
                s.latency.p50,
                s.latency.p99,
                s.req_per_s,
                s.errors.values().sum::<u64>()
            ),
            None => format!("{} {} starting", r.name, step.label()),
        },
        None => "checking accuracy".into(),
    };
    format!(
        "[compare {}/{}] {:>6.1} s  {what}",
        (v.done + 1).min(v.total),
        v.total,
        v.elapsed.as_secs_f64()
    )
}

/// Progress on stderr; SIGINT/SIGTERM stop the comparison, keeping what was measured; a
/// second one calls `abort`.
async fn headless(
    view: watch::Receiver<CompareView>,
    stop: watch::Sender<bool>,
    work: impl std::future::Future<Output = Export>,
    abort: &dyn Fn(&CompareView),
) -> Export {
    let mut progress_view = view.clone();
    let progress = async {
        let mut iv = tokio::time::interval(Duration::from_secs(5));
        iv.tick().await;
        loop {
            iv.tick().await;
            eprintln!("{}", progress_line(&progress_view.borrow_and_update()));
        }
    };
    let mut signals = crate::headless::signals();
    let interrupts = async {
        signals.recv().await;
        eprintln!(
            "\nstopping: the phase in progress ends, results so far are kept (again to exit at once)"
        );
        let _ = stop.send(true);
        signals.recv().await;
        abort(&view.borrow());
        std::process::exit(ABORT_EXIT_CODE)
    };
    tokio::select! {
        e = work => e,
        _ = progress => unreachable!("progress never ends"),
        _ = interrupts => unreachable!("the process has exited"),
    }
}
