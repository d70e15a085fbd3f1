//! A run: the target prepared and checked, the engine driven by the live screen or headless,
//! the export written, and the tables printed from that export.

use super::{
    AppError, Stdout, check_export_path, is_stdout, sagemaker_config, usage, write_export,
};
use crate::cli::RunArgs;
use crate::signals::Abort;
use crate::tui::{self, state::Info};
use encbench_core::arrival::Pace;
use encbench_core::export::{Export, write_atomic};
use encbench_core::input::Shape;
use encbench_core::plan::{RunPlan, StopAt};
use encbench_core::results::RunReport;
use encbench_load::engine::{Engine, EngineSetup};
use encbench_load::setup::{self, Address, FormatSettings, PreparedTarget, TargetSettings};
use encbench_report::{ReportFormat, render};
use encbench_serve::{self as serve, RunningServer, ServeConfig};
use encbench_wire::tokenize::TokenCounter;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Where the run sends its requests, and `--demo`'s reference endpoint, started here and
/// kept alive by the caller for as long as the run uses it.
async fn address(a: &RunArgs) -> Result<(Address, Option<RunningServer>), AppError> {
    // `cli::parse` refuses a run that names none of the three, and clap two of them.
    Ok(match (&a.endpoint, &a.url) {
        (Some(name), _) => (
            Address::SageMaker(sagemaker_config(name, &a.sagemaker)),
            None,
        ),
        (None, Some(url)) => (Address::Url(url.clone()), None),
        (None, None) => {
            let server = serve::start(ServeConfig::default(), TokenCounter::shipped())
                .await
                .map_err(|e| {
                    AppError::Failed(format!("--demo: cannot start the reference endpoint: {e}"))
                })?;
            (Address::Demo(server.url()), Some(server))
        }
    })
}

/// What `setup` needs of the command line.
fn target_settings(a: &RunArgs, address: Address) -> TargetSettings {
    let max_concurrency = a
        .concurrency_levels
        .iter()
        .copied()
        .chain([a.concurrency])
        .max()
        .unwrap_or(1);
    TargetSettings {
        address,
        format: FormatSettings {
            format: a.engine,
            model: a.model.clone(),
            vllm_api: a.vllm_api,
            binary: a.binary,
            text_input: a.text_input.clone(),
            input_ids_name: a.input_ids_name.clone(),
            attention_mask_name: a.attention_mask_name.clone(),
            token_type_ids_name: a.token_type_ids_name.clone(),
            output_name: a.output_name.clone(),
            pooling: a.http.pooling,
            pretokenize: a.pretokenize,
        },
        tokenizer: a.tokenizer.clone(),
        shape: Shape {
            pad_to_max: a.pad_to_max,
            max_len: a.max_len,
        },
        texts: a.texts.clone(),
        accuracy: (!a.no_accuracy).then(|| (a.accuracy_samples.clone(), a.labels.clone())),
        instance_type: a.instance_type.clone(),
        price_per_hour: a.price_per_hour,
        seed: a.seed,
        max_concurrency,
        batch_size: a.batch_size,
        sweep_batch_sizes: if a.sweep_batch {
            a.batch_sizes.clone()
        } else {
            vec![]
        },
        timeout: Duration::from_secs_f64(a.timeout),
        ready_timeout: Duration::from_secs_f64(a.ready_timeout),
        headers: a.http.headers.clone(),
        bearer_token_env: a.http.bearer_token_env.clone(),
    }
}

fn client_threads(a: &RunArgs) -> usize {
    a.client_threads
        .unwrap_or_else(encbench_load::engine::client_threads::default_count)
}

/// Every option that shaped the run, as the export records it; never credentials.
fn config_json(a: &RunArgs, p: &PreparedTarget) -> Value {
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    json!({
        "target": p.target_config,
        "n": a.n,
        "warmup": a.warmup,
        "duration_s": a.duration,
        "batch_size": a.batch_size,
        "sweep_batch": a.sweep_batch,
        "batch_sizes": a.batch_sizes,
        "concurrency": a.concurrency,
        "sweep_concurrency": a.sweep_concurrency,
        "concurrency_levels": a.concurrency_levels,
        "request_rate": a.request_rate.0,
        "burstiness": a.burstiness.is_finite().then_some(a.burstiness),
        "closed_loop": a.request_rate.0.is_none(),
        "pad_to_max": a.pad_to_max,
        "max_len": a.max_len,
        "pretokenize": a.pretokenize,
        "natural_tokens_per_input": (p.natural_tokens * 10.0).round() / 10.0,
        "texts": path(&a.texts),
        "tokenizer": path(&a.tokenizer),
        "timeout_s": a.timeout,
        "client_threads": client_threads(a),
        "seed": p.seed,
        "accuracy_samples": path(&a.accuracy_samples),
        "accuracy_check": !a.no_accuracy,
        "labels": a.labels,
        "instance_type": p.price.as_ref().map(|p| p.0.clone()),
        "price_per_hour_usd": p.price.as_ref().map(|p| p.1),
        "knee": a.knee,
        "slo": a.slo.objectives.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "find_capacity": a.slo.find_capacity,
        "capacity_precision": a.slo.capacity_precision,
        "min_probe_requests": a.slo.min_probe_requests,
        "stability": a.slo.stability,
        "max_probe_secs": a.slo.max_probe_secs,
        "until_stable": a.slo.until_stable,
        "metrics_url": a.server.metrics_url.as_deref().map(encbench_core::scrub::url),
        "metrics": a.server.metrics,
        "cloudwatch_wait_s": a.server.cloudwatch_wait,
        "fail_on": a.fail_on.thresholds.iter().map(ToString::to_string).collect::<Vec<_>>(),
    })
}

pub(super) async fn main(a: RunArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    // A run of an hour must not end with results that cannot be saved.
    if let Some(p) = &a.export {
        check_export_path("--export", p)?;
    }
    if let Some(p) = &a.report {
        super::check_report_path(p)?;
    }
    super::check_fail_on(&a.fail_on, &a.slo)?;
    if a.slo.find_capacity && a.sweep_concurrency {
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
    let hosts = super::hosts::hosts(&a)?;
    let (address, demo_server) = address(&a).await?;
    let p = setup::prepare(&target_settings(&a, address)).await?;
    let mut config = config_json(&a, &p);
    super::hosts::record(&mut config, &hosts);
    if let Err(e) = p.target.check_ready().await {
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
            error: Some(encbench_core::scrub::text(&e.to_string())),
            notices: vec![],
        };
        let export = Export::new(&report, config);
        super::write_report(a.report.as_deref(), &export_name(&a), &export)?;
        if let Some(path) = &a.export {
            write_export("--export", path, &export, stdout)?;
        }
        return Err(usage(p.flag, e));
    }

    // A shard is one of several hosts sending one schedule: no live keys change its part.
    let live = !a.headless && stdout.is_terminal && hosts.shard.is_none();
    if !live {
        for note in &a.notes {
            encbench_core::failure::say(format_args!("{note}"));
        }
    }
    let pace = Pace {
        rate_per_s: a.request_rate.0,
        burstiness: a.burstiness,
    };
    let stop = match a.duration {
        Some(d) => StopAt::Duration(Duration::from_secs_f64(d)),
        None => StopAt::Count(a.n),
    };
    let plan = RunPlan {
        batch_size: a.batch_size,
        concurrency: a.concurrency,
        warmup: a.warmup,
        stop,
        sweep_batch: a.sweep_batch,
        sweep_concurrency: a.sweep_concurrency,
        batch_sizes: a.batch_sizes.clone(),
        concurrency_levels: a.concurrency_levels.clone(),
        live,
        until_stable: a.slo.until_stable.then(|| a.slo.probe_rule()),
    };
    let info = Info {
        target: p.shown.clone(),
        format: p.format.name().to_string(),
        simulated: a.demo,
        knee: a.knee,
        window_s: a.window,
    };
    let _demo_server = demo_server;
    let metrics = a.server.metrics_url.as_deref().map(|u| {
        encbench_wire::client::metrics::Scraper::new(
            u,
            a.model.as_deref(),
            a.server.metrics.clone(),
        )
        .map(std::sync::Arc::new)
        .map_err(|e| AppError::Failed(format!("--metrics-url: {e}")))
    });
    let metrics = metrics.transpose()?;
    let setup = EngineSetup {
        target: p.target,
        texts: p.texts,
        format: p.format,
        warmup_timeout: Duration::from_secs_f64(a.warmup_timeout),
        shape: p.shape,
        pace,
        plan,
        seed: p.seed,
        accuracy: p.accuracy,
        price_per_hour: p.price.as_ref().map(|p| p.1),
        window_s: a.window,
        tick: Duration::from_millis(1000 / a.fps.clamp(1, 60)),
        client_threads: client_threads(&a),
        slo: a.slo.slo(),
        search: (!a.slo.objectives.is_empty()).then(|| encbench_load::engine::SearchSetup {
            precision: a.slo.capacity_precision,
            probe: a.slo.probe_rule(),
            at_start: a.slo.find_capacity,
        }),
        metrics,
    };
    let engine = Engine::start_among(hosts, setup);
    let report = if live {
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
        tui::run(engine, info, a.fps, export_now, abort_export(&a, &config))
            .await
            .map_err(|e| AppError::Failed(format!("cannot drive the terminal: {e}")))?
    } else {
        crate::headless::run(engine, abort_export(&a, &config)).await
    };
    let mut report = report;
    if let (Some(wait), Some(name)) = (a.server.cloudwatch_wait, &a.endpoint) {
        super::cloudwatch::attach(&mut report, &sagemaker_config(name, &a.sagemaker), wait).await;
    }
    // A panic anywhere in the run (a request task, the accuracy check) is a failure too.
    report.error = encbench_core::failure::describe(report.error);
    let failed = report.error.clone();
    let mut export = Export::new(&report, config);
    super::judge_thresholds(&mut export, &a.fail_on);
    let written = a
        .export
        .as_ref()
        .map_or(Ok(()), |path| {
            write_export("--export", path, &export, stdout)
        })
        .and(super::write_report(
            a.report.as_deref(),
            &export_name(&a),
            &export,
        ));
    // Also after the live screen: the tables stay in the scrollback. Also when the export
    // failed: the tables are then all that is left of what was measured.
    let printed = stdout.tables(
        a.export.as_deref(),
        &render(&[(export_name(&a), export.clone())], ReportFormat::Terminal),
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

/// A second interrupt: the export of what was measured so far, then the process ends.
fn abort_export(a: &RunArgs, config: &Value) -> Abort {
    let (path, config) = (a.export.clone(), config.clone());
    let (page, name) = (a.report.clone(), export_name(a));
    Box::new(move |report| {
        if let Err(e) =
            super::write_report(page.as_deref(), &name, &Export::new(report, config.clone()))
        {
            encbench_core::failure::say(format_args!("{}", e.line()));
        }
        let Some(path) = &path else {
            return encbench_core::failure::say(format_args!(
                "interrupted twice: exiting without waiting"
            ));
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
                encbench_core::failure::say(format_args!(
                    "interrupted twice: exiting without waiting"
                ));
            }
            Err(e) => encbench_core::failure::say(format_args!("{}", e.line())),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_run_checks_only_its_own_batch_size_against_the_body_limit() {
        let cli = crate::cli::parse([
            "encbench-tui",
            "--batch-size",
            "4",
            "--url",
            "http://localhost:8080",
        ])
        .unwrap();
        let s = target_settings(&cli.run, Address::Url("http://localhost:8080".into()));
        assert_eq!((s.batch_size, s.sweep_batch_sizes.len()), (4, 0));
        assert_eq!(s.address, Address::Url("http://localhost:8080".into()));
    }
}
