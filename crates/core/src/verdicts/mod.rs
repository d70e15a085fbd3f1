//! The known-answer check's verdicts, as runs record them and exports keep them, and how
//! several deployments' verdicts compare: each must give the same verdict as the others
//! (`diff`), and the same model the same vectors (`agreement`); a known answer's verdict
//! from what the endpoint answered (`judge`). Sending the samples is the accuracy check's
//! job (`encbench_load::accuracy`).

pub mod agreement;
pub mod diff;
pub mod judge;
pub mod rank_agreement;

use serde::{Deserialize, Serialize};

/// What the endpoint answers for an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Output {
    /// A class per input (labels, or logits read by argmax).
    Labels,
    /// A vector per input, `dim` long.
    Vectors { dim: usize },
    /// A relevance score per document of a query (a reranker).
    Rankings,
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Output::Labels => f.write_str("labels"),
            Output::Vectors { dim } => write!(f, "vectors ({dim}-d)"),
            Output::Rankings => f.write_str("rankings"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The premise, or a retrieval item's query.
    pub premise: String,
    /// The hypothesis (empty for a retrieval item).
    pub hypothesis: String,
    /// The label, or the candidate that must be nearest the query.
    pub expected: String,
    /// `None` when the request failed or the response held no label.
    pub predicted: Option<String>,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// A retrieval item's candidates, or a ranked query's documents.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub candidates: Vec<String>,
    /// A reranker's ordering of `candidates`, best first (indices into them).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ranking: Vec<usize>,
}

impl Verdict {
    /// The verdict as deployments are compared on it: the label or candidate, and for a
    /// reranker its whole ordering (the same top document over a different order below is
    /// another ranking).
    pub fn said(&self) -> Option<String> {
        let predicted = self.predicted.as_ref()?;
        if self.ranking.is_empty() {
            return Some(predicted.clone());
        }
        // The ordering names the top document: its index says it in a line.
        let order: Vec<String> = self.ranking.iter().map(ToString::to_string).collect();
        Some(format!("order {}", order.join(" > ")))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyReport {
    pub passed: usize,
    pub total: usize,
    pub samples: Vec<Verdict>,
    /// What the endpoint answers, from its first reply (absent when that request failed).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output: Option<Output>,
    /// Why the check could not judge (no samples of the kind the endpoint needs).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
    /// The server refused the body in its API's first form, took the other, and the run
    /// sends that from then on: in words.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub switched: Option<String>,
    /// Each text's vector, for comparing deployments; kept out of the export (hundreds of
    /// numbers per text that only `compare` reads, while it runs).
    #[serde(skip)]
    pub vectors: Vec<(String, Vec<f32>)>,
    /// A reranker's scores of each query's documents, in their order, for comparing
    /// deployments (`rank_agreement`); kept out of the export as the vectors are.
    #[serde(skip)]
    pub scores: Vec<(String, Vec<f32>)>,
    /// The route is none of the server's: the first request met a 404 or 405 and none
    /// passed (`note` says so in words).
    #[serde(skip)]
    pub no_route: bool,
}

impl AccuracyReport {
    /// A report of these verdicts, from no endpoint in particular.
    pub fn of(samples: Vec<Verdict>) -> AccuracyReport {
        AccuracyReport::new(samples, None, None, vec![])
    }

    /// The report of these verdicts, with what the endpoint answers and each text's vector.
    pub fn new(
        samples: Vec<Verdict>,
        output: Option<Output>,
        note: Option<String>,
        vectors: Vec<(String, Vec<f32>)>,
    ) -> AccuracyReport {
        AccuracyReport {
            passed: samples.iter().filter(|v| v.ok).count(),
            total: samples.len(),
            samples,
            output,
            note,
            switched: None,
            vectors,
            scores: vec![],
            no_route: false,
        }
    }
}

/// The cosine of the angle between two vectors: 1 for the same direction. `None` when their
/// lengths differ or either is all zeros.
pub fn cosine(a: &[f32], b: &[f32]) -> Option<f64> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    (na > 0.0 && nb > 0.0).then(|| dot / (na.sqrt() * nb.sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cosine_of_alike_and_unlike_vectors() {
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!(cosine(&[1.0, 0.0], &[0.0, 1.0]).unwrap().abs() < 1e-12);
        assert_eq!(cosine(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 2.0]), None);
    }
}
