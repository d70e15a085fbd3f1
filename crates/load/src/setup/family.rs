//! Which API family, task, model and routes a target's requests are built for: from the
//! flags, and from what the server says of itself (discovery at a URL given without
//! `--engine`, the family's own metadata otherwise, KServe v2's tensors).

use super::{Address, FormatSettings, SetupError, TargetSettings, usage};
use encbench_core::input::Shape;
use encbench_wire::client::body;
use encbench_wire::client::headers::ExtraHeaders;
use encbench_wire::client::url::Routes;
use encbench_wire::discover::{self, Ask, Found};
use encbench_wire::payload::items::Items;
use encbench_wire::payload::json_api::ApiFormat;
use encbench_wire::payload::kserve::{Declared, GivenNames, KServeFormat, TensorNames, Wire};
use encbench_wire::payload::{Api, Format, HfFormat, PayloadFormat};
use encbench_wire::tokenize::TokenCounter;
use std::sync::Arc;
use std::time::Duration;

/// The family, task and model, from the flags and what the server says of itself.
pub(super) async fn resolve(
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
        _ if super::grpc::url(s).is_some() => {
            if s.format.format.is_some() && s.format.model.is_some() {
                return Ok(None);
            }
            discover::grpc(&ask).await.map(Some)
        }
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
    // A rerank task's batch is its documents per query (`--docs-per-query` and
    // `--sweep-docs` ask for the task): named by the flags that gave it.
    let rerank = s.task == Some(encbench_core::input::Task::Rerank);
    for &b in std::iter::once(&s.batch_size).chain(&s.sweep_batch_sizes) {
        if b > limit {
            let flag = match (b == s.batch_size, rerank) {
                (true, false) => "--batch-size",
                (false, false) => "--batch-sizes",
                (true, true) => "--docs-per-query",
                (false, true) => "--sweep-docs",
            };
            let what = if rerank { " documents a query" } else { "" };
            return Err(usage(
                flag,
                format!(
                    "{b}{what} is over the server's max client batch size of {limit} (its metadata says so): give at most {limit}"
                ),
            ));
        }
    }
    Ok(())
}

/// The target's routes: the family's (behind the prefix its server was found with), or the
/// user's. A SageMaker endpoint has one route, its invocations.
pub(super) fn routes(
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
    if super::grpc::url(s).is_some() {
        return Ok(Routes {
            invoke: super::grpc::invoke_path(),
            ready: None,
            stats: None,
        });
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

/// The family, task and model a target's requests are built for, from the flags and what
/// the server said.
pub(super) struct Resolved {
    pub(super) family: PayloadFormat,
    pub(super) api: Option<Api>,
    pub(super) model: Option<String>,
}

/// The payload format, with KServe v2 tensor names from the flags, else from what the server
/// declares (metadata, then `/config`), else BERT's inputs and the first reply's output.
pub(super) async fn build_format(
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
    if matches!(r.family, PayloadFormat::Hf | PayloadFormat::Triton) {
        f.rerank
            .check(r.family, None)
            .map_err(|(flag, e)| usage(flag, e))?;
    }
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
            let grpc = url.is_some_and(encbench_wire::client::grpc::is_grpc);
            let declared = match url {
                Some(url) if grpc => super::grpc::declared_tensors(url, &model, headers).await,
                Some(url) => declared_tensors(url, &model, headers).await,
                None => vec![],
            };
            let names = TensorNames::resolve(&given, &declared);
            Arc::new(KServeFormat {
                model,
                names,
                encoder: encoder()?,
                pad_to_max: shape.pad_to_max,
                wire: match (grpc, f.binary) {
                    (true, _) => Wire::Grpc,
                    (false, true) => Wire::Binary,
                    (false, false) => Wire::Json,
                },
                text_input: f.text_input.clone(),
                pooling: f.pooling,
            })
        }
        (family, api) => {
            let api = api.expect("resolve_api gives the JSON families a task");
            let items = Items::new(encoder()?, shape.pad_to_max);
            Arc::new(
                ApiFormat::new(family, api, r.model.clone(), items, f.pooling)
                    .map_err(|e| usage("--api", e))?
                    .with_rerank(f.rerank)
                    .map_err(|(flag, e)| usage(flag, e))?,
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
