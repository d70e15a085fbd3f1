//! vLLM pooling servers: `POST /classify` (`{"model", "input": [...]}` → `data[{label, probs}]`)
//! and `/v1/embeddings`. vLLM cannot pad server-side, so `--pad-to-max` sends token ids of
//! exactly `--max-len` built with the tokenizer; pairs always travel as token ids (with their
//! [SEP]), texts as strings.

use super::labels::argmax_label;
use super::{Answers, Format, Prepared, Reply};
use crate::tokenize::Encoder;
use bytes::Bytes;
use encbench_core::input::Input;
use serde_json::{Value, json};
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VllmApi {
    Classify,
    Embeddings,
}

pub struct VllmFormat {
    pub model: String,
    pub api: VllmApi,
    pub encoder: Encoder,
    pub pad_to_max: bool,
}

impl Format for VllmFormat {
    fn name(&self) -> &'static str {
        "vllm"
    }

    fn path(&self) -> String {
        match self.api {
            VllmApi::Classify => "/classify".into(),
            VllmApi::Embeddings => "/v1/embeddings".into(),
        }
    }

    fn ready_path(&self) -> String {
        "/health".into()
    }

    fn tokenizes(&self) -> bool {
        true
    }

    fn prepare(&self, inputs: &[&Input]) -> Prepared {
        let started = Instant::now();
        let input: Vec<Value> = inputs
            .iter()
            .map(|i| match (self.pad_to_max, i.parts()) {
                (true, _) => json!(self.encoder.exact_len_ids(i)),
                (false, (_, Some(_))) => json!(self.encoder.encode(&[i], false).input_ids),
                (false, (text, None)) => json!(text),
            })
            .collect();
        let body = json!({ "model": self.model, "input": input });
        Prepared {
            tokenize: Some(started.elapsed()),
            ..Prepared::json(Bytes::from(
                serde_json::to_vec(&body).expect("JSON values serialize"),
            ))
        }
    }

    fn verdicts(&self, reply: &Reply) -> Result<Vec<String>, String> {
        let v: Value = serde_json::from_slice(&reply.body)
            .map_err(|e| format!("response is not JSON: {e}"))?;
        let data = v["data"].as_array().ok_or("response has no data")?;
        data.iter()
            .map(|d| {
                if let Some(label) = d["label"].as_str() {
                    return Ok(label.to_string());
                }
                let probs = d["probs"]
                    .as_array()
                    .ok_or("classify item has neither label nor probs")?;
                argmax_label(probs.iter().filter_map(Value::as_f64))
            })
            .collect()
    }

    /// `/v1/embeddings`: `data[{index, embedding}]`, a vector per input in index order.
    fn answers(&self, reply: &Reply, inputs: &[&Input]) -> Result<Answers, String> {
        #[derive(serde::Deserialize)]
        struct Item {
            #[serde(default)]
            index: usize,
            embedding: Vec<f32>,
        }
        #[derive(serde::Deserialize)]
        struct Embeddings {
            data: Vec<Item>,
        }
        let _ = inputs;
        if self.api == VllmApi::Classify {
            return self.verdicts(reply).map(Answers::Labels);
        }
        let mut e: Embeddings = serde_json::from_slice(&reply.body)
            .map_err(|e| format!("response is not an embeddings reply: {e}"))?;
        e.data.sort_by_key(|i| i.index);
        Ok(Answers::Vectors(
            e.data.into_iter().map(|i| i.embedding).collect(),
        ))
    }

    /// Embeddings have no verdict: a reply is whole when every input has a vector.
    fn check(&self, reply: &Reply, inputs: usize) -> Result<(), String> {
        #[derive(serde::Deserialize)]
        struct Item {
            #[serde(default)]
            embedding: Vec<serde::de::IgnoredAny>,
        }
        #[derive(serde::Deserialize)]
        struct Embeddings {
            data: Vec<Item>,
        }
        if self.api == VllmApi::Classify {
            return super::check_verdict_count(self.verdicts(reply)?.len(), inputs);
        }
        let e: Embeddings = serde_json::from_slice(&reply.body)
            .map_err(|e| format!("response is not an embeddings reply: {e}"))?;
        let whole = e.data.iter().filter(|i| !i.embedding.is_empty()).count();
        super::check_verdict_count(whole, inputs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenize::TokenCounter;

    #[test]
    fn classify_payload_and_response() {
        let f = VllmFormat {
            model: "nli".into(),
            api: VllmApi::Classify,
            encoder: TokenCounter::shipped().encoder(512).unwrap(),
            pad_to_max: true,
        };
        let a = Input::pair("premise", "hypothesis");
        let v: Value = serde_json::from_slice(&f.prepare(&[&a, &a]).body).unwrap();
        assert_eq!(v["model"], "nli");
        assert_eq!(v["input"][0].as_array().unwrap().len(), 512);
        let reply = Reply::new(
            r#"{"data":[{"index":0,"label":"entailment","probs":[0.9,0.05,0.05]},{"index":1,"probs":[0.1,0.2,0.7]}]}"#,
            None,
        );
        assert_eq!(f.verdicts(&reply).unwrap(), vec!["entailment", "LABEL_2"]);
    }
}
