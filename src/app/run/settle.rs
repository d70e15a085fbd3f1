//! A run's command line settled once: every check of flags against each other, the hosts
//! and the shard, the replay's file, the records' path, the target's settings, the
//! workload, the export's record and the front-end. Nothing after `settle` reads `RunArgs`:
//! each step of the run takes its part of the `RunSpec`.

use super::super::{AppError, check_export_path};
use super::{flags, records, replay, settings};
use crate::cli::RunArgs;
use encbench_core::export::RunConfig;
use encbench_core::lengths::LengthMix;
use encbench_core::thresholds::Threshold;
use encbench_load::engine::Hosts;
use encbench_load::setup::{Address, TargetSettings};
use encbench_serve::ServeSettings;
use encbench_wire::client::sagemaker::SageMakerSettings;
use std::path::PathBuf;

/// Everything a run is, decided before anything is sent.
pub(in crate::app) struct RunSpec {
    pub target: TargetSettings,
    /// `--demo`'s reference endpoint, to start before the target is prepared.
    pub demo: Option<ServeSettings>,
    pub hosts: Hosts,
    pub replay: Option<replay::ReplaySpec>,
    pub workload: settings::Workload,
    /// The export's `config`, its resolved fields filled once the target is prepared.
    pub record: RunConfig,
    pub front: FrontSpec,
    pub outputs: OutputSpec,
}

/// Which front-end drives the engine, and what it shows besides the engine's snapshots.
pub(in crate::app) struct FrontSpec {
    /// The live screen, not headless lines.
    pub live: bool,
    pub fps: u64,
    pub demo: bool,
    pub knee: f64,
    pub window_s: usize,
    pub lengths: Option<LengthMix>,
    pub notes: FlagNotes,
}

/// Flags given that the run will not use: said by a headless run before its load.
pub(in crate::app) struct FlagNotes {
    /// Known from the command line alone.
    pub said: Vec<String>,
    pub pretokenize: bool,
    pub text_input: bool,
    /// The triton engine's flags given, said once the family is known.
    pub triton_flags: Vec<String>,
}

/// Where the results go, and what judges them.
pub(in crate::app) struct OutputSpec {
    pub export: Option<PathBuf>,
    pub report: Option<PathBuf>,
    pub records: Option<PathBuf>,
    pub fail_on: Vec<Threshold>,
    /// `--cloudwatch-wait` of an `--endpoint` run: how long, and which endpoint.
    pub cloudwatch: Option<(f64, SageMakerSettings)>,
}

/// The run the command line asks for, or the one line that says why it cannot be.
/// `terminal`: stdout is one (the live screen needs it).
pub(in crate::app) fn settle(a: RunArgs, terminal: bool) -> Result<RunSpec, AppError> {
    check_before_sending(&a)?;
    let replay = replay::read(&a)?;
    let hosts = super::super::hosts::hosts(&a)?;
    // A shard is one of several hosts sending one schedule: no live keys change its part.
    let screen = !a.headless && terminal && hosts.shard.is_none();
    records::check_path(&a, screen)?;
    let (target, demo) = settings::target(&a);
    super::super::target::check_fit(&target)?;
    // Nor a replay's: its times are the recording's.
    let live = screen && replay.is_none();
    Ok(RunSpec {
        demo,
        workload: settings::workload(&a, live),
        record: settings::record(&a, &hosts),
        front: front(&a, live),
        outputs: outputs(a, &target.address),
        target,
        hosts,
        replay,
    })
}

/// What is refused before anything is sent: a run of an hour must not end with results that
/// cannot be saved, nor with flags that could not work together.
fn check_before_sending(a: &RunArgs) -> Result<(), AppError> {
    flags::check_together(a)?;
    if let Some(p) = &a.export {
        check_export_path("--export", p)?;
    }
    if let Some(p) = &a.report {
        super::super::check_report_path(p)?;
    }
    super::super::check_fail_on(&a.fail_on, &a.slo)?;
    super::super::only_tune_fails(&a.fail_on)
}

fn front(a: &RunArgs, live: bool) -> FrontSpec {
    FrontSpec {
        live,
        fps: a.fps,
        demo: a.demo,
        knee: a.knee,
        window_s: a.window,
        lengths: a.input_tokens,
        notes: FlagNotes {
            said: flags::notes(a),
            pretokenize: a.pretokenize,
            text_input: a.text_input.is_some(),
            triton_flags: flags::triton_flags(a),
        },
    }
}

/// The last of the command line: what is left of it goes where the results go. CloudWatch
/// reads the metrics of the endpoint the run sends to (`check_together` refuses it without).
fn outputs(a: RunArgs, address: &Address) -> OutputSpec {
    let endpoint = match address {
        Address::SageMaker(endpoint) => Some(endpoint.clone()),
        _ => None,
    };
    let cloudwatch = a.server.cloudwatch_wait.zip(endpoint);
    OutputSpec {
        export: a.export,
        report: a.report,
        records: a.records,
        fail_on: a.fail_on.thresholds,
        cloudwatch,
    }
}

impl FlagNotes {
    /// Every note, once the run's family is known (given, or found at the URL): some flags
    /// mean something to some families only.
    pub fn for_engine(&self, engine: &str) -> Vec<String> {
        let mut notes = self.said.clone();
        if self.pretokenize && (engine == "hf" || self.text_input) {
            notes.push(
                "note: --pretokenize applies to token ids tokenized on the client (--engine triton without --text-input, vllm, or a server that takes ids); this run sends text".into(),
            );
        }
        if engine != "triton" {
            for flag in &self.triton_flags {
                notes.push(format!(
                    "note: {flag} applies to --engine triton; it has no effect with --engine {engine}"
                ));
            }
        }
        notes
    }
}
