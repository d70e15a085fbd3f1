//! KServe v2 (Triton): INT64 (or INT32) `input_ids`, `attention_mask` (and `token_type_ids`
//! where the model takes them), shape [batch, len], as JSON, with the binary tensor extension
//! or over gRPC (`kserve_grpc`); logits back, argmax for the verdict; or an embedding model's
//! vectors, [batch, d], or [batch, seq, d] pooled over the attention mask of the request.

use super::labels::argmax_label;
use super::{Answers, BodyKind, Format, Pooling, Prepared, Reply};
use crate::tokenize::Encoder;
use bytes::{BufMut, Bytes, BytesMut};
use encbench_core::input::Input;
use serde_json::{Value, json};
use std::time::Instant;

pub use super::kserve_names::{Declared, GivenNames, IdsType, OutputName, TensorNames};

pub struct KServeFormat {
    pub model: String,
    pub names: TensorNames,
    pub encoder: Encoder,
    pub pad_to_max: bool,
    pub wire: Wire,
    /// Send text as one BYTES tensor of this name, shape [batch, 1] (texts) or [batch, 2]
    /// (pairs), for models that tokenize on the server (a Triton ensemble).
    pub text_input: Option<String>,
    /// How a [batch, seq, d] output becomes a vector per input.
    pub pooling: Pooling,
}

/// How the tensors travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wire {
    /// JSON numbers over HTTP.
    #[default]
    Json,
    /// HTTP with the binary tensor extension (`--binary`).
    Binary,
    /// A `ModelInferRequest` over gRPC, the tensors raw.
    Grpc,
}

/// Whether an output's name says it holds embeddings rather than logits: a [batch, n]
/// output is otherwise told apart by its width.
fn names_vectors(output: &str) -> bool {
    let n = output.to_lowercase();
    ["embed", "pool", "sentence", "hidden", "vector"]
        .iter()
        .any(|w| n.contains(w))
}

fn tensors<'a>(
    names: &'a TensorNames,
    e: &'a crate::tokenize::Encoded,
) -> Vec<(&'a str, &'a [i64])> {
    let mut t = vec![
        (names.input_ids.as_str(), &e.input_ids[..]),
        (names.attention_mask.as_str(), &e.attention_mask[..]),
    ];
    if let Some(tt) = &names.token_type_ids {
        t.push((tt.as_str(), &e.token_type_ids[..]));
    }
    t
}

impl KServeFormat {
    /// The output to read: the declared one, or the first of the first reply read.
    fn output(&self, reply: &Reply) -> Result<String, String> {
        match &self.names.output {
            OutputName::Named(n) => Ok(n.clone()),
            OutputName::FirstReply(learned) => {
                if let Some(n) = learned.get() {
                    return Ok(n.clone());
                }
                let first = if self.wire == Wire::Grpc {
                    super::kserve_grpc::first_output(reply)?
                } else {
                    let header = reply_header(reply)?;
                    header["outputs"][0]["name"]
                        .as_str()
                        .ok_or("response has no outputs")?
                        .to_owned()
                };
                Ok(learned.get_or_init(|| first).clone())
            }
        }
    }

    /// The named output as (dimensions, row-major values), however the reply came.
    fn tensor(&self, reply: &Reply, name: &str) -> Result<(Vec<usize>, Vec<f32>), String> {
        if self.wire == Wire::Grpc {
            super::kserve_grpc::output_tensor(reply, name)
        } else {
            output_tensor(reply, name)
        }
    }
}

/// The token tensors as raw little-endian values after a JSON header; with no output
/// declared, every output is asked for in binary.
fn binary_request(
    t: &[(&str, &[i64])],
    shape: [usize; 2],
    ids_type: IdsType,
    output: Option<&str>,
) -> Prepared {
    let inputs: Vec<Value> = t
        .iter()
        .map(|(name, data)| {
            json!({
                "name": name, "datatype": ids_type.name(), "shape": shape,
                "parameters": { "binary_data_size": data.len() * ids_type.size() },
            })
        })
        .collect();
    let header = match output {
        Some(name) => json!({
            "inputs": inputs,
            "outputs": [{ "name": name, "parameters": { "binary_data": true } }],
        }),
        None => json!({ "inputs": inputs, "parameters": { "binary_data_output": true } }),
    };
    let header = serde_json::to_vec(&header).expect("JSON values serialize");
    let values: usize = t.iter().map(|(_, d)| d.len()).sum();
    let mut body = BytesMut::with_capacity(header.len() + values * ids_type.size());
    body.put_slice(&header);
    for (_, data) in t {
        for &v in *data {
            match ids_type {
                IdsType::Int64 => body.put_i64_le(v),
                // Token ids, masks and type ids are far below 2^31.
                IdsType::Int32 => body.put_i32_le(v as i32),
            }
        }
    }
    Prepared {
        body: body.freeze(),
        kind: BodyKind::Binary {
            json_len: header.len(),
        },
        tokenize: None,
        timeout: None,
        tokens: None,
    }
}

impl Format for KServeFormat {
    fn name(&self) -> &'static str {
        "triton"
    }

    fn path(&self) -> String {
        format!("/v2/models/{}/infer", self.model)
    }

    fn ready_path(&self) -> Option<String> {
        // /v2/health/ready answers before the model is loaded; the model's own does not.
        Some(format!("/v2/models/{}/ready", self.model))
    }

    fn stats_path(&self) -> Option<String> {
        Some(format!("/v2/models/{}/stats", self.model))
    }

    fn tokenizes(&self) -> bool {
        self.text_input.is_none()
    }

    fn prepare(&self, inputs: &[&Input]) -> Prepared {
        let output = self.names.output.declared();
        if let Some(name) = &self.text_input {
            return match self.wire {
                Wire::Grpc => super::kserve_grpc::text_request(&self.model, name, output, inputs),
                Wire::Json | Wire::Binary => text_request(name, output, inputs),
            };
        }
        let started = Instant::now();
        let e = self.encoder.encode(inputs, self.pad_to_max);
        let shape = [e.batch, e.len];
        let t = tensors(&self.names, &e);
        let ids_type = self.names.ids_type;
        let prepared = if self.wire == Wire::Grpc {
            super::kserve_grpc::request(&self.model, &t, shape, ids_type, output)
        } else if self.wire == Wire::Binary {
            binary_request(&t, shape, ids_type, output)
        } else {
            let body = JsonRequest {
                inputs: t
                    .iter()
                    .map(|(name, data)| JsonTensor {
                        name,
                        datatype: ids_type.name(),
                        shape,
                        data,
                    })
                    .collect(),
                outputs: output.map(|name| [Named { name }]),
            };
            Prepared::json(Bytes::from(
                serde_json::to_vec(&body).expect("JSON values serialize"),
            ))
        };
        Prepared {
            tokenize: Some(started.elapsed()),
            tokens: Some(e.attention_mask.iter().map(|&m| m.unsigned_abs()).sum()),
            ..prepared
        }
    }

    fn verdicts(&self, reply: &Reply) -> Result<Vec<String>, String> {
        let output = self.output(reply)?;
        let (rows, cols, data) = match self.tensor(reply, &output)? {
            (dims, data) if dims.len() == 2 => (dims[0], dims[1], data),
            (dims, _) => return Err(format!("output {output} has shape {dims:?}")),
        };
        if cols == 0 {
            return Err("no scores".into());
        }
        (0..rows)
            .map(|r| argmax_label(data[r * cols..(r + 1) * cols].iter().map(|&x| f64::from(x))))
            .collect()
    }

    fn answers(&self, reply: &Reply, inputs: &[&Input]) -> Result<Answers, String> {
        let output = self.output(reply)?;
        let (dims, data) = self.tensor(reply, &output)?;
        match dims[..] {
            [_, 0] | [_, _, 0] => Err("no scores".into()),
            [_, cols] => {
                let rows = data.chunks_exact(cols).map(<[f32]>::to_vec).collect();
                Ok(if names_vectors(&output) {
                    Answers::Vectors(rows)
                } else {
                    Answers::Scores(rows)
                })
            }
            [batch, seq, dim] => {
                // The mask of the request as it was sent: the same inputs, tokenized alike.
                let e = (self.text_input.is_none() && inputs.len() == batch)
                    .then(|| self.encoder.encode(inputs, self.pad_to_max))
                    .filter(|e| e.len == seq);
                (0..batch)
                    .map(|b| {
                        let tokens: Vec<&[f32]> = data[b * seq * dim..(b + 1) * seq * dim]
                            .chunks_exact(dim)
                            .collect();
                        let mask: Option<Vec<bool>> = e.as_ref().map(|e| {
                            e.attention_mask[b * seq..(b + 1) * seq]
                                .iter()
                                .map(|&m| m != 0)
                                .collect()
                        });
                        self.pooling.pool(&tokens, mask.as_deref())
                    })
                    .collect::<Result<_, _>>()
                    .map(Answers::Vectors)
            }
            _ => Err(format!("output {output} has shape {dims:?}")),
        }
    }

    /// A row per input, of scores or of a vector (per token too): counted, not read.
    /// A cross-encoder's logits, [batch, 1] or [batch] (one per pair), or [batch, 2] whose
    /// second column is the relevant class's.
    fn scores(&self, reply: &Reply, inputs: usize) -> Result<Vec<f32>, String> {
        let output = self.output(reply)?;
        let (dims, data) = self.tensor(reply, &output)?;
        let scores: Vec<f32> = match dims[..] {
            // A one-dimensional output reads as one row of its values: one logit each.
            [1, n] if n == inputs => data,
            [_, 1] => data,
            [_, 2] => data.chunks_exact(2).map(|r| r[1]).collect(),
            _ => {
                return Err(format!(
                    "output {output} has shape {dims:?}: a cross-encoder gives one logit per pair"
                ));
            }
        };
        if scores.len() < inputs {
            return Err(format!("{} logits for {inputs} pairs", scores.len()));
        }
        Ok(scores)
    }

    fn learned(&self) -> Option<String> {
        let OutputName::FirstReply(learned) = &self.names.output else {
            return None;
        };
        learned.get().map(|name| {
            format!(
                "the server declares no output: reading '{}', the first of its first reply (--output-name names another)",
                encbench_core::scrub::text(name)
            )
        })
    }

    fn check(&self, reply: &Reply, inputs: usize) -> Result<(), String> {
        let (dims, _) = self.tensor(reply, &self.output(reply)?)?;
        if dims.contains(&0) && dims[0] != 0 {
            return Err("no scores".into());
        }
        super::check_verdict_count(dims[0], inputs)
    }
}

/// A JSON inference request, written straight from the token ids. Through a `Value` tree (a
/// node per id: 12,288 of them at 8 × 512 with three tensors) building the body took about
/// 0.3 ms of the 1.4 ms a request cost the client; written straight, under 0.1 ms.
#[derive(serde::Serialize)]
struct JsonRequest<'a> {
    inputs: Vec<JsonTensor<'a>>,
    /// None: no output declared, so none is named and the server sends all.
    #[serde(skip_serializing_if = "Option::is_none")]
    outputs: Option<[Named<'a>; 1]>,
}

#[derive(serde::Serialize)]
struct JsonTensor<'a> {
    name: &'a str,
    datatype: &'static str,
    shape: [usize; 2],
    /// INT32 tensors serialize the same numbers.
    data: &'a [i64],
}

#[derive(serde::Serialize)]
struct Named<'a> {
    name: &'a str,
}

/// A BYTES tensor of the raw texts: the server tokenizes, so nothing is timed here.
fn text_request(name: &str, output: Option<&str>, inputs: &[&Input]) -> Prepared {
    let pairs = inputs.iter().any(|i| i.parts().1.is_some());
    let width = if pairs { 2 } else { 1 };
    let data: Vec<&str> = inputs
        .iter()
        .flat_map(|i| {
            let (a, b) = i.parts();
            std::iter::once(a).chain(pairs.then_some(b.unwrap_or("")))
        })
        .collect();
    let mut body = json!({
        "inputs": [{ "name": name, "datatype": "BYTES", "shape": [inputs.len(), width], "data": data }],
    });
    if let Some(output) = output {
        body["outputs"] = json!([{ "name": output }]);
    }
    Prepared::json(Bytes::from(
        serde_json::to_vec(&body).expect("JSON values serialize"),
    ))
}

/// A KServe v2 tensor's `shape`, dimensions as sizes (negative or missing ones dropped).
pub fn tensor_shape(t: &Value) -> Vec<usize> {
    t["shape"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(|d| d.as_u64().map(|d| d as usize))
                .collect()
        })
        .unwrap_or_default()
}

/// The named FP32 output as (rows, columns, row-major values), from a JSON or binary reply.
pub fn output_f32(reply: &Reply, name: &str) -> Result<(usize, usize, Vec<f32>), String> {
    let (dims, values) = output_tensor(reply, name)?;
    match dims[..] {
        [r, c] => Ok((r, c, values)),
        _ => Err(format!("output {name} has shape {dims:?}")),
    }
}

/// The named FP32 output as (dimensions, row-major values), from a JSON or binary reply;
/// a one-dimensional output is one row, [1, n].
pub fn output_tensor(reply: &Reply, name: &str) -> Result<(Vec<usize>, Vec<f32>), String> {
    let json_len = reply
        .json_len
        .unwrap_or(reply.body.len())
        .min(reply.body.len());
    let header = reply_header(reply)?;
    let outputs = header["outputs"]
        .as_array()
        .ok_or("response has no outputs")?;
    let mut offset = json_len;
    for o in outputs {
        let shape = tensor_shape(o);
        let binary_size = o["parameters"]["binary_data_size"]
            .as_u64()
            .map(|n| n as usize);
        if o["name"].as_str() != Some(name) {
            offset += binary_size.unwrap_or(0);
            continue;
        }
        let dims = match shape.as_slice() {
            [c] => vec![1, *c],
            [_, _] | [_, _, _] => shape.clone(),
            _ => return Err(format!("output {name} has shape {shape:?}")),
        };
        let values: Vec<f32> = match binary_size {
            Some(n) => {
                let raw = reply
                    .body
                    .get(offset..offset + n)
                    .ok_or("binary output is truncated")?;
                raw.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect()
            }
            None => o["data"]
                .as_array()
                .ok_or("output has no data")?
                .iter()
                .filter_map(|v| v.as_f64().map(|v| v as f32))
                .collect(),
        };
        let size = dims.iter().try_fold(1usize, |n, d| n.checked_mul(*d));
        if size != Some(values.len()) {
            return Err(format!(
                "output {name}: {} values for shape {shape:?}",
                values.len()
            ));
        }
        return Ok((dims, values));
    }
    Err(format!("no output '{name}'; {}", sent_outputs(outputs)))
}

/// The JSON part of a reply (all of it without the binary extension).
fn reply_header(reply: &Reply) -> Result<Value, String> {
    let json_len = reply
        .json_len
        .unwrap_or(reply.body.len())
        .min(reply.body.len());
    serde_json::from_slice(&reply.body[..json_len])
        .map_err(|e| format!("response is not KServe v2 JSON: {e}"))
}

/// What a reply holds instead, `the server sent: sentence_embedding [1, 384] FP32`: a wrong
/// output name is then one look away from the right one.
fn sent_outputs(outputs: &[Value]) -> String {
    if outputs.is_empty() {
        return "the server sent no outputs".into();
    }
    let each: Vec<String> = outputs
        .iter()
        .map(|o| {
            let name = o["name"].as_str().unwrap_or("(unnamed)");
            let datatype = o["datatype"].as_str().unwrap_or("");
            format!("{name} {:?} {datatype}", tensor_shape(o))
                .trim_end()
                .to_string()
        })
        .collect();
    format!("the server sent: {}", each.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::TokenCounter;

    fn format(binary: bool) -> KServeFormat {
        let wire = if binary { Wire::Binary } else { Wire::Json };
        KServeFormat {
            model: "encoder".into(),
            names: TensorNames {
                token_type_ids: Some("token_type_ids".into()),
                ..TensorNames::default()
            },
            encoder: TokenCounter::shipped().encoder(512).unwrap(),
            pad_to_max: true,
            wire,
            text_input: None,
            pooling: Pooling::Mean,
        }
    }

    #[test]
    fn json_request_has_three_int64_tensors_of_batch_by_len() {
        let a = Input::pair("a", "b");
        let p = format(false).prepare(&[&a, &a]);
        assert!(p.tokenize.is_some());
        let v: Value = serde_json::from_slice(&p.body).unwrap();
        let inputs = v["inputs"].as_array().unwrap();
        assert_eq!(inputs.len(), 3);
        for t in inputs {
            assert_eq!(t["datatype"], "INT64");
            assert_eq!(t["shape"], json!([2, 512]));
            assert_eq!(t["data"].as_array().unwrap().len(), 1024);
        }
    }

    #[test]
    fn binary_request_carries_raw_little_endian_tensors() {
        let a = Input::pair("a", "b");
        let p = format(true).prepare(&[&a]);
        let BodyKind::Binary { json_len } = p.kind else {
            panic!("binary")
        };
        assert_eq!(p.body.len(), json_len + 3 * 512 * 8);
        let first_id = i64::from_le_bytes(p.body[json_len..json_len + 8].try_into().unwrap());
        assert_eq!(first_id, 101, "[CLS]");
    }

    #[test]
    fn text_input_sends_one_bytes_tensor_of_pairs() {
        let f = KServeFormat {
            text_input: Some("TEXT".into()),
            ..format(false)
        };
        assert!(!f.tokenizes());
        let (a, b) = (Input::pair("p1", "h1"), Input::pair("p2", "h2"));
        let v: Value = serde_json::from_slice(&f.prepare(&[&a, &b]).body).unwrap();
        assert_eq!(v["inputs"][0]["datatype"], "BYTES");
        assert_eq!(v["inputs"][0]["shape"], json!([2, 2]));
        assert_eq!(v["inputs"][0]["data"], json!(["p1", "h1", "p2", "h2"]));
    }

    #[test]
    fn logits_in_json_and_binary_replies_give_argmax_labels() {
        let f = format(false);
        let json_reply = Reply::new(
            r#"{"outputs":[{"name":"logits","datatype":"FP32","shape":[2,3],"data":[0.1,2.0,0.3,5.0,1.0,0.0]}]}"#,
            None,
        );
        assert_eq!(f.verdicts(&json_reply).unwrap(), vec!["LABEL_1", "LABEL_0"]);
        let header = br#"{"outputs":[{"name":"logits","datatype":"FP32","shape":[1,3],"parameters":{"binary_data_size":12}}]}"#;
        let mut body = header.to_vec();
        for x in [0.0f32, 0.5, 3.0] {
            body.extend(x.to_le_bytes());
        }
        let bin = Reply::new(body, Some(header.len()));
        assert_eq!(f.verdicts(&bin).unwrap(), vec!["LABEL_2"]);
    }

    /// Logits of shape [1, 0] or [0, 3] answer nothing: no class 0 by default, and on the
    /// load path fewer verdicts than inputs; a shape whose size overflows is refused.
    #[test]
    fn rows_without_scores_or_without_rows_are_no_verdicts() {
        let f = format(false);
        let reply = |shape: &str| {
            Reply::new(
                format!(r#"{{"outputs":[{{"name":"logits","shape":{shape},"data":[]}}]}}"#),
                None,
            )
        };
        assert_eq!(f.verdicts(&reply("[1,0]")).unwrap_err(), "no scores");
        assert!(f.check(&reply("[1,0]"), 1).is_err());
        assert_eq!(f.verdicts(&reply("[0,3]")).unwrap(), Vec::<String>::new());
        assert_eq!(
            f.check(&reply("[0,3]"), 1).unwrap_err(),
            "0 verdicts for 1 input"
        );
        assert!(f.verdicts(&reply("[9223372036854775807,4]")).is_err());
    }

    #[test]
    fn embedding_outputs_are_vectors_and_token_outputs_are_pooled_over_the_mask() {
        let f = KServeFormat {
            names: TensorNames {
                output: OutputName::Named("embedding".into()),
                ..TensorNames::default()
            },
            pad_to_max: false,
            ..format(false)
        };
        let reply = Reply::new(
            r#"{"outputs":[{"name":"embedding","datatype":"FP32","shape":[2,2],"data":[1,0,0,1]}]}"#,
            None,
        );
        let (a, b) = (Input::Text("a".into()), Input::Text("b c".into()));
        assert_eq!(
            f.answers(&reply, &[&a, &b]).unwrap(),
            Answers::Vectors(vec![vec![1.0, 0.0], vec![0.0, 1.0]])
        );
        // "a" is [CLS] a [SEP] and a pad; "b c" fills all four: the pad's row is left out.
        let tokens = Reply::new(
            r#"{"outputs":[{"name":"embedding","shape":[2,4,1],"data":[1,2,3,100,1,2,3,6]}]}"#,
            None,
        );
        assert_eq!(
            f.answers(&tokens, &[&a, &b]).unwrap(),
            Answers::Vectors(vec![vec![2.0], vec![3.0]])
        );
        assert!(f.check(&tokens, 2).is_ok());
        let logits = Reply::new(
            r#"{"outputs":[{"name":"logits","shape":[1,3],"data":[0,1,0]}]}"#,
            None,
        );
        assert!(matches!(
            format(false).answers(&logits, &[&a]).unwrap(),
            Answers::Scores(_)
        ));
    }

    #[test]
    fn int32_ids_travel_as_int32_in_json_and_in_four_bytes_binary() {
        let names = TensorNames {
            ids_type: IdsType::Int32,
            ..format(false).names
        };
        let a = Input::Text("a".into());
        let json_body = KServeFormat {
            names: names.clone(),
            ..format(false)
        }
        .prepare(&[&a]);
        let v: Value = serde_json::from_slice(&json_body.body).unwrap();
        assert_eq!(v["inputs"][0]["datatype"], "INT32");
        assert_eq!(v["inputs"][0]["data"][0], 101);
        let bin = KServeFormat {
            names,
            ..format(true)
        }
        .prepare(&[&a]);
        let BodyKind::Binary { json_len } = bin.kind else {
            panic!("binary")
        };
        assert_eq!(bin.body.len(), json_len + 3 * 512 * 4);
        let first = i32::from_le_bytes(bin.body[json_len..json_len + 4].try_into().unwrap());
        assert_eq!(first, 101, "[CLS]");
    }

    /// No output declared: none is asked for, the first reply's first output is read from
    /// then on, and a reply without it names what the server sent instead.
    #[test]
    fn an_undeclared_output_is_learned_from_the_first_reply() {
        let f = KServeFormat {
            names: TensorNames {
                output: OutputName::FirstReply(std::sync::OnceLock::new()),
                ..TensorNames::default()
            },
            ..format(false)
        };
        let a = Input::Text("a".into());
        let v: Value = serde_json::from_slice(&f.prepare(&[&a]).body).unwrap();
        assert!(v.get("outputs").is_none(), "{v}");
        let bin = KServeFormat {
            wire: Wire::Binary,
            names: f.names.clone(),
            ..format(true)
        }
        .prepare(&[&a]);
        let BodyKind::Binary { json_len } = bin.kind else {
            panic!("binary")
        };
        let header: Value = serde_json::from_slice(&bin.body[..json_len]).unwrap();
        assert_eq!(header["parameters"]["binary_data_output"], true);
        let reply = |name: &str| {
            Reply::new(
                format!(
                    r#"{{"outputs":[{{"name":"{name}","datatype":"FP32","shape":[1,3],"data":[0,1,0]}}]}}"#
                ),
                None,
            )
        };
        assert_eq!(f.verdicts(&reply("scores")).unwrap(), ["LABEL_1"]);
        assert_eq!(
            f.verdicts(&reply("other")).unwrap_err(),
            "no output 'scores'; the server sent: other [1, 3] FP32"
        );
        assert_eq!(
            format(false)
                .check(&Reply::new(r#"{"outputs":[]}"#, None), 1)
                .unwrap_err(),
            "no output 'logits'; the server sent no outputs"
        );
    }
}
