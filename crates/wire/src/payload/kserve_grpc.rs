//! KServe v2 over gRPC: the same tensors as over HTTP, in a `ModelInferRequest` with their
//! values raw in `raw_input_contents` (the gRPC form of the binary extension), and outputs
//! read from a `ModelInferResponse`, raw (Triton) or typed in `contents` (KServe's Python
//! server).

use super::kserve_names::IdsType;
use super::{BodyKind, Prepared, Reply};
use crate::grpc::messages::{
    InferInputTensor, InferOutputTensor, InferRequestedOutputTensor, ModelInferRequest,
    ModelInferResponse,
};
use bytes::{BufMut, Bytes, BytesMut};
use encbench_core::input::Input;

/// A request of `tensors`, each [batch, len] of `ids_type`; with no output declared, none
/// is named and the server sends all.
pub fn request(
    model: &str,
    tensors: &[(&str, &[i64])],
    shape: [usize; 2],
    ids_type: IdsType,
    output: Option<&str>,
) -> Prepared {
    let inputs = tensors
        .iter()
        .map(|(name, _)| input(name, ids_type.name(), shape))
        .collect();
    let raw = tensors
        .iter()
        .map(|(_, data)| {
            let mut b = BytesMut::with_capacity(data.len() * ids_type.size());
            for &v in *data {
                match ids_type {
                    IdsType::Int64 => b.put_i64_le(v),
                    // Token ids, masks and type ids are far below 2^31.
                    IdsType::Int32 => b.put_i32_le(v as i32),
                }
            }
            b.freeze()
        })
        .collect();
    prepared(model, inputs, raw, output)
}

/// One BYTES tensor of the raw texts, [batch, 1] or [batch, 2] (premise, hypothesis); each
/// element raw as a little-endian u32 length and its bytes.
pub fn text_request(model: &str, name: &str, output: Option<&str>, inputs: &[&Input]) -> Prepared {
    let pairs = inputs.iter().any(|i| i.parts().1.is_some());
    let width = if pairs { 2 } else { 1 };
    let mut raw = BytesMut::new();
    for i in inputs {
        let (a, b) = i.parts();
        for text in std::iter::once(a).chain(pairs.then_some(b.unwrap_or(""))) {
            raw.put_u32_le(u32::try_from(text.len()).expect("a text under 4 GiB"));
            raw.put_slice(text.as_bytes());
        }
    }
    let tensor = input(name, "BYTES", [inputs.len(), width]);
    prepared(model, vec![tensor], vec![raw.freeze()], output)
}

fn input(name: &str, datatype: &str, shape: [usize; 2]) -> InferInputTensor {
    InferInputTensor {
        name: name.to_owned(),
        datatype: datatype.to_owned(),
        shape: shape.iter().map(|&d| d as i64).collect(),
        contents: None,
    }
}

fn prepared(
    model: &str,
    inputs: Vec<InferInputTensor>,
    raw: Vec<Bytes>,
    output: Option<&str>,
) -> Prepared {
    let message = ModelInferRequest {
        model_name: model.to_owned(),
        model_version: String::new(),
        id: String::new(),
        inputs,
        outputs: output
            .map(|name| InferRequestedOutputTensor {
                name: name.to_owned(),
            })
            .into_iter()
            .collect(),
        raw_input_contents: raw,
    };
    Prepared {
        body: crate::grpc::frame(&message),
        kind: BodyKind::Grpc,
        tokenize: None,
        timeout: None,
        tokens: None,
    }
}

fn response(reply: &Reply) -> Result<ModelInferResponse, String> {
    <ModelInferResponse as prost::Message>::decode(reply.body.clone())
        .map_err(|e| format!("response is not a ModelInferResponse: {e}"))
}

/// The name of the reply's first output.
pub fn first_output(reply: &Reply) -> Result<String, String> {
    response(reply)?
        .outputs
        .into_iter()
        .next()
        .map(|o| o.name)
        .ok_or_else(|| "response has no outputs".into())
}

/// The named output as (dimensions, row-major values); a one-dimensional output is one row.
/// FP32 as sent; FP64 (typed) narrowed.
pub fn output_tensor(reply: &Reply, name: &str) -> Result<(Vec<usize>, Vec<f32>), String> {
    let r = response(reply)?;
    let Some(at) = r.outputs.iter().position(|o| o.name == name) else {
        return Err(format!("no output '{name}'; {}", sent_outputs(&r.outputs)));
    };
    let o = &r.outputs[at];
    let shape: Vec<usize> = o.shape.iter().map(|&d| d.max(0) as usize).collect();
    let dims = match shape.as_slice() {
        [c] => vec![1, *c],
        [_, _] | [_, _, _] => shape.clone(),
        _ => return Err(format!("output {name} has shape {shape:?}")),
    };
    let values = values(&r, at)?;
    let size = dims.iter().try_fold(1usize, |n, d| n.checked_mul(*d));
    if size != Some(values.len()) {
        return Err(format!(
            "output {name}: {} values for shape {shape:?}",
            values.len()
        ));
    }
    Ok((dims, values))
}

/// Output `at`'s values: raw when the reply sends its outputs raw (one entry per output),
/// else from its typed contents.
fn values(r: &ModelInferResponse, at: usize) -> Result<Vec<f32>, String> {
    if !r.raw_output_contents.is_empty() {
        let raw = r
            .raw_output_contents
            .get(at)
            .ok_or("the raw outputs are fewer than the outputs")?;
        if raw.len() % 4 != 0 {
            return Err(format!("raw output of {} bytes is not FP32", raw.len()));
        }
        return Ok(raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect());
    }
    let c = r.outputs[at]
        .contents
        .as_ref()
        .ok_or("output has no data")?;
    Ok(if c.fp64_contents.is_empty() {
        c.fp32_contents.clone()
    } else {
        c.fp64_contents.iter().map(|&v| v as f32).collect()
    })
}

/// `the server sent: sentence_embedding [1, 384] FP32`, as over HTTP.
fn sent_outputs(outputs: &[InferOutputTensor]) -> String {
    if outputs.is_empty() {
        return "the server sent no outputs".into();
    }
    let each: Vec<String> = outputs
        .iter()
        .map(|o| {
            format!("{} {:?} {}", o.name, o.shape, o.datatype)
                .trim_end()
                .to_string()
        })
        .collect();
    format!("the server sent: {}", each.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::messages::InferTensorContents;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// The bytes Python's protobuf (tritonclient 2.51's `service_pb2`) writes for the same
    /// request: model "minilm", id "7", `input_ids` INT64 [1, 2] raw [101, 102], output
    /// `embedding`.
    #[test]
    fn a_request_is_byte_for_byte_what_tritonclient_encodes() {
        let message = ModelInferRequest {
            model_name: "minilm".into(),
            model_version: String::new(),
            id: "7".into(),
            inputs: vec![input("input_ids", "INT64", [1, 2])],
            outputs: vec![InferRequestedOutputTensor {
                name: "embedding".into(),
            }],
            raw_input_contents: vec![Bytes::from(
                [101i64, 102]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect::<Vec<_>>(),
            )],
        };
        assert_eq!(
            prost::Message::encode_to_vec(&message),
            hex(
                "0a066d696e696c6d1a01372a160a09696e7075745f6964731205494e5436341a020102320b0a09656d62656464696e673a1065000000000000006600000000000000"
            )
        );
        let p = request(
            "minilm",
            &[("input_ids", &[101, 102])],
            [1, 2],
            IdsType::Int64,
            None,
        );
        assert_eq!(p.kind, BodyKind::Grpc);
        let sent: ModelInferRequest =
            prost::Message::decode(crate::grpc::unframe(&p.body).unwrap()).unwrap();
        assert_eq!(sent.inputs, message.inputs);
        assert_eq!(sent.raw_input_contents, message.raw_input_contents);
        assert!(sent.outputs.is_empty());
    }

    /// Python's bytes of a reply with a raw output, a typed one and parameters (skipped).
    #[test]
    fn raw_and_typed_outputs_are_read_and_a_missing_one_says_what_came() {
        let body = hex(
            "0a016d12013122110a0b73657175656e63655f6964120210032a0f0a037261771204465033321a0201022a350a0574797065641204465033321a02010222160a1062696e6172795f646174615f73697a65120210082a0a32080000003f000080bf32080000c03f00002040",
        );
        let reply = Reply::new(body, None);
        assert_eq!(
            output_tensor(&reply, "raw").unwrap(),
            (vec![1, 2], vec![1.5, 2.5])
        );
        assert_eq!(first_output(&reply).unwrap(), "raw");
        assert_eq!(
            output_tensor(&reply, "nope").unwrap_err(),
            "no output 'nope'; the server sent: raw [1, 2] FP32, typed [1, 2] FP32"
        );
        // KServe's Python server: typed contents and no raw outputs.
        let typed = ModelInferResponse {
            model_name: "m".into(),
            model_version: String::new(),
            id: String::new(),
            outputs: vec![InferOutputTensor {
                name: "sentence_embedding".into(),
                datatype: "FP32".into(),
                shape: vec![2, 2],
                contents: Some(InferTensorContents {
                    fp32_contents: vec![1.0, 0.0, 0.0, 1.0],
                    ..InferTensorContents::default()
                }),
            }],
            raw_output_contents: vec![],
        };
        let reply = Reply::new(prost::Message::encode_to_vec(&typed), None);
        assert_eq!(
            output_tensor(&reply, "sentence_embedding").unwrap().1,
            vec![1.0, 0.0, 0.0, 1.0]
        );
        let short = Reply::new(b"\x0a\x01".to_vec(), None);
        assert!(
            output_tensor(&short, "x")
                .unwrap_err()
                .contains("not a ModelInferResponse")
        );
    }

    #[test]
    fn texts_travel_as_length_prefixed_bytes() {
        let (a, b) = (Input::pair("p1", "hé"), Input::pair("p2", "h2"));
        let p = text_request("m", "TEXT", None, &[&a, &b]);
        let sent: ModelInferRequest =
            prost::Message::decode(crate::grpc::unframe(&p.body).unwrap()).unwrap();
        assert_eq!(sent.inputs[0].datatype, "BYTES");
        assert_eq!(sent.inputs[0].shape, vec![2, 2]);
        let raw = &sent.raw_input_contents[0];
        assert_eq!(&raw[..6], &[2, 0, 0, 0, b'p', b'1']);
        assert_eq!(&raw[6..13], &[3, 0, 0, 0, b'h', 0xc3, 0xa9]);
        assert_eq!(raw.len(), 4 * 4 + 2 + 3 + 2 + 2);
    }
}
