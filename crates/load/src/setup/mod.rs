//! From settings to a target ready to be measured: the inputs, the accuracy samples, the
//! price, the payload format (with tensor names from the server where it offers them) and the
//! client, all loaded and checked before anything is sent. Flags that cannot work together
//! were refused while the settings were settled (`app::target` in the binary). A plain run and each target of
//! `compare` are prepared the same way.

mod body_limit;
mod family;
mod grpc;
mod task;

pub use family::check_route;
pub use task::DOCS_PER_QUERY;

use crate::accuracy::AccuracySpec;
use body_limit::{BodyLimit, Sizes, check_body_limit};
use encbench_core::choice::Choice;
use encbench_core::export::{Detected, TargetConfig};
use encbench_core::input::{
    Input, Rankings, Shape, Task, load_samples, load_texts, shipped_rerank, shipped_samples,
};
use encbench_core::lengths::LengthMix;
use encbench_core::pricing::{instance_price, unpriced};
use encbench_wire::client::headers::ExtraHeaders;
use encbench_wire::client::sagemaker::{MAX_BODY_BYTES, SageMakerSettings, SageMakerTarget};
use encbench_wire::client::url::{self, Routes, UrlTarget};
use encbench_wire::client::{Target, shown_url};
use encbench_wire::discover::Found;
use encbench_wire::exact_text;
use encbench_wire::payload::{Api, Format, LabelMap, PayloadFormat, Pooling, RerankOptions};
use encbench_wire::tokenize::{self, TokenCounter};
use family::{Resolved, build_format, resolve, routes};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Where requests go.
#[derive(Debug, Clone, PartialEq)]
pub enum Address {
    /// A server on a URL (the container contract, KServe v2 or vLLM, as the format says).
    Url(String),
    /// The built-in reference endpoint, started on 127.0.0.1 for this run at this URL.
    Demo(String),
    /// A SageMaker endpoint through the AWS SDK.
    SageMaker(SageMakerSettings),
}

/// The payload format and what it needs to know about the model.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatSettings {
    /// The API family (`--engine`); `None`: discovered from a URL, else hf.
    pub format: Option<PayloadFormat>,
    /// The KServe model (triton), or the served model of the JSON APIs.
    pub model: Option<String>,
    /// The task of a family with several routes (`--api`); `None`: as the server says, else
    /// the family's default.
    pub api: Option<Api>,
    /// The invocation's route instead of the family's (`--path`), and the readiness route
    /// (`--ready-path`).
    pub path: Option<String>,
    pub ready_path: Option<String>,
    /// KServe v2 binary tensor extension instead of JSON.
    pub binary: bool,
    /// Raw texts as one BYTES tensor of this name (a model that tokenizes on the server).
    pub text_input: Option<String>,
    /// Tensor names for a server that does not offer its model config.
    pub input_ids_name: Option<String>,
    pub attention_mask_name: Option<String>,
    pub token_type_ids_name: Option<String>,
    pub output_name: Option<String>,
    /// How an embedder's vectors per token become one per input.
    pub pooling: Pooling,
    /// A rerank route's `top_n` and `return_documents`.
    pub rerank: RerankOptions,
    /// Encodings prepared before each phase, not in each request (`--pretokenize`).
    pub pretokenize: bool,
}

impl FormatSettings {
    pub fn of(format: Option<PayloadFormat>) -> FormatSettings {
        FormatSettings {
            format,
            model: None,
            api: None,
            path: None,
            ready_path: None,
            binary: false,
            text_input: None,
            input_ids_name: None,
            attention_mask_name: None,
            token_type_ids_name: None,
            output_name: None,
            pooling: Pooling::Mean,
            rerank: RerankOptions::default(),
            pretokenize: false,
        }
    }
}

/// Everything that makes a target ready to be measured.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetSettings {
    pub address: Address,
    pub format: FormatSettings,
    /// tokenizer.json for token counts and client-side tokenization (default: shipped).
    pub tokenizer: Option<PathBuf>,
    pub shape: Shape,
    /// Input texts (default: the shipped samples).
    pub texts: Option<PathBuf>,
    /// `--input-tokens`: pairs of drawn lengths instead of texts.
    pub input_tokens: Option<LengthMix>,
    /// Known-answer samples (default: shipped) and class names; `None` skips the check.
    pub accuracy: Option<(Option<PathBuf>, Vec<String>)>,
    pub instance_type: Option<String>,
    /// Overrides the instance type's shipped price.
    pub price_per_hour: Option<f64>,
    /// Default: random (recorded in the export).
    pub seed: Option<u64>,
    /// The most requests the run keeps in flight: the connection pool's size.
    pub max_concurrency: usize,
    /// The batch size, and the sizes of a batch sweep: SageMaker's body limit is checked
    /// for each before anything is sent. For a reranker, documents per query.
    pub batch_size: usize,
    /// `--batch-size` or `--docs-per-query` was given: a reranker otherwise sends
    /// `DOCS_PER_QUERY`.
    pub batch_size_given: bool,
    pub sweep_batch_sizes: Vec<usize>,
    /// `--task`; `None`: a rerank route's, else inputs.
    pub task: Option<Task>,
    /// `--rerank-samples`: a reranker's known answers (default: those of `--accuracy-samples`,
    /// else the shipped ones).
    pub rerank_samples: Option<PathBuf>,
    pub timeout: Duration,
    /// How long a local server may say it is not ready yet.
    pub ready_timeout: Duration,
    /// `--header` pairs for every request of a URL target.
    pub headers: Vec<(String, String)>,
    /// The environment variable holding a Bearer token.
    pub bearer_token_env: Option<String>,
    /// `--grpc-connections`: HTTP/2 connections per client thread to a `grpc://` URL
    /// (`None`: one, and not given).
    pub grpc_connections: Option<usize>,
}

/// Why a target cannot be prepared.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// Bad input: the flag it came from, and what is wrong.
    #[error("{flag}: {message}")]
    Usage { flag: String, message: String },
    /// Something that should have worked did not.
    #[error("{0}")]
    Failed(String),
}

fn usage(flag: &str, message: impl std::fmt::Display) -> SetupError {
    SetupError::Usage {
        flag: flag.into(),
        message: message.to_string(),
    }
}

/// A target ready to be measured.
pub struct PreparedTarget {
    pub texts: Vec<Input>,
    /// What counts the inputs' tokens.
    pub tokenizer: Arc<TokenCounter>,
    /// What a request is made of, and its size (documents per query for a reranker).
    pub task: Task,
    pub batch_size: usize,
    /// A reranker's queries and documents.
    pub rankings: Option<Arc<Rankings>>,
    pub accuracy: Option<AccuracySpec>,
    pub price: Option<(String, f64)>,
    /// Mean natural length of the inputs, in tokens.
    pub natural_tokens: f64,
    pub seed: u64,
    pub shape: Shape,
    pub format: Arc<dyn Format>,
    pub target: Arc<dyn Target>,
    /// The target as it may be shown and exported: no credentials in it.
    pub shown: String,
    /// The flag to name when the target is not reachable.
    pub flag: &'static str,
    /// The target as the export's `config.target` records it.
    pub target_config: TargetConfig,
    /// What discovery found at a URL given without `--engine`, to be said before the load.
    pub found: Option<Found>,
}

pub async fn prepare(s: &TargetSettings) -> Result<PreparedTarget, SetupError> {
    // Everything the user gave is checked before anything is sent.
    if let Address::Url(u) = &s.address {
        encbench_wire::client::address::check_target(u).map_err(|e| usage("--url", e))?;
    }
    let tokenizer =
        TokenCounter::load(s.tokenizer.as_deref()).map_err(|e| usage("--tokenizer", e))?;
    check_max_len(s)?;
    let seed = s.seed.unwrap_or_else(rand::random);
    let texts = inputs(s, &tokenizer, seed)?;
    let mut accuracy = accuracy_setup(s)?;
    let headers = extra_headers(s)?;
    let price = price(s)?;

    let url = match &s.address {
        Address::Demo(u) | Address::Url(u) => Some(u.clone()),
        Address::SageMaker(_) => None,
    };
    let (resolved, found) = resolve(s, &headers).await?;
    let format = build_format(
        &s.format,
        &resolved,
        &tokenizer,
        s.shape,
        url.as_deref(),
        &headers,
    )
    .await?;
    let kind = found.as_ref().and_then(|f| f.record.kind.as_deref());
    let (task, format) = task::resolve_task(s, &resolved, format, kind)?;
    let batch_size = task::batch_size(s, task);
    let rankings = (task == Task::Rerank).then(|| {
        let samples = accuracy.as_ref().map_or(&[][..], |a| &a.rerank[..]);
        Arc::new(task::rankings(s, &texts, samples, seed))
    });
    // What one request's inputs are: a reranker's (query, document) pairs.
    let one_each: Vec<Input> = match &rankings {
        Some(r) => r.pairs(1, r.documents.len().clamp(1, 256)),
        None => texts.clone(),
    };
    let natural_tokens = one_each
        .iter()
        .map(|t| tokenizer.count(t) as f64)
        .sum::<f64>()
        / one_each.len() as f64;
    let routes = routes(s, format.as_ref(), found.as_ref())?;
    // A pair goes in another form than the check's plain text (vLLM sends it as ids): the
    // check sends the load's first input too, so a server that refuses that form says so
    // before the load.
    if let Some(a) = accuracy.as_mut()
        && task == Task::Inputs
        && format.form().is_some()
        && texts[0].parts().1.is_some()
    {
        a.load_input = Some(texts[0].clone());
    }
    let sizes = Sizes {
        batch: batch_size,
        sweep: &s.sweep_batch_sizes,
        rerank: task == Task::Rerank,
    };
    let model = resolved.model.as_deref();
    let (target, shown, flag) = client(
        s,
        &sizes,
        &one_each,
        format.as_ref(),
        &routes,
        &headers,
        model,
    )
    .await?;
    let found = found.filter(|_| s.format.format.is_none());
    let config = target_config(
        s,
        &shown,
        &headers,
        &resolved,
        url.is_some().then(|| routes.invoke.clone()),
        found.as_ref().map(|f| f.record.clone()),
    );
    Ok(PreparedTarget {
        texts,
        tokenizer: Arc::new(tokenizer),
        task,
        batch_size,
        rankings,
        accuracy,
        price,
        natural_tokens,
        seed,
        shape: s.shape,
        format,
        target,
        shown,
        flag,
        target_config: config,
        found,
    })
}

/// `--texts`, pairs of drawn lengths, or the shipped samples.
fn inputs(
    s: &TargetSettings,
    tokenizer: &TokenCounter,
    seed: u64,
) -> Result<Vec<Input>, SetupError> {
    Ok(match (&s.texts, &s.input_tokens) {
        (Some(p), _) => load_texts(p).map_err(|e| usage("--texts", e))?,
        (None, Some(mix)) => drawn(s, tokenizer, mix, seed)?,
        (None, None) => shipped_samples()
            .iter()
            .map(encbench_core::input::NliSample::input)
            .collect(),
    })
}

/// `--input-tokens`: pairs like the shipped samples they replace, of lengths drawn from the
/// mix with the run's seed.
fn drawn(
    s: &TargetSettings,
    tokenizer: &TokenCounter,
    mix: &LengthMix,
    seed: u64,
) -> Result<Vec<Input>, SetupError> {
    let shortest = exact_text::TextBuilder::new(tokenizer).min_tokens(true);
    let max_len = s.shape.max_len;
    if mix.mean > max_len as f64 {
        return Err(usage(
            "--input-tokens",
            format!(
                "a mean of {} tokens is beyond --max-len {max_len}: lengths are clipped to it",
                mix.mean
            ),
        ));
    }
    if mix.mean < shortest as f64 {
        return Err(usage(
            "--input-tokens",
            format!(
                "a mean of {} tokens is below the shortest pair, {shortest} tokens with the special ones",
                mix.mean
            ),
        ));
    }
    Ok(exact_text::drawn_inputs(
        tokenizer,
        mix,
        true,
        exact_text::DRAWN_INPUTS,
        max_len,
        seed,
    ))
}

/// `--max-len` within the tokenizer's model length.
fn check_max_len(s: &TargetSettings) -> Result<(), SetupError> {
    if let Some((limit, said)) = tokenize::model_max_length(s.tokenizer.as_deref())
        && s.shape.max_len > limit
    {
        let hint = if s.tokenizer.is_none() {
            "; give the model's with --tokenizer"
        } else {
            ""
        };
        return Err(usage(
            "--max-len",
            format!(
                "{} is beyond the {limit} tokens of {said}{hint}",
                s.shape.max_len
            ),
        ));
    }
    Ok(())
}

/// The known answers and class names, or `None` with the check skipped. A reranker's come
/// from `--rerank-samples`, else the rerank lines of `--accuracy-samples`, else the shipped
/// ones.
fn accuracy_setup(s: &TargetSettings) -> Result<Option<AccuracySpec>, SetupError> {
    let Some((path, labels)) = &s.accuracy else {
        return Ok(None);
    };
    let samples = load_samples(path.as_deref()).map_err(|e| usage("--accuracy-samples", e))?;
    if labels.iter().all(|l| l.trim().is_empty()) {
        return Err(usage("--labels", "needs at least one class name"));
    }
    let rerank = match &s.rerank_samples {
        Some(p) => {
            let given = load_samples(Some(p)).map_err(|e| usage("--rerank-samples", e))?;
            if given.rerank.is_empty() {
                return Err(usage(
                    "--rerank-samples",
                    format!(
                        "{} holds no {{\"query\", \"documents\", \"relevant\"}} line",
                        p.display()
                    ),
                ));
            }
            given.rerank
        }
        None if samples.rerank.is_empty() && path.is_none() => shipped_rerank(),
        None => samples.rerank,
    };
    Ok(Some(AccuracySpec {
        samples: samples.nli,
        labels: LabelMap::new(labels),
        retrieval: samples.retrieval,
        rerank,
        load_input: None,
    }))
}

/// The client for the target, once its bodies are known to fit: the target, how it is
/// shown, and the flag that names it.
async fn client(
    s: &TargetSettings,
    sizes: &Sizes<'_>,
    texts: &[Input],
    format: &dyn Format,
    routes: &Routes,
    headers: &ExtraHeaders,
    model: Option<&str>,
) -> Result<(Arc<dyn Target>, String, &'static str), SetupError> {
    Ok(match &s.address {
        Address::SageMaker(cfg) => {
            let limit = BodyLimit {
                bytes: MAX_BODY_BYTES,
                whose: "SageMaker's 6 MiB limit",
            };
            check_body_limit(sizes, texts, format, limit)?;
            let probe = format.prepare(&[&texts[0]]);
            let t = SageMakerTarget::new(cfg.clone(), s.max_concurrency, s.timeout, probe).await;
            let shown = t.describe();
            (Arc::new(t), shown, "--endpoint")
        }
        Address::Demo(url) | Address::Url(url) => {
            let limit = BodyLimit {
                bytes: url::MAX_BODY_BYTES,
                whose: "the 64 MiB limit of a --url target",
            };
            check_body_limit(sizes, texts, format, limit)?;
            if grpc::url(s).is_some() {
                let model = model.expect("build_format requires a model for KServe v2");
                let t = grpc::target(s, url, model, headers)?;
                let shown = t.describe();
                return Ok((Arc::new(t), shown, "--url"));
            }
            let t = UrlTarget::routed(url, routes.clone(), s.max_concurrency, s.timeout)
                .with_ready_timeout(s.ready_timeout)
                .with_headers(headers);
            let shown = t.describe();
            (Arc::new(t), shown, "--url")
        }
    })
}

/// The user's headers, the Bearer token read from its variable.
fn extra_headers(s: &TargetSettings) -> Result<ExtraHeaders, SetupError> {
    let bearer = match &s.bearer_token_env {
        None => None,
        Some(var) => match std::env::var(var) {
            Ok(t) if !t.trim().is_empty() => Some(t.trim().to_string()),
            _ => {
                return Err(usage(
                    "--bearer-token-env",
                    format!("the environment variable {var} is not set"),
                ));
            }
        },
    };
    ExtraHeaders::new(&s.headers, bearer.as_deref()).map_err(|e| usage("--header", e))
}

/// `config.target` of the export: where the requests went, never credentials.
fn target_config(
    s: &TargetSettings,
    shown: &str,
    headers: &ExtraHeaders,
    r: &Resolved,
    path: Option<String>,
    detected: Option<Detected>,
) -> TargetConfig {
    let sm = match &s.address {
        Address::SageMaker(cfg) => Some(cfg),
        _ => None,
    };
    let field = |f: fn(&SageMakerSettings) -> &Option<String>| sm.and_then(|c| f(c).clone());
    TargetConfig {
        url: sm.is_none().then(|| shown.to_string()),
        engine: r.family.name().to_string(),
        api: r.api.map(|a| a.name().to_string()),
        path,
        top_n: s.format.rerank.top_n,
        return_documents: s.format.rerank.return_documents,
        model: r.model.clone().filter(|_| r.family != PayloadFormat::Hf),
        detected,
        demo: matches!(s.address, Address::Demo(_)),
        endpoint: sm.map(|c| c.endpoint.clone()),
        region: field(|c| &c.region),
        profile: field(|c| &c.profile),
        endpoint_url: field(|c| &c.endpoint_url).as_deref().map(shown_url),
        target_container: field(|c| &c.target_container),
        inference_component: field(|c| &c.inference_component),
        target_model: field(|c| &c.target_model),
        target_variant: field(|c| &c.target_variant),
        headers: headers.names(),
        wire: (r.family == PayloadFormat::Triton).then(|| {
            match (grpc::url(s).is_some(), s.format.binary) {
                (true, _) => "grpc",
                (false, true) => "binary",
                (false, false) => "json",
            }
            .to_string()
        }),
        grpc_connections: grpc::url(s).map(|_| s.grpc_connections.unwrap_or(1)),
    }
}

/// The hourly price: given, or the instance type's from the shipped table.
fn price(s: &TargetSettings) -> Result<Option<(String, f64)>, SetupError> {
    if let Some(p) = s.price_per_hour {
        return Ok(Some((
            s.instance_type.clone().unwrap_or_else(|| "custom".into()),
            p,
        )));
    }
    match &s.instance_type {
        None => Ok(None),
        Some(t) => match instance_price(t) {
            Some(p) => Ok(Some((t.clone(), p))),
            None => Err(usage("--instance-type", unpriced(t))),
        },
    }
}
