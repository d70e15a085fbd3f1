//! Replies of the JSON APIs, read into answers: vectors, labels, or a score per document.
//! Each reader takes the shape its route documents and says what it found instead.

use super::Pooling;
use super::labels::argmax_label;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

fn parse<'a, T: Deserialize<'a>>(body: &'a [u8], what: &str) -> Result<T, String> {
    serde_json::from_slice(body).map_err(|e| format!("response is not {what}: {e}"))
}

/// An embedding as sent: numbers, or base64 of little-endian f32 (`encoding_format`
/// `base64`, which OpenAI-compatible clients ask for by default).
#[derive(Deserialize)]
#[serde(untagged)]
enum Embedding {
    Floats(Vec<f32>),
    Base64(String),
}

impl Embedding {
    fn floats(self) -> Result<Vec<f32>, String> {
        match self {
            Embedding::Floats(v) => Ok(v),
            Embedding::Base64(s) => {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(s.trim())
                    .map_err(|e| format!("a base64 embedding that does not decode: {e}"))?;
                if raw.len() % 4 != 0 {
                    return Err(format!(
                        "a base64 embedding of {} bytes: not float32 values",
                        raw.len()
                    ));
                }
                Ok(raw
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect())
            }
        }
    }
}

/// `{"data": [{"index", "embedding"}]}`: a vector per input, in index order.
pub fn openai_vectors(body: &[u8]) -> Result<Vec<Vec<f32>>, String> {
    #[derive(Deserialize)]
    struct Item {
        #[serde(default)]
        index: usize,
        embedding: Embedding,
    }
    #[derive(Deserialize)]
    struct Reply {
        data: Vec<Item>,
    }
    let mut r: Reply = parse(body, "an embeddings reply")?;
    r.data.sort_by_key(|i| i.index);
    r.data.into_iter().map(|i| i.embedding.floats()).collect()
}

/// A list of numbers, counted as it is read: a vector checked without being kept (a row
/// of `null`s is no vector, as the full reading says).
struct Numbers(usize);

impl<'de> Deserialize<'de> for Numbers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Seq;
        impl<'de> serde::de::Visitor<'de> for Seq {
            type Value = Numbers;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of numbers")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Numbers, A::Error> {
                let mut n = 0;
                while a.next_element::<f32>()?.is_some() {
                    n += 1;
                }
                Ok(Numbers(n))
            }
        }
        d.deserialize_seq(Seq)
    }
}

/// Inputs an embeddings reply gives a vector for, counted without keeping them.
pub fn openai_count(body: &[u8]) -> Result<usize, String> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Sent {
        Floats(Numbers),
        Base64(String),
    }
    #[derive(Deserialize)]
    struct Item {
        embedding: Sent,
    }
    #[derive(Deserialize)]
    struct Reply {
        data: Vec<Item>,
    }
    let r: Reply = parse(body, "an embeddings reply")?;
    Ok(r.data
        .iter()
        .filter(|i| match &i.embedding {
            Sent::Floats(v) => v.0 > 0,
            // Decoded, as the full reading decodes it: a count of bytes not of four is none.
            Sent::Base64(s) => Embedding::Base64(s.clone())
                .floats()
                .is_ok_and(|v| !v.is_empty()),
        })
        .count())
}

/// TEI's `/embed`: `[[f32]]`, a vector per input.
pub fn tei_vectors(body: &[u8]) -> Result<Vec<Vec<f32>>, String> {
    parse(body, "TEI's list of embeddings")
}

pub fn tei_count(body: &[u8]) -> Result<usize, String> {
    let rows: Vec<Numbers> = parse(body, "TEI's list of embeddings")?;
    Ok(rows.iter().filter(|r| r.0 > 0).count())
}

/// vLLM's `/pooling`: `{"data": [{"index", "data"}]}`, each a vector, or a vector per token
/// pooled here over all the rows given.
pub fn pooling_vectors(body: &[u8], pooling: Pooling) -> Result<Vec<Vec<f32>>, String> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Pooled {
        Vector(Vec<f32>),
        Tokens(Vec<Vec<f32>>),
        Base64(String),
    }
    #[derive(Deserialize)]
    struct Item {
        #[serde(default)]
        index: usize,
        data: Pooled,
    }
    #[derive(Deserialize)]
    struct Reply {
        data: Vec<Item>,
    }
    let mut r: Reply = parse(body, "a pooling reply")?;
    r.data.sort_by_key(|i| i.index);
    r.data
        .into_iter()
        .map(|i| match i.data {
            Pooled::Vector(v) => Ok(v),
            Pooled::Base64(s) => Embedding::Base64(s).floats(),
            Pooled::Tokens(rows) => {
                let rows: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
                pooling.pool(&rows, None)
            }
        })
        .collect()
}

/// A label per input from lists of `{"score", "label"}`, the best of each list winning (TEI's
/// `/predict`, Infinity's `/classify`): a single input's reply may be the one flat list.
fn best_labels(lists: &Value) -> Result<Vec<String>, String> {
    let Value::Array(items) = lists else {
        return Err("response is not a list of labels".into());
    };
    let best = |list: &Value| -> Option<String> {
        list.as_array()?
            .iter()
            .filter_map(|i| Some((i.get("score")?.as_f64()?, i.get("label")?.as_str()?)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, l)| l.to_owned())
    };
    let labels: Option<Vec<String>> = if items.first().is_some_and(Value::is_object) {
        best(lists).map(|l| vec![l])
    } else {
        items.iter().map(best).collect()
    };
    labels
        .filter(|l| !l.is_empty())
        .ok_or_else(|| "no label with a score in the response".into())
}

/// The best score of each list of `{"score", "label"}`: a one-label classifier's score.
fn best_scores(lists: &Value) -> Result<Vec<f32>, String> {
    let best = |list: &Value| -> Option<f32> {
        list.as_array()?
            .iter()
            .filter_map(|i| i.get("score")?.as_f64())
            .max_by(f64::total_cmp)
            .map(|s| s as f32)
    };
    let Value::Array(items) = lists else {
        return Err("response is not a list of scores".into());
    };
    let scores: Option<Vec<f32>> = if items.first().is_some_and(Value::is_object) {
        best(lists).map(|s| vec![s])
    } else {
        items.iter().map(best).collect()
    };
    scores.ok_or_else(|| "no score in the response".into())
}

pub fn tei_scores_per_input(body: &[u8]) -> Result<Vec<f32>, String> {
    best_scores(&parse::<Value>(body, "JSON")?)
}

pub fn infinity_scores_per_input(body: &[u8]) -> Result<Vec<f32>, String> {
    let v: Value = parse(body, "JSON")?;
    best_scores(v.get("data").ok_or("response has no data")?)
}

/// vLLM's `/classify` of a cross-encoder: each input's first probability.
pub fn vllm_scores_per_input(body: &[u8]) -> Result<Vec<f32>, String> {
    let v: Value = parse(body, "JSON")?;
    let data = v["data"].as_array().ok_or("response has no data")?;
    data.iter()
        .map(|d| {
            d["probs"][0]
                .as_f64()
                .map(|p| p as f32)
                .ok_or_else(|| "classify item has no probs".to_string())
        })
        .collect()
}

/// TEI's `/predict`: `[[{"score", "label"}, ...], ...]`, or one flat list for one input.
pub fn tei_labels(body: &[u8]) -> Result<Vec<String>, String> {
    best_labels(&parse::<Value>(body, "JSON")?)
}

/// Infinity's `/classify`: `{"data": [[{"score", "label"}, ...], ...]}`.
pub fn infinity_labels(body: &[u8]) -> Result<Vec<String>, String> {
    let v: Value = parse(body, "JSON")?;
    best_labels(v.get("data").ok_or("response has no data")?)
}

/// vLLM's `/classify`: `{"data": [{"label", "probs"}]}`, the label or the highest of probs.
pub fn vllm_labels(body: &[u8]) -> Result<Vec<String>, String> {
    let v: Value = parse(body, "JSON")?;
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

/// Scores in the order of the `documents` sent, from (index, score) items in any order: every
/// document must have one.
fn by_index(
    items: impl Iterator<Item = (usize, f32)>,
    documents: usize,
) -> Result<Vec<f32>, String> {
    let mut scores = vec![None; documents];
    for (i, s) in items {
        if let Some(slot) = scores.get_mut(i) {
            *slot = Some(s);
        }
    }
    let given = scores.iter().flatten().count();
    scores
        .into_iter()
        .collect::<Option<Vec<f32>>>()
        .ok_or_else(|| {
            format!(
                "{} for {}",
                encbench_core::text::count(given, "score"),
                encbench_core::text::count(documents, "document")
            )
        })
}

/// The rerank reply of Jina, Cohere, vLLM and Infinity: `{"results": [{"index",
/// "relevance_score"}]}`, best first.
pub fn cohere_scores(body: &[u8], documents: usize) -> Result<Vec<f32>, String> {
    #[derive(Deserialize)]
    struct Result_ {
        index: usize,
        relevance_score: f32,
    }
    #[derive(Deserialize)]
    struct Reply {
        results: Vec<Result_>,
    }
    let r: Reply = parse(body, "a rerank reply")?;
    by_index(
        r.results.into_iter().map(|x| (x.index, x.relevance_score)),
        documents,
    )
}

/// What the load checks of a rerank reply that may be cut to the best `top_n`: how many of the
/// `documents` it scores (each once), and whether every result carries its document's text
/// (Jina, Cohere and vLLM `"document": {"text"}`, Infinity `"document": "…"`, TEI `"text"`).
pub fn ranked_results(body: &[u8], documents: usize, tei: bool) -> Result<(usize, bool), String> {
    use serde::de::IgnoredAny;
    #[derive(Deserialize)]
    struct Result_ {
        index: usize,
        #[serde(default, alias = "text")]
        document: Option<IgnoredAny>,
    }
    #[derive(Deserialize)]
    struct Reply {
        results: Vec<Result_>,
    }
    let results = if tei {
        parse::<Vec<Result_>>(body, "TEI's list of ranks")?
    } else {
        parse::<Reply>(body, "a rerank reply")?.results
    };
    let mut seen = vec![false; documents];
    for r in &results {
        match seen.get_mut(r.index) {
            Some(s) if !*s => *s = true,
            Some(_) => return Err(format!("document {} is scored twice", r.index)),
            None => {
                return Err(format!(
                    "index {} is past the {}",
                    r.index,
                    encbench_core::text::count(documents, "document")
                ));
            }
        }
    }
    let with_text = results.iter().all(|r| r.document.is_some());
    Ok((results.len(), with_text))
}

/// TEI's `/rerank`: `[{"index", "score"}]`, best first.
pub fn tei_scores(body: &[u8], documents: usize) -> Result<Vec<f32>, String> {
    #[derive(Deserialize)]
    struct Rank {
        index: usize,
        score: f32,
    }
    let r: Vec<Rank> = parse(body, "TEI's list of ranks")?;
    by_index(r.into_iter().map(|x| (x.index, x.score)), documents)
}

/// vLLM's `/score`: `{"data": [{"index", "score"}]}`, in pair order.
pub fn vllm_scores(body: &[u8], documents: usize) -> Result<Vec<f32>, String> {
    #[derive(Deserialize)]
    struct Score {
        index: usize,
        score: f32,
    }
    #[derive(Deserialize)]
    struct Reply {
        data: Vec<Score>,
    }
    let r: Reply = parse(body, "a score reply")?;
    by_index(r.data.into_iter().map(|x| (x.index, x.score)), documents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeddings_as_numbers_or_base64() {
        let floats = br#"{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}"#;
        assert_eq!(
            openai_vectors(floats).unwrap(),
            vec![vec![1.0, 0.0], vec![0.0, 1.0]]
        );
        let raw: Vec<u8> = [0.5f32, -2.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(raw);
        let body = format!(r#"{{"data":[{{"index":0,"embedding":"{b64}"}}]}}"#);
        assert_eq!(
            openai_vectors(body.as_bytes()).unwrap(),
            vec![vec![0.5, -2.0]]
        );
        assert_eq!(openai_count(body.as_bytes()).unwrap(), 1);
        assert_eq!(openai_count(br#"{"data":[{"embedding":[]}]}"#).unwrap(), 0);
        assert!(openai_vectors(br#"{"data":[{"embedding":"AAA"}]}"#).is_err());
        assert_eq!(tei_count(b"[[0.1,0.2],[0.3,0.4]]").unwrap(), 2);
        assert_eq!(
            pooling_vectors(
                br#"{"data":[{"index":0,"data":[[1,0],[3,2]]}]}"#,
                Pooling::Mean
            )
            .unwrap(),
            vec![vec![2.0, 1.0]]
        );
    }

    #[test]
    fn labels_from_each_classify_shape() {
        let batch = br#"[[{"score":0.9,"label":"entailment"},{"score":0.1,"label":"neutral"}],[{"score":0.2,"label":"entailment"},{"score":0.8,"label":"contradiction"}]]"#;
        assert_eq!(
            tei_labels(batch).unwrap(),
            vec!["entailment", "contradiction"]
        );
        let one = br#"[{"score":0.7,"label":"neutral"},{"score":0.3,"label":"entailment"}]"#;
        assert_eq!(tei_labels(one).unwrap(), vec!["neutral"]);
        assert!(tei_labels(b"[]").is_err());
        let infinity = br#"{"data":[[{"score":0.1,"label":"a"},{"score":0.9,"label":"b"}]]}"#;
        assert_eq!(infinity_labels(infinity).unwrap(), vec!["b"]);
        let vllm = br#"{"data":[{"index":0,"label":"entailment","probs":[0.9,0.05,0.05]},{"index":1,"probs":[0.1,0.2,0.7]}]}"#;
        assert_eq!(vllm_labels(vllm).unwrap(), vec!["entailment", "LABEL_2"]);
    }

    #[test]
    fn scores_in_the_order_of_the_documents_sent() {
        let cohere =
            br#"{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.2}]}"#;
        assert_eq!(cohere_scores(cohere, 2).unwrap(), vec![0.2, 0.9]);
        assert_eq!(
            cohere_scores(cohere, 3).unwrap_err(),
            "2 scores for 3 documents"
        );
        let tei = br#"[{"index":0,"score":0.8},{"index":1,"score":0.1}]"#;
        assert_eq!(tei_scores(tei, 2).unwrap(), vec![0.8, 0.1]);
        let vllm = br#"{"data":[{"index":0,"object":"score","score":0.3}]}"#;
        assert_eq!(vllm_scores(vllm, 1).unwrap(), vec![0.3]);
    }
}
