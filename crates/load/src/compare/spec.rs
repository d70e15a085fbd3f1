//! What `compare` is asked to measure: each target as a name plus the settings a single run
//! against it would take, so a compared target is prepared exactly as a plain run would be.

use super::CompareSpec;
use crate::setup::{Address, FormatSettings, TargetSettings};
use encbench_core::input::Shape;
use encbench_wire::client::sagemaker::SageMakerSettings;
use encbench_wire::payload::{Api, PayloadFormat, RerankOptions};

#[derive(Debug, Clone, PartialEq)]
pub struct TargetSpec {
    pub name: String,
    /// The flag it came from, named in errors about it.
    pub flag: String,
    pub url: Option<String>,
    pub endpoint: Option<String>,
    pub engine: Option<PayloadFormat>,
    /// The task of a family with several routes, and the routes if not the family's.
    pub api: Option<Api>,
    pub path: Option<String>,
    pub ready_path: Option<String>,
    pub model: Option<String>,
    pub container: Option<String>,
    pub component: Option<String>,
    pub target_model: Option<String>,
    pub variant: Option<String>,
    pub endpoint_url: Option<String>,
    pub instance: Option<String>,
    pub price: Option<f64>,
    /// This target's own tokenizer.json (a deployment that tokenizes differently).
    pub tokenizer: Option<std::path::PathBuf>,
    /// Its server's Prometheus metrics (`--metrics-url` of a plain run).
    pub metrics_url: Option<String>,
    /// Its rerank requests' `top_n` and `return_documents` (what a reply costs).
    pub rerank: RerankOptions,
    /// KServe v2 over HTTP with the binary tensor extension (`binary`): the same server
    /// compared as JSON, binary and gRPC.
    pub binary: bool,
    /// `grpc-connections=N` of a `grpc://` target.
    pub grpc_connections: Option<usize>,
}

impl TargetSpec {
    fn empty(flag: &str) -> TargetSpec {
        TargetSpec {
            name: String::new(),
            flag: flag.to_string(),
            url: None,
            endpoint: None,
            engine: None,
            api: None,
            path: None,
            ready_path: None,
            model: None,
            container: None,
            component: None,
            target_model: None,
            variant: None,
            endpoint_url: None,
            instance: None,
            price: None,
            tokenizer: None,
            metrics_url: None,
            rerank: RerankOptions::default(),
            binary: false,
            grpc_connections: None,
        }
    }
}

/// `name=gpu,url=http://…,instance=ml.g5.xlarge`. A value may itself hold `=` (a URL query).
pub fn parse_target(s: &str) -> Result<TargetSpec, String> {
    let mut t = TargetSpec::empty("--target");
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        // The one key without a value: a flag, as `--binary` is.
        if part == "binary" {
            t.binary = true;
            continue;
        }
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("'{part}' is not key=value"))?;
        let value = value.trim().to_string();
        if value.is_empty() {
            return Err(format!("{key} has no value"));
        }
        if key.trim() == "url" {
            encbench_wire::client::address::check_target(&value)
                .map_err(|e| format!("{key}: {e}"))?;
        } else if matches!(key.trim(), "endpoint-url" | "metrics-url") {
            encbench_wire::client::address::check(&value).map_err(|e| format!("{key}: {e}"))?;
        }
        match key.trim() {
            "name" => t.name = value,
            "url" => t.url = Some(value),
            "endpoint" => t.endpoint = Some(value),
            "engine" => {
                t.engine = Some(value.parse::<PayloadFormat>().map_err(|_| {
                    format!(
                        "unknown engine '{value}' (hf, triton, vllm, openai, tei, infinity, jina)"
                    )
                })?);
            }
            "api" => {
                t.api = Some(value.parse::<Api>().map_err(|_| {
                    format!("unknown api '{value}' (embed, classify, rerank, score, pooling)")
                })?);
            }
            "path" | "ready-path" => {
                let route = crate::setup::check_route(&value).map_err(|e| format!("{key}: {e}"))?;
                if key.trim() == "path" {
                    t.path = Some(route);
                } else {
                    t.ready_path = Some(route);
                }
            }
            "model" => t.model = Some(value),
            "container" => t.container = Some(value),
            "component" => t.component = Some(value),
            "target-model" => t.target_model = Some(value),
            "variant" => t.variant = Some(value),
            "endpoint-url" => t.endpoint_url = Some(value),
            "instance" => t.instance = Some(value),
            "tokenizer" => t.tokenizer = Some(value.into()),
            "metrics-url" => t.metrics_url = Some(value),
            "top-n" => match value.parse::<usize>() {
                Ok(n) if n > 0 => t.rerank.top_n = Some(n),
                _ => return Err(format!("top-n '{value}' must be a whole number > 0")),
            },
            "return-documents" => match value.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" | "1" => t.rerank.return_documents = Some(true),
                "false" | "no" | "off" | "0" => t.rerank.return_documents = Some(false),
                _ => return Err(format!("return-documents '{value}' must be true or false")),
            },
            "binary" => match value.to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" | "1" => t.binary = true,
                "false" | "no" | "off" | "0" => t.binary = false,
                _ => return Err(format!("binary '{value}' must be true or false")),
            },
            "grpc-connections" => match value.parse::<usize>() {
                Ok(n) if (1..=256).contains(&n) => t.grpc_connections = Some(n),
                _ => return Err(format!("grpc-connections '{value}' must be 1 to 256")),
            },
            "price" => match value.parse::<f64>() {
                Ok(p) if p > 0.0 && p.is_finite() => t.price = Some(p),
                _ => return Err(format!("price '{value}' must be USD per hour > 0")),
            },
            other => {
                return Err(format!(
                    "unknown key '{other}' (name, url, endpoint, engine, api, path, ready-path, \
                     model, container, component, target-model, variant, endpoint-url, instance, \
                     price, tokenizer, metrics-url, top-n, return-documents, binary, \
                     grpc-connections)"
                ));
            }
        }
    }
    match (&t.url, &t.endpoint) {
        (Some(_), Some(_)) => return Err("give url or endpoint, not both".into()),
        (None, None) => return Err("needs url=… or endpoint=…".into()),
        _ => {}
    }
    if t.name.is_empty() {
        // Named by its URL, the target is shown and exported: never with a password.
        t.name = t
            .endpoint
            .clone()
            .or(t.url.as_deref().map(encbench_wire::client::shown_url))
            .unwrap_or_default();
    }
    Ok(t)
}

/// The three co-hosting schemes of SageMaker: `ENDPOINT:ROUTE[@INSTANCE]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    MultiContainer,
    InferenceComponent,
    Lmi,
}

impl Scheme {
    fn flag(self) -> &'static str {
        match self {
            Scheme::MultiContainer => "--mc",
            Scheme::InferenceComponent => "--ic",
            Scheme::Lmi => "--lmi",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Scheme::MultiContainer => "mc",
            Scheme::InferenceComponent => "ic",
            Scheme::Lmi => "lmi",
        }
    }
}

pub fn parse_scheme(scheme: Scheme, s: &str) -> Result<TargetSpec, String> {
    let (route, instance) = match s.split_once('@') {
        Some((r, i)) if !i.is_empty() => (r, Some(i.to_string())),
        Some(_) => return Err("nothing after '@' (give an instance type)".into()),
        None => (s, None),
    };
    let (endpoint, name) = route
        .split_once(':')
        .filter(|(e, n)| !e.is_empty() && !n.is_empty())
        .ok_or_else(|| format!("'{s}' is not ENDPOINT:NAME[@INSTANCE]"))?;
    let mut t = TargetSpec::empty(scheme.flag());
    t.name = format!("{}/{name}", scheme.prefix());
    t.endpoint = Some(endpoint.to_string());
    t.instance = instance;
    match scheme {
        Scheme::MultiContainer => t.container = Some(name.to_string()),
        Scheme::InferenceComponent => t.component = Some(name.to_string()),
        Scheme::Lmi => t.target_model = Some(name.to_string()),
    }
    Ok(t)
}

/// Every target of the command line, in the order given per flag; names must be unique
/// because they key the tables and the export.
pub fn targets(
    demo: Vec<TargetSpec>,
    targets: &[String],
    [mc, ic, lmi]: [&[String]; 3],
) -> Result<Vec<TargetSpec>, (String, String)> {
    let mut out = demo;
    for s in targets {
        out.push(parse_target(s).map_err(|e| ("--target".to_string(), format!("'{s}': {e}")))?);
    }
    for (scheme, list) in [
        (Scheme::MultiContainer, mc),
        (Scheme::InferenceComponent, ic),
        (Scheme::Lmi, lmi),
    ] {
        for s in list {
            out.push(parse_scheme(scheme, s).map_err(|e| (scheme.flag().to_string(), e))?);
        }
    }
    if out.len() < 2 {
        return Err((
            "--target".into(),
            "compare needs at least two targets (--target, --mc, --ic, --lmi, or --demo)".into(),
        ));
    }
    for (i, t) in out.iter().enumerate() {
        if out[..i].iter().any(|u| u.name == t.name) {
            return Err((
                t.flag.clone(),
                format!("two targets are named '{}'; give each a name=", t.name),
            ));
        }
    }
    Ok(out)
}

/// Three co-hosting deployments of mDeBERTa measured on SageMaker, as reference-endpoint
/// service models fitted to their figures at 512 tokens (base + per-token × batch × 512):
/// b=1 p50 and b=8 samples/s of a CPU multi-container ONNX endpoint (58.3 ms, 27/s), a GPU
/// inference component (25.8 ms, 78/s) and a GPU LMI multi-model endpoint (49.7 ms,
/// 104/s), with their instance types.
pub const DEMO: [(&str, f64, f64, &str); 3] = [
    ("mc/cpu-onnx", 24.34, 0.06632, "ml.c6i.2xlarge"),
    ("ic/gpu-mdeberta", 14.8, 0.0215, "ml.g6.12xlarge"),
    ("lmi/gpu-mdeberta", 45.81, 0.00759, "ml.g5.xlarge"),
];

/// A local target: the demo's simulated endpoints.
pub fn local(name: &str, url: String, instance: &str) -> TargetSpec {
    let mut t = TargetSpec::empty("--demo");
    t.name = name.to_string();
    t.url = Some(url);
    t.instance = Some(instance.to_string());
    t
}

/// The settings a single run against one target would take: the shared workload plus the
/// target's own address, routing, payload format and price.
pub fn target_settings(a: &CompareSpec, t: &TargetSpec) -> TargetSettings {
    let address = match (&t.endpoint, &t.url) {
        (Some(endpoint), _) => Address::SageMaker(SageMakerSettings {
            endpoint: endpoint.clone(),
            region: a.region.clone(),
            profile: a.profile.clone(),
            endpoint_url: t.endpoint_url.clone().or(a.endpoint_url.clone()),
            target_container: t.container.clone(),
            inference_component: t.component.clone(),
            target_model: t.target_model.clone(),
            target_variant: t.variant.clone(),
            content_type: "application/json".into(),
        }),
        (None, Some(url)) => Address::Url(url.clone()),
        (None, None) => unreachable!("parse_target requires url or endpoint"),
    };
    TargetSettings {
        address,
        format: FormatSettings {
            model: t.model.clone().or(a.model.clone()),
            pooling: a.pooling,
            api: t.api.or(a.api),
            path: t.path.clone(),
            ready_path: t.ready_path.clone(),
            rerank: t.rerank,
            binary: t.binary,
            ..FormatSettings::of(t.engine.or(a.format))
        },
        tokenizer: t.tokenizer.clone().or(a.tokenizer.clone()),
        shape: Shape {
            pad_to_max: a.pad_to_max,
            max_len: a.max_len,
        },
        texts: a.texts.clone(),
        input_tokens: None,
        accuracy: a
            .accuracy_check
            .then(|| (a.accuracy_samples.clone(), a.labels.clone())),
        instance_type: t.instance.clone().or(a.instance_type.clone()),
        price_per_hour: t.price,
        seed: a.seed,
        max_concurrency: a.concurrency_levels.iter().copied().max().unwrap_or(1),
        // The plan is compare's own; these shape the body-size check.
        batch_size: 1,
        batch_size_given: true,
        sweep_batch_sizes: a.batch_sizes.clone(),
        task: a.task,
        rerank_samples: a.rerank_samples.clone(),
        timeout: a.timeout,
        ready_timeout: a.ready_timeout,
        headers: a.headers.clone(),
        bearer_token_env: a.bearer_token_env.clone(),
        grpc_connections: t.grpc_connections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_pairs() {
        let t = parse_target("name=gpu, url=http://h:1/x?a=b ,instance=ml.g5.xlarge").unwrap();
        assert_eq!(t.name, "gpu");
        assert_eq!(t.url.as_deref(), Some("http://h:1/x?a=b"));
        assert_eq!(t.instance.as_deref(), Some("ml.g5.xlarge"));
        let t = parse_target("endpoint=ep,component=ic1,price=2.5,engine=triton").unwrap();
        assert_eq!(t.name, "ep");
        assert_eq!(t.price, Some(2.5));
        assert_eq!(t.engine, Some(PayloadFormat::Triton));
        let t = parse_target("url=http://h:1,top-n=3,return-documents=no").unwrap();
        assert_eq!(
            t.rerank,
            RerankOptions {
                top_n: Some(3),
                return_documents: Some(false)
            }
        );
        let t = parse_target("url=http://h:1,binary").unwrap();
        assert!(t.binary);
        let t = parse_target("url=grpc://h:8001,grpc-connections=4").unwrap();
        assert_eq!((t.binary, t.grpc_connections), (false, Some(4)));
        let t = parse_target("url=http://u:pw@h:9999").unwrap();
        assert_eq!(t.name, "http://h:9999");
        for bad in [
            "name=x",
            "url=http://h:1,endpoint=b",
            "url",
            "url=http://h:1,colour=red",
            "url=http://h:1,price=-1",
            "url=http://h:1,engine=onnx",
            "url=http://h:1,top-n=0",
            "url=http://h:1,return-documents=maybe",
            "url=http://h:1,binary=maybe",
            "url=grpc://h:1,grpc-connections=0",
            "url=grpc://h:1/x",
            "url=http://h:1,bin",
            "url=",
        ] {
            assert!(parse_target(bad).is_err(), "{bad}");
        }
        // An address no request could reach is refused here, under the key that gave it.
        for (bad, key) in [
            (
                "url=http://u:pw@h:99999",
                "url: http://h:99999: port 99999 is out of range",
            ),
            (
                "endpoint=e,endpoint-url=h:443",
                "endpoint-url: h:443: no scheme",
            ),
            (
                "url=http://h:1,metrics-url=http://h:0/m",
                "metrics-url: http://h:0/m: port 0",
            ),
        ] {
            let e = parse_target(bad).unwrap_err();
            assert!(e.starts_with(key), "{bad}: {e}");
        }
    }

    #[test]
    fn scheme_shorthands() {
        let t = parse_scheme(Scheme::InferenceComponent, "shared:nli-ic@ml.g6.12xlarge").unwrap();
        assert_eq!(t.name, "ic/nli-ic");
        assert_eq!(t.endpoint.as_deref(), Some("shared"));
        assert_eq!(t.component.as_deref(), Some("nli-ic"));
        assert_eq!(t.instance.as_deref(), Some("ml.g6.12xlarge"));
        let t = parse_scheme(Scheme::Lmi, "lmi-ep:mdeberta.tar.gz").unwrap();
        assert_eq!(t.target_model.as_deref(), Some("mdeberta.tar.gz"));
        assert_eq!(t.instance, None);
        for bad in ["ep", ":c", "ep:", "ep:c@"] {
            assert!(parse_scheme(Scheme::MultiContainer, bad).is_err(), "{bad}");
        }
    }
}
