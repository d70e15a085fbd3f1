//! A KServe v2 model's tensors: their names and the token tensors' datatype. Taken, for
//! each, from the user's flag, else what the server declares (the standard metadata route
//! `GET /v2/models/{m}`, else Triton's `/config`), else, for an output nobody declared, the
//! first reply; inputs nobody declared get the BERT names.

use serde_json::Value;
use std::sync::OnceLock;

/// The datatype of the token tensors (ids, mask, type ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IdsType {
    #[default]
    Int64,
    Int32,
}

impl IdsType {
    pub fn name(self) -> &'static str {
        match self {
            IdsType::Int64 => "INT64",
            IdsType::Int32 => "INT32",
        }
    }

    /// Bytes per value with the binary tensor extension.
    pub fn size(self) -> usize {
        match self {
            IdsType::Int64 => 8,
            IdsType::Int32 => 4,
        }
    }

    /// Metadata's `INT32`, or `/config`'s `TYPE_INT32`; other types are not token ids.
    pub fn parse(s: &str) -> Option<IdsType> {
        match s.trim_start_matches("TYPE_") {
            "INT64" => Some(IdsType::Int64),
            "INT32" => Some(IdsType::Int32),
            _ => None,
        }
    }
}

/// The output read back.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputName {
    /// Declared by the server, or given with `--output-name`.
    Named(String),
    /// Declared by nobody: requests name no output (the server sends all of them), and the
    /// first output of the first reply read is the one read from then on.
    FirstReply(OnceLock<String>),
}

impl OutputName {
    /// The name to ask for in requests: only one somebody declared.
    pub fn declared(&self) -> Option<&str> {
        match self {
            OutputName::Named(n) => Some(n),
            OutputName::FirstReply(_) => None,
        }
    }
}

/// The model's tensor names, and the token tensors' datatype.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorNames {
    pub input_ids: String,
    pub attention_mask: String,
    /// `None` when the model takes no token type ids.
    pub token_type_ids: Option<String>,
    pub output: OutputName,
    pub ids_type: IdsType,
}

impl Default for TensorNames {
    fn default() -> Self {
        TensorNames {
            input_ids: "input_ids".into(),
            attention_mask: "attention_mask".into(),
            token_type_ids: None,
            output: OutputName::Named("logits".into()),
            ids_type: IdsType::Int64,
        }
    }
}

/// What a server declares of a model: inputs as (name, datatype) and output names; empty
/// where it says nothing (KServe's metadata of a model that declares no tensors).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Declared {
    pub inputs: Vec<(String, String)>,
    pub outputs: Vec<String>,
}

impl Declared {
    /// `GET /v2/models/{m}`: `inputs` and `outputs` of `{name, datatype, shape}`.
    pub fn from_metadata(v: &Value) -> Declared {
        Declared::read(v, "inputs", "outputs", "datatype")
    }

    /// Triton's `GET /v2/models/{m}/config`: `input` and `output` of `{name, data_type}`.
    pub fn from_config(v: &Value) -> Declared {
        Declared::read(v, "input", "output", "data_type")
    }

    fn read(v: &Value, inputs: &str, outputs: &str, datatype: &str) -> Declared {
        let tensors = |key: &str| -> Vec<(String, String)> {
            v[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|t| {
                            let name = t["name"].as_str()?.to_owned();
                            Some((name, t[datatype].as_str().unwrap_or("").to_owned()))
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        Declared {
            inputs: tensors(inputs),
            outputs: tensors(outputs).into_iter().map(|(n, _)| n).collect(),
        }
    }

    /// The first input whose name mentions `needle`.
    fn input(&self, needle: &str) -> Option<&str> {
        self.inputs
            .iter()
            .map(|(n, _)| n.as_str())
            .find(|n| n.to_lowercase().contains(needle))
    }
}

/// Names the user gave with flags; `None` where none was given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GivenNames {
    pub input_ids: Option<String>,
    pub attention_mask: Option<String>,
    pub token_type_ids: Option<String>,
    pub output: Option<String>,
}

impl TensorNames {
    /// Each name from its flag, else the first of `declared` (metadata, then `/config`;
    /// empty when the server could not be asked) that declares tensors of its kind, else
    /// BERT's input names and the first reply's output. When the server answered but
    /// declared no inputs, `token_type_ids` is sent too, as BERT tokenizers make them,
    /// unless the user named the inputs (then only those named are sent).
    pub fn resolve(given: &GivenNames, declared: &[Declared]) -> TensorNames {
        let inputs = declared.iter().find(|d| !d.inputs.is_empty());
        let find = |needle: &str| inputs.and_then(|d| d.input(needle)).map(str::to_owned);
        let input_ids = given
            .input_ids
            .clone()
            .or_else(|| find("input_ids").or_else(|| find("ids")))
            .unwrap_or_else(|| "input_ids".into());
        let named_inputs = given.input_ids.is_some() || given.attention_mask.is_some();
        let token_type_ids = match (&given.token_type_ids, inputs) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(_)) => find("type"),
            // A server that answered but declared nothing: KServe's Python servers, whose
            // models (BERT-like, mostly) read the tensors by name. A server that could not be
            // asked (SageMaker) keeps the two inputs every encoder takes.
            (None, None) => {
                (!declared.is_empty() && !named_inputs).then(|| "token_type_ids".into())
            }
        };
        let ids_type = inputs
            .and_then(|d| d.inputs.iter().find(|(n, _)| *n == input_ids))
            .and_then(|(_, t)| IdsType::parse(t))
            .unwrap_or_default();
        let output = given
            .output
            .clone()
            .or_else(|| declared.iter().find_map(|d| d.outputs.first().cloned()))
            .map_or_else(
                || OutputName::FirstReply(OnceLock::new()),
                OutputName::Named,
            );
        TensorNames {
            attention_mask: given
                .attention_mask
                .clone()
                .or_else(|| find("mask"))
                .unwrap_or_else(|| "attention_mask".into()),
            input_ids,
            token_type_ids,
            output,
            ids_type,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(n: &TensorNames) -> (&str, &str, Option<&str>, Option<&str>, IdsType) {
        (
            &n.input_ids,
            &n.attention_mask,
            n.token_type_ids.as_deref(),
            n.output.declared(),
            n.ids_type,
        )
    }

    #[test]
    fn metadata_comes_before_config_and_flags_before_both() {
        let meta = Declared::from_metadata(&json!({"inputs": [
            {"name": "ids", "datatype": "INT32", "shape": [-1, -1]},
            {"name": "mask", "datatype": "INT32", "shape": [-1, -1]},
        ], "outputs": [{"name": "sentence_embedding", "datatype": "FP32"}]}));
        let config = Declared::from_config(&json!({
            "input": [{"name": "input_ids", "data_type": "TYPE_INT64"}, {"name": "attention_mask"}],
            "output": [{"name": "logits"}],
        }));
        let both = [meta.clone(), config.clone()];
        let n = TensorNames::resolve(&GivenNames::default(), &both);
        assert_eq!(
            names(&n),
            (
                "ids",
                "mask",
                None,
                Some("sentence_embedding"),
                IdsType::Int32
            )
        );
        let n = TensorNames::resolve(&GivenNames::default(), &[config]);
        assert_eq!(
            names(&n),
            (
                "input_ids",
                "attention_mask",
                None,
                Some("logits"),
                IdsType::Int64
            )
        );
        let given = GivenNames {
            output: Some("pooled".into()),
            token_type_ids: Some("tt".into()),
            ..GivenNames::default()
        };
        let n = TensorNames::resolve(&given, &both);
        assert_eq!(
            names(&n),
            ("ids", "mask", Some("tt"), Some("pooled"), IdsType::Int32)
        );
    }

    /// KServe's metadata of a model that declares nothing: BERT's three inputs, the output
    /// from the first reply; inputs the user named are all that is sent.
    #[test]
    fn nothing_declared_sends_bert_inputs_and_reads_the_first_replys_output() {
        let empty = Declared::from_metadata(&json!({"name": "m", "inputs": [], "outputs": []}));
        assert_eq!(empty, Declared::default());
        let n = TensorNames::resolve(&GivenNames::default(), std::slice::from_ref(&empty));
        assert_eq!(
            names(&n),
            (
                "input_ids",
                "attention_mask",
                Some("token_type_ids"),
                None,
                IdsType::Int64
            )
        );
        let given = GivenNames {
            input_ids: Some("input_ids".into()),
            ..GivenNames::default()
        };
        assert_eq!(TensorNames::resolve(&given, &[empty]).token_type_ids, None);
        // Nobody asked (SageMaker): the two inputs every encoder takes.
        let n = TensorNames::resolve(&GivenNames::default(), &[]);
        assert_eq!(names(&n).2, None);
        assert_eq!(names(&n).3, None);
    }
}
