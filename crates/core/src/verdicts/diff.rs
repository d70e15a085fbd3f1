//! The verdict diff: one model behind several deployments must give the same verdict for each
//! sample everywhere (a reranker the same ordering of each query's documents). A deployment that disagrees usually tokenizes or builds its payload
//! differently (truncation side, max length, pair order, label mapping), not "has a different
//! accuracy".

use super::AccuracyReport;
use serde::{Deserialize, Serialize};

pub const HINT: &str = "the same model should give the same verdicts everywhere: check this \
target's tokenization (max length, truncation side, padding) and payload construction \
(premise/hypothesis order, label names or ids)";

pub const RANK_HINT: &str = "the same reranker should order each query's documents alike \
everywhere: check this target's tokenization (lower-casing, max length, how the pair is \
truncated) and payload (query and document order)";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffSample {
    pub premise: String,
    pub hypothesis: String,
    pub expected: String,
    /// This target's verdict (`null` when its request failed).
    pub predicted: Option<String>,
    /// The verdict the other targets agree on.
    pub others: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disagreement {
    pub target: String,
    pub samples: Vec<DiffSample>,
    pub hint: String,
}

/// Compares each target's verdicts with the reference verdict of each sample: the one most
/// targets gave; on a tie the expected label if one of the tied verdicts is it, else the
/// first target's. Targets without a report (accuracy skipped) take no part.
pub fn diff(reports: &[(String, Option<AccuracyReport>)]) -> Vec<Disagreement> {
    let present: Vec<(&String, &AccuracyReport)> = reports
        .iter()
        .filter_map(|(n, r)| r.as_ref().map(|r| (n, r)))
        .collect();
    if present.len() < 2 {
        return vec![];
    }
    let samples = present
        .iter()
        .map(|(_, r)| r.samples.len())
        .min()
        .unwrap_or(0);
    let reference: Vec<Option<String>> = (0..samples)
        .map(|i| {
            let votes: Vec<Option<String>> =
                present.iter().map(|(_, r)| r.samples[i].said()).collect();
            let count = |v: &Option<String>| votes.iter().filter(|w| *w == v).count();
            let best = votes.iter().map(count).max().unwrap_or(0);
            let tied: Vec<&Option<String>> = votes.iter().filter(|v| count(v) == best).collect();
            let expected = present[0].1.samples[i].expected.as_str();
            tied.iter()
                .find(|v| v.as_deref() == Some(expected))
                .or(tied.first())
                .and_then(|v| (*v).clone())
        })
        .collect();
    present
        .iter()
        .filter_map(|(name, r)| {
            let differing: Vec<DiffSample> = (0..samples)
                .filter(|&i| r.samples[i].said() != reference[i])
                .map(|i| {
                    let v = &r.samples[i];
                    DiffSample {
                        premise: v.premise.clone(),
                        hypothesis: v.hypothesis.clone(),
                        expected: v.expected.clone(),
                        predicted: v.said(),
                        others: reference[i].clone().unwrap_or_else(|| "no verdict".into()),
                    }
                })
                .collect();
            let ranked = r.samples.iter().any(|v| !v.ranking.is_empty());
            (!differing.is_empty()).then(|| Disagreement {
                target: (*name).clone(),
                samples: differing,
                hint: if ranked { RANK_HINT } else { HINT }.into(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::Verdict;
    use super::*;

    #[allow(
        clippy::unnecessary_wraps,
        reason = "diff takes what a skipped check gives: None"
    )]
    fn report(predicted: &[&str]) -> Option<AccuracyReport> {
        let expected = ["entailment", "neutral", "contradiction"];
        let samples: Vec<Verdict> = predicted
            .iter()
            .enumerate()
            .map(|(i, p)| Verdict {
                premise: format!("p{i}"),
                hypothesis: format!("h{i}"),
                expected: expected[i].into(),
                predicted: Some(p.to_string()),
                ok: *p == expected[i],
                error: None,
                candidates: vec![],
                ranking: vec![],
            })
            .collect();
        Some(AccuracyReport::of(samples))
    }

    #[test]
    fn the_odd_one_out_is_flagged_with_its_samples() {
        let r = diff(&[
            (
                "a".into(),
                report(&["entailment", "neutral", "contradiction"]),
            ),
            (
                "b".into(),
                report(&["entailment", "neutral", "contradiction"]),
            ),
            (
                "c".into(),
                report(&["contradiction", "neutral", "entailment"]),
            ),
        ]);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].target, "c");
        assert_eq!(r[0].samples.len(), 2);
        assert_eq!(r[0].samples[0].others, "entailment");
        assert_eq!(r[0].samples[0].predicted.as_deref(), Some("contradiction"));
    }

    #[test]
    fn a_two_way_tie_sides_with_the_expected_label() {
        let r = diff(&[
            (
                "flipped".into(),
                report(&["neutral", "neutral", "contradiction"]),
            ),
            (
                "right".into(),
                report(&["entailment", "neutral", "contradiction"]),
            ),
            ("skipped".into(), None),
        ]);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].target, "flipped");
        assert_eq!(r[0].samples.len(), 1);
    }

    #[test]
    fn agreement_on_a_wrong_verdict_is_not_a_diff() {
        let same = report(&["neutral", "neutral", "contradiction"]);
        assert!(diff(&[("a".into(), same.clone()), ("b".into(), same)]).is_empty());
    }
}
