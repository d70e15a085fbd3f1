//! Hugging Face inference toolkit payloads: the server tokenizes, and answers a label per
//! input (a classifier) or a vector per input or per token (an embedder).

use super::{Answers, Format, Pooling, Prepared, Reply};

use bytes::Bytes;
use encbench_core::input::Input;
use encbench_core::input::Shape;
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
    let v: Value =
        serde_json::from_slice(body).map_err(|e| format!("response is not JSON: {e}"))?;
    labels_of(&v)
}

/// The labels of a parsed reply: the load path reads every reply, so it is parsed once.
fn labels_of(v: &Value) -> Result<Vec<String>, String> {
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
    let items: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        o @ Value::Object(_) => vec![o],
        _ => vec![],
    };
    let labels: Option<Vec<String>> = items.into_iter().map(one).collect();
    match labels {
        Some(l) if !l.is_empty() => Ok(l),
        _ => Err(format!(
            "no label in response: {}",
            encbench_core::text::truncate(&v.to_string(), 120)
        )),
    }
}

/// How deep numbers are nested in `v` (0 for a number, 1 for a list of them), read along
/// the first elements: whether a reply is made of vectors, and of which form.
fn numeric_depth(v: &Value) -> Option<usize> {
    match v {
        Value::Number(_) => Some(0),
        Value::Array(a) => Some(numeric_depth(a.first()?)? + 1),
        _ => None,
    }
}

fn numbers(v: &Value) -> Option<Vec<f32>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_f64().map(|x| x as f32))
        .collect()
}

fn token_rows(v: &Value) -> Option<Vec<Vec<f32>>> {
    v.as_array()?.iter().map(numbers).collect()
}

/// Vectors from an embedder's reply of `items` nested `depth` deep: `[[f; d]; n]` a vector
/// per input (for a single input it may also be a vector per token), `[[[f; d]; tokens]; n]`
/// a vector per token of each input, and the feature-extraction pipeline's
/// `[[[[f; d]; tokens]]; n]` (a batch of one per input). Token vectors are pooled over all the
/// rows given: the pipeline returns each input's own tokens.
fn hf_vectors(
    items: &[Value],
    depth: usize,
    inputs: usize,
    pooling: Pooling,
) -> Result<Vec<Vec<f32>>, String> {
    let bad = || "an embedding reply with values that are not numbers".to_string();
    let pool = |rows: &[Vec<f32>]| {
        let r: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
        pooling.pool(&r, None)
    };
    match depth {
        1 => {
            let rows: Vec<Vec<f32>> = items
                .iter()
                .map(numbers)
                .collect::<Option<_>>()
                .ok_or_else(bad)?;
            if inputs == 1 && rows.len() > 1 {
                Ok(vec![pool(&rows)?])
            } else {
                Ok(rows)
            }
        }
        2 | 3 => items
            .iter()
            .map(|item| {
                let tokens = match (depth, item.as_array()) {
                    (2, _) => item,
                    (_, Some(one)) if one.len() == 1 => &one[0],
                    _ => return Err("a per-token reply with more than one batch row".into()),
                };
                pool(&token_rows(tokens).ok_or_else(bad)?)
            })
            .collect(),
        d => Err(format!("an embedding reply nested {d} deep")),
    }
}

/// What an HF reply says about `inputs` inputs: vectors when it is made of numbers, labels
/// otherwise.
pub fn hf_answers(body: &[u8], inputs: usize, pooling: Pooling) -> Result<Answers, String> {
    let v: Value =
        serde_json::from_slice(body).map_err(|e| format!("response is not JSON: {e}"))?;
    if let Value::Array(items) = &v
        && let Some(depth) = items.first().and_then(numeric_depth)
    {
        return hf_vectors(items, depth, inputs, pooling).map(Answers::Vectors);
    }
    labels_of(&v).map(Answers::Labels)
}

/// Hugging Face inference toolkit payloads; the server tokenizes.
pub struct HfFormat {
    pub shape: Shape,
    pub pooling: Pooling,
}

impl HfFormat {
    pub fn new(shape: Shape) -> HfFormat {
        HfFormat {
            shape,
            pooling: Pooling::default(),
        }
    }
}

impl Format for HfFormat {
    fn name(&self) -> &'static str {
        "hf"
    }

    fn path(&self) -> String {
        "/invocations".into()
    }

    fn ready_path(&self) -> Option<String> {
        Some("/ping".into())
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

    fn answers(&self, reply: &Reply, inputs: &[&Input]) -> Result<Answers, String> {
        hf_answers(&reply.body, inputs.len(), self.pooling)
    }

    /// A cross-encoder's `[{"label", "score"}]`: the score of each input's label (the best
    /// of a `top_k` list).
    fn scores(&self, reply: &Reply, inputs: usize) -> Result<Vec<f32>, String> {
        let v: Value = serde_json::from_slice(&reply.body)
            .map_err(|e| format!("response is not JSON: {e}"))?;
        let items: Vec<&Value> = match &v {
            Value::Array(a) => a.iter().collect(),
            o @ Value::Object(_) => vec![o],
            _ => vec![],
        };
        let score = |i: &Value| -> Option<f32> {
            match i {
                Value::Object(o) => o.get("score")?.as_f64().map(|s| s as f32),
                Value::Array(list) => list
                    .iter()
                    .filter_map(|x| x.get("score")?.as_f64())
                    .max_by(f64::total_cmp)
                    .map(|s| s as f32),
                _ => None,
            }
        };
        let scores: Option<Vec<f32>> = items.into_iter().map(score).collect();
        match scores {
            Some(s) if s.len() >= inputs => Ok(s),
            _ => Err(format!(
                "no score for each of {}: {}",
                encbench_core::text::count(inputs, "input"),
                encbench_core::text::truncate(&v.to_string(), 120)
            )),
        }
    }

    /// A vector per input answers as a label does; token vectors are counted, not pooled.
    fn check(&self, reply: &Reply, inputs: usize) -> Result<(), String> {
        let answered = match count_labels(&reply.body) {
            Some(n) => n,
            None => hf_answers(&reply.body, inputs, Pooling::Cls)?.len(),
        };
        super::check_verdict_count(answered, inputs)
    }
}

/// The classifier's usual reply, `[{"label": "...", ...}, ...]`, counted without building a
/// document. Every reply is checked between its last byte and the slot's next send, and at
/// concurrency 1 building the document (a map and strings per item) was a seventh of the
/// client's user time. Any other reply, or one this cannot read, takes `hf_answers`, which
/// gives the same count for this form.
fn count_labels(body: &[u8]) -> Option<usize> {
    let items: Vec<Labelled> = serde_json::from_slice(body).ok()?;
    (!items.is_empty()).then_some(items.len())
}

/// An object whose `label` is a string, read in place. Written out, not derived: a derived
/// struct also reads a list (`["x"]` as `{"label": "x"}`), which the full reading rejects.
struct Labelled;

impl<'de> serde::Deserialize<'de> for Labelled {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> serde::de::Visitor<'de> for Object {
            type Value = Labelled;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object with a string label")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Labelled, A::Error> {
                use serde::de::{Error, IgnoredAny};
                let mut label = false;
                while let Some(key) = m.next_key::<&str>()? {
                    if key == "label" {
                        // A repeated key: the full reading keeps the last, so it decides.
                        if label {
                            return Err(A::Error::duplicate_field("label"));
                        }
                        m.next_value::<&str>()?;
                        label = true;
                    } else {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
                label
                    .then_some(Labelled)
                    .ok_or_else(|| A::Error::missing_field("label"))
            }
        }
        d.deserialize_map(Object)
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

    #[test]
    fn embedder_replies_give_a_vector_per_input_in_every_form() {
        let pooled = hf_answers(b"[[1,0],[0,2]]", 2, Pooling::Mean).unwrap();
        assert_eq!(
            pooled,
            Answers::Vectors(vec![vec![1.0, 0.0], vec![0.0, 2.0]])
        );
        // One input, a vector per token.
        let one = hf_answers(b"[[1,0],[3,2]]", 1, Pooling::Mean).unwrap();
        assert_eq!(one, Answers::Vectors(vec![vec![2.0, 1.0]]));
        let per_token = hf_answers(b"[[[1,0],[3,2]],[[5,5]]]", 2, Pooling::Mean).unwrap();
        assert_eq!(
            per_token,
            Answers::Vectors(vec![vec![2.0, 1.0], vec![5.0, 5.0]])
        );
        let pipeline = hf_answers(b"[[[[1,0],[3,2]]]]", 1, Pooling::Cls).unwrap();
        assert_eq!(pipeline, Answers::Vectors(vec![vec![1.0, 0.0]]));
        assert!(
            hf_answers(b"[[[1,0],[3,2]]]", 1, Pooling::None)
                .unwrap_err()
                .contains("--pooling")
        );
        assert!(hf_answers(br#"[[1,"x"]]"#, 1, Pooling::Mean).is_err());
        let f = HfFormat::new(Shape {
            pad_to_max: false,
            max_len: 512,
        });
        assert!(f.check(&Reply::new("[[0.5,0.5],[1,1]]", None), 2).is_ok());
        assert!(f.check(&Reply::new("[[0.5,0.5]]", None), 2).is_err());
    }

    #[test]
    fn the_quick_label_count_agrees_with_the_full_reading_or_leaves_it_the_reply() {
        let full = |b: &str| hf_answers(b.as_bytes(), 2, Pooling::Cls).map(|a| a.len());
        for body in [
            r#"[{"label":"neutral","score":0.9},{"score":0.1,"label":"x","extra":[1,{"a":2}]}]"#,
            r#"[{"label":"entailment"}]"#,
        ] {
            assert_eq!(
                count_labels(body.as_bytes()),
                Some(full(body).unwrap()),
                "{body}"
            );
        }
        // Forms it leaves to the full reading: escapes, a bare object, top_k, vectors, a
        // missing or non-string label, an empty list, a duplicate key.
        for body in [
            r#"[{"label":"ne\"utral","score":0.9}]"#,
            r#"{"label":"LABEL_0","score":0.9}"#,
            r#"[[{"label":"a","score":0.1}]]"#,
            "[[1,0],[0,2]]",
            r#"[{"score":0.9}]"#,
            r#"[{"label":3}]"#,
            "[]",
            r#"[{"label":"a","label":"b"}]"#,
            // Lists where objects belong, which a derived struct would read as one.
            r#"[["logits"]]"#,
            r#"[{"label":"a"},["b"]]"#,
        ] {
            assert_eq!(count_labels(body.as_bytes()), None, "{body}");
        }
        let f = HfFormat::new(Shape {
            pad_to_max: false,
            max_len: 512,
        });
        let check = |b: &str, n| f.check(&Reply::new(b.to_string(), None), n);
        assert!(check(r#"[{"label":"a"},{"label":"b"}]"#, 2).is_ok());
        assert!(
            check(r#"[{"label":"a"}]"#, 2).is_err(),
            "one verdict for two"
        );
        assert!(
            check(r#"[{"label":"a"},{"score":1}]"#, 2).is_err(),
            "a row without a label"
        );
        assert!(
            check(r#"[{"label":"a\"b"},{"label":"c"}]"#, 2).is_ok(),
            "escapes read in full"
        );
    }
}
