//! KServe v2 (Triton's HTTP protocol): model readiness, metadata, config, statistics and
//! inference with INT64 (or INT32) tensors as JSON or with the binary tensor extension.
//! Logits are one row per input: the verdict's class gets 4.0, the others 0. Their name,
//! the ids' datatype and whether the model declares its tensors at all are `V2Tensors`.

use super::model::Work;
use super::{Fault, Server};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use encbench_wire::payload::kserve::{IdsType, tensor_shape};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// The tensors the reference model takes, BERT-style.
pub(crate) const INPUTS: [&str; 3] = ["input_ids", "attention_mask", "token_type_ids"];
pub(crate) const MAX_BATCH: usize = 64;

/// How the model's tensors look to a client: the output's name, the token tensors'
/// datatype, and whether the model declares them (in metadata and `/config`) or, as a
/// KServe Python model by default, not at all (empty metadata, no `/config`).
#[derive(Debug, Clone, PartialEq)]
pub struct V2Tensors {
    pub output: String,
    pub ids_type: IdsType,
    pub declared: bool,
}

impl Default for V2Tensors {
    fn default() -> Self {
        V2Tensors {
            output: "logits".into(),
            ids_type: IdsType::Int64,
            declared: true,
        }
    }
}

/// Triton's statistics counters: rows, executions, and per-request nanoseconds.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stats {
    pub(crate) inference_count: u64,
    pub(crate) execution_count: u64,
    pub(crate) success_count: u64,
    pub(crate) queue_ns: u64,
    pub(crate) compute_infer_ns: u64,
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, axum::Json(json!({ "error": message.into() }))).into_response()
}

/// `GET /v2`: the server's name, version and protocol extensions, as Triton and KServe's
/// ModelServer answer it.
pub fn server_metadata(p: crate::families::Playing) -> Response {
    let body = if p.is(crate::families::ApiFamily::Kserve) {
        json!({ "name": "kserve", "version": "0.21.0", "extensions": ["model_repository_extension"] })
    } else {
        json!({ "name": "triton", "version": "2.51.0", "extensions": [
            "classification", "model_repository", "model_configuration", "binary_tensor_data",
            "parameters", "statistics",
        ]})
    };
    axum::Json(body).into_response()
}

/// `GET /v2/health/ready`: Triton's empty 200 (400 while not ready), KServe's
/// `{"ready": true}` (503 while not).
pub fn health_ready(s: &Server, p: crate::families::Playing) -> Response {
    let ready = s.started.elapsed() >= s.cfg.unhealthy_for;
    let kserve = p.is(crate::families::ApiFamily::Kserve);
    match (ready, kserve) {
        (true, true) => axum::Json(json!({ "ready": true })).into_response(),
        (false, true) => error(StatusCode::SERVICE_UNAVAILABLE, "server not ready"),
        (true, false) => StatusCode::OK.into_response(),
        (false, false) => StatusCode::BAD_REQUEST.into_response(),
    }
}

pub fn health_live(p: crate::families::Playing) -> Response {
    if p.is(crate::families::ApiFamily::Kserve) {
        axum::Json(json!({ "live": true })).into_response()
    } else {
        StatusCode::OK.into_response()
    }
}

/// Triton's `POST /v2/repository/index`: the served model, ready.
pub fn repository_index(s: &Server) -> Response {
    axum::Json(
        json!([{ "name": s.cfg.served_model, "version": "1", "state": "READY", "reason": "" }]),
    )
    .into_response()
}

pub async fn ready(State(s): State<Arc<Server>>, Path(_model): Path<String>) -> Response {
    if s.started.elapsed() < s.cfg.unhealthy_for {
        StatusCode::SERVICE_UNAVAILABLE.into_response()
    } else {
        StatusCode::OK.into_response()
    }
}

pub async fn metadata(State(s): State<Arc<Server>>, Path(model): Path<String>) -> Response {
    let v2 = &s.cfg.v2;
    if !v2.declared {
        // KServe 0.21's answer for a model that does not override get_input_types/get_output_types.
        return axum::Json(json!({
            "name": model, "versions": null, "platform": "", "inputs": [], "outputs": [],
        }))
        .into_response();
    }
    let inputs: Vec<Value> = INPUTS
        .iter()
        .map(|n| json!({ "name": n, "datatype": v2.ids_type.name(), "shape": [-1, -1] }))
        .collect();
    axum::Json(json!({
        "name": model, "versions": ["1"], "platform": "encbench-reference",
        "inputs": inputs, "outputs": [{ "name": v2.output, "datatype": "FP32", "shape": [-1, width(&s)] }],
    }))
    .into_response()
}

pub async fn config(State(s): State<Arc<Server>>, Path(model): Path<String>) -> Response {
    let v2 = &s.cfg.v2;
    if !v2.declared {
        // KServe has no such route: FastAPI's 404.
        return (
            StatusCode::NOT_FOUND,
            axum::Json(json!({ "detail": "Not Found" })),
        )
            .into_response();
    }
    let inputs: Vec<Value> = INPUTS
        .iter()
        .map(|n| json!({ "name": n, "data_type": format!("TYPE_{}", v2.ids_type.name()), "dims": [-1] }))
        .collect();
    axum::Json(json!({
        "name": model, "max_batch_size": MAX_BATCH, "backend": "encbench-reference",
        "input": inputs, "output": [{ "name": v2.output, "data_type": "TYPE_FP32", "dims": [width(&s)] }],
    }))
    .into_response()
}

pub async fn stats(State(s): State<Arc<Server>>, Path(model): Path<String>) -> Response {
    let st = *s
        .counters
        .kserve
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let timing = |count: u64, ns: u64| json!({ "count": count, "ns": ns });
    axum::Json(json!({ "model_stats": [{
        "name": model, "version": "1",
        "inference_count": st.inference_count, "execution_count": st.execution_count,
        "inference_stats": {
            "success": timing(st.success_count, st.queue_ns + st.compute_infer_ns),
            "fail": timing(0, 0),
            "queue": timing(st.success_count, st.queue_ns),
            "compute_input": timing(st.success_count, 0),
            "compute_infer": timing(st.success_count, st.compute_infer_ns),
            "compute_output": timing(st.success_count, 0),
        },
    }]}))
    .into_response()
}

/// The same counters as Triton's metrics port (`:8002/metrics`) exposes them: Prometheus
/// text, durations in microseconds. One model is served under any name, so no `model` label.
pub async fn metrics(State(s): State<Arc<Server>>) -> Response {
    let st = *s
        .counters
        .kserve
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let family = [
        (
            "nv_inference_request_success",
            "Number of successful inference requests",
            st.success_count,
        ),
        (
            "nv_inference_request_failure",
            "Number of failed inference requests",
            0,
        ),
        (
            "nv_inference_count",
            "Number of inferences performed",
            st.inference_count,
        ),
        (
            "nv_inference_exec_count",
            "Number of model executions performed",
            st.execution_count,
        ),
        (
            "nv_inference_request_duration_us",
            "Cumulative inference request duration in microseconds",
            (st.queue_ns + st.compute_infer_ns) / 1000,
        ),
        (
            "nv_inference_queue_duration_us",
            "Cumulative inference queuing duration in microseconds",
            st.queue_ns / 1000,
        ),
        (
            "nv_inference_compute_input_duration_us",
            "Cumulative compute input duration in microseconds",
            0,
        ),
        (
            "nv_inference_compute_infer_duration_us",
            "Cumulative compute inference duration in microseconds",
            st.compute_infer_ns / 1000,
        ),
        (
            "nv_inference_compute_output_duration_us",
            "Cumulative inference compute output duration in microseconds",
            0,
        ),
    ];
    let mut text = String::new();
    for (name, help, v) in family {
        let _ = write!(
            text,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name}{{version=\"1\"}} {v}\n"
        );
    }
    ([("content-type", "text/plain; version=0.0.4")], text).into_response()
}

/// A parsed request: each input's values by name, the batch shape, and whether the client
/// asked for binary outputs.
pub(crate) struct Request {
    /// Raw texts from a BYTES tensor (a model that tokenizes on the server).
    pub(crate) texts: Option<Vec<encbench_core::input::Input>>,
    pub(crate) tensors: Vec<(String, Vec<i64>)>,
    pub(crate) batch: usize,
    pub(crate) len: usize,
    pub(crate) binary_out: bool,
}

fn parse(headers: &HeaderMap, body: &[u8], ids_type: IdsType) -> Result<(Request, Value), String> {
    let json_len = headers
        .get("inference-header-content-length")
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.parse::<usize>()
                .map_err(|_| "bad Inference-Header-Content-Length".to_string())
        })
        .transpose()?;
    let split = json_len.unwrap_or(body.len());
    let header: Value =
        serde_json::from_slice(body.get(..split).ok_or("header length beyond body")?)
            .map_err(|e| format!("failed to parse the request JSON buffer: {e}"))?;
    let mut raw = body.get(split..).unwrap_or_default();
    let mut tensors = Vec::new();
    let mut seen = Vec::new();
    let mut shape_of_all: Option<(usize, usize)> = None;
    let inputs = header["inputs"].as_array().ok_or("request has no inputs")?;
    if let [t] = &inputs[..]
        && t["datatype"] == "BYTES"
    {
        return parse_text(t, &header);
    }
    for t in inputs {
        let name = t["name"]
            .as_str()
            .ok_or("input without a name")?
            .to_string();
        let datatype = t["datatype"].as_str().unwrap_or("");
        let shape = tensor_shape(t);
        seen.push(json!({ "name": name, "datatype": datatype, "shape": shape }));
        if datatype != ids_type.name() {
            return Err(format!(
                "inference input '{name}' data-type is '{datatype}', but model expects '{}'",
                ids_type.name()
            ));
        }
        let [b, l] = shape[..] else {
            return Err(format!(
                "input '{name}': shape {shape:?} is not [batch, len]"
            ));
        };
        if shape_of_all.is_some_and(|s| s != (b, l)) {
            return Err(format!(
                "input '{name}': shape {shape:?} differs from the other inputs"
            ));
        }
        shape_of_all = Some((b, l));
        let values = tensor_values(t, &name, &mut raw, ids_type)?;
        if values.len() != b * l {
            return Err(format!(
                "input '{name}': {} values for shape [{b}, {l}]",
                values.len()
            ));
        }
        tensors.push((name, values));
    }
    let (batch, len) = shape_of_all.ok_or("request has no inputs")?;
    if batch > MAX_BATCH {
        return Err(format!("batch-size must be <= {MAX_BATCH}"));
    }
    for needed in &INPUTS[..2] {
        if !tensors.iter().any(|(n, _)| n == needed) {
            return Err(format!("expected input '{needed}'"));
        }
    }
    let binary_out = header["outputs"]
        .as_array()
        .is_some_and(|o| o.iter().any(|x| x["parameters"]["binary_data"] == true))
        || header["parameters"]["binary_data_output"] == true;
    let received = json!({ "tensors": seen, "binary": json_len.is_some() });
    Ok((
        Request {
            texts: None,
            tensors,
            batch,
            len,
            binary_out,
        },
        received,
    ))
}

/// A token tensor's values: its slice of the binary part (`raw` moves past it), or its JSON
/// `data`.
fn tensor_values(
    t: &Value,
    name: &str,
    raw: &mut &[u8],
    ids_type: IdsType,
) -> Result<Vec<i64>, String> {
    let Some(n) = t["parameters"]["binary_data_size"].as_u64() else {
        return Ok(t["data"]
            .as_array()
            .ok_or(format!("input '{name}' has no data"))?
            .iter()
            .filter_map(Value::as_i64)
            .collect());
    };
    let (mine, rest) = raw
        .split_at_checked(n as usize)
        .ok_or(format!("input '{name}': binary data is truncated"))?;
    *raw = rest;
    Ok(match ids_type {
        IdsType::Int64 => mine
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
        IdsType::Int32 => mine
            .chunks_exact(4)
            .map(|c| i64::from(i32::from_le_bytes(c.try_into().expect("4 bytes"))))
            .collect(),
    })
}

/// One BYTES tensor of shape [batch, 1] (texts) or [batch, 2] (premise, hypothesis).
fn parse_text(t: &Value, header: &Value) -> Result<(Request, Value), String> {
    use encbench_core::input::Input;
    let shape = tensor_shape(t);
    let [batch, width @ (1 | 2)] = shape[..] else {
        return Err(format!("text input shape {shape:?} is not [batch, 1 or 2]"));
    };
    let data: Vec<&str> = t["data"]
        .as_array()
        .ok_or("text input has no data")?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if data.len() != batch * width {
        return Err(format!(
            "text input: {} strings for shape {shape:?}",
            data.len()
        ));
    }
    let texts = data
        .chunks(width)
        .map(|row| {
            if width == 2 {
                Input::pair(row[0], row[1])
            } else {
                Input::Text(row[0].to_string())
            }
        })
        .collect();
    let received = json!({ "tensors": [{ "name": t["name"], "datatype": "BYTES", "shape": shape }], "binary": false });
    let binary_out = header["outputs"]
        .as_array()
        .is_some_and(|o| o.iter().any(|x| x["parameters"]["binary_data"] == true));
    Ok((
        Request {
            texts: Some(texts),
            tensors: vec![],
            batch,
            len: 0,
            binary_out,
        },
        received,
    ))
}

/// The class of each row of token tensors, from its unpadded ids.
/// Each row's token ids without its padding.
fn unpadded_rows(req: &Request) -> Vec<Vec<i64>> {
    let tensor = |name: &str| {
        &req.tensors
            .iter()
            .find(|(n, _)| n == name)
            .expect("checked in parse")
            .1
    };
    let (ids, mask) = (tensor("input_ids"), tensor("attention_mask"));
    (0..req.batch)
        .map(|row| {
            let span = row * req.len..(row + 1) * req.len;
            ids[span.clone()]
                .iter()
                .zip(&mask[span])
                .filter(|(_, m)| **m != 0)
                .map(|(i, _)| *i)
                .collect()
        })
        .collect()
}

fn token_classes(s: &Server, req: &Request) -> Vec<usize> {
    unpadded_rows(req)
        .iter()
        .map(|ids| s.verdicts.class_of_ids(ids))
        .collect()
}

/// The output of each row: a classifier's logits (the verdict's class 4.0, the others 0),
/// or a cross-encoder's one logit per pair (`--model-kind reranker`).
pub(crate) fn outputs(s: &Server, req: &Request) -> (Vec<f32>, usize) {
    if reranks(s) {
        let scores = match &req.texts {
            Some(texts) => texts
                .iter()
                .map(|t| match t.parts() {
                    (q, Some(d)) => s.relevance(q, d),
                    (q, None) => s.relevance(q, ""),
                })
                .collect(),
            None => unpadded_rows(req)
                .iter()
                .map(|ids| s.relevance.of_ids(ids))
                .collect(),
        };
        return (scores, 1);
    }
    let classes: Vec<usize> = match &req.texts {
        Some(texts) => texts.iter().map(|t| s.verdicts.class_of_text(t)).collect(),
        None => token_classes(s, req),
    };
    let logits = classes
        .into_iter()
        .flat_map(|class| (0..3).map(move |c| if c == class { 4.0f32 } else { 0.0 }))
        .collect();
    (logits, 3)
}

/// The output's width: the classes, or a cross-encoder's one logit.
pub(crate) fn width(s: &Server) -> usize {
    if reranks(s) { 1 } else { 3 }
}

/// Whether the model played is a cross-encoder: one logit per pair.
fn reranks(s: &Server) -> bool {
    matches!(
        s.cfg.only,
        Some(crate::ApiFamily::Triton | crate::ApiFamily::Kserve)
    ) && s.cfg.model_kind == Some(crate::ModelKind::Reranker)
}

/// A request served, in the statistics: its rows, one execution, its queue and compute.
pub(crate) fn record(s: &Server, req: &Request, served: crate::Served) {
    let mut st = s
        .counters
        .kserve
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    st.inference_count += req.batch as u64;
    st.execution_count += 1;
    st.success_count += 1;
    st.queue_ns += served.queue.as_nanos() as u64;
    st.compute_infer_ns += served.compute.as_nanos() as u64;
}

/// The work a parsed request makes: a server that tokenizes pads a batch to its longest
/// input; token tensors are their own shape.
pub(crate) fn work(s: &Server, r: &Request) -> Work {
    match &r.texts {
        Some(texts) => s.lengths.plan(texts, &json!({ "batch_size": texts.len() })),
        None => Work::tensor(r.batch, r.len),
    }
}

pub async fn infer(
    State(s): State<Arc<Server>>,
    Path(model): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let arrived = Instant::now();
    let parsed = parse(&headers, &body, s.cfg.v2.ids_type);
    if let Ok((_, received)) = &parsed {
        *s.counters
            .last_tensors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = received.clone();
    }
    let work = parsed
        .as_ref()
        .map(|(r, _)| work(&s, r))
        .map_err(Clone::clone);
    let served = match s.execute(arrived, work, true).await {
        Ok(served) => served,
        Err(Fault::Invalid(m)) => return error(StatusCode::BAD_REQUEST, m),
        Err(Fault::Throttled(m)) => return error(StatusCode::SERVICE_UNAVAILABLE, m),
        Err(Fault::ModelError) => {
            return error(StatusCode::INTERNAL_SERVER_ERROR, "simulated model error");
        }
        Err(Fault::NotReady) => return error(StatusCode::SERVICE_UNAVAILABLE, "model loading"),
    };
    let Ok((req, _)) = parsed else {
        return error(StatusCode::BAD_REQUEST, "unparsable request");
    };
    record(&s, &req, served);
    let (logits, width) = outputs(&s, &req);
    let shape = [req.batch, width];
    if req.binary_out {
        let header = json!({ "model_name": model, "model_version": "1", "outputs": [{
            "name": s.cfg.v2.output, "datatype": "FP32", "shape": shape, "parameters": { "binary_data_size": logits.len() * 4 },
        }]});
        let mut out = serde_json::to_vec(&header).expect("JSON values serialize");
        let json_len = out.len();
        out.extend(logits.iter().flat_map(|x| x.to_le_bytes()));
        let mut h = HeaderMap::new();
        h.insert("inference-header-content-length", json_len.into());
        h.insert(
            "content-type",
            "application/octet-stream".parse().expect("static header"),
        );
        return (StatusCode::OK, h, out).into_response();
    }
    axum::Json(
        json!({ "model_name": model, "model_version": "1", "outputs": [{
            "name": s.cfg.v2.output, "datatype": "FP32", "shape": shape, "data": logits,
        }]}),
    )
    .into_response()
}
