//! From settings to a target ready to be measured: the inputs, the accuracy samples, the
//! price, the payload format (with tensor names from the server where it offers them) and the
//! client, all loaded and checked before anything is sent. A plain run and each target of
//! `compare` are prepared the same way.

use encbench_core::export::{Detected, TargetConfig};
use encbench_core::input::{Input, Shape, batch_inputs, load_samples, load_texts, shipped_samples};
use encbench_core::pricing::{instance_price, unpriced};
use encbench_wire::accuracy::AccuracySetup;
use encbench_wire::client::headers::ExtraHeaders;
use encbench_wire::client::sagemaker::{MAX_BODY_BYTES, SageMakerConfig, SageMakerTarget};
use encbench_wire::client::url::{self, Routes, UrlTarget};
use encbench_wire::client::{Target, body, shown_url};
use encbench_wire::discover::{self, Ask, Found};
use encbench_wire::payload::items::Items;
use encbench_wire::payload::json_api::ApiFormat;
use encbench_wire::payload::kserve::{Declared, GivenNames, KServeFormat, TensorNames};
use encbench_wire::payload::{Api, Format, HfFormat, LabelMap, PayloadFormat, Pooling};
use encbench_wire::tokenize::{self, TokenCounter};
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
    SageMaker(SageMakerConfig),
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
    /// for each before anything is sent.
    pub batch_size: usize,
    pub sweep_batch_sizes: Vec<usize>,
    pub timeout: Duration,
    /// How long a local server may say it is not ready yet.
    pub ready_timeout: Duration,
    /// `--header` pairs for every request of a URL target.
    pub headers: Vec<(String, String)>,
    /// The environment variable holding a Bearer token.
    pub bearer_token_env: Option<String>,
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
    pub accuracy: Option<AccuracySetup>,
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
        encbench_wire::client::address::check(u).map_err(|e| usage("--url", e))?;
    }
    let tokenizer =
        TokenCounter::load(s.tokenizer.as_deref()).map_err(|e| usage("--tokenizer", e))?;
    check_max_len(s)?;
    let texts: Vec<Input> = match &s.texts {
        Some(p) => load_texts(p).map_err(|e| usage("--texts", e))?,
        None => shipped_samples()
            .iter()
            .map(encbench_core::input::NliSample::input)
            .collect(),
    };
    let mut accuracy = accuracy_setup(s)?;
    let headers = extra_headers(s)?;
    let price = price(s)?;
    let natural_tokens =
        texts.iter().map(|t| tokenizer.count(t) as f64).sum::<f64>() / texts.len() as f64;
    let seed = s.seed.unwrap_or_else(rand::random);

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
    let routes = routes(s, format.as_ref(), found.as_ref())?;
    // A pair goes in another form than the check's plain text (vLLM sends it as ids): the
    // check sends the load's first input too, so a server that refuses that form says so
    // before the load.
    if let Some(a) = accuracy.as_mut()
        && format.form().is_some()
        && texts[0].parts().1.is_some()
    {
        a.load_input = Some(texts[0].clone());
    }
    let (target, shown, flag) = client(s, &texts, format.as_ref(), &routes, &headers).await?;
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

/// The known answers and class names, or `None` with the check skipped.
fn accuracy_setup(s: &TargetSettings) -> Result<Option<AccuracySetup>, SetupError> {
    let Some((path, labels)) = &s.accuracy else {
        return Ok(None);
    };
    let samples = load_samples(path.as_deref()).map_err(|e| usage("--accuracy-samples", e))?;
    if labels.iter().all(|l| l.trim().is_empty()) {
        return Err(usage("--labels", "needs at least one class name"));
    }
    Ok(Some(AccuracySetup {
        samples: samples.nli,
        labels: LabelMap::new(labels),
        retrieval: samples.retrieval,
        load_input: None,
    }))
}

/// The family, task and model, from the flags and what the server says of itself.
async fn resolve(
    s: &TargetSettings,
    headers: &ExtraHeaders,
) -> Result<(Resolved, Option<Found>), SetupError> {
    let found = find_family(s, headers).await?;
    let family = s
        .format
        .format
        .or(found.as_ref().map(|f| f.family))
        .unwrap_or(PayloadFormat::Hf);
    let api = resolve_api(family, s.format.api, found.as_ref())?;
    check_client_batch(s, found.as_ref())?;
    let model = s
        .format
        .model
        .clone()
        .or(found.as_ref().and_then(|f| f.model.clone()));
    Ok((Resolved { family, api, model }, found))
}

/// The client for the target, once its bodies are known to fit: the target, how it is
/// shown, and the flag that names it.
async fn client(
    s: &TargetSettings,
    texts: &[Input],
    format: &dyn Format,
    routes: &Routes,
    headers: &ExtraHeaders,
) -> Result<(Arc<dyn Target>, String, &'static str), SetupError> {
    Ok(match &s.address {
        Address::SageMaker(cfg) => {
            let limit = BodyLimit {
                bytes: MAX_BODY_BYTES,
                whose: "SageMaker's 6 MiB limit",
            };
            check_body_limit(s, texts, format, limit)?;
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
            check_body_limit(s, texts, format, limit)?;
            let t = UrlTarget::routed(url, routes.clone(), s.max_concurrency, s.timeout)
                .with_ready_timeout(s.ready_timeout)
                .with_headers(headers);
            let shown = t.describe();
            (Arc::new(t), shown, "--url")
        }
    })
}

/// What the server at a URL is: discovered when `--engine` was not given, else what the
/// family's own metadata says of what the flags leave open. A server that does not answer
/// at all is left to the readiness check, which says so for every family alike.
async fn find_family(
    s: &TargetSettings,
    headers: &ExtraHeaders,
) -> Result<Option<Found>, SetupError> {
    let Address::Url(url) = &s.address else {
        return Ok(None);
    };
    let ask = Ask {
        url,
        headers,
        // Metadata routes answer at once; the readiness check waits for a server that is slow.
        wait: s.ready_timeout.min(Duration::from_secs(2)),
        model: s.format.model.as_deref(),
        api: s.format.api,
    };
    let answer = match s.format.format {
        None => discover::discover(&ask).await.map(Some),
        Some(family) => discover::metadata(family, &ask).await,
    };
    match answer {
        Ok(found) => Ok(found),
        Err(e) if e.unreachable => Ok(None),
        Err(e) => Err(usage(e.flag, e.message)),
    }
}

/// The task: `--api`, else what the server said, else the family's default; one the family
/// has a route for.
fn resolve_api(
    family: PayloadFormat,
    given: Option<Api>,
    found: Option<&Found>,
) -> Result<Option<Api>, SetupError> {
    if family.apis().is_empty() {
        return match given {
            Some(api) => Err(usage("--api", family.check_api(api).unwrap_err())),
            None => Ok(None),
        };
    }
    let api = given
        .or(found.and_then(|f| f.api))
        .or(family.default_api())
        .expect("a family with routes has a default");
    family.check_api(api).map_err(|e| usage("--api", e))?;
    Ok(Some(api))
}

/// A batch over the server's own limit (TEI's `max_client_batch_size`) would fail every
/// request: refused before anything is sent.
fn check_client_batch(s: &TargetSettings, found: Option<&Found>) -> Result<(), SetupError> {
    let Some(limit) = found.and_then(|f| f.record.max_client_batch) else {
        return Ok(());
    };
    for &b in std::iter::once(&s.batch_size).chain(&s.sweep_batch_sizes) {
        if b > limit {
            let flag = if b == s.batch_size {
                "--batch-size"
            } else {
                "--batch-sizes"
            };
            return Err(usage(
                flag,
                format!(
                    "{b} is over the server's max client batch size of {limit} (its metadata says so): give at most {limit}"
                ),
            ));
        }
    }
    Ok(())
}

/// The target's routes: the family's (behind the prefix its server was found with), or the
/// user's. A SageMaker endpoint has one route, its invocations.
fn routes(
    s: &TargetSettings,
    format: &dyn Format,
    found: Option<&Found>,
) -> Result<Routes, SetupError> {
    if matches!(s.address, Address::SageMaker(_)) {
        for (flag, given) in [
            ("--path", &s.format.path),
            ("--ready-path", &s.format.ready_path),
        ] {
            if given.is_some() {
                return Err(usage(
                    flag,
                    "applies to URL targets: a SageMaker endpoint's route is its invocations",
                ));
            }
        }
    }
    let mut routes = Routes::of(format);
    if let Some(prefix) = found.map(|f| f.prefix).filter(|p| !p.is_empty()) {
        routes.invoke = format!("{prefix}{}", routes.invoke);
    }
    Ok(routes.with(s.format.path.as_deref(), s.format.ready_path.as_deref()))
}

/// A route as `--path` and `--ready-path` take it: a path from `/`, in one line, that no
/// server could read as two requests.
pub fn check_route(route: &str) -> Result<String, String> {
    let shown = || encbench_core::scrub::text(route);
    if !route.starts_with('/') {
        return Err(format!("'{}' must start with /", shown()));
    }
    if route.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "'{}' holds a space or a control character",
            shown()
        ));
    }
    Ok(route.to_string())
}

/// The user's headers, the Bearer token read from its variable. SageMaker requests are
/// signed by the SDK: a header there would be dropped, so it is refused.
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
    let headers =
        ExtraHeaders::new(&s.headers, bearer.as_deref()).map_err(|e| usage("--header", e))?;
    if matches!(s.address, Address::SageMaker(_)) && !headers.is_empty() {
        let flag = if s.headers.is_empty() {
            "--bearer-token-env"
        } else {
            "--header"
        };
        return Err(usage(
            flag,
            "applies to URL targets: SageMaker requests are signed by the AWS SDK",
        ));
    }
    Ok(headers)
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
    let field = |f: fn(&SageMakerConfig) -> &Option<String>| sm.and_then(|c| f(c).clone());
    TargetConfig {
        url: sm.is_none().then(|| shown.to_string()),
        engine: r.family.name().to_string(),
        api: r.api.map(|a| a.name().to_string()),
        path,
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
    }
}

/// The family, task and model a target's requests are built for, from the flags and what
/// the server said.
struct Resolved {
    family: PayloadFormat,
    api: Option<Api>,
    model: Option<String>,
}

/// The payload format, with KServe v2 tensor names from the flags, else from what the server
/// declares (metadata, then `/config`), else BERT's inputs and the first reply's output.
async fn build_format(
    f: &FormatSettings,
    r: &Resolved,
    tokenizer: &TokenCounter,
    shape: Shape,
    url: Option<&str>,
    headers: &ExtraHeaders,
) -> Result<Arc<dyn Format>, SetupError> {
    let encoder = || {
        tokenizer
            .encoder(shape.max_len)
            .map_err(|e| usage("--tokenizer", e))
    };
    let format: Arc<dyn Format> = match (r.family, r.api) {
        (PayloadFormat::Hf, _) => Arc::new(HfFormat {
            shape,
            pooling: f.pooling,
        }),
        (PayloadFormat::Triton, _) => {
            let model = r.model.clone().ok_or_else(|| {
                usage(
                    "--model",
                    "required with --engine triton: the KServe model to load",
                )
            })?;
            let given = GivenNames {
                input_ids: f.input_ids_name.clone(),
                attention_mask: f.attention_mask_name.clone(),
                token_type_ids: f.token_type_ids_name.clone(),
                output: f.output_name.clone(),
            };
            let declared = match url {
                Some(url) => declared_tensors(url, &model, headers).await,
                None => vec![],
            };
            let names = TensorNames::resolve(&given, &declared);
            Arc::new(KServeFormat {
                model,
                names,
                encoder: encoder()?,
                pad_to_max: shape.pad_to_max,
                binary: f.binary,
                text_input: f.text_input.clone(),
                pooling: f.pooling,
            })
        }
        (family, api) => {
            let api = api.expect("resolve_api gives the JSON families a task");
            let items = Items::new(encoder()?, shape.pad_to_max);
            Arc::new(
                ApiFormat::new(family, api, r.model.clone(), items, f.pooling)
                    .map_err(|e| usage("--api", e))?,
            )
        }
    };
    Ok(if f.pretokenize && format.tokenizes() {
        Arc::new(encbench_wire::payload::pretokenized::Pretokenized(format))
    } else {
        format
    })
}

/// What the server declares of the model's tensors: the standard metadata route first,
/// then Triton's `/config` for what metadata leaves out (KServe answers metadata with empty
/// inputs and outputs unless the model declares them, and has no `/config`).
async fn declared_tensors(url: &str, model: &str, headers: &ExtraHeaders) -> Vec<Declared> {
    let base = format!("{}/v2/models/{model}", url.trim_end_matches('/'));
    // A server that does not answer these soon is taken as one that declares nothing.
    let Ok(client) = encbench_wire::client::tls::reqwest_builder()
        .default_headers(headers.map())
        .timeout(Duration::from_secs(10))
        .build()
    else {
        return vec![];
    };
    let get = |url: String| {
        let client = client.clone();
        async move {
            let resp = client
                .get(&url)
                .send()
                .await
                .ok()
                .filter(|r| r.status().is_success())?;
            match body::read_reqwest(resp, body::MAX_PROBE_BYTES).await {
                Ok((json, false)) => serde_json::from_slice::<serde_json::Value>(&json).ok(),
                _ => None,
            }
        }
    };
    let mut declared = vec![];
    if let Some(meta) = get(base.clone()).await {
        declared.push(Declared::from_metadata(&meta));
    }
    if declared
        .first()
        .is_none_or(|d| d.inputs.is_empty() || d.outputs.is_empty())
        && let Some(config) = get(format!("{base}/config")).await
    {
        declared.push(Declared::from_config(&config));
    }
    declared
}

/// The most a target takes in one request body, and whose limit that is.
#[derive(Clone, Copy)]
struct BodyLimit {
    bytes: usize,
    whose: &'static str,
}

/// A body over the target's limit would be refused (SageMaker's 6 MiB) or make the client
/// build what no server takes: say so before sending anything.
fn check_body_limit(
    s: &TargetSettings,
    texts: &[Input],
    format: &dyn Format,
    limit: BodyLimit,
) -> Result<(), SetupError> {
    let mib = |n: usize| n as f64 / (1024.0 * 1024.0);
    for &b in std::iter::once(&s.batch_size).chain(&s.sweep_batch_sizes) {
        let flag = if b == s.batch_size {
            "--batch-size"
        } else {
            "--batch-sizes"
        };
        let size = match largest_body(texts, format, b, limit.bytes) {
            Ok(n) if n <= limit.bytes => continue,
            Ok(n) => format!(" (a {:.1} MiB request body)", mib(n)),
            // Only a lower bound, where the estimate stopped: not a figure worth showing.
            Err(_) => String::new(),
        };
        let fits = match largest_batch_that_fits(texts, format, limit.bytes) {
            0 => "not even one of them fits: give shorter --texts".to_string(),
            n => format!("batches of up to {n} fit"),
        };
        return Err(usage(
            flag,
            format!(
                "{b} is too large: a batch of {b} of these inputs is over {}{size}; {fits}",
                limit.whose
            ),
        ));
    }
    Ok(())
}

/// The largest batch whose every body fits in `limit`: as many copies of the largest input
/// as fit (each input of a request costs at most as much). The first guess leaves out what
/// grows with the count itself (a `batch_size` field's digits), so the body of that many
/// copies is built, and the count lowered by what it is over until it fits.
fn largest_batch_that_fits(texts: &[Input], format: &dyn Format, limit: usize) -> usize {
    let alone = |i: usize| format.prepare(&[&texts[i]]).body.len();
    let twice = format.prepare(&[&texts[0], &texts[0]]).body.len();
    let overhead = (2 * alone(0)).saturating_sub(twice);
    let Some((largest, size)) = (0..texts.len()).map(|i| (i, alone(i))).max_by_key(|t| t.1) else {
        return 0;
    };
    let each = size.saturating_sub(overhead).max(1);
    let mut b = limit.saturating_sub(overhead) / each;
    while b > 0 {
        let body = format.prepare(&vec![&texts[largest]; b]).body.len();
        if body <= limit {
            break;
        }
        b = b.saturating_sub((body - limit).div_ceil(each));
    }
    b
}

/// The largest body of a phase's first requests (up to 8) at batch size `b`, or `Err` with
/// an estimate once a body is sure to be far over `limit`. A body is built only when its
/// inputs' sizes say it could fit: a batch of a billion inputs is refused, never built.
fn largest_body(
    texts: &[Input],
    format: &dyn Format,
    b: usize,
    limit: usize,
) -> Result<usize, usize> {
    let n = texts.len();
    let alone = |i: usize| format.prepare(&[&texts[i]]).body.len();
    // What a body costs besides its inputs: two bodies of one input each hold it once more
    // than a body of the input twice.
    let twice = format.prepare(&[&texts[0], &texts[0]]).body.len();
    let overhead = (2 * alone(0)).saturating_sub(twice);
    let mut sizes: Vec<Option<usize>> = vec![None; n];
    let mut largest = 0;
    for k in 0..n.min(8) {
        let mut estimate = overhead;
        // Input j of request k is text (k·b + j) mod n, as `batch_inputs` takes it.
        let first = (k % n) * (b % n) % n;
        for j in 0..b {
            let i = (first + j % n) % n;
            let size = *sizes[i].get_or_insert_with(|| alone(i));
            estimate += size.saturating_sub(overhead);
            // Leeway over the limit: the estimate is close, not exact, and the body built
            // below is measured.
            if estimate > limit + limit / 8 {
                return Err(estimate);
            }
        }
        largest = largest.max(format.prepare(&batch_inputs(texts, b, k)).body.len());
    }
    Ok(largest)
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
