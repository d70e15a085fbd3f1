//! Hugging Face inference toolkit payloads: the server tokenizes, and answers a label per
//! input.

use super::{Format, Prepared, Reply, Shape};
use crate::input::Input;
use bytes::Bytes;
use serde_json::{Value, json};

/// `{"inputs": [...], "parameters": {"batch_size": N}}`. `batch_size` is always sent:
/// without it the HF pipeline runs the list one input at a time (510 ms instead of 25 ms
/// for 32 inputs, measured on an mDeBERTa endpoint).
pub fn hf_body(inputs: &[&Input], shape: Shape) -> Bytes {
    let mut parameters = json!({ "batch_size": inputs.len() });
    if shape.pad_to_max {
        parameters["padding"] = json!("max_length");
        parameters["truncation"] = json!(true);
        parameters["max_length"] = json!(shape.max_len);
    }
    let body = json!({
        "inputs": inputs.iter().map(|i| i.to_hf()).collect::<Vec<_>>(),
        "parameters": parameters,
    });
    Bytes::from(serde_json::to_vec(&body).expect("JSON values serialize"))
}

/// Labels from an HF pipeline response. Accepts `[{label, score}]` (one per input),
/// a bare `{label, score}` (single input), and `[[{label, score}, ...]]` (`top_k`: best wins).
pub fn hf_labels(body: &[u8]) -> Result<Vec<String>, String> {
    fn one(v: &Value) -> Option<String> {
        match v {
            Value::Object(o) => o.get("label").and_then(Value::as_str).map(str::to_owned),
            Value::Array(items) => items
                .iter()
                .filter_map(|i| Some((i.get("score")?.as_f64()?, i.get("label")?.as_str()?)))
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, l)| l.to_owned()),
            _ => None,
        }
    }
    let v: Value =
        serde_json::from_slice(body).map_err(|e| format!("response is not JSON: {e}"))?;
    let items: Vec<&Value> = match &v {
        Value::Array(a) => a.iter().collect(),
        o @ Value::Object(_) => vec![o],
        _ => vec![],
    };
    let labels: Option<Vec<String>> = items.into_iter().map(one).collect();
    match labels {
        Some(l) if !l.is_empty() => Ok(l),
        _ => Err(format!(
            "no label in response: {}",
            crate::fmt::truncate(&v.to_string(), 120)
        )),
    }
}

/// Hugging Face inference toolkit payloads; the server tokenizes.
pub struct HfFormat {
    pub shape: Shape,
}

impl Format for HfFormat {
    fn name(&self) -> &'static str {
        "hf"
    }

    fn path(&self) -> String {
        "/invocations".into()
    }

    fn ready_path(&self) -> String {
        "/ping".into()
    }

    fn tokenizes(&self) -> bool {
        false
    }

    fn prepare(&self, inputs: &[&Input]) -> Prepared {
        Prepared::json(hf_body(inputs, self.shape))
    }

    fn verdicts(&self, reply: &Reply) -> Result<Vec<String>, String> {
        hf_labels(&reply.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hf_pairs_and_pad_to_max() {
        let a = Input::pair("p", "h");
        let body: Value = serde_json::from_slice(&hf_body(
            &[&a, &a],
            Shape {
                pad_to_max: true,
                max_len: 512,
            },
        ))
        .unwrap();
        assert_eq!(body["inputs"][0], json!({"text": "p", "text_pair": "h"}));
        assert_eq!(
            body["parameters"],
            json!({"batch_size": 2, "padding": "max_length", "truncation": true, "max_length": 512})
        );
        let plain: Value = serde_json::from_slice(&hf_body(
            &[&Input::Text("x".into())],
            Shape {
                pad_to_max: false,
                max_len: 512,
            },
        ))
        .unwrap();
        assert_eq!(
            plain,
            json!({"inputs": ["x"], "parameters": {"batch_size": 1}})
        );
    }

    #[test]
    fn hf_response_shapes() {
        assert_eq!(
            hf_labels(br#"[{"label":"neutral","score":0.9}]"#).unwrap(),
            vec!["neutral"]
        );
        assert_eq!(
            hf_labels(br#"{"label":"LABEL_0","score":0.9}"#).unwrap(),
            vec!["LABEL_0"]
        );
        let top_k = br#"[[{"label":"a","score":0.1},{"label":"b","score":0.8}]]"#;
        assert_eq!(hf_labels(top_k).unwrap(), vec!["b"]);
        assert!(hf_labels(b"[]").is_err());
        assert!(hf_labels(b"not json").is_err());
    }
}
