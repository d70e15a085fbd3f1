//! What `compare` is asked to measure: each target as a name plus the `RunArgs` a single run
//! against it would take, so a compared target is prepared exactly as a plain run would be.

use crate::cli::{Cli, CompareArgs, EngineKind, RunArgs};
use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, PartialEq)]
pub struct TargetSpec {
    pub name: String,
    /// The flag it came from, named in errors about it.
    pub flag: String,
    pub url: Option<String>,
    pub endpoint: Option<String>,
    pub engine: Option<EngineKind>,
    pub model: Option<String>,
    pub container: Option<String>,
    pub component: Option<String>,
    pub target_model: Option<String>,
    pub variant: Option<String>,
    pub endpoint_url: Option<String>,
    pub instance: Option<String>,
    pub price: Option<f64>,
}

impl TargetSpec {
    fn empty(flag: &str) -> TargetSpec {
        TargetSpec {
            name: String::new(),
            flag: flag.to_string(),
            url: None,
            endpoint: None,
            engine: None,
            model: None,
            container: None,
            component: None,
            target_model: None,
            variant: None,
            endpoint_url: None,
            instance: None,
            price: None,
        }
    }
}

/// `name=gpu,url=http://…,instance=ml.g5.xlarge`. A value may itself hold `=` (a URL query).
pub fn parse_target(s: &str) -> Result<TargetSpec, String> {
    let mut t = TargetSpec::empty("--target");
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("'{part}' is not key=value"))?;
        let value = value.trim().to_string();
        if value.is_empty() {
            return Err(format!("{key} has no value"));
        }
        match key.trim() {
            "name" => t.name = value,
            "url" => t.url = Some(value),
            "endpoint" => t.endpoint = Some(value),
            "engine" => {
                t.engine = Some(
                    EngineKind::from_str(&value, true)
                        .map_err(|_| format!("unknown engine '{value}' (hf, vllm, triton)"))?,
                )
            }
            "model" => t.model = Some(value),
            "container" => t.container = Some(value),
            "component" => t.component = Some(value),
            "target-model" => t.target_model = Some(value),
            "variant" => t.variant = Some(value),
            "endpoint-url" => t.endpoint_url = Some(value),
            "instance" => t.instance = Some(value),
            "price" => match value.parse::<f64>() {
                Ok(p) if p > 0.0 && p.is_finite() => t.price = Some(p),
                _ => return Err(format!("price '{value}' must be USD per hour > 0")),
            },
            other => {
                return Err(format!(
                    "unknown key '{other}' (name, url, endpoint, engine, model, container, \
                     component, target-model, variant, endpoint-url, instance, price)"
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
        t.name = t.endpoint.clone().or(t.url.clone()).unwrap_or_default();
    }
    Ok(t)
}

/// The seed's three co-hosting schemes: `ENDPOINT:ROUTE[@INSTANCE]`.
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
    a: &CompareArgs,
    demo: Vec<TargetSpec>,
) -> Result<Vec<TargetSpec>, (String, String)> {
    let mut out = demo;
    for s in &a.targets {
        out.push(parse_target(s).map_err(|e| ("--target".to_string(), format!("'{s}': {e}")))?);
    }
    for (scheme, list) in [
        (Scheme::MultiContainer, &a.mc),
        (Scheme::InferenceComponent, &a.ic),
        (Scheme::Lmi, &a.lmi),
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

/// The seed's co-hosting conditions as reference-endpoint service models, fitted to its
/// figures at 512 tokens (base + per-token × batch × 512): b=1 p50 and b=8 samples/s of
/// 02 CPU multi-container ONNX (58.3 ms, 27/s), 03 GPU inference component (25.8 ms, 78/s)
/// and 04 GPU LMI (49.7 ms, 104/s), with their instance types.
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

/// The single-run arguments for one target: the shared workload plus the target's own
/// address, routing, engine and price.
pub fn run_args(a: &CompareArgs, t: &TargetSpec) -> RunArgs {
    let mut r = Cli::parse_from(["encbench-tui"]).run;
    r.endpoint = t.endpoint.clone();
    if let Some(u) = &t.url {
        r.url = u.clone();
    }
    r.engine = t.engine.unwrap_or(a.engine);
    r.model = t.model.clone().or(a.model.clone());
    r.sagemaker.region = a.region.clone();
    r.sagemaker.profile = a.profile.clone();
    r.sagemaker.endpoint_url = t.endpoint_url.clone().or(a.endpoint_url.clone());
    r.sagemaker.target_container = t.container.clone();
    r.sagemaker.inference_component = t.component.clone();
    r.sagemaker.target_model = t.target_model.clone();
    r.sagemaker.target_variant = t.variant.clone();
    r.n = a.n;
    r.warmup = a.warmup;
    r.warmup_timeout = a.warmup_timeout;
    // The plan is compare's own; these shape the client pool and the body-size check.
    r.sweep_batch = true;
    r.batch_sizes = a.batch_sizes.clone();
    r.concurrency_levels = a.concurrency_levels.clone();
    r.pad_to_max = !a.no_pad_to_max;
    r.max_len = a.max_len;
    r.texts = a.texts.clone();
    r.tokenizer = a.tokenizer.clone();
    r.timeout = a.timeout;
    r.ready_timeout = a.ready_timeout;
    r.seed = a.seed;
    r.accuracy_samples = a.accuracy_samples.clone();
    r.no_accuracy = a.no_accuracy;
    r.labels = a.labels.clone();
    r.instance_type = t.instance.clone().or(a.instance_type.clone());
    r.price_per_hour = t.price;
    r.headless = true;
    r
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
        assert_eq!(t.engine, Some(EngineKind::Triton));
        for bad in [
            "name=x",
            "url=a,endpoint=b",
            "url",
            "url=a,colour=red",
            "url=a,price=-1",
            "url=a,engine=onnx",
            "url=",
        ] {
            assert!(parse_target(bad).is_err(), "{bad}");
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
