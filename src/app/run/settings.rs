//! The parts of a run's spec that the layers below are given, from its command line: the
//! target's settings, the workload the engine runs, and the export's record. Read only while
//! a run settles (and for each configuration of a tune).

use super::super::{AppError, sagemaker_settings};
use crate::cli::RunArgs;
use encbench_core::arrival::Pace;
use encbench_core::export::{RunConfig, TargetConfig, rfc3339};
use encbench_core::input::Shape;
use encbench_core::plan::{RunPlan, StopAt};
use encbench_core::ramp::Ramp;
use encbench_core::slo::Slo;
use encbench_load::engine::{EngineSpec, Hosts, SearchSpec};
use encbench_load::setup::{Address, FormatSettings, PreparedTarget, TargetSettings};
use encbench_serve::{self as serve, RunningServer, ServeSettings};
use encbench_wire::client::metrics::Scraper;
use encbench_wire::payload::RerankOptions;
use encbench_wire::tokenize::TokenCounter;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The settings with the address to send to: `demo`'s reference endpoint started here,
/// kept alive by the caller for as long as the run uses it.
pub(in crate::app) async fn start_demo(
    target: TargetSettings,
    demo: Option<ServeSettings>,
) -> Result<(TargetSettings, Option<RunningServer>), AppError> {
    let Some(config) = demo else {
        return Ok((target, None));
    };
    let server = serve::start(config, TokenCounter::shipped())
        .await
        .map_err(|e| {
            AppError::Failed(format!("--demo: cannot start the reference endpoint: {e}"))
        })?;
    let target = TargetSettings {
        address: Address::Demo(server.url()),
        ..target
    };
    Ok((target, Some(server)))
}

/// Where the run sends its requests; `None` for `--demo`, whose endpoint is not started yet.
fn address(a: &RunArgs) -> Option<Address> {
    // `cli::parse` refuses a run that names none of the three, and clap two of them.
    match (&a.endpoint, &a.url) {
        (Some(name), _) => Some(Address::SageMaker(sagemaker_settings(name, &a.sagemaker))),
        (None, Some(url)) => Some(Address::Url(url.clone())),
        (None, None) => None,
    }
}

/// The target's settings, and the reference endpoint a `--demo` run starts first: its
/// address is filled in once started (`start_demo`).
pub(in crate::app) fn target(a: &RunArgs) -> (TargetSettings, Option<ServeSettings>) {
    match address(a) {
        Some(address) => (target_settings(a, address), None),
        None => (
            target_settings(a, Address::Demo(String::new())),
            Some(demo_config(a.task)),
        ),
    }
}

/// The demo's reference endpoint: a cross-encoder for a rerank task, so its known answers
/// are a reranker's.
pub(crate) fn demo_config(task: Option<encbench_core::input::Task>) -> ServeSettings {
    ServeSettings {
        model_kind: (task == Some(encbench_core::input::Task::Rerank))
            .then_some(serve::ModelKind::Reranker),
        ..ServeSettings::default()
    }
}

/// What `setup` needs of the command line.
fn target_settings(a: &RunArgs, address: Address) -> TargetSettings {
    // Without --concurrency the live screen and a capacity search may go open loop, at
    // `OPEN_LOOP_CAP`; the pools only keep idle connections up to this, they hold none.
    let max_concurrency = a
        .concurrency_levels
        .iter()
        .copied()
        .chain([a.concurrency.unwrap_or(encbench_core::plan::OPEN_LOOP_CAP)])
        .max()
        .unwrap_or(1);
    TargetSettings {
        address,
        format: FormatSettings {
            format: a.engine,
            model: a.model.clone(),
            api: a.api,
            path: a.path.clone(),
            ready_path: a.ready_path.clone(),
            binary: a.binary,
            text_input: a.text_input.clone(),
            input_ids_name: a.input_ids_name.clone(),
            attention_mask_name: a.attention_mask_name.clone(),
            token_type_ids_name: a.token_type_ids_name.clone(),
            output_name: a.output_name.clone(),
            pooling: a.http.pooling,
            rerank: RerankOptions {
                top_n: a.top_n,
                return_documents: a.return_documents,
            },
            pretokenize: a.pretokenize,
        },
        tokenizer: a.tokenizer.clone(),
        shape: Shape {
            pad_to_max: a.pad_to_max,
            max_len: a.max_len,
        },
        texts: a.texts.clone(),
        input_tokens: a.input_tokens,
        accuracy: (!a.no_accuracy).then(|| (a.accuracy_samples.clone(), a.labels.clone())),
        instance_type: a.instance_type.clone(),
        price_per_hour: a.price_per_hour,
        seed: a.seed,
        max_concurrency,
        batch_size: a.batch_size,
        batch_size_given: a.batch_size_given,
        sweep_batch_sizes: if a.sweep_batch {
            a.batch_sizes.clone()
        } else {
            vec![]
        },
        task: a.task,
        rerank_samples: a.rerank_samples.clone(),
        timeout: Duration::from_secs_f64(a.timeout),
        ready_timeout: Duration::from_secs_f64(a.ready_timeout),
        headers: a.http.headers.clone(),
        bearer_token_env: a.http.bearer_token_env.clone(),
        grpc_connections: a.grpc_connections,
    }
}

fn client_threads(a: &RunArgs) -> usize {
    a.client_threads
        .unwrap_or_else(encbench_load::engine::client_threads::default_count)
}

/// Each as written on the command line (`p99=100ms`, `p99>200ms`).
fn strings<T: ToString>(values: &[T]) -> Vec<String> {
    values.iter().map(ToString::to_string).collect()
}

/// Every option that shaped the run, as the export records it; never credentials. What
/// the target resolves (its family, task, batch, seed, price) is filled in by `resolve`.
pub(in crate::app) fn record(a: &RunArgs, hosts: &Hosts) -> RunConfig {
    let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    RunConfig {
        target: TargetConfig::default(),
        n: a.n,
        warmup: a.warmup,
        duration_s: a.duration,
        task: a.task.unwrap_or_default(),
        batch_size: a.batch_size,
        sweep_batch: a.sweep_batch,
        batch_sizes: a.batch_sizes.clone(),
        concurrency: a.concurrency_cap(),
        concurrency_default: a.concurrency.is_none(),
        sweep_concurrency: a.sweep_concurrency,
        concurrency_levels: a.concurrency_levels.clone(),
        request_rate: a.request_rate.0,
        burstiness: a.burstiness.is_finite().then_some(a.burstiness),
        closed_loop: a.request_rate.0.is_none(),
        pad_to_max: a.pad_to_max,
        max_len: a.max_len,
        pretokenize: a.pretokenize,
        natural_tokens_per_input: 0.0,
        input_tokens: a.input_tokens,
        texts: path(&a.texts),
        tokenizer: path(&a.tokenizer),
        timeout_s: a.timeout,
        client_threads: client_threads(a),
        seed: a.seed.unwrap_or_default(),
        accuracy_samples: path(&a.accuracy_samples),
        rerank_samples: path(&a.rerank_samples),
        accuracy_check: !a.no_accuracy,
        labels: a.labels.clone(),
        instance_type: None,
        price_per_hour_usd: None,
        knee: a.knee,
        slo: strings(&a.slo.objectives),
        find_capacity: a.find_capacity,
        capacity_precision: a.slo.capacity_precision,
        min_probe_requests: a.slo.min_probe_requests,
        stability: a.slo.stability,
        max_probe_secs: a.slo.max_probe_secs,
        until_stable: a.until_stable,
        repeat: a.repeat,
        metrics_url: a
            .server
            .metrics_url
            .as_deref()
            .map(encbench_core::scrub::url),
        metrics: a.server.metrics.clone(),
        cloudwatch_wait_s: a.server.cloudwatch_wait,
        fail_on: strings(&a.fail_on.thresholds),
        shard: hosts.shard,
        start_at: hosts.start_at.map(rfc3339),
        ramp: a.ramp(),
        slice_s: a.slice,
        replay: None,
    }
}

/// The record's fields the prepared target decided.
pub(in crate::app) fn resolve(c: &mut RunConfig, p: &PreparedTarget) {
    c.target = p.target_config.clone();
    c.task = p.task;
    c.batch_size = p.batch_size;
    c.natural_tokens_per_input = (p.natural_tokens * 10.0).round() / 10.0;
    c.seed = p.seed;
    c.instance_type = p.price.as_ref().map(|p| p.0.clone());
    c.price_per_hour_usd = p.price.as_ref().map(|p| p.1);
}

/// What the engine is asked to run, whatever the target: the phases, the pace, the
/// objectives, the server's metrics, and how the screen's snapshots are taken.
#[derive(Clone)]
pub(in crate::app) struct Workload {
    /// At the command line's batch size until the target is prepared (`engine`).
    pub plan: RunPlan,
    pub pace: Pace,
    pub warmup_timeout: Duration,
    pub endpoint_wait: Duration,
    pub window_s: usize,
    pub tick: Duration,
    pub client_threads: usize,
    pub slo: Slo,
    pub search: Option<SearchSpec>,
    /// `--metrics-url`, the model named there, and the metrics to read.
    pub metrics: Option<(String, Option<String>, Vec<String>)>,
    pub ramp: Option<Ramp>,
    pub slice: Option<Duration>,
}

/// The workload the command line asks for; `live` when the screen drives it.
pub(in crate::app) fn workload(a: &RunArgs, live: bool) -> Workload {
    Workload {
        plan: plan(a, a.batch_size, live),
        pace: Pace {
            rate_per_s: a.request_rate.0,
            burstiness: a.burstiness,
        },
        warmup_timeout: Duration::from_secs_f64(a.warmup_timeout),
        endpoint_wait: Duration::from_secs_f64(a.timeout),
        window_s: a.window,
        tick: Duration::from_millis(1000 / a.fps.clamp(1, 60)),
        client_threads: client_threads(a),
        slo: a.slo.slo(),
        search: (!a.slo.objectives.is_empty()).then(|| SearchSpec {
            precision: a.slo.capacity_precision,
            probe: a.slo.probe_rule(),
            at_start: a.find_capacity,
        }),
        metrics: (a.server.metrics_url.clone())
            .map(|u| (u, a.model.clone(), a.server.metrics.clone())),
        ramp: a.ramp(),
        slice: a.slice.map(Duration::from_secs_f64),
    }
}

impl Workload {
    /// The engine's setup for a prepared target: its batch size is the plan's.
    pub fn engine(self, p: PreparedTarget) -> Result<EngineSpec, AppError> {
        let metrics = self.metrics.map(|(url, model, names)| {
            Scraper::new(&url, model.as_deref(), names)
                .map(Arc::new)
                .map_err(|e| AppError::Failed(format!("--metrics-url: {e}")))
        });
        Ok(EngineSpec {
            target: p.target,
            texts: p.texts,
            tokenizer: Some(p.tokenizer),
            rankings: p.rankings,
            format: p.format,
            warmup_timeout: self.warmup_timeout,
            endpoint_wait: self.endpoint_wait,
            shape: p.shape,
            pace: self.pace,
            plan: RunPlan {
                batch_size: p.batch_size,
                ..self.plan
            },
            seed: p.seed,
            accuracy: p.accuracy,
            price_per_hour: p.price.as_ref().map(|p| p.1),
            window_s: self.window_s,
            tick: self.tick,
            client_threads: self.client_threads,
            slo: self.slo,
            search: self.search,
            metrics: metrics.transpose()?,
            ramp: self.ramp,
            slice: self.slice,
            replay: None,
            stop_without_route: true,
            // Opened by the run itself, which closes it in every way a run ends.
            records: None,
        })
    }
}

/// The phases the command line asks for, at `batch_size` (a reranker's documents per
/// query); `live` runs end in the live phase.
fn plan(a: &RunArgs, batch_size: usize, live: bool) -> RunPlan {
    RunPlan {
        batch_size,
        concurrency: a.concurrency_cap(),
        concurrency_given: a.concurrency.is_some(),
        warmup: a.warmup,
        stop: match a.duration {
            Some(d) => StopAt::Duration(Duration::from_secs_f64(d)),
            None => StopAt::Count(a.n),
        },
        sweep_batch: a.sweep_batch,
        sweep_concurrency: a.sweep_concurrency,
        batch_sizes: a.batch_sizes.clone(),
        concurrency_levels: a.concurrency_levels.clone(),
        live,
        until_stable: a.until_stable.then(|| a.slo.probe_rule()),
        repeat: a.repeat,
        ramp: a.ramp.is_some(),
    }
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
