//! KServe v2 over gRPC (`inference.GRPCInferenceService`), on the HTTP port itself: a
//! connection that opens with HTTP/2's preface is served as h2c, so `grpc://` and `http://`
//! of one address reach one server, one model and one set of workers. It answers as Triton's
//! gRPC endpoint does (KServe's Python server with `--only kserve`): one model, by its
//! served name; the same service model, faults and statistics as over HTTP; the outcome in
//! `grpc-status` with the words Triton gives (`Request for unknown model: 'x' is not found`,
//! `unexpected inference input 'x' for model 'm'`).

use super::kserve::{self, INPUTS, MAX_BATCH, Request};
use super::{Fault, Server};
use crate::families::{ApiFamily, Playing};
use crate::grpc_body as body;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use encbench_wire::grpc::Code;
use encbench_wire::grpc::messages as pb;
use encbench_wire::grpc::status::encode_message;
use encbench_wire::payload::kserve::IdsType;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// A call's outcome short of its answer: a status and its words.
struct Status(Code, String);

type Answer = Result<Bytes, Status>;

fn decode<M: prost::Message + Default>(body: &Bytes) -> Result<M, Status> {
    let message = encbench_wire::grpc::unframe(body).map_err(|e| Status(Code::INTERNAL, e))?;
    M::decode(message).map_err(|e| Status(Code::INTERNAL, format!("cannot parse the request: {e}")))
}

use encbench_wire::grpc::frame;

/// `POST /inference.GRPCInferenceService/{method}`.
pub async fn call(
    State(s): State<Arc<Server>>,
    Path(method): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let p = crate::families::Playing {
        only: s.cfg.only,
        kind: s.cfg.model_kind,
    };
    let outcome = match refused_metadata(&s, &headers) {
        Some(refused) => Err(refused),
        None => dispatch(&s, p, &method, &body).await,
    };
    match outcome {
        Ok(message) => body::ok(message),
        Err(Status(code, words)) => trailers_only(code, &words),
    }
}

async fn dispatch(s: &Arc<Server>, p: Playing, method: &str, body: &Bytes) -> Answer {
    let kserve = p.is(ApiFamily::Kserve);
    match method {
        "ServerLive" => Ok(frame(&pb::ServerLiveResponse { live: true })),
        "ServerReady" => Ok(frame(&pb::ServerReadyResponse { ready: ready(s) })),
        "ServerMetadata" => Ok(frame(&server_metadata(kserve))),
        // As over HTTP, readiness is the server's, whatever the name (KServe's server says it
        // has no such model): a wrong name then meets ModelInfer's error, which the tests of
        // the client's error kinds need. Triton itself says not ready.
        "ModelReady" => {
            let r: pb::ModelReadyRequest = decode(body)?;
            if kserve {
                known(s, &r.name)?;
            }
            Ok(frame(&pb::ModelReadyResponse { ready: ready(s) }))
        }
        "ModelMetadata" => {
            let r: pb::ModelMetadataRequest = decode(body)?;
            known(s, &r.name)?;
            Ok(frame(&model_metadata(s)))
        }
        "ModelInfer" => infer(s, decode(body)?).await,
        // KServe's Python server implements neither extension.
        "ModelStatistics" if !kserve => {
            let r: pb::ModelStatisticsRequest = decode(body)?;
            if !r.name.is_empty() {
                known(s, &r.name)?;
            }
            Ok(frame(&statistics(s)))
        }
        "RepositoryIndex" if !kserve => Ok(frame(&pb::RepositoryIndexResponse {
            models: vec![pb::ModelIndex {
                name: s.cfg.served_model.clone(),
                version: "1".into(),
                state: "READY".into(),
                reason: String::new(),
            }],
        })),
        _ => Err(Status(Code::UNIMPLEMENTED, "Method not found!".into())),
    }
}

fn ready(s: &Server) -> bool {
    s.started.elapsed() >= s.cfg.unhealthy_for
}

/// Triton's words for a model it does not serve (KServe's are its own).
fn known(s: &Server, model: &str) -> Result<(), Status> {
    if model == s.cfg.served_model {
        return Ok(());
    }
    Err(Status(
        Code::NOT_FOUND,
        format!("Request for unknown model: '{model}' is not found"),
    ))
}

/// A gateway's check, as over HTTP, in gRPC's status: the value is not echoed.
fn refused_metadata(s: &Server, headers: &HeaderMap) -> Option<Status> {
    for (name, value) in &s.cfg.require_headers {
        let given = headers.get(name.as_str()).and_then(|v| v.to_str().ok());
        if given != Some(value.as_str()) {
            s.counters.unauthorized.fetch_add(1, Ordering::Relaxed);
            return Some(Status(
                Code::UNAUTHENTICATED,
                format!("missing or wrong metadata {name}"),
            ));
        }
    }
    None
}

fn server_metadata(kserve: bool) -> pb::ServerMetadataResponse {
    let (name, version, extensions) = if kserve {
        ("kserve", "0.21.0", vec!["model_repository_extension"])
    } else {
        (
            "triton",
            "2.51.0",
            vec![
                "classification",
                "model_repository",
                "binary_tensor_data",
                "statistics",
            ],
        )
    };
    pb::ServerMetadataResponse {
        name: name.into(),
        version: version.into(),
        extensions: extensions.into_iter().map(str::to_owned).collect(),
    }
}

fn model_metadata(s: &Server) -> pb::ModelMetadataResponse {
    let v2 = &s.cfg.v2;
    let tensor = |name: &str, datatype: &str, shape: Vec<i64>| pb::TensorMetadata {
        name: name.into(),
        datatype: datatype.into(),
        shape,
    };
    // A KServe model that declares nothing answers empty lists, as over HTTP.
    let (inputs, outputs) = if v2.declared {
        (
            INPUTS
                .iter()
                .map(|n| tensor(n, v2.ids_type.name(), vec![-1, -1]))
                .collect(),
            vec![tensor(
                &v2.output,
                "FP32",
                vec![-1, kserve::width(s) as i64],
            )],
        )
    } else {
        (vec![], vec![])
    };
    pb::ModelMetadataResponse {
        name: s.cfg.served_model.clone(),
        versions: vec!["1".into()],
        platform: "encbench-reference".into(),
        inputs,
        outputs,
    }
}

fn statistics(s: &Server) -> pb::ModelStatisticsResponse {
    let st = *s
        .counters
        .kserve
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let d = |count, ns| Some(pb::StatisticDuration { count, ns });
    pb::ModelStatisticsResponse {
        model_stats: vec![pb::ModelStatistics {
            name: s.cfg.served_model.clone(),
            version: "1".into(),
            inference_count: st.inference_count,
            execution_count: st.execution_count,
            inference_stats: Some(pb::InferStatistics {
                success: d(st.success_count, st.queue_ns + st.compute_infer_ns),
                fail: d(0, 0),
                queue: d(st.success_count, st.queue_ns),
                compute_input: d(st.success_count, 0),
                compute_infer: d(st.success_count, st.compute_infer_ns),
                compute_output: d(st.success_count, 0),
            }),
        }],
    }
}

async fn infer(s: &Arc<Server>, r: pb::ModelInferRequest) -> Answer {
    let arrived = Instant::now();
    known(s, &r.model_name)?;
    let parsed = parse(s, &r);
    if let Ok(req) = &parsed {
        *s.counters
            .last_tensors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = json!({
            "tensors": r.inputs.iter().map(|t| json!({ "name": t.name, "datatype": t.datatype, "shape": t.shape })).collect::<Vec<_>>(),
            "binary": false, "grpc": true, "batch": req.batch,
        });
    }
    let work = parsed
        .as_ref()
        .map(|req| kserve::work(s, req))
        .map_err(Clone::clone);
    let served = s.execute(arrived, work, true).await.map_err(|f| match f {
        Fault::Invalid(m) => Status(Code::INVALID_ARGUMENT, m),
        Fault::Throttled(m) => Status(Code::RESOURCE_EXHAUSTED, m),
        Fault::ModelError => Status(Code::INTERNAL, "simulated model error".into()),
        Fault::NotReady => Status(Code::UNAVAILABLE, "model loading".into()),
    })?;
    let req = parsed.map_err(|m| Status(Code::INVALID_ARGUMENT, m))?;
    kserve::record(s, &req, served);
    let (values, width) = kserve::outputs(s, &req);
    let raw = Bytes::from(
        values
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>(),
    );
    // Triton sends outputs raw; KServe's Python server (a model that declares nothing) typed.
    let typed = !s.cfg.v2.declared;
    Ok(frame(&pb::ModelInferResponse {
        model_name: s.cfg.served_model.clone(),
        model_version: "1".into(),
        id: r.id,
        outputs: vec![pb::InferOutputTensor {
            name: s.cfg.v2.output.clone(),
            datatype: "FP32".into(),
            shape: vec![req.batch as i64, width as i64],
            contents: typed.then(|| pb::InferTensorContents {
                fp32_contents: values,
                ..pb::InferTensorContents::default()
            }),
        }],
        raw_output_contents: if typed { vec![] } else { vec![raw] },
    }))
}

/// The request's tensors, checked as Triton checks them: inputs and outputs the model has,
/// the ids' datatype, one [batch, len] shape for all, the values that shape holds.
fn parse(s: &Server, r: &pb::ModelInferRequest) -> Result<Request, String> {
    let model = &s.cfg.served_model;
    let ids_type = s.cfg.v2.ids_type;
    if let [t] = &r.inputs[..]
        && t.datatype == "BYTES"
    {
        return parse_text(t, r.raw_input_contents.first());
    }
    // A model that declares nothing (KServe's) checks neither outputs nor input names.
    let declared = s.cfg.v2.declared;
    for o in r.outputs.iter().filter(|_| declared) {
        if o.name != s.cfg.v2.output {
            return Err(format!(
                "unexpected inference output '{}' for model '{model}'",
                o.name
            ));
        }
    }
    let mut tensors = Vec::with_capacity(r.inputs.len());
    let mut shape_of_all = None;
    for (i, t) in r.inputs.iter().enumerate() {
        let name = &t.name;
        if declared && !INPUTS.contains(&name.as_str()) {
            return Err(format!(
                "unexpected inference input '{name}' for model '{model}'"
            ));
        }
        if t.datatype != ids_type.name() {
            return Err(format!(
                "inference input '{name}' data-type is '{}', but model expects '{}'",
                t.datatype,
                ids_type.name()
            ));
        }
        let [b, l] = t.shape[..] else {
            return Err(format!(
                "input '{name}': shape {:?} is not [batch, len]",
                t.shape
            ));
        };
        let (b, l) = (b.max(0) as usize, l.max(0) as usize);
        if shape_of_all.is_some_and(|s| s != (b, l)) {
            return Err(format!(
                "input '{name}': shape {:?} differs from the other inputs",
                t.shape
            ));
        }
        shape_of_all = Some((b, l));
        let values = values(t, r.raw_input_contents.get(i), ids_type);
        if values.len() != b * l {
            return Err(format!(
                "input '{name}': {} values for shape [{b}, {l}]",
                values.len()
            ));
        }
        tensors.push((name.clone(), values));
    }
    let (batch, len) = shape_of_all.ok_or("request has no inputs")?;
    if batch > MAX_BATCH {
        return Err(format!("batch-size must be <= {MAX_BATCH}"));
    }
    let missing: Vec<&str> = INPUTS[..2]
        .iter()
        .copied()
        .filter(|n| !tensors.iter().any(|(t, _)| t == n))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "expected {} inputs but got {} inputs for model '{model}': missing required input(s) {missing:?}",
            tensors.len() + missing.len(),
            tensors.len()
        ));
    }
    Ok(Request {
        texts: None,
        tensors,
        batch,
        len,
        binary_out: true,
    })
}

/// A tensor's values: raw little-endian, or typed in its contents.
fn values(t: &pb::InferInputTensor, raw: Option<&Bytes>, ids_type: IdsType) -> Vec<i64> {
    match (raw, &t.contents) {
        (Some(raw), _) => match ids_type {
            IdsType::Int64 => raw
                .chunks_exact(8)
                .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
            IdsType::Int32 => raw
                .chunks_exact(4)
                .map(|c| i64::from(i32::from_le_bytes(c.try_into().expect("4 bytes"))))
                .collect(),
        },
        (None, Some(c)) if !c.int64_contents.is_empty() => c.int64_contents.clone(),
        (None, Some(c)) => c.int_contents.iter().map(|&v| i64::from(v)).collect(),
        (None, None) => vec![],
    }
}

/// One BYTES tensor, [batch, 1] or [batch, 2]: each element a u32 length and its bytes.
fn parse_text(t: &pb::InferInputTensor, raw: Option<&Bytes>) -> Result<Request, String> {
    use encbench_core::input::Input;
    let [batch, width @ (1 | 2)] = t.shape[..] else {
        return Err(format!(
            "text input shape {:?} is not [batch, 1 or 2]",
            t.shape
        ));
    };
    let mut rest: &[u8] = raw.map_or(&[][..], |r| &r[..]);
    let mut texts = Vec::new();
    while let Some((len, after)) = rest.split_first_chunk::<4>() {
        let len = u32::from_le_bytes(*len) as usize;
        let (text, after) = after
            .split_at_checked(len)
            .ok_or("text input: an element is truncated")?;
        texts.push(String::from_utf8_lossy(text).into_owned());
        rest = after;
    }
    let (batch, width) = (batch.max(0) as usize, width as usize);
    if texts.len() != batch * width || !rest.is_empty() {
        return Err(format!(
            "text input: {} strings for shape {:?}",
            texts.len(),
            t.shape
        ));
    }
    let inputs = texts
        .chunks(width)
        .map(|row| match row {
            [a, b] => Input::pair(a, b),
            [a] => Input::Text(a.clone()),
            _ => unreachable!("chunks of the width"),
        })
        .collect();
    Ok(Request {
        texts: Some(inputs),
        tensors: vec![],
        batch,
        len: 0,
        binary_out: true,
    })
}

/// A call that failed: HTTP 200, the status in the headers, no body ("Trailers-Only").
fn trailers_only(code: Code, words: &str) -> Response {
    let mut h = HeaderMap::new();
    h.insert("content-type", HeaderValue::from_static("application/grpc"));
    h.insert("grpc-status", HeaderValue::from(code.0));
    if let Ok(v) = HeaderValue::from_str(&encode_message(words)) {
        h.insert("grpc-message", v);
    }
    (StatusCode::OK, h, Body::empty()).into_response()
}
