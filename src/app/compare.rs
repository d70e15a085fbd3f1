//! `compare`: prepare every target as a plain run would, check that all are ready before
//! anything is measured, then drive the comparison from the live screen or headless.

use super::run::OutputSpec;
use super::{AppError, Stdout, check_export_path, is_stdout, usage, write_export};
use crate::cli::CompareArgs;
use encbench_core::export::{Export, write_atomic};
use encbench_load::compare::{self, CompareSpec, CompareView, Entry, RowState, spec};
use encbench_load::setup::{self, SetupError};
use encbench_report::{ReportFormat, render};
use encbench_serve::{self as serve, ServeSettings, model::ServiceModel};
use encbench_wire::tokenize::TokenCounter;
use std::time::Duration;
use tokio::sync::watch;

/// The workload of every target, as `compare` takes it.
fn compare_spec(a: &CompareArgs) -> CompareSpec {
    CompareSpec {
        batch_sizes: a.batch_sizes.clone(),
        batch_concurrency: a.concurrency,
        repeat: a.repeat,
        concurrency_levels: if a.no_concurrency {
            vec![]
        } else {
            a.concurrency_levels.clone()
        },
        n: a.n,
        warmup: a.warmup,
        pad_to_max: !a.no_pad_to_max,
        max_len: a.max_len,
        order: a.order,
        format: a.engine,
        model: a.model.clone(),
        instance_type: a.instance_type.clone(),
        texts: a.texts.clone(),
        tokenizer: a.tokenizer.clone(),
        timeout: Duration::from_secs_f64(a.timeout),
        warmup_timeout: Duration::from_secs_f64(a.warmup_timeout),
        ready_timeout: Duration::from_secs_f64(a.ready_timeout),
        seed: a.seed,
        accuracy_samples: a.accuracy_samples.clone(),
        accuracy_check: !a.no_accuracy,
        labels: a.labels.clone(),
        region: a.region.clone(),
        profile: a.profile.clone(),
        endpoint_url: a.endpoint_url.clone(),
        slo: a.slo.slo(),
        search: (!a.slo.objectives.is_empty()).then(|| encbench_load::engine::SearchSpec {
            precision: a.slo.capacity_precision,
            probe: a.slo.probe_rule(),
            at_start: true,
        }),
        pooling: a.http.pooling,
        api: a.api,
        task: a.task,
        rerank_samples: a.rerank_samples.clone(),
        min_tau: a.min_tau,
        headers: a.http.headers.clone(),
        bearer_token_env: a.http.bearer_token_env.clone(),
    }
}

/// A comparison as its command line settles it: nothing after `settle` reads `CompareArgs`.
struct Comparison {
    /// `--demo`'s reference endpoints to start first, each this one with its own service
    /// model: the first targets.
    demo: Option<ServeSettings>,
    targets: Vec<spec::TargetSpec>,
    workload: CompareSpec,
    outputs: OutputSpec,
    live: bool,
}

pub(super) async fn main(a: CompareArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    let Comparison {
        demo,
        mut targets,
        workload: s,
        outputs,
        live,
    } = settle(a, stdout.is_terminal)?;
    let _demo_servers = match demo {
        Some(base) => start_demos(&base, &mut targets).await?,
        None => vec![],
    };
    let entries = prepare(&s, &targets).await?;
    for (t, e) in targets.iter().zip(&entries) {
        if let Err(err) = e.prepared.target.check_ready(&super::say_waiting).await {
            return Err(usage(&format!("{} {}", t.flag, t.name), err));
        }
    }
    let (view_tx, view_rx) = watch::channel(compare::initial_view(&s, &entries));
    let (stop_tx, stop_rx) = watch::channel(false);
    // A second interrupt: write the phases finished so far; the front-end then exits at once.
    let abort =
        |v: &CompareView| write_interim(&outputs, &compare::interim_export(&s, &entries, v));
    let work = compare::run(&s, &entries, view_tx, stop_rx);
    let mut export = if live {
        crate::tui::compare::run(view_rx, stop_tx, work, &abort)
            .await
            .map_err(|e| AppError::Failed(format!("cannot drive the terminal: {e}")))?
    } else {
        headless(view_rx, stop_tx, work, &abort).await
    };
    export.error = encbench_core::failure::describe(export.error);
    finish(&outputs, export, stdout)
}

/// Every check before anything starts: the thresholds, the targets, where results go; and
/// every target's flags weighed. `terminal`: stdout is one (the live screen needs it).
fn settle(a: CompareArgs, terminal: bool) -> Result<Comparison, AppError> {
    super::check_fail_on(&a.fail_on, &a.slo)?;
    super::only_tune_fails(&a.fail_on)?;
    // The demo's targets hold their place (and their names) until their endpoints start.
    let demo: Vec<_> = (spec::DEMO.iter())
        .filter(|_| a.demo)
        .map(|&(name, _, _, instance)| spec::local(name, String::new(), instance))
        .collect();
    let targets = spec::targets(demo, &a.targets, [&a.mc, &a.ic, &a.lmi])
        .map_err(|(flag, msg)| usage(&flag, msg))?;
    if let Some(p) = &a.export {
        check_export_path("--export", p)?;
    }
    if let Some(p) = &a.report {
        super::check_report_path(p)?;
    }
    // One seed for all: every target gets the same inputs in the same order.
    let workload = CompareSpec {
        seed: Some(a.seed.unwrap_or_else(rand::random)),
        ..compare_spec(&a)
    };
    Ok(Comparison {
        demo: a.demo.then(|| super::run::demo_config(a.task)),
        targets,
        workload,
        live: !a.headless && terminal,
        outputs: OutputSpec {
            export: a.export,
            report: a.report,
            records: None,
            fail_on: a.fail_on.thresholds,
            cloudwatch: None,
        },
    })
}

/// `--demo`: the three reference endpoints of the co-hosting schemes, started, their
/// targets given their URLs.
async fn start_demos(
    base: &ServeSettings,
    targets: &mut [spec::TargetSpec],
) -> Result<Vec<serve::RunningServer>, AppError> {
    let mut servers = Vec::new();
    for ((_, base_ms, per_token_ms, _), target) in spec::DEMO.into_iter().zip(targets) {
        let cfg = ServeSettings {
            workers: 1,
            service: ServiceModel {
                base_ms,
                per_token_ms,
                saturation_tokens: 512,
            },
            ..base.clone()
        };
        let server = serve::start(cfg, TokenCounter::shipped())
            .await
            .map_err(|e| {
                AppError::Failed(format!("--demo: cannot start a reference endpoint: {e}"))
            })?;
        target.url = Some(server.url());
        servers.push(server);
    }
    Ok(servers)
}

/// Every target prepared as a plain run would be; the first that cannot be is named.
async fn prepare(s: &CompareSpec, specs: &[spec::TargetSpec]) -> Result<Vec<Entry>, AppError> {
    // Every target's flags weighed before the first is prepared.
    for t in specs {
        super::target::check_fit(&spec::target_settings(s, t))
            .map_err(|e| AppError::Usage(format!("{} {}: {e}", t.flag, t.name)))?;
    }
    let mut entries = Vec::with_capacity(specs.len());
    for t in specs {
        let named = |e: SetupError| AppError::Usage(format!("{} {}: {e}", t.flag, t.name));
        let prepared = setup::prepare(&spec::target_settings(s, t))
            .await
            .map_err(named)?;
        if let Some(found) = &prepared.found {
            crate::stderr::say(format_args!("{}: {}", t.name, found.line()));
        }
        let metrics = t.metrics_url.as_deref().map(|u| {
            encbench_wire::client::metrics::Scraper::new(u, t.model.as_deref(), vec![])
                .map(std::sync::Arc::new)
                .map_err(|e| AppError::Failed(format!("{} {}: metrics-url: {e}", t.flag, t.name)))
        });
        entries.push(Entry {
            name: t.name.clone(),
            prepared,
            metrics: metrics.transpose()?,
        });
    }
    Ok(entries)
}

/// What a second interrupt leaves: the report page and the export of the phases so far.
fn write_interim(a: &OutputSpec, interim: &Export) {
    if a.report.is_some()
        && let Err(e) = super::write_report(a.report.as_deref(), "compare", interim)
    {
        crate::stderr::say(format_args!("{}", e.line()));
    }
    let Some(path) = &a.export else {
        return;
    };
    if is_stdout(path) {
        let mut out = std::io::stdout();
        let mut stdout = Stdout {
            is_terminal: false,
            writer: &mut out,
        };
        if let Err(e) = super::json_to_stdout("--export", interim, &mut stdout) {
            crate::stderr::say(format_args!("{}", e.line()));
        }
        return;
    }
    match write_atomic(path, interim) {
        Ok(()) => crate::stderr::say(format_args!(
            "interrupted twice: results so far written to {}",
            path.display()
        )),
        Err(e) => crate::stderr::say(format_args!(
            "error: --export {}: cannot write: {e}",
            path.display()
        )),
    }
}

/// The export written, the report page, the tables printed, and the exit it earned.
fn finish(a: &OutputSpec, mut export: Export, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    super::judge_thresholds(&mut export, &a.fail_on);
    let failed = export.error.clone();
    let written = a
        .export
        .as_ref()
        .map_or(Ok(()), |path| {
            write_export("--export", path, &export, stdout)
        })
        .and(super::write_report(a.report.as_deref(), "compare", &export));
    // Also when the export failed: the tables are then all that is left of what was measured.
    let printed = stdout.tables(
        a.export.as_deref(),
        &render(
            &[("compare".into(), export.clone())],
            ReportFormat::Terminal,
        ),
    );
    written.and(printed)?;
    match failed {
        Some(e) => Err(AppError::Failed(e)),
        None => super::verdict(&export),
    }
}

/// " rep 2/5" under `--repeat`.
fn rep_label(rep: Option<(u32, u32)>) -> String {
    rep.map(|(k, of)| format!(" rep {k}/{of}"))
        .unwrap_or_default()
}

fn progress_line(v: &CompareView) -> String {
    let running = v.rows.iter().find_map(|r| match &r.state {
        RowState::Running(step, rep) => Some((r, step, rep)),
        _ => None,
    });
    let what = match running {
        Some((r, step, rep)) => match &r.live {
            Some((state, s)) => format!(
                "{} {}{} {:<9} n {:>5}  p50 {:>7.1} ms  p99 {:>7.1} ms  {:>7.1} req/s  err {}",
                r.name,
                step.label(),
                rep_label(*rep),
                state.label(),
                s.n,
                s.latency.p50,
                s.latency.p99,
                s.req_per_s,
                s.errors.values().sum::<u64>()
            ),
            None => format!("{} {}{} starting", r.name, step.label(), rep_label(*rep)),
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

/// Progress on stderr every 5 s; SIGINT/SIGTERM stop the comparison, keeping what was
/// measured; a second one calls `abort`.
async fn headless(
    view: watch::Receiver<CompareView>,
    stop: watch::Sender<bool>,
    work: impl std::future::Future<Output = Export>,
    abort: &dyn Fn(&CompareView),
) -> Export {
    crate::headless::views::run(
        "the phase in progress ends",
        view,
        stop,
        work,
        abort,
        |v, due| {
            if due { vec![progress_line(v)] } else { vec![] }
        },
    )
    .await
}
