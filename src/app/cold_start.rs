//! `cold-start`: first-request latency of a SageMaker endpoint after idleness.

use super::{AppError, Stdout, check_export_path, sagemaker_settings, usage, write_export};
use crate::cli::ColdStartArgs;
use crate::signals::ABORT_EXIT_CODE;
use encbench_core::input::Shape;
use encbench_load::cold_start::{self, ColdStartExport, ColdStartProbe, Progress};
use encbench_report::{Loaded, ReportFormat, render_loaded};
use encbench_wire::client::Target;
use encbench_wire::client::sagemaker::{SageMakerSettings, SageMakerTarget};
use encbench_wire::payload::{Format, HfFormat};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// The first SIGINT/SIGTERM; a second one while the attempts so far are being written
/// (a FIFO nobody reads yet) ends the process at once.
async fn stop() {
    let mut signals = crate::signals::signals();
    signals.recv().await;
    crate::stderr::say(format_args!(
        "\nstopping: writing the attempts so far (again to exit at once)"
    ));
    tokio::spawn(async move {
        signals.recv().await;
        crate::stderr::say(format_args!("interrupted twice: exiting without waiting"));
        std::process::exit(ABORT_EXIT_CODE)
    });
}

/// The probe's progress on stderr: the idle wait counted down in place on a terminal, and
/// for a log a line every ten seconds; each failed attempt a line.
struct Shown {
    tty: bool,
    first: bool,
}

impl Shown {
    fn show(&mut self, p: Progress<'_>) {
        match p {
            Progress::IdleLeft(left) => {
                let line = format!("idle wait: {} s left", left.as_secs_f64().ceil());
                if self.tty {
                    crate::stderr::say_raw(format_args!("\r{line}\x1b[K"));
                } else if self.first || left.as_secs().is_multiple_of(10) {
                    // The first line at once: up to ten silent seconds look like a hang.
                    crate::stderr::say(format_args!("{line}"));
                }
                self.first = false;
            }
            Progress::IdleOver if self.tty => crate::stderr::say(format_args!("")),
            Progress::IdleOver => {}
            Progress::Failed {
                attempt,
                failure,
                after,
            } => {
                let said = failure
                    .words()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                crate::stderr::say(format_args!(
                    "attempt {attempt}: {} after {:.1} s{said}",
                    failure.kind.key(),
                    after.as_secs_f64()
                ));
            }
        }
    }
}

/// A cold-start probe as its command line settles it: nothing after `settle` reads
/// `ColdStartArgs`.
struct ColdStartSpec {
    endpoint: SageMakerSettings,
    shape: Shape,
    timeout: Duration,
    probe: ColdStartProbe,
    /// `--cloudwatch-wait`: how long CloudWatch is given to publish the attempts' metrics.
    cloudwatch: Option<f64>,
    export: Option<PathBuf>,
    /// `--give-up` as given, for the line that says it passed.
    give_up_s: f64,
}

fn settle(a: ColdStartArgs) -> Result<ColdStartSpec, AppError> {
    // A probe after an idle wait of fifteen minutes must not end with a result that cannot
    // be saved.
    if let Some(p) = &a.export {
        check_export_path("--export", p)?;
    }
    Ok(ColdStartSpec {
        endpoint: sagemaker_settings(&a.endpoint, &a.sagemaker),
        shape: Shape {
            pad_to_max: a.pad_to_max,
            max_len: a.max_len,
        },
        timeout: Duration::from_secs_f64(a.timeout),
        probe: ColdStartProbe {
            idle_wait: Duration::from_secs_f64(a.idle_wait),
            retry_interval: Duration::from_secs_f64(a.retry_interval),
            give_up: Duration::from_secs_f64(a.give_up),
            steady_n: a.n,
        },
        cloudwatch: a.cloudwatch_wait,
        export: a.export,
        give_up_s: a.give_up,
    })
}

pub(super) async fn main(a: ColdStartArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    let spec = settle(a)?;
    let samples = encbench_core::input::shipped_samples();
    let body = HfFormat::new(spec.shape).prepare(&[&samples[0].input()]);
    let target = SageMakerTarget::new(spec.endpoint.clone(), 1, spec.timeout, body.clone()).await;
    // A missing region or credentials would fail every attempt until --give-up, in the
    // SDK's words; said now, it is one line naming the fix.
    target
        .check_config()
        .await
        .map_err(|e| usage("--endpoint", e))?;
    let mut shown = Shown {
        tty: std::io::stderr().is_terminal(),
        first: true,
    };
    let probe = &spec.probe;
    let result = cold_start::run(&target, body, probe, stop(), |p| shown.show(p)).await;
    let mut export = ColdStartExport::new(&target.describe(), probe, &result);
    let first_attempt = result.started_at.as_deref().and_then(|t| {
        time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
    });
    if let (Some(wait), Some(start)) = (spec.cloudwatch, first_attempt) {
        export.cloudwatch = super::cloudwatch::read_after(&spec.endpoint, wait, start.into()).await;
    }
    let written = spec.export.as_ref().map_or(Ok(()), |path| {
        write_export("--export", path, &export, stdout)
    });
    // The table also when the export failed: it is then all that is left of the attempts.
    let table = render_loaded(
        &[(String::new(), Loaded::ColdStart(export))],
        ReportFormat::Terminal,
    )
    .map_err(AppError::Failed)?;
    let printed = stdout.tables(spec.export.as_deref(), &table);
    written?;
    if result.first_success.is_none() && !result.stopped_early {
        return Err(AppError::Failed(format!(
            "no success within --give-up {} s ({})",
            spec.give_up_s,
            encbench_core::text::count(result.attempts, "attempt")
        )));
    }
    printed
}
