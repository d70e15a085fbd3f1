//! Which API a server at a URL speaks, found by a few cheap requests before any load: each
//! family's own metadata route, in an order that cannot take one server for another. TEI's
//! `/info` first (TEI also answers `/ping`), KServe v2's `/v2` (KServe also answers
//! `/v1/models`, in a shape of its own), the OpenAI-style model list of vLLM and gateways,
//! Infinity's `/models`, and last the SageMaker container contract's `/ping`, which vLLM
//! and TEI answer too. docs/api-families.md has the answers each server gives.
//!
//! With `--engine` given, nothing is guessed: only that family's metadata is read, for what
//! the flags leave open (the model, the task, the batch limit).

use crate::client::headers::ExtraHeaders;
use crate::client::{body, tls};
use crate::payload::{Api, PayloadFormat};
use encbench_core::export::Detected;
use serde_json::{Value, json};
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

fn refused(flag: &'static str, message: impl Into<String>) -> Refused {
    Refused {
        flag,
        message: message.into(),
        unreachable: false,
    }
}

/// The requests of one discovery, each said in `tried`.
struct Probe {
    client: reqwest::Client,
    base: String,
    tried: Vec<String>,
    /// Answers fetched ahead, all at once, taken as the order of discovery asks for them.
    ahead: Vec<Fetched>,
}

/// A request as `tried` says it, and its answer.
type Fetched = (String, Result<Answer, Refused>);

/// An answer: its status, and its body when it is JSON.
struct Answer {
    status: u16,
    json: Option<Value>,
    empty: bool,
}

impl Answer {
    fn ok_json(self) -> Option<Value> {
        (200..300)
            .contains(&self.status)
            .then_some(self.json)
            .flatten()
    }
}

/// One request: the line `tried` keeps of it, and its answer. A refusal of credentials
/// ends the discovery (waiting would not change it), as nothing answering at all does.
async fn fetch(
    client: reqwest::Client,
    base: String,
    method: &'static str,
    path: String,
    body: Option<Value>,
) -> Fetched {
    let url = format!("{base}{path}");
    let req = match &body {
        None => client.get(&url),
        Some(b) => client.post(&url).json(b),
    };
    let shown = || encbench_core::scrub::url(&base);
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) if e.is_timeout() => {
            let answer = Answer {
                status: 0,
                json: None,
                empty: true,
            };
            return (format!("{method} {path} no answer"), Ok(answer));
        }
        Err(e) => {
            let why = crate::client::url::short_reason(&e);
            let message = format!("{}: endpoint unreachable ({why})", shown());
            let r = Refused {
                unreachable: true,
                ..refused("--url", message)
            };
            return (format!("{method} {path} unreachable"), Err(r));
        }
    };
    let status = resp.status().as_u16();
    let line = format!("{method} {path} {status}");
    if matches!(status, 401 | 403) {
        let message = format!(
            "{}: {method} {path} answered {status}: the server wants credentials (--header, --bearer-token-env)",
            shown()
        );
        return (line, Err(refused("--url", message)));
    }
    let (json, empty) = match body::read_reqwest(resp, body::MAX_PROBE_BYTES).await {
        Ok((b, false)) => (serde_json::from_slice(&b).ok(), b.trim_ascii().is_empty()),
        _ => (None, false),
    };
    (
        line,
        Ok(Answer {
            status,
            json,
            empty,
        }),
    )
}

impl Probe {
    /// Sends every GET of `paths` at once: discovery then takes as long as the slowest
    /// answer, not the sum of them (a server that trickles every route costs one wait).
    async fn ahead(&mut self, paths: &[&str]) {
        let mut set = tokio::task::JoinSet::new();
        for (i, path) in paths.iter().enumerate() {
            let (client, base, path) =
                (self.client.clone(), self.base.clone(), (*path).to_string());
            set.spawn(async move { (i, fetch(client, base, "GET", path, None).await) });
        }
        let mut answers: Vec<(usize, Fetched)> = vec![];
        while let Some(done) = set.join_next().await {
            if let Ok(a) = done {
                answers.push(a);
            }
        }
        answers.sort_by_key(|(i, _)| *i);
        self.ahead = answers.into_iter().map(|(_, a)| a).collect();
    }

    async fn send(
        &mut self,
        method: &'static str,
        path: &str,
        body: Option<Value>,
    ) -> Result<Answer, Refused> {
        let wanted = format!("{method} {path} ");
        let (line, answer) = match self.ahead.iter().position(|(l, _)| l.starts_with(&wanted)) {
            Some(i) => self.ahead.remove(i),
            None => {
                let (client, base) = (self.client.clone(), self.base.clone());
                fetch(client, base, method, path.to_string(), body).await
            }
        };
        self.tried.push(line);
        answer
    }

    async fn get(&mut self, path: &str) -> Result<Answer, Refused> {
        self.send("GET", path, None).await
    }

    async fn post(&mut self, path: &str, body: Value) -> Result<Answer, Refused> {
        self.send("POST", path, Some(body)).await
    }

    /// What was found: `said` is the task the server says its model has (its kind), which
    /// `asked` (`--api`) overrides for the requests but not in the record.
    fn found(
        self,
        family: PayloadFormat,
        server: String,
        model: Option<String>,
        said: Option<Api>,
        asked: Option<Api>,
    ) -> Found {
        Found {
            family,
            api: asked.or(said),
            prefix: "",
            record: Detected {
                engine: family.name().into(),
                server,
                kind: said.map(|a| a.kind().to_string()),
                model: model.clone(),
                max_client_batch: None,
                tried: self.tried,
            },
            model,
        }
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

fn probe(ask: &Ask<'_>) -> Result<Probe, Refused> {
    let client = tls::reqwest_builder()
        .default_headers(ask.headers.map())
        .timeout(ask.wait)
        .connect_timeout(ask.wait)
        .build()
        .map_err(|e| refused("--url", format!("cannot build an HTTP client: {e}")))?;
    Ok(Probe {
        client,
        base: ask.url.trim_end_matches('/').to_string(),
        tried: vec![],
        ahead: vec![],
    })
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

fn text(v: &Value) -> String {
    v.as_str()
        .map(encbench_core::scrub::text)
        .unwrap_or_default()
}

fn owner(list: &Value) -> Option<String> {
    list["data"][0]["owned_by"].as_str().map(str::to_owned)
}

/// The model to load: the one `--model` names, else the server's only one.
fn pick_model(
    names: &[String],
    given: Option<&str>,
    listed_by: &str,
) -> Result<Option<String>, Refused> {
    if let Some(m) = given {
        return Ok(Some(m.to_string()));
    }
    match names {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        many => Err(refused(
            "--model",
            format!(
                "the server serves {} models ({listed_by}: {}): name one with --model",
                many.len(),
                encbench_core::scrub::text(&many.join(", "))
            ),
        )),
    }
}

fn ids(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter_map(|m| m["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// TEI: `/info` says the model, its type and the batch limit.
fn tei(p: Probe, info: &Value, ask: &Ask<'_>) -> Found {
    let kind = info["model_type"]
        .as_object()
        .and_then(|o| o.keys().next().cloned())
        .unwrap_or_default();
    let said = match kind.as_str() {
        "classifier" => Some(Api::Classify),
        "reranker" => Some(Api::Rerank),
        "embedding" => Some(Api::Embed),
        _ => None,
    };
    let server = format!("TEI {}", text(&info["version"]));
    let model = Some(text(&info["model_id"])).filter(|m| !m.is_empty());
    let server = server.trim().to_string();
    let mut found = p.found(PayloadFormat::Tei, server, model, said, ask.api);
    found.record.max_client_batch = info["max_client_batch_size"].as_u64().map(|n| n as usize);
    found
}

/// KServe v2 (Triton, KServe's ModelServer): the model from `--model`, else the server's
/// list (KServe's `GET /v2/models`, Triton's repository index, else its statistics).
async fn kserve(mut p: Probe, server: String, ask: &Ask<'_>) -> Result<Found, Refused> {
    let mut names: Vec<String> = vec![];
    if ask.model.is_none() {
        if let Some(list) = p.get("/v2/models").await?.ok_json() {
            names = list["models"]
                .as_array()
                .map(|m| {
                    m.iter()
                        .filter_map(|n| n.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
        }
        if names.is_empty()
            && let Some(index) = p
                .post("/v2/repository/index", json!({ "ready": true }))
                .await?
                .ok_json()
        {
            names = index
                .as_array()
                .map(|m| {
                    m.iter()
                        .filter(|e| e["state"].as_str().is_none_or(|s| s == "READY"))
                        .filter_map(|e| e["name"].as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
        }
    }
    // pytriton keeps an empty repository index; Triton's statistics of all models name them.
    if ask.model.is_none()
        && names.is_empty()
        && let Some(stats) = p.get("/v2/models/stats").await?.ok_json()
    {
        names = stats["model_stats"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter_map(|e| e["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        names.dedup();
    }
    let model = pick_model(&names, ask.model, "its model list")?;
    if model.is_none() {
        return Err(refused(
            "--model",
            format!(
                "{server} at {} lists no model ({}): name it with --model",
                encbench_core::scrub::url(&p.base),
                p.tried.join(", ")
            ),
        ));
    }
    Ok(p.found(PayloadFormat::Triton, server, model, None, None))
}

/// vLLM: the model from its list, the task from the first pooling route that answers one
/// text (a classifier of one label is a cross-encoder: a reranker).
async fn vllm(mut p: Probe, list: &Value, ask: &Ask<'_>) -> Result<Found, Refused> {
    let model = pick_model(&ids(list), ask.model, "GET /v1/models")?;
    let version = p.get("/version").await?.ok_json();
    // Its task is probed only when `--api` does not say it.
    let said = match ask.api {
        Some(_) => None,
        None => vllm_task(&mut p, model.as_deref()).await?,
    };
    let server = version.map_or("vLLM".into(), |v| {
        format!("vLLM {}", text(&v["version"])).trim().to_string()
    });
    Ok(p.found(PayloadFormat::Vllm, server, model, said, ask.api))
}

/// vLLM with `--engine vllm` given: only its model, from the list.
fn vllm_named(p: Probe, list: &Value, ask: &Ask<'_>) -> Result<Found, Refused> {
    let model = pick_model(&ids(list), ask.model, "GET /v1/models")?;
    Ok(p.found(PayloadFormat::Vllm, "vLLM".into(), model, None, ask.api))
}

/// A pooling route answers when it gives data and no error: vLLM before 0.10.1 answers a
/// task its model lacks with 200 and `"object": "error"`.
fn answered(a: Answer, key: &str) -> Option<Value> {
    a.ok_json()
        .filter(|v| v["object"] != "error" && v.get(key).is_some())
}

async fn vllm_task(p: &mut Probe, model: Option<&str>) -> Result<Option<Api>, Refused> {
    let probe = "encbench: which task does this model serve?";
    let with_model = |mut v: Value| {
        if let Some(m) = model {
            v["model"] = json!(m);
        }
        v
    };
    if let Some(c) = answered(
        p.post("/classify", with_model(json!({ "input": [probe] })))
            .await?,
        "data",
    ) {
        let classes = c["data"][0]["num_classes"]
            .as_u64()
            .or_else(|| c["data"][0]["probs"].as_array().map(|p| p.len() as u64));
        return Ok(Some(if classes == Some(1) {
            Api::Rerank
        } else {
            Api::Classify
        }));
    }
    if answered(
        p.post("/v1/embeddings", with_model(json!({ "input": [probe] })))
            .await?,
        "data",
    )
    .is_some()
    {
        return Ok(Some(Api::Embed));
    }
    let rerank = with_model(json!({ "query": probe, "documents": [probe] }));
    if answered(p.post("/rerank", rerank).await?, "results").is_some() {
        return Ok(Some(Api::Rerank));
    }
    Ok(None)
}

/// Infinity: the model from its list, the task from its capabilities (embed first).
fn infinity(p: Probe, list: &Value, ask: &Ask<'_>, prefix: &'static str) -> Result<Found, Refused> {
    let model = pick_model(&ids(list), ask.model, "GET /models")?;
    let entry = list["data"]
        .as_array()
        .and_then(|d| d.iter().find(|m| m["id"].as_str() == model.as_deref()))
        .cloned()
        .unwrap_or(Value::Null);
    let can = |c: &str| {
        entry["capabilities"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == c))
    };
    let said = [
        ("embed", Api::Embed),
        ("classify", Api::Classify),
        ("rerank", Api::Rerank),
    ]
    .into_iter()
    .find(|(c, _)| can(c))
    .map(|(_, a)| a);
    let mut found = p.found(
        PayloadFormat::Infinity,
        "Infinity".into(),
        model,
        said,
        ask.api,
    );
    found.prefix = prefix;
    Ok(found)
}

/// An OpenAI-compatible server (a gateway, LiteLLM): embeddings of the listed model.
fn openai(p: Probe, list: &Value, ask: &Ask<'_>) -> Result<Found, Refused> {
    let model = pick_model(&ids(list), ask.model, "GET /v1/models")?;
    let owner = owner(list)
        .map(|o| format!(", models owned by {}", encbench_core::scrub::text(&o)))
        .unwrap_or_default();
    let server = format!("an OpenAI-compatible server{owner}");
    Ok(p.found(
        PayloadFormat::Openai,
        server,
        model,
        Some(Api::Embed),
        ask.api,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_picked_only_where_there_is_no_doubt() {
        let names = vec!["a".to_string(), "b".to_string()];
        assert_eq!(
            pick_model(&names[..1], None, "x").unwrap(),
            Some("a".into())
        );
        assert_eq!(
            pick_model(&names, Some("b"), "x").unwrap(),
            Some("b".into())
        );
        assert_eq!(pick_model(&[], None, "x").unwrap(), None);
        let e = pick_model(&names, None, "GET /v1/models").unwrap_err();
        assert_eq!(e.flag, "--model");
        assert!(
            e.message.contains("2 models (GET /v1/models: a, b)"),
            "{}",
            e.message
        );
    }
}
