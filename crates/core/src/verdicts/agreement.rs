//! Vector agreement: one embedding model behind two deployments gives the same vector for the
//! same input, to rounding. The least cosine over the retrieval texts is the earliest sign of
//! a tokenization or pooling difference: it drops well before a ranking changes.

use super::AccuracyReport;
use super::cosine;
use serde::{Deserialize, Serialize};

/// The least cosine the same model gives the same input on two deployments (int8 kernels
/// and batch shapes move the last digits, never the third).
pub const MIN_COSINE: f64 = 0.999;

pub const HINT: &str = "the same model should give the same vectors everywhere: check both \
targets' tokenization (lower-casing, max length, truncation), pooling (mean or cls, over the \
attention mask) and normalisation";

/// How alike two targets' vectors are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    pub a: String,
    pub b: String,
    /// Texts both embedded.
    pub inputs: usize,
    pub min_cosine: f64,
    /// The text of the least cosine.
    pub worst_input: String,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hint: Option<String>,
}

/// Every pair of targets that both returned vectors for the same texts.
pub fn agreement(reports: &[(String, Option<AccuracyReport>)]) -> Vec<Agreement> {
    let with: Vec<(&String, &AccuracyReport)> = reports
        .iter()
        .filter_map(|(n, r)| r.as_ref().map(|r| (n, r)))
        .filter(|(_, r)| !r.vectors.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, (a, ra)) in with.iter().enumerate() {
        for (b, rb) in &with[i + 1..] {
            let mut worst: Option<(f64, &str)> = None;
            let mut inputs = 0;
            for (text, va) in &ra.vectors {
                let Some((_, vb)) = rb.vectors.iter().find(|(t, _)| t == text) else {
                    continue;
                };
                // Vectors of different lengths are as unlike as vectors get.
                let c = cosine(va, vb).unwrap_or(-1.0);
                inputs += 1;
                if worst.is_none_or(|(w, _)| c < w) {
                    worst = Some((c, text));
                }
            }
            let Some((min, text)) = worst else {
                continue;
            };
            let ok = min >= MIN_COSINE;
            out.push(Agreement {
                a: (*a).clone(),
                b: (*b).clone(),
                inputs,
                min_cosine: (min * 1e6).round() / 1e6,
                worst_input: crate::scrub::controls(text).into_owned(),
                ok,
                hint: (!ok).then(|| HINT.to_string()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[allow(
        clippy::unnecessary_wraps,
        reason = "agreement takes what a skipped check gives: None"
    )]
    fn with_vectors(v: &[(&str, Vec<f32>)]) -> Option<AccuracyReport> {
        Some(AccuracyReport {
            passed: 0,
            total: 0,
            samples: vec![],
            output: None,
            note: None,
            switched: None,
            scores: vec![],
            no_route: false,
            vectors: v
                .iter()
                .map(|(t, v)| ((*t).to_string(), v.clone()))
                .collect(),
        })
    }

    #[test]
    fn the_least_cosine_over_shared_texts_flags_a_pair() {
        let a = with_vectors(&[("x", vec![1.0, 0.0]), ("y", vec![0.0, 1.0])]);
        let same = with_vectors(&[("x", vec![2.0, 0.0]), ("y", vec![0.0, 1.0])]);
        let off = with_vectors(&[("x", vec![1.0, 0.1]), ("y", vec![0.0, 1.0])]);
        let r = agreement(&[
            ("a".into(), a),
            ("same".into(), same),
            ("off".into(), off),
            ("skipped".into(), None),
        ]);
        assert_eq!(r.len(), 3);
        assert!(r[0].ok && r[0].min_cosine == 1.0 && r[0].inputs == 2);
        assert!(!r[1].ok && r[1].worst_input == "x" && r[1].hint.is_some());
        assert_eq!((r[1].a.as_str(), r[1].b.as_str()), ("a", "off"));
    }
}
