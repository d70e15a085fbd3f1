//! A run: its command line settled once (`settle`), the target prepared and checked, the
//! engine driven by the live screen or headless, the export written, and the tables printed
//! from that export.

mod flags;
mod records;
mod replay;
mod settings;
mod settle;

pub(super) use flags::{check_together, notes};
pub(super) use settings::{Workload, demo_config, record, resolve, target, workload};
pub(super) use settle::OutputSpec;

use super::{AppError, Stdout, is_stdout, usage, write_export};
use crate::cli::RunArgs;
use crate::signals::Abort;
use crate::tui::{self, state::Info};
use encbench_core::export::records::Records;
use encbench_core::export::{Export, write_atomic};
use encbench_core::results::RunReport;
use encbench_load::engine::{Engine, Hosts};
use encbench_load::setup::{self, PreparedTarget, TargetSettings};
use encbench_report::{ReportFormat, render};
use replay::{PreparedReplay, ReplaySpec};
use serde_json::Value;
use settle::{FrontSpec, RunSpec};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

/// settle → prepare → start → the front-end → finish: nothing after `settle` reads the
/// command line.
pub(super) async fn main(a: RunArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    let RunSpec {
        target,
        demo,
        hosts,
        replay,
        workload,
        mut record,
        mut front,
        outputs,
    } = settle::settle(a, stdout.is_terminal)?;
    // A FIFO waits for its reader here, before anything is prepared or sent.
    let records = records::open(outputs.records.as_deref()).await?;
    let (target, _demo_server) = settings::start_demo(target, demo).await?;
    let (p, replaying) = prepare(&target, replay).await?;
    // Said before the load and kept in the export: lengths the trace asked for and did not get.
    let replay_note = replaying.as_ref().and_then(|r| r.note.clone());
    (front.notes.said).extend(replay_note.iter().map(|n| format!("note: {n}")));
    settings::resolve(&mut record, &p);
    if let Some(r) = &replaying {
        r.record(&mut record);
    }
    let config = serde_json::to_value(record).expect("a run's config serializes");
    ready(&p, &outputs, &config, stdout).await?;
    let info = info(&front, &p);
    let flag = p.flag;
    let engine = start(workload, p, replaying.as_ref(), hosts, records.as_ref())?;
    let abort = abort_export(&outputs, &config, records.clone());
    let mut report = if front.live {
        live_screen(&outputs, front.fps, engine, info, &config, abort).await?
    } else {
        crate::headless::run(engine, abort, info.rerank).await
    };
    // Every request has been recorded once the engine has finished (see `engine::drain`).
    let closed = records::close_to(outputs.records.as_deref(), records.as_ref()).await;
    if let Some((wait, endpoint)) = &outputs.cloudwatch {
        super::cloudwatch::attach(&mut report, endpoint, *wait).await;
    }
    if let Some(n) = replay_note {
        report.notices.insert(0, n);
    }
    // A panic anywhere in the run (a request task, the accuracy check) is a failure too.
    report.error = encbench_core::failure::describe(report.error);
    // The check before the load found the route is none of the server's: no load ran, and
    // the flags are to blame.
    let no_route = (report.phases.is_empty())
        .then_some(report.accuracy_before.as_ref())
        .flatten()
        .filter(|a| a.no_route)
        .and_then(|a| a.note.clone());
    let finished = finish(&outputs, &report, config, stdout);
    match no_route {
        Some(why) => closed
            .and(finished)
            .and(Err(usage(flag, format!("{why}; no load was sent")))),
        None => closed.and(finished),
    }
}

/// The target prepared, and the replay's plan once the target's seed and tokenizer are known.
async fn prepare(
    target: &TargetSettings,
    replay: Option<ReplaySpec>,
) -> Result<(PreparedTarget, Option<PreparedReplay>), AppError> {
    let p = setup::prepare(target).await?;
    let replaying = (replay.map(|r| replay::plan(r, p.seed, &p.tokenizer))).transpose()?;
    // Before the screen opens, so it stays in the scrollback: what the server was taken for.
    if let Some(found) = &p.found {
        crate::stderr::say(format_args!("{}", found.line()));
    }
    Ok((p, replaying))
}

/// The engine started on the prepared target, as the replay shapes it, with the records'
/// writer it sends a line of each request to.
fn start(
    workload: settings::Workload,
    p: PreparedTarget,
    replaying: Option<&PreparedReplay>,
    hosts: Hosts,
    records: Option<&Arc<Records>>,
) -> Result<Engine, AppError> {
    let mut setup = workload.engine(p)?;
    if let Some(r) = replaying {
        r.shape(&mut setup);
    }
    setup.records = records.map(|r| r.sender());
    Ok(Engine::start_among(hosts, setup))
}

/// The target answers, or the run ends with the export of why not.
async fn ready(
    p: &PreparedTarget,
    outputs: &OutputSpec,
    config: &Value,
    stdout: &mut Stdout<'_>,
) -> Result<(), AppError> {
    if let Err(e) = p.target.check_ready(&super::say_waiting).await {
        // The cause before its consequence: the error, then where the export of it went.
        let why = e.to_string();
        let err = usage(p.flag, &why);
        crate::stderr::say(format_args!("{}", err.line()));
        not_ready(outputs, &why, config.clone(), stdout)?;
        return Err(AppError::Said(Box::new(err)));
    }
    Ok(())
}

/// What the front-end shows of the target beside the engine's snapshots; a headless run
/// says the notes of flags it will not use first, now that the family is known.
fn info(front: &FrontSpec, p: &PreparedTarget) -> Info {
    if !front.live {
        for note in front.notes.for_engine(&p.target_config.engine) {
            crate::stderr::say(format_args!("{note}"));
        }
    }
    Info {
        target: p.shown.clone(),
        // The route beside a family that has several: `tei /rerank`.
        format: match (&p.target_config.api, &p.target_config.path) {
            (Some(_), Some(path)) => format!("{} {path}", p.format.name()),
            _ => p.format.name().to_string(),
        },
        simulated: front.demo,
        knee: front.knee,
        window_s: front.window_s,
        rerank: p.task == encbench_core::input::Task::Rerank,
        lengths: front.lengths,
    }
}

/// The export and report of a run whose target never answered: no phases, and why.
fn not_ready(
    o: &OutputSpec,
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
    super::write_report(o.report.as_deref(), &export_name(o), &export)?;
    if let Some(path) = &o.export {
        write_export("--export", path, &export, stdout)?;
    }
    Ok(())
}

/// The live screen drives the engine until the operator quits.
async fn live_screen(
    o: &OutputSpec,
    fps: u64,
    engine: Engine,
    info: Info,
    config: &Value,
    abort: Abort,
) -> Result<RunReport, AppError> {
    // Key e writes a file: stdout is the screen's while it is open.
    let export_path = (o.export.clone())
        .filter(|p| !is_stdout(p))
        .unwrap_or_else(default_export_path);
    let export_config = config.clone();
    let export_now: tui::ExportNow = Box::new(move |report| {
        write_atomic(&export_path, &Export::new(report, export_config.clone()))
            .map(|()| export_path.display().to_string())
            .map_err(|e| e.to_string())
    });
    tui::run(engine, info, fps, export_now, abort)
        .await
        .map_err(|e| AppError::Failed(format!("cannot drive the terminal: {e}")))
}

/// The export written, the report page, the tables printed, and the exit the run earned.
fn finish(
    o: &OutputSpec,
    report: &RunReport,
    config: Value,
    stdout: &mut Stdout<'_>,
) -> Result<(), AppError> {
    let failed = report.error.clone();
    let mut export = Export::new(report, config);
    super::judge_thresholds(&mut export, &o.fail_on);
    let written = o
        .export
        .as_ref()
        .map_or(Ok(()), |path| {
            write_export("--export", path, &export, stdout)
        })
        .and(super::write_report(
            o.report.as_deref(),
            &export_name(o),
            &export,
        ));
    // Also after the live screen: the tables stay in the scrollback. Also when the export
    // failed: the tables are then all that is left of what was measured.
    let printed = stdout.tables(
        records::stdout_taken(o.records.as_deref()).or(o.export.as_deref()),
        &render(&[(export_name(o), export.clone())], ReportFormat::Terminal),
    );
    written.and(printed)?;
    // What was measured is saved and shown; the exit code still says the run failed.
    match failed {
        Some(e) => Err(AppError::Failed(e)),
        None => super::verdict(&export),
    }
}

/// The name `report` gives the export (it heads the tables only beside other exports).
fn export_name(o: &OutputSpec) -> String {
    o.export
        .as_ref()
        .filter(|p| !is_stdout(p))
        .and_then(|p| p.file_name())
        .map_or("run".into(), |n| n.to_string_lossy().into_owned())
}

/// A second interrupt: the records and the export of what was measured so far, then the
/// process ends.
fn abort_export(o: &OutputSpec, config: &Value, records: Option<Arc<Records>>) -> Abort {
    let (path, config) = (o.export.clone(), config.clone());
    let (page, name) = (o.report.clone(), export_name(o));
    let records_path = o.records.clone();
    Box::new(move |report| {
        if let Err(e) = records::close_now(records_path.as_deref(), records.as_deref()) {
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
