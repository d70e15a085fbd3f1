//! `tune`: a local server restarted per configuration of its settings, each configuration
//! loaded as a run with its values filled into the run's flags, and the answer: which
//! configuration gives the most within the SLO per dollar. Every configuration's command
//! line is checked before any server starts; each server is stopped, its whole process
//! group gone, before the next starts; the export holds what was measured also when the
//! tune is stopped.

mod drive;
mod export;
mod resume;
mod say;

use super::{AppError, Stdout, check_export_path, usage, write_export};
use crate::cli::{RunArgs, TuneArgs};
use encbench_core::export::Export;
use encbench_core::export::tune::TuneStatus;
use encbench_core::tune::Assignment;
use encbench_load::engine::Interim;
use encbench_load::tune::{Row, TuneView, server};
use encbench_report::{ReportFormat, render};
use encbench_wire::client::Waiting;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// What the configurations run from.
pub(super) struct Plan {
    pub args: TuneArgs,
    pub grid: Vec<Assignment>,
    /// Where each configuration's server output goes.
    pub logs: PathBuf,
    /// One seed for all: every configuration gets the same inputs in the same order.
    pub seed: u64,
    /// Rows `--resume` gave, by configuration.
    pub resumed: Vec<Option<Row>>,
    /// The export's `config`.
    pub config: Value,
    /// `--url` as given.
    pub url: String,
}

/// The engine of the configuration under way, for an export that cannot wait for it.
pub(super) type Slot = Arc<Mutex<Option<Interim>>>;

/// Environment variable names whose values a server that prints its settings would print:
/// scrubbed from its log lines wherever they are shown or kept.
const SECRET_NAMES: [&str; 6] = ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "KEY"];

pub(super) async fn main(t: TuneArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    let (grid, first) = settle(&t)?;
    remember_secrets();
    let resumed = match &t.resume {
        Some(p) => resume::rows(p, &t, &grid)?,
        None => vec![None; grid.len()],
    };
    let labels: Vec<String> = grid.iter().map(ToString::to_string).collect();
    let url = url_template(&t.run).unwrap_or_default();
    let seed = first.seed.unwrap_or_else(rand::random);
    let plan = Plan {
        logs: (t.server_logs.clone())
            .unwrap_or_else(|| drive::default_logs(first.export.as_deref())),
        config: export::config(&first, &url, seed, &labels),
        grid,
        seed,
        resumed,
        url,
        args: t,
    };
    let slo = (!first.slo.objectives.is_empty()).then(|| first.slo.slo().describe());
    let (view_tx, view_rx) = watch::channel(TuneView::new(labels, slo));
    let (stop_tx, stop_rx) = watch::channel(false);
    let slot = Slot::default();
    let abort = |v: &TuneView| abort(&plan, &first, v, &slot);
    let live = !first.headless && stdout.is_terminal;
    // On the screen a server not ready yet is its row's state ("starting"): said only
    // without one.
    let waiting = move |w: &Waiting| {
        if !live {
            super::say_waiting(w);
        }
    };
    let work = drive::run(&plan, view_tx, stop_rx, slot.clone(), &waiting);
    let ended = if live {
        crate::tui::views::run(view_rx, stop_tx, work, &abort, crate::tui::tune::draw)
            .await
            .map_err(|e| AppError::Failed(format!("cannot drive the terminal: {e}")))?
    } else {
        for note in &super::run::notes(&first) {
            crate::stderr::say(format_args!("{note}"));
        }
        let mut said = say::Said::new(&plan, rerank(&first));
        let stopping = "the configuration under way ends and its server is stopped";
        Box::pin(crate::headless::views::run(
            stopping,
            view_rx,
            stop_tx,
            work,
            &abort,
            |v, due| said.lines(v, due),
        ))
        .await
    };
    let mut export = export::build(&plan, &ended.view, ended.error, None);
    export.error = encbench_core::failure::describe(export.error);
    finish(&first, export, stdout)
}

/// A line from `cli::tune` ("error: …") as the error it reports.
fn line(l: &str) -> AppError {
    AppError::Usage(l.trim_start_matches("error: ").to_string())
}

fn rerank(a: &RunArgs) -> bool {
    a.task == Some(encbench_core::input::Task::Rerank)
}

/// Every configuration's values and the first's run, once all are checked: each
/// configuration's command line parsed, the flags shared by all given alike (`validate`),
/// where the results go, the thresholds, and each configuration's flags weighed.
fn settle(t: &TuneArgs) -> Result<(Vec<Assignment>, RunArgs), AppError> {
    t.validate().map_err(|e| line(&e))?;
    let grid = t.grid().map_err(|e| line(&e))?;
    let first = t
        .configuration(&grid[0], Some(1))
        .map_err(|e| line(&e))?
        .run;
    check(t, &grid, &first)?;
    Ok((grid, first))
}

/// What is refused before any server starts: where the results go, the thresholds, and
/// each configuration's flags that could not work together.
fn check(t: &TuneArgs, grid: &[Assignment], first: &RunArgs) -> Result<(), AppError> {
    if let Some(p) = &first.export {
        check_export_path("--export", p)?;
    }
    if let Some(p) = &first.report {
        super::check_report_path(p)?;
    }
    super::check_fail_on(&first.fail_on, &first.slo)?;
    if let Some(dir) = &t.server_logs {
        std::fs::create_dir_all(dir).map_err(|e| {
            usage(
                "--server-logs",
                format!("{}: cannot create: {e}", dir.display()),
            )
        })?;
    }
    for values in grid {
        let c = t.configuration(values, Some(1)).map_err(|e| line(&e))?;
        super::run::check_together(&c.run)
            .and_then(|()| super::target::check_fit(&super::run::target(&c.run).0))
            .map_err(|e| AppError::Usage(format!("tune {values}: {e}")))?;
    }
    Ok(())
}

/// `--url`'s value among the run's flags, as given.
fn url_template(run: &[String]) -> Option<String> {
    let after = run
        .windows(2)
        .find(|w| w[0] == "--url")
        .map(|w| w[1].clone());
    after.or_else(|| {
        run.iter()
            .find_map(|a| a.strip_prefix("--url=").map(String::from))
    })
}

/// The values of environment variables named like secrets: the servers inherit them.
fn remember_secrets() {
    for (k, v) in std::env::vars() {
        let k = k.to_ascii_uppercase();
        if SECRET_NAMES.iter().any(|s| k.contains(s)) {
            encbench_core::scrub::remember(&v);
        }
    }
}

/// A second interrupt: the server under way killed, and what was measured written.
fn abort(plan: &Plan, first: &RunArgs, v: &TuneView, slot: &Slot) {
    if let Some(group) = v.server {
        server::kill_now(group);
    }
    let interim = slot
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_ref()
        .map(|i| {
            let mut r = i.report();
            if let Some(p) = r.phases.last_mut() {
                p.abandon_in_flight();
            }
            r
        });
    let why = "interrupted twice: the configuration under way was not waited for";
    let e = export::build(plan, v, Some(why.into()), interim.as_ref());
    if let Err(err) = super::write_report(first.report.as_deref(), "tune", &e) {
        crate::stderr::say(format_args!("{}", err.line()));
    }
    let Some(path) = &first.export else {
        return;
    };
    let mut out = std::io::stdout();
    let mut stdout = Stdout {
        is_terminal: false,
        writer: &mut out,
    };
    if let Err(err) = write_export("--export", path, &e, &mut stdout) {
        crate::stderr::say(format_args!("{}", err.line()));
    }
}

/// The export written, the report page, the tables printed, and the exit the tune earned.
fn finish(a: &RunArgs, mut export: Export, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    let configurations = export
        .tune
        .as_ref()
        .map_or(&[][..], |t| &t.configurations[..]);
    let failed: Vec<String> = configurations
        .iter()
        .filter(|c| c.status == TuneStatus::Failed)
        .map(|c| c.label.clone())
        .collect();
    let none_ran = !configurations.is_empty() && failed.len() == configurations.len();
    let thresholds = &a.fail_on.thresholds;
    export.config["fail_on"] = serde_json::json!(
        thresholds
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
    export.fail_on = encbench_core::thresholds::judge_tune(
        thresholds,
        &export.phases,
        &failed,
        configurations.len(),
    );
    let written = a
        .export
        .as_ref()
        .map_or(Ok(()), |path| {
            write_export("--export", path, &export, stdout)
        })
        .and(super::write_report(a.report.as_deref(), "tune", &export));
    let printed = stdout.tables(
        a.export.as_deref(),
        &render(&[("tune".into(), export.clone())], ReportFormat::Terminal),
    );
    written.and(printed)?;
    if let Some(e) = export.error.clone() {
        return Err(AppError::Failed(e));
    }
    if none_ran {
        return Err(AppError::Failed(
            "tune: no configuration's server could be measured (each one's reason and log are in the table)".into(),
        ));
    }
    super::verdict(&export)
}
