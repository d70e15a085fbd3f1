//! Each server's metadata read into what was found: its model, its task, its limits.

use super::probe::{Answer, Probe};
use super::{Ask, Found, Refused, refused};
use crate::payload::{Api, PayloadFormat};
use serde_json::{Value, json};

pub(super) fn text(v: &Value) -> String {
    v.as_str()
        .map(encbench_core::scrub::text)
        .unwrap_or_default()
}

pub(super) fn owner(list: &Value) -> Option<String> {
    list["data"][0]["owned_by"].as_str().map(str::to_owned)
}

/// The model to load: the one `--model` names, else the server's only one.
pub(super) fn pick_model(
    names: &[String],
    given: Option<&str>,
    listed_by: &str,
) -> Result<Option<String>, Refused> {
    if let Some(m) = given {
        // A name the server's own list lacks would fail every request: refused now.
        if !names.is_empty() && !names.iter().any(|n| n == m) {
            return Err(refused(
                "--model",
                format!(
                    "'{}' is not among the models the server lists ({listed_by}: {}): name one of them",
                    encbench_core::scrub::text(m),
                    encbench_core::scrub::text(&names.join(", "))
                ),
            ));
        }
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

pub(super) fn ids(list: &Value) -> Vec<String> {
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
pub(super) fn tei(p: Probe, info: &Value, ask: &Ask<'_>) -> Found {
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
pub(super) async fn kserve(mut p: Probe, server: String, ask: &Ask<'_>) -> Result<Found, Refused> {
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
    // Not one of KServe v2's routes exists there: naming a model would only wait on it.
    if model.is_none() && !p.tried.is_empty() && p.tried.iter().all(|t| t.ends_with(" 404")) {
        return Err(refused(
            "--engine",
            format!(
                "no KServe v2 route answered at {} ({}): it is no Triton or KServe server; leave --engine out to find its API, or name another",
                encbench_core::scrub::url(&p.base),
                p.tried.join(", ")
            ),
        ));
    }
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
pub(super) async fn vllm(mut p: Probe, list: &Value, ask: &Ask<'_>) -> Result<Found, Refused> {
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
pub(super) fn vllm_named(p: Probe, list: &Value, ask: &Ask<'_>) -> Result<Found, Refused> {
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
pub(super) fn infinity(
    p: Probe,
    list: &Value,
    ask: &Ask<'_>,
    prefix: &'static str,
) -> Result<Found, Refused> {
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
pub(super) fn openai(p: Probe, list: &Value, ask: &Ask<'_>) -> Result<Found, Refused> {
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
