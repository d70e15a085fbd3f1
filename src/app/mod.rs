//! From a parsed command line to a finished run: validation (one line, exit 2, for bad
//! input), the target, the engine, the front-end and the export.

use crate::accuracy::{LabelMap, load_samples};
use crate::arrival::Pace;
use crate::cli::EngineKind;
use crate::cli::{Cli, ColdStartArgs, RunArgs, SageMakerArgs, ServeArgs, Sub};
use crate::cold_start::ColdStartProbe;
use crate::engine::{AccuracySetup, Engine, EngineSetup, RunReport};
use crate::export::{Export, write_atomic};
use crate::headless::{self, Header};
use crate::metrics::{instance_price, known_instance_types};
use crate::payload::kserve::{KServeFormat, TensorNames};
use crate::payload::vllm::VllmFormat;
use crate::payload::{Format, HfFormat, Input, Shape, batch_inputs, load_texts};
use crate::serve::{self, ServeConfig, model::ServiceModel};
use crate::sweep::{StopAt, SweepPlan};
use crate::target::Target;
use crate::target::local::LocalTarget;
use crate::target::sagemaker::{MAX_BODY_BYTES, SageMakerConfig, SageMakerTarget};
use crate::tokenize::TokenCounter;
use crate::tui::{self, app::Info};
use serde_json::{Value, json};
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

mod compare;
mod report;

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Bad input: exit code 2.
    #[error("{0}")]
    Usage(String),
    /// The run could not complete: exit code 1.
    #[error("{0}")]
    Failed(String),
}

impl AppError {
    pub fn exit_code(&self) -> u8 {
        match self {
            AppError::Usage(_) => 2,
            AppError::Failed(_) => 1,
        }
    }
}

pub(crate) fn usage(flag: &str, msg: impl std::fmt::Display) -> AppError {
    AppError::Usage(format!("{flag}: {msg}"))
}

pub async fn main(cli: Cli) -> Result<(), AppError> {
    match cli.command {
        Some(Sub::Serve(args)) => serve_forever(args).await,
        Some(Sub::ColdStart(args)) => cold_start(args).await,
        Some(Sub::Compare(args)) => compare::main(args).await,
        Some(Sub::Report(args)) => report::main(args),
        None => run(cli.run).await,
    }
}

async fn serve_forever(a: ServeArgs) -> Result<(), AppError> {
    let tokenizer =
        TokenCounter::load(a.tokenizer.as_deref()).map_err(|e| usage("--tokenizer", e))?;
    let cfg = ServeConfig {
        port: a.port,
        workers: a.workers,
        model_load: Duration::from_secs_f64(a.model_load_ms / 1000.0),
        service: ServiceModel {
            base_ms: a.base_ms,
            per_token_ms: a.per_token_ms,
            saturation_tokens: a.saturation_tokens,
        },
        error_rate: a.error_rate,
        throttle_above: a.throttle_above,
        stall_at: a.stall_at.map(Duration::from_secs_f64),
        stall_for: Duration::from_secs_f64(a.stall_ms.unwrap_or(0.0) / 1000.0),
        error_burst_at: a.error_burst_at.map(Duration::from_secs_f64),
        error_burst_for: Duration::from_secs_f64(a.error_burst_ms.unwrap_or(0.0) / 1000.0),
        reset_rate: a.reset_rate,
        garbage_rate: a.garbage_rate,
        wrong_content_type: a.wrong_content_type,
        flip_labels: a.flip_labels,
        label_ids: a.label_ids,
        seed: a.seed,
        credentials: a.access_key.clone().zip(a.secret_key.clone()),
        unhealthy_for: Duration::from_secs_f64(a.unhealthy_for_ms / 1000.0),
    };
    let server = serve::start(cfg, tokenizer).await.map_err(|e| {
        usage(
            "--port",
            format!("cannot listen on 127.0.0.1:{}: {e}", a.port),
        )
    })?;
    // Tests and scripts read the port from this line.
    println!(
        "encbench-tui reference endpoint listening on {}",
        server.url()
    );
    headless::wait_for_signal().await;
    Ok(())
}

async fn cold_start(a: ColdStartArgs) -> Result<(), AppError> {
    let shape = Shape {
        pad_to_max: a.pad_to_max,
        max_len: a.max_len,
    };
    let samples = crate::accuracy::shipped_samples();
    let body = HfFormat { shape }.prepare(&[&samples[0].input()]);
    let target = SageMakerTarget::new(
        sagemaker_config(&a.endpoint, &a.sagemaker),
        1,
        Duration::from_secs_f64(a.timeout),
        body.clone(),
    )
    .await;
    let probe = ColdStartProbe {
        idle_wait: Duration::from_secs_f64(a.idle_wait),
        retry_interval: Duration::from_secs_f64(a.retry_interval),
        give_up: Duration::from_secs_f64(a.give_up),
        steady_n: a.n,
    };
    let result = crate::cold_start::run(&target, body, &probe).await;
    print!("{}", crate::cold_start::table(&target.describe(), &result));
    if let Some(path) = &a.export {
        let export = crate::cold_start::export(&target.describe(), &probe, &result);
        write_atomic(path, &export).map_err(|e| {
            AppError::Failed(format!("--export {}: cannot write: {e}", path.display()))
        })?;
        eprintln!("results written to {}", path.display());
    }
    match result.first_success {
        Some(_) => Ok(()),
        None => Err(AppError::Failed(format!(
            "no success within --give-up {} s ({} attempts)",
            a.give_up, result.attempts
        ))),
    }
}

fn sagemaker_config(endpoint: &str, s: &SageMakerArgs) -> SageMakerConfig {
    SageMakerConfig {
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

/// The payload side of `--engine`, with tensor names from the server's model config where it
/// offers one (KServe v2 `/config`) and from flags otherwise.
async fn build_format(
    a: &RunArgs,
    tokenizer: &TokenCounter,
    shape: Shape,
    url: &str,
) -> Result<Arc<dyn Format>, AppError> {
    let model = || {
        a.model.clone().ok_or_else(|| {
            usage(
                "--model",
                format!("required with --engine {:?}", a.engine).to_lowercase(),
            )
        })
    };
    let encoder = || {
        tokenizer
            .encoder(shape.max_len)
            .map_err(|e| usage("--tokenizer", e))
    };
    Ok(match a.engine {
        EngineKind::Hf => Arc::new(HfFormat { shape }),
        EngineKind::Vllm => Arc::new(VllmFormat {
            model: model()?,
            api: a.vllm_api,
            encoder: encoder()?,
            pad_to_max: shape.pad_to_max,
        }),
        EngineKind::Triton => {
            let model = model()?;
            let from_server = if a.endpoint.is_none() && a.input_ids_name.is_none() {
                let config_url = format!("{}/v2/models/{model}/config", url.trim_end_matches('/'));
                match reqwest::get(&config_url).await {
                    Ok(r) if r.status().is_success() => r
                        .json::<Value>()
                        .await
                        .ok()
                        .and_then(|c| TensorNames::from_config(&c)),
                    _ => None,
                }
            } else {
                None
            };
            let defaults = TensorNames::default();
            let names = from_server.unwrap_or(TensorNames {
                input_ids: a.input_ids_name.clone().unwrap_or(defaults.input_ids),
                attention_mask: a
                    .attention_mask_name
                    .clone()
                    .unwrap_or(defaults.attention_mask),
                token_type_ids: a.token_type_ids_name.clone(),
                output: a.output_name.clone().unwrap_or(defaults.output),
            });
            Arc::new(KServeFormat {
                model,
                names,
                encoder: encoder()?,
                pad_to_max: shape.pad_to_max,
                binary: a.binary,
                text_input: a.text_input.clone(),
            })
        }
    })
}

/// SageMaker refuses bodies over 6 MiB: say so before sending anything.
fn check_body_limit(a: &RunArgs, texts: &[Input], format: &dyn Format) -> Result<(), AppError> {
    let mut sizes: Vec<usize> = vec![a.batch_size];
    if a.sweep_batch {
        sizes.extend(&a.batch_sizes);
    }
    for b in sizes {
        let largest = (0..texts.len().min(8))
            .map(|k| format.prepare(&batch_inputs(texts, b, k)).body.len())
            .max()
            .unwrap_or(0);
        if largest > MAX_BODY_BYTES {
            let mib = largest as f64 / (1024.0 * 1024.0);
            let flag = if b == a.batch_size {
                "--batch-size"
            } else {
                "--batch-sizes"
            };
            return Err(usage(
                flag,
                format!(
                    "batch {b} makes a {mib:.1} MiB request body, over SageMaker's 6 MiB limit"
                ),
            ));
        }
    }
    Ok(())
}

/// The URL as it may appear in exports and on screen: no user or password.
fn redact(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string().trim_end_matches('/').to_string()
        }
        Err(_) => url.to_string(),
    }
}

fn price(a: &RunArgs) -> Result<Option<(String, f64)>, AppError> {
    if let Some(p) = a.price_per_hour {
        return Ok(Some((
            a.instance_type.clone().unwrap_or_else(|| "custom".into()),
            p,
        )));
    }
    match &a.instance_type {
        None => Ok(None),
        Some(t) => match instance_price(t) {
            Some(p) => Ok(Some((t.clone(), p))),
            None => Err(usage(
                "--instance-type",
                format!(
                    "no shipped price for '{t}' (known: {}); give --price-per-hour",
                    known_instance_types().join(", ")
                ),
            )),
        },
    }
}

fn client_threads(a: &RunArgs) -> usize {
    a.client_threads
        .unwrap_or_else(crate::engine::lanes::default_count)
}

fn config_json(
    a: &RunArgs,
    url: &str,
    seed: u64,
    natural_tokens: f64,
    price: &Option<(String, f64)>,
) -> Value {
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    json!({
        "target": {
            "url": a.endpoint.is_none().then_some(url),
            "engine": a.engine,
            "demo": a.demo,
            "endpoint": a.endpoint,
            "region": a.sagemaker.region,
            "profile": a.sagemaker.profile,
            "endpoint_url": a.sagemaker.endpoint_url.as_deref().map(redact),
            "target_container": a.sagemaker.target_container,
            "inference_component": a.sagemaker.inference_component,
            "target_model": a.sagemaker.target_model,
            "target_variant": a.sagemaker.target_variant,
        },
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
        "natural_tokens_per_input": (natural_tokens * 10.0).round() / 10.0,
        "texts": path(&a.texts),
        "tokenizer": path(&a.tokenizer),
        "timeout_s": a.timeout,
        "client_threads": client_threads(a),
        "seed": seed,
        "accuracy_samples": path(&a.accuracy_samples),
        "accuracy_check": !a.no_accuracy,
        "labels": a.labels,
        "instance_type": price.as_ref().map(|p| p.0.clone()),
        "price_per_hour_usd": price.as_ref().map(|p| p.1),
        "knee": a.knee,
    })
}

fn write_export(a: &RunArgs, report: &RunReport, config: Value) -> Result<(), AppError> {
    if let Some(path) = &a.export {
        write_atomic(path, &Export::new(report, config)).map_err(|e| {
            AppError::Failed(format!("--export {}: cannot write: {e}", path.display()))
        })?;
        eprintln!("results written to {}", path.display());
    }
    Ok(())
}

/// A target ready to be measured: everything `RunArgs` names, loaded and checked, with the
/// client built. `compare` makes one per target.
pub struct Prepared {
    pub texts: Vec<Input>,
    pub accuracy: Option<AccuracySetup>,
    pub price: Option<(String, f64)>,
    pub natural_tokens: f64,
    pub seed: u64,
    pub shape: Shape,
    pub format: Arc<dyn Format>,
    pub target: Arc<dyn Target>,
    /// The target as it may be shown and exported: no credentials in it.
    pub shown: String,
    /// The flag to name when the target is not reachable.
    pub flag: &'static str,
    pub config: Value,
    /// Keeps `--demo`'s reference endpoint alive as long as the target is used.
    pub _demo: Option<serve::RunningServer>,
}

pub async fn prepare(a: &RunArgs) -> Result<Prepared, AppError> {
    // Everything the user gave is checked before anything is sent.
    let tokenizer =
        TokenCounter::load(a.tokenizer.as_deref()).map_err(|e| usage("--tokenizer", e))?;
    if let Some((limit, said)) = crate::tokenize::model_max_length(a.tokenizer.as_deref())
        && a.max_len > limit
    {
        let hint = if a.tokenizer.is_none() {
            "; give the model's with --tokenizer"
        } else {
            ""
        };
        return Err(usage(
            "--max-len",
            format!("{} is beyond the {limit} tokens of {said}{hint}", a.max_len),
        ));
    }
    if let Some(p) = &a.export {
        crate::export::check_writable(p)
            .map_err(|e| usage("--export", format!("{}: cannot write: {e}", p.display())))?;
    }
    let texts: Vec<Input> = match &a.texts {
        Some(p) => load_texts(p).map_err(|e| usage("--texts", e))?,
        None => crate::accuracy::shipped_samples()
            .iter()
            .map(|s| s.input())
            .collect(),
    };
    let accuracy = if a.no_accuracy {
        None
    } else {
        let samples = load_samples(a.accuracy_samples.as_deref())
            .map_err(|e| usage("--accuracy-samples", e))?;
        if a.labels.iter().all(|l| l.trim().is_empty()) {
            return Err(usage("--labels", "needs at least one class name"));
        }
        Some(AccuracySetup {
            samples,
            labels: LabelMap::new(&a.labels),
        })
    };
    let price = price(a)?;
    let natural_tokens =
        texts.iter().map(|t| tokenizer.count(t) as f64).sum::<f64>() / texts.len() as f64;
    let seed = a.seed.unwrap_or_else(rand::random);

    let mut demo = None;
    let url = if a.demo {
        let server = serve::start(ServeConfig::default(), TokenCounter::shipped())
            .await
            .map_err(|e| {
                AppError::Failed(format!("--demo: cannot start the reference endpoint: {e}"))
            })?;
        let url = server.url();
        demo = Some(server);
        url
    } else {
        a.url.clone()
    };
    let shape = Shape {
        pad_to_max: a.pad_to_max,
        max_len: a.max_len,
    };
    let max_concurrency = a
        .concurrency_levels
        .iter()
        .copied()
        .chain([a.concurrency])
        .max()
        .unwrap_or(1);
    let timeout = Duration::from_secs_f64(a.timeout);
    let format = build_format(a, &tokenizer, shape, &url).await?;
    let (target, shown, flag): (Arc<dyn Target>, String, &str) = match &a.endpoint {
        Some(name) => {
            check_body_limit(a, &texts, format.as_ref())?;
            let cfg = sagemaker_config(name, &a.sagemaker);
            let probe = format.prepare(&[&texts[0]]);
            let t = SageMakerTarget::new(cfg, max_concurrency, timeout, probe).await;
            let shown = t.describe();
            (Arc::new(t), shown, "--endpoint")
        }
        None => {
            let t = LocalTarget::new(&url, format.as_ref(), max_concurrency, timeout)
                .with_ready_timeout(Duration::from_secs_f64(a.ready_timeout));
            (Arc::new(t), redact(&url), "--url")
        }
    };
    let config = config_json(a, &shown, seed, natural_tokens, &price);
    Ok(Prepared {
        texts,
        accuracy,
        price,
        natural_tokens,
        seed,
        shape,
        format,
        target,
        shown,
        flag,
        config,
        _demo: demo,
    })
}

async fn run(a: RunArgs) -> Result<(), AppError> {
    let p = prepare(&a).await?;
    if let Err(e) = p.target.check_ready().await {
        let started = SystemTime::now();
        let report = RunReport {
            started_at: started,
            ended_at: started,
            phases: vec![],
            accuracy_before: None,
            accuracy_after: None,
            timeline: vec![],
            stopped_early: true,
            error: Some(e.to_string()),
        };
        write_export(&a, &report, p.config)?;
        return Err(usage(p.flag, e));
    }

    let live = !a.headless && std::io::stdout().is_terminal();
    let pace = Pace {
        rate_per_s: a.request_rate.0,
        burstiness: a.burstiness,
    };
    let stop = match a.duration {
        Some(d) => StopAt::Duration(Duration::from_secs_f64(d)),
        None => StopAt::Count(a.n),
    };
    let plan = SweepPlan {
        batch_size: a.batch_size,
        concurrency: a.concurrency,
        warmup: a.warmup,
        stop,
        sweep_batch: a.sweep_batch,
        sweep_concurrency: a.sweep_concurrency,
        batch_sizes: a.batch_sizes.clone(),
        concurrency_levels: a.concurrency_levels.clone(),
        live,
    };
    let engine_name = p.format.name().to_string();
    let engine = Engine::start(EngineSetup {
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
        lanes: client_threads(&a),
    });
    let header = Header {
        target: p.shown,
        engine: engine_name,
        pace,
        pad_to_max: a.pad_to_max,
        max_len: a.max_len,
        natural_tokens: p.natural_tokens,
        simulated: a.demo,
        price: p.price,
        knee: a.knee,
    };
    let report = if live {
        let info = Info {
            target: header.target.clone(),
            engine: header.engine.clone(),
            simulated: a.demo,
            knee: a.knee,
            window_s: a.window,
        };
        let export_path = a.export.clone().unwrap_or_else(default_export_path);
        let export_config = p.config.clone();
        let export_now: tui::ExportNow = Box::new(move |report| {
            write_atomic(&export_path, &Export::new(report, export_config.clone()))
                .map(|_| export_path.display().to_string())
                .map_err(|e| e.to_string())
        });
        tui::run(engine, info, a.fps, export_now, abort_export(&a, &p.config))
            .await
            .map_err(|e| AppError::Failed(format!("cannot drive the terminal: {e}")))?
    } else {
        headless::run(engine, abort_export(&a, &p.config)).await
    };
    write_export(&a, &report, p.config)?;
    // Also after the live screen: the tables stay in the scrollback.
    print!("{}", headless::tables(&report, &header));
    Ok(())
}

/// A second Ctrl-C: the export of what was measured so far, then the process ends.
fn abort_export(a: &RunArgs, config: &Value) -> headless::Abort {
    let (a, config) = (a.clone(), config.clone());
    Box::new(
        move |report| match write_export(&a, report, config.clone()) {
            Ok(()) => eprintln!("interrupted twice: exiting without waiting"),
            Err(e) => eprintln!("error: {e}"),
        },
    )
}

/// Where `e` writes when no `--export` was given.
fn default_export_path() -> std::path::PathBuf {
    let stamp = time::OffsetDateTime::now_utc()
        .format(time::macros::format_description!(
            "[year][month][day]-[hour][minute][second]"
        ))
        .unwrap_or_default();
    std::path::PathBuf::from(format!("encbench-{stamp}.json"))
}
