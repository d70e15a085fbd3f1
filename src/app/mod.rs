//! From a parsed command line to a finished run: each subcommand turns its arguments into the
//! settings of the layers below (`setup`, `compare`, `report`, `serve`), runs them, and writes
//! what they produced. Bad input is one line and exit code 2.

mod cloudwatch;
mod cold_start;
mod compare;
mod hosts;
mod report;
mod run;
mod serve;
mod target;
mod tune;

pub use serve::config as serve_config;

use crate::cli::{Cli, SageMakerArgs, Sub};
use clap::CommandFactory;
use encbench_load::setup::SetupError;
use encbench_wire::client::sagemaker::SageMakerSettings;
use std::io::Write;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Bad input: exit code 2.
    #[error("{0}")]
    Usage(String),
    /// The run could not complete: exit code 1.
    #[error("{0}")]
    Failed(String),
    /// A `--fail-on` threshold was breached: exit code 3 (each breach was said before).
    #[error("{0}")]
    Breached(String),
    /// Every measured request failed: exit code 4. The export and tables are written, but
    /// they describe refusals, not the model, and a script must not take them as a result.
    #[error("{0}")]
    NothingMeasured(String),
    /// The endpoint stopped answering and had not come back when the load ended: exit code
    /// 5. What was measured is written, but the run did not measure what it was asked to.
    #[error("{0}")]
    EndpointLost(String),
    /// Whoever read stdout went away (`| head`): nothing is wrong and nobody is left to tell,
    /// so the process ends quietly with 0, as it would have had the reader stayed.
    #[error("stdout closed by its reader")]
    StdoutClosed,
    /// Already said on stderr, before what followed from it (the export of a run whose target
    /// never answered): the process ends with its code and says nothing more.
    #[error("{0}")]
    Said(Box<AppError>),
}

impl AppError {
    pub fn exit_code(&self) -> u8 {
        match self {
            AppError::Usage(_) => 2,
            AppError::Failed(_) => 1,
            AppError::Breached(_) => 3,
            AppError::NothingMeasured(_) => 4,
            AppError::EndpointLost(_) => 5,
            AppError::StdoutClosed => 0,
            AppError::Said(e) => e.exit_code(),
        }
    }

    /// Whether the process ends without a line on stderr.
    pub fn is_quiet(&self) -> bool {
        matches!(self, AppError::StdoutClosed | AppError::Said(_))
    }

    /// The one line the process prints on stderr for this error. Scrubbed whole: it may
    /// quote a server, a file or a URL given with its password.
    pub fn line(&self) -> String {
        format!("error: {}", encbench_core::scrub::text(&self.to_string()))
    }
}

impl From<SetupError> for AppError {
    fn from(e: SetupError) -> AppError {
        match e {
            SetupError::Usage { .. } => AppError::Usage(e.to_string()),
            SetupError::Failed(m) => AppError::Failed(m),
        }
    }
}

pub(crate) fn usage(flag: &str, msg: impl std::fmt::Display) -> AppError {
    AppError::Usage(format!("{flag}: {msg}"))
}

/// Where a run's tables go, and whether it is a terminal (the live screen needs one).
pub struct Stdout<'a> {
    pub writer: &'a mut dyn Write,
    pub is_terminal: bool,
}

impl Stdout<'_> {
    fn print(&mut self, text: &str) -> Result<(), AppError> {
        write_all(self.writer, text).map_err(|e| stdout_error(&e, self.is_terminal))
    }

    /// Prints a run's tables: on stdout, or on stderr when the export took stdout
    /// (`export_to`, `-o -`), so that stdout holds the JSON alone.
    fn tables(&mut self, export_to: Option<&Path>, text: &str) -> Result<(), AppError> {
        if export_to.is_some_and(is_stdout) {
            crate::stderr::say_raw(format_args!("{text}"));
            return Ok(());
        }
        self.print(text)
    }
}

/// `-o -`: the export goes to stdout.
pub(crate) fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Checks up front that an export can be written where `flag` says (stdout always can).
/// `--report` must be a file that can be written (not stdout: that is the export's or the
/// tables').
pub(super) fn check_report_path(path: &std::path::Path) -> Result<(), AppError> {
    if is_stdout(path) {
        return Err(usage(
            "--report",
            "writes a file: give a name (report --format html prints a page to stdout)",
        ));
    }
    check_export_path("--report", path)
}

/// The run's HTML report, when `--report` asked for one: written atomically, like the export.
pub(super) fn write_report(
    path: Option<&std::path::Path>,
    name: &str,
    export: &encbench_core::export::Export,
) -> Result<(), AppError> {
    let Some(path) = path else {
        return Ok(());
    };
    let page = encbench_report::html::render(&[(name.to_string(), export.clone())]);
    encbench_core::export::write_text_atomic(path, &page)
        .map_err(|e| AppError::Failed(format!("--report {}: cannot write: {e}", path.display())))?;
    crate::stderr::say(format_args!("report written to {}", path.display()));
    Ok(())
}

/// A server up and not ready yet, said on stderr: a run and a comparison wait for it before
/// their screen opens, a tune without one while it goes.
fn say_waiting(w: &encbench_wire::client::Waiting) {
    crate::stderr::say(format_args!("{w}"));
}

fn check_export_path(flag: &str, path: &Path) -> Result<(), AppError> {
    if is_stdout(path) {
        return Ok(());
    }
    encbench_core::export::check_writable(path, |p| {
        Ok(rustix::fs::access(p, rustix::fs::Access::WRITE_OK)?)
    })
    .map_err(|e| usage(flag, format!("{}: cannot write: {e}", path.display())))
}

/// Writes `text` to stdout `w` whole: a closed pipe is `StdoutClosed`, any other failure
/// (a full disk) is one line and exit code 1. Never `print!`, which panics on either.
pub fn out(w: &mut dyn Write, text: &str) -> Result<(), AppError> {
    write_all(w, text).map_err(|e| stdout_error(&e, false))
}

fn write_all(w: &mut dyn Write, text: &str) -> std::io::Result<()> {
    w.write_all(text.as_bytes()).and_then(|()| w.flush())
}

/// A reader gone is not a failure: `| head` closed the pipe, or the terminal stdout was (the
/// live screen's, its tmux session killed) went away with whoever would have read the tables.
fn stdout_error(e: &std::io::Error, terminal: bool) -> AppError {
    if e.kind() == std::io::ErrorKind::BrokenPipe || (terminal && crate::stderr::terminal_gone(e)) {
        AppError::StdoutClosed
    } else {
        AppError::Failed(format!("cannot write to stdout: {e}"))
    }
}

pub async fn main(cli: Cli, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    remember_url_passwords(&cli);
    match cli.command {
        Some(Sub::Serve(args)) => serve::main(args, stdout).await,
        Some(Sub::ColdStart(args)) => cold_start::main(args, stdout).await,
        Some(Sub::Compare(args)) => Box::pin(compare::main(*args, stdout)).await,
        Some(Sub::Report(args)) => report::main(args, stdout),
        Some(Sub::Tune(args)) => Box::pin(tune::main(*args, stdout)).await,
        Some(Sub::Completions(args)) => {
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut Cli::command(), "encbench-tui", &mut script);
            stdout.print(&String::from_utf8_lossy(&script))
        }
        Some(Sub::Man) => {
            let mut page = Vec::new();
            clap_mangen::Man::new(Cli::command())
                .render(&mut page)
                .map_err(|e| AppError::Failed(format!("cannot render the man page: {e}")))?;
            stdout.print(&String::from_utf8_lossy(&page))
        }
        None => Box::pin(run::main(cli.run, stdout)).await,
    }
}

/// Every URL the command line or the SDK's environment gives: their passwords are scrubbed
/// from whatever a server answers (one may echo the request's Authorization header).
fn remember_url_passwords(cli: &Cli) {
    let mut urls: Vec<&str> = Vec::new();
    let env: Vec<String> = ["AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME", "AWS_ENDPOINT_URL"]
        .into_iter()
        .filter_map(|k| std::env::var(k).ok())
        .collect();
    urls.extend(env.iter().map(String::as_str));
    match &cli.command {
        None => {
            urls.extend(cli.run.url.as_deref());
            urls.extend(cli.run.sagemaker.endpoint_url.as_deref());
            urls.extend(cli.run.server.metrics_url.as_deref());
        }
        Some(Sub::ColdStart(a)) => urls.extend(a.sagemaker.endpoint_url.as_deref()),
        Some(Sub::Compare(a)) => {
            urls.extend(a.endpoint_url.as_deref());
            // `url=…` and `endpoint-url=…` of each --target, before it is parsed: a target
            // that does not parse is reported quoting its text.
            let parts = a.targets.iter().flat_map(|t| t.split(','));
            urls.extend(parts.map(|p| p.split_once('=').map_or(p, |(_, v)| v.trim())));
        }
        Some(Sub::Tune(t)) => {
            // Its --url (placeholders and all): a password in it is the user's either way.
            let after = t
                .run
                .windows(2)
                .filter(|w| w[0] == "--url")
                .map(|w| w[1].as_str());
            let joined = t.run.iter().filter_map(|a| a.strip_prefix("--url="));
            urls.extend(after.chain(joined));
        }
        Some(Sub::Serve(_) | Sub::Report(_) | Sub::Completions(_) | Sub::Man) => {}
    }
    for u in urls {
        encbench_core::scrub::remember_url(u);
    }
}

fn sagemaker_settings(endpoint: &str, s: &SageMakerArgs) -> SageMakerSettings {
    SageMakerSettings {
        endpoint: endpoint.to_string(),
        region: s.region.clone(),
        profile: s.profile.clone(),
        endpoint_url: s.endpoint_url.clone(),
        target_container: s.target_container.clone(),
        inference_component: s.inference_component.clone(),
        target_model: s.target_model.clone(),
        target_variant: s.target_variant.clone(),
        content_type: "application/json".into(),
    }
}

/// `--fail-on` judged on the export's phases, recorded in it (config and outcome) before it
/// is written. `slo` without `--slo` could never be breached: refused up front.
fn judge_thresholds(
    export: &mut encbench_core::export::Export,
    t: &[encbench_core::thresholds::Threshold],
) {
    export.config["fail_on"] =
        serde_json::json!(t.iter().map(ToString::to_string).collect::<Vec<_>>());
    export.fail_on = encbench_core::thresholds::judge(t, &export.phases);
}

fn check_fail_on(
    fail_on: &crate::cli::FailOnArgs,
    slo: &crate::cli::SloArgs,
) -> Result<(), AppError> {
    let wants_slo = fail_on
        .thresholds
        .contains(&encbench_core::thresholds::Threshold::Slo);
    if wants_slo && slo.objectives.is_empty() {
        return Err(usage(
            "--fail-on",
            "slo fails when a phase misses --slo: give --slo too (--slo p99=200ms)",
        ));
    }
    Ok(())
}

/// `--fail-on failed` judges a tune's configurations: a run or a comparison has none.
fn only_tune_fails(fail_on: &crate::cli::FailOnArgs) -> Result<(), AppError> {
    if fail_on
        .thresholds
        .contains(&encbench_core::thresholds::Threshold::Failed)
    {
        return Err(usage(
            "--fail-on",
            "failed judges a tune's configurations (encbench-tui tune): a run has none",
        ));
    }
    Ok(())
}

/// After the export and the tables, on stderr: the warning when most requests failed, and
/// one line per breached threshold; exit code 3 when one was breached, 4 (before it) when
/// no measured request succeeded, 5 (before both) when the endpoint was lost and had not
/// come back.
fn verdict(export: &encbench_core::export::Export) -> Result<(), AppError> {
    // Each target's last phase says whether its endpoint was back by the end (a run has
    // one target; a comparison's phases each ran on an engine of their own).
    let mut last = std::collections::BTreeMap::new();
    for p in &export.phases {
        last.insert(p.target.as_deref(), p);
    }
    let lost = last
        .values()
        .find_map(|p| encbench_core::reach::still_lost(&p.endpoint_lost));
    let warning = encbench_core::thresholds::failure_warning(&export.phases);
    // Requests a stop abandoned are the user's doing, not the endpoint's failures.
    let refused = |p: &encbench_core::results::PhaseResult| {
        p.errors
            .iter()
            .any(|(k, n)| k != encbench_core::stats::ABANDONED && *n > 0)
    };
    let nothing = export.phases.iter().all(|p| p.ok == 0)
        && export.phases.iter().any(refused)
        && warning.is_some()
        && lost.is_none();
    if let Some(w) = warning.as_ref().filter(|_| !nothing) {
        crate::stderr::say(format_args!("{w}"));
    }
    let breached: Vec<_> = export.fail_on.iter().filter(|o| o.breached).collect();
    for o in &breached {
        crate::stderr::say(format_args!("{}", o.summary));
    }
    if let Some(span) = lost {
        return Err(AppError::EndpointLost(format!(
            "{} and had not come back when the load ended ({})",
            span.lost_line(),
            encbench_core::reach::attempts_failed(span.attempts)
        )));
    }
    if let Some(w) = warning.filter(|_| nothing) {
        return Err(AppError::NothingMeasured(
            w.trim_start_matches("warning: ").to_string(),
        ));
    }
    if breached.is_empty() {
        return Ok(());
    }
    Err(AppError::Breached(format!(
        "--fail-on: {} of {} thresholds breached",
        breached.len(),
        export.fail_on.len()
    )))
}

/// `-o -`: the export as the file would hold it, on stdout.
fn json_to_stdout<T: serde::Serialize>(
    flag: &str,
    export: &T,
    stdout: &mut Stdout<'_>,
) -> Result<(), AppError> {
    let json = serde_json::to_string_pretty(export)
        .map_err(|e| AppError::Failed(format!("{flag} -: cannot serialize: {e}")))?;
    stdout.print(&(json + "\n"))
}

/// Writes an export, saying where on stderr; `-` is stdout, written with nothing said.
fn write_export<T: serde::Serialize>(
    flag: &str,
    path: &Path,
    export: &T,
    stdout: &mut Stdout<'_>,
) -> Result<(), AppError> {
    if is_stdout(path) {
        return json_to_stdout(flag, export, stdout);
    }
    encbench_core::export::write_atomic(path, export)
        .map_err(|e| AppError::Failed(format!("{flag} {}: cannot write: {e}", path.display())))?;
    crate::stderr::say(format_args!("results written to {}", path.display()));
    Ok(())
}
