//! A run: the target prepared and checked, the engine driven by the live screen or headless,
//! the export written, and the tables printed from that export.

mod records;
mod replay;
mod settings;

pub(super) use settings::{demo_config, engine_setup, run_config, target_settings};

use super::{
    AppError, Stdout, check_export_path, is_stdout, sagemaker_config, usage, write_export,
};
use crate::cli::RunArgs;
use crate::signals::Abort;
use crate::tui::{self, state::Info};
use encbench_core::export::records::Records;
use encbench_core::export::{Export, write_atomic};
use encbench_core::results::RunReport;
use encbench_load::engine::Engine;
use encbench_load::setup;
use encbench_report::{ReportFormat, render};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

pub(super) async fn main(mut a: RunArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    check(&a)?;
    let trace = replay::read(&a)?;
    let hosts = super::hosts::hosts(&a)?;
    records::check(
        &a,
        !a.headless && stdout.is_terminal && hosts.shard.is_none(),
    )?;
    let (address, _demo_server) = settings::address(&a).await?;
    let p = setup::prepare(&settings::target_settings(&a, address)).await?;
    let replaying = (trace.map(|t| replay::plan(&a, t, p.seed, &p.tokenizer))).transpose()?;
    // Said before the load and kept in the export: lengths the trace asked for and did not get.
    let replay_note = replaying.as_ref().and_then(|r| r.1.clone());
    let replaying = replaying.map(|r| r.0);
    a.notes
        .extend(replay_note.iter().map(|n| format!("note: {n}")));
    // Before the screen opens, so it stays in the scrollback: what the server was taken for.
    if let Some(found) = &p.found {
        crate::stderr::say(format_args!("{}", found.line()));
    }
    let mut run_config = settings::run_config(&a, &p, &hosts);
    if let Some(plan) = &replaying {
        replay::config(&a, plan, &mut run_config);
    }
    let config = serde_json::to_value(run_config).expect("a run's config serializes");
    if let Err(e) = p.target.check_ready(&super::say_waiting).await {
        // The cause before its consequence: the error, then where the export of it went.
        let why = e.to_string();
        let err = usage(p.flag, &why);
        crate::stderr::say(format_args!("{}", err.line()));
        not_ready(&a, &why, config.clone(), stdout)?;
        return Err(AppError::Said(Box::new(err)));
    }
    // A shard is one of several hosts sending one schedule: no live keys change its part.
    // Nor a replay's: its times are the recording's.
    let live = !a.headless && stdout.is_terminal && hosts.shard.is_none() && replaying.is_none();
    if !live {
        let engine = &p.target_config.engine;
        for note in a.notes.iter().chain(&crate::cli::engine_notes(&a, engine)) {
            crate::stderr::say(format_args!("{note}"));
        }
    }
    let info = Info {
        target: p.shown.clone(),
        // The route beside a family that has several: `tei /rerank`.
        format: match (&p.target_config.api, &p.target_config.path) {
            (Some(_), Some(path)) => format!("{} {path}", p.format.name()),
            _ => p.format.name().to_string(),
        },
        simulated: a.demo,
        knee: a.knee,
        window_s: a.window,
        rerank: p.task == encbench_core::input::Task::Rerank,
        lengths: a.input_tokens,
    };
    let mut setup = settings::engine_setup(&a, p, live)?;
    if let Some(plan) = &replaying {
        replay::shape(&a, &mut setup, plan);
    }
    let records = records::open(&a)?;
    setup.records = records.as_ref().map(|r| r.sender());
    let engine = Engine::start_among(hosts, setup);
    let abort = abort_export(&a, &config, records.clone());
    let mut report = if live {
        live_screen(&a, engine, info, &config, abort).await?
    } else {
        crate::headless::run(engine, abort, info.rerank).await
    };
    // Every request has been recorded once the engine has finished (see `engine::drain`).
    let closed = records::close(&a, records.as_deref());
    if let (Some(wait), Some(name)) = (a.server.cloudwatch_wait, &a.endpoint) {
        super::cloudwatch::attach(&mut report, &sagemaker_config(name, &a.sagemaker), wait).await;
    }
    if let Some(n) = replay_note {
        report.notices.insert(0, n);
    }
    // A panic anywhere in the run (a request task, the accuracy check) is a failure too.
    report.error = encbench_core::failure::describe(report.error);
    let finished = finish(&a, &report, config, stdout);
    closed.and(finished)
}

/// What is refused before anything is sent: a run of an hour must not end with results that
/// cannot be saved, nor with flags that could not work together.
fn check(a: &RunArgs) -> Result<(), AppError> {
    if let Some(p) = &a.export {
        check_export_path("--export", p)?;
    }
    if let Some(p) = &a.report {
        super::check_report_path(p)?;
    }
    super::check_fail_on(&a.fail_on, &a.slo)?;
    super::only_tune_fails(&a.fail_on)?;
    check_flags(a)
}

/// Flags that cannot work together, whatever the front-end (also each configuration of a
/// tune's).
pub(super) fn check_flags(a: &RunArgs) -> Result<(), AppError> {
    if a.find_capacity && a.sweep_concurrency {
        return Err(usage(
            "--find-capacity",
            "searches rates at one concurrency cap: drop --sweep-concurrency, or run the search at each --concurrency",
        ));
    }
    if a.server.cloudwatch_wait.is_some() && a.endpoint.is_none() {
        return Err(usage(
            "--cloudwatch-wait",
            "reads SageMaker's metrics of an --endpoint run: give --endpoint, or drop it",
        ));
    }
    Ok(())
}

/// The export and report of a run whose target never answered: no phases, and why.
fn not_ready(
    a: &RunArgs,
    why: &str,
    config: Value,
    stdout: &mut Stdout<'_>,
) -> Result<(), AppError> {
    let started = SystemTime::now();
    let report = RunReport {
        started_at: started,
        ended_at: started,
        phases: vec![],
        capacity: vec![],
        accuracy_before: None,
        accuracy_after: None,
        timeline: vec![],
        stopped_early: true,
        error: Some(encbench_core::scrub::text(why)),
        notices: vec![],
    };
    let export = Export::new(&report, config);
    super::write_report(a.report.as_deref(), &export_name(a), &export)?;
    if let Some(path) = &a.export {
        write_export("--export", path, &export, stdout)?;
    }
    Ok(())
}

/// The live screen drives the engine until the operator quits.
async fn live_screen(
    a: &RunArgs,
    engine: Engine,
    info: Info,
    config: &Value,
    abort: Abort,
) -> Result<RunReport, AppError> {
    // Key e writes a file: stdout is the screen's while it is open.
    let export_path = (a.export.clone())
        .filter(|p| !is_stdout(p))
        .unwrap_or_else(default_export_path);
    let export_config = config.clone();
    let export_now: tui::ExportNow = Box::new(move |report| {
        write_atomic(&export_path, &Export::new(report, export_config.clone()))
            .map(|()| export_path.display().to_string())
            .map_err(|e| e.to_string())
    });
    tui::run(engine, info, a.fps, export_now, abort)
        .await
        .map_err(|e| AppError::Failed(format!("cannot drive the terminal: {e}")))
}

/// The export written, the report page, the tables printed, and the exit the run earned.
fn finish(
    a: &RunArgs,
    report: &RunReport,
    config: Value,
    stdout: &mut Stdout<'_>,
) -> Result<(), AppError> {
    let failed = report.error.clone();
    let mut export = Export::new(report, config);
    super::judge_thresholds(&mut export, &a.fail_on);
    let written = a
        .export
        .as_ref()
        .map_or(Ok(()), |path| {
            write_export("--export", path, &export, stdout)
        })
        .and(super::write_report(
            a.report.as_deref(),
            &export_name(a),
            &export,
        ));
    // Also after the live screen: the tables stay in the scrollback. Also when the export
    // failed: the tables are then all that is left of what was measured.
    let printed = stdout.tables(
        records::stdout_taken(a).or(a.export.as_deref()),
        &render(&[(export_name(a), export.clone())], ReportFormat::Terminal),
    );
    written.and(printed)?;
    // What was measured is saved and shown; the exit code still says the run failed.
    match failed {
        Some(e) => Err(AppError::Failed(e)),
        None => super::verdict(&export),
    }
}

/// The name `report` gives the export (it heads the tables only beside other exports).
fn export_name(a: &RunArgs) -> String {
    a.export
        .as_ref()
        .filter(|p| !is_stdout(p))
        .and_then(|p| p.file_name())
        .map_or("run".into(), |n| n.to_string_lossy().into_owned())
}

/// A second interrupt: the records and the export of what was measured so far, then the
/// process ends.
fn abort_export(a: &RunArgs, config: &Value, records: Option<Arc<Records>>) -> Abort {
    let (path, config) = (a.export.clone(), config.clone());
    let (page, name) = (a.report.clone(), export_name(a));
    let records_path = a.records.clone();
    Box::new(move |report| {
        if let Err(e) = records::close_to(records_path.as_deref(), records.as_deref()) {
            crate::stderr::say(format_args!("{}", e.line()));
        }
        if let Err(e) =
            super::write_report(page.as_deref(), &name, &Export::new(report, config.clone()))
        {
            crate::stderr::say(format_args!("{}", e.line()));
        }
        let Some(path) = &path else {
            return crate::stderr::say(format_args!("interrupted twice: exiting without waiting"));
        };
        let mut out = std::io::stdout();
        let mut stdout = Stdout {
            is_terminal: false,
            writer: &mut out,
        };
        match write_export(
            "--export",
            path,
            &Export::new(report, config.clone()),
            &mut stdout,
        ) {
            Ok(()) => {
                crate::stderr::say(format_args!("interrupted twice: exiting without waiting"));
            }
            Err(e) => crate::stderr::say(format_args!("{}", e.line())),
        }
    })
}

/// Where `e` writes when no `--export` was given.
fn default_export_path() -> PathBuf {
    let stamp = time::OffsetDateTime::now_utc()
        .format(time::macros::format_description!(
            "[year][month][day]-[hour][minute][second]"
        ))
        .unwrap_or_default();
    PathBuf::from(format!("encbench-{stamp}.json"))
}
