//! Which API a server at a URL speaks, found by a few cheap requests before any load: each
//! family's own metadata route, in an order that cannot take one server for another. TEI's
//! `/info` first (TEI also answers `/ping`), KServe v2's `/v2` (KServe also answers
//! `/v1/models`, in a shape of its own), the OpenAI-style model list of vLLM and gateways,
//! Infinity's `/models`, and last the SageMaker container contract's `/ping`, which vLLM
//! and TEI answer too. docs/api-families.md has the answers each server gives.
//!
//! With `--engine` given, nothing is guessed: only that family's metadata is read, for what
//! the flags leave open (the model, the task, the batch limit).

mod grpc;
mod probe;
mod servers;

use crate::client::headers::ExtraHeaders;
use crate::payload::{Api, PayloadFormat};
use encbench_core::export::Detected;
pub use grpc::grpc;
use probe::probe;
use servers::{infinity, kserve, openai, owner, tei, text, vllm, vllm_named};
use std::fmt::Write as _;
use std::time::Duration;

/// What was found, and the record the export keeps of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub family: PayloadFormat,
    /// The task, where the server says (TEI's model type, Infinity's capabilities, the vLLM
    /// route that answered).
    pub api: Option<Api>,
    pub model: Option<String>,
    /// Before every route of the family: Infinity started with `--url-prefix /v1`.
    pub prefix: &'static str,
    pub record: Detected,
}

impl Found {
    /// The line said before the load: `found TEI 1.9.3: model BAAI/bge-reranker-base, a
    /// reranker; max client batch 32`.
    pub fn line(&self) -> String {
        let r = &self.record;
        let mut s = format!("found {} (--engine {})", r.server, r.engine);
        let mut parts = vec![];
        if let Some(m) = &r.model {
            parts.push(format!("model {m}"));
        }
        if let Some(k) = &r.kind {
            let article = if k.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            parts.push(format!("{article} {k}"));
        }
        if !parts.is_empty() {
            s.push_str(": ");
            s.push_str(&parts.join(", "));
        }
        if let Some(b) = r.max_client_batch {
            let _ = write!(s, "; max client batch {b}");
        }
        encbench_core::scrub::text(&s)
    }
}

/// Why nothing can be loaded: the flag to name, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub flag: &'static str,
    pub message: String,
    /// Nothing answered (the connection refused, or no answer in time): left to the
    /// readiness check, which waits as long as `--ready-timeout` says and says so.
    pub unreachable: bool,
}

pub(crate) fn refused(flag: &'static str, message: impl Into<String>) -> Refused {
    Refused {
        flag,
        message: message.into(),
        unreachable: false,
    }
}

/// What a discovery may use: the user's headers, how long each request may take, and what
/// the flags already say.
pub struct Ask<'a> {
    pub url: &'a str,
    pub headers: &'a ExtraHeaders,
    pub wait: Duration,
    pub model: Option<&'a str>,
    pub api: Option<Api>,
}

/// The family of the server at `ask.url`, its model and task where it says.
pub async fn discover(ask: &Ask<'_>) -> Result<Found, Refused> {
    let mut p = probe(ask)?;
    p.ahead(&[
        "/info",
        "/v2",
        "/v1/models",
        "/models",
        "/v2/health/ready",
        "/ping",
    ])
    .await;
    // A server that answers nothing in time is left to the readiness check, which waits for
    // it as long as --ready-timeout says and says so.
    if p.ahead
        .iter()
        .all(|(_, a)| matches!(a, Ok(a) if a.status == 0))
    {
        return Err(Refused {
            unreachable: true,
            ..refused("--url", "no answer")
        });
    }
    if let Some(info) = p
        .get("/info")
        .await?
        .ok_json()
        .filter(|v| v.get("model_type").is_some())
    {
        return Ok(tei(p, &info, ask));
    }
    if let Some(meta) = p
        .get("/v2")
        .await?
        .ok_json()
        .filter(|v| v["name"].is_string())
    {
        let server = format!(
            "KServe v2 ({} {})",
            text(&meta["name"]),
            text(&meta["version"])
        );
        return kserve(p, server.replace(" )", ")"), ask).await;
    }
    if let Some(list) = p
        .get("/v1/models")
        .await?
        .ok_json()
        .filter(|v| v["data"].is_array())
    {
        return match owner(&list).as_deref() {
            Some("vllm") => vllm(p, &list, ask).await,
            Some("infinity") => infinity(p, &list, ask, "/v1"),
            _ => openai(p, &list, ask),
        };
    }
    if let Some(list) = p.get("/models").await?.ok_json().filter(|v| {
        owner(v).as_deref() == Some("infinity") || v["data"][0]["capabilities"].is_array()
    }) {
        return infinity(p, &list, ask, "");
    }
    // A KServe v2 server that keeps its metadata to itself still says whether it is ready:
    // Triton with an empty body, KServe with `{"ready": ...}`; a server that answers every
    // route alike says neither.
    let ready = p.get("/v2/health/ready").await?;
    let says_ready = match &ready.json {
        None => ready.empty,
        Some(v) => v.get("ready").is_some(),
    };
    if matches!(ready.status, 200 | 400 | 503) && says_ready {
        return kserve(p, "a KServe v2 server".into(), ask).await;
    }
    if matches!(p.get("/ping").await?.status, 200..=299) {
        let contract = "the SageMaker container contract".to_string();
        return Ok(p.found(PayloadFormat::Hf, contract, None, None, None));
    }
    Err(refused(
        "--url",
        format!(
            "{}: no API this tool knows answered ({}): name it with --engine (hf, triton, vllm, openai, tei, infinity, jina), and its route with --path if it is not the family's",
            encbench_core::scrub::url(&p.base),
            p.tried.join(", ")
        ),
    ))
}

/// With `--engine` given: that family's metadata, for what the flags leave open. Nothing
/// is guessed, and a server that does not answer is taken at the flags' word.
pub async fn metadata(family: PayloadFormat, ask: &Ask<'_>) -> Result<Option<Found>, Refused> {
    let mut p = probe(ask)?;
    let found = match family {
        PayloadFormat::Tei => p
            .get("/info")
            .await?
            .ok_json()
            .map(|info| tei(p, &info, ask)),
        PayloadFormat::Triton if ask.model.is_none() => {
            Some(kserve(p, "a KServe v2 server".into(), ask).await?)
        }
        PayloadFormat::Vllm | PayloadFormat::Openai if ask.model.is_none() => {
            match p.get("/v1/models").await?.ok_json() {
                Some(list) if family == PayloadFormat::Vllm => Some(vllm_named(p, &list, ask)?),
                Some(list) => Some(openai(p, &list, ask)?),
                None => None,
            }
        }
        PayloadFormat::Infinity => match p.get("/models").await?.ok_json() {
            Some(list) => Some(infinity(p, &list, ask, "")?),
            None => None,
        },
        _ => None,
    };
    Ok(found)
}
