//! Score agreement: one reranker behind two deployments ranks each query's documents alike.
//! Kendall's tau over each query's documents says how alike the orderings are (1 the same,
//! -1 reversed); the largest score difference says whether the scores themselves are one
//! model's (a deployment that returns raw logits beside one that returns a sigmoid ranks
//! alike and scores apart).

use super::AccuracyReport;
use serde::{Deserialize, Serialize};

/// The least tau two deployments of one reranker should give a query's documents: numeric
/// noise swaps only documents scored within a rounding of each other.
pub const MIN_TAU: f64 = 0.99;

/// A score difference past which two deployments that rank alike score apart.
const SCORES_APART: f64 = 0.05;

pub const HINT: &str = "the same reranker should rank alike everywhere: check both targets' \
tokenization (lower-casing, max length, how the pair is truncated) and payload (query and \
document order, the pair's separator)";

pub const SCORES_HINT: &str = "they rank alike but score apart: one may return raw logits and \
the other normalised scores (TEI's raw_scores, a sigmoid or not)";

/// How alike two targets rank the same queries' documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankAgreement {
    pub a: String,
    pub b: String,
    /// Queries both ranked.
    pub queries: usize,
    pub min_tau: f64,
    /// The query of the least tau.
    pub worst_query: String,
    pub max_score_diff: f64,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hint: Option<String>,
}

/// Kendall's tau-b of two scorings of the same documents: concordant minus discordant pairs
/// over the pairs each leaves untied. Two scorings that tie everything agree (1).
pub fn kendall_tau(x: &[f32], y: &[f32]) -> f64 {
    let n = x.len().min(y.len());
    let (mut concordant, mut discordant, mut tied_x, mut tied_y) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..n {
        for j in i + 1..n {
            let dx = f64::from(x[i]) - f64::from(x[j]);
            let dy = f64::from(y[i]) - f64::from(y[j]);
            match (dx == 0.0, dy == 0.0) {
                (true, true) => {}
                (true, false) => tied_x += 1,
                (false, true) => tied_y += 1,
                (false, false) if (dx > 0.0) == (dy > 0.0) => concordant += 1,
                (false, false) => discordant += 1,
            }
        }
    }
    let untied_x = (concordant + discordant + tied_y) as f64;
    let untied_y = (concordant + discordant + tied_x) as f64;
    if untied_x == 0.0 || untied_y == 0.0 {
        return if untied_x == untied_y { 1.0 } else { 0.0 };
    }
    (concordant - discordant) as f64 / (untied_x * untied_y).sqrt()
}

/// Every pair of targets that both ranked the same queries; `min_tau` is the threshold.
pub fn rank_agreement(
    reports: &[(String, Option<AccuracyReport>)],
    min_tau: f64,
) -> Vec<RankAgreement> {
    let with: Vec<(&String, &AccuracyReport)> = reports
        .iter()
        .filter_map(|(n, r)| r.as_ref().map(|r| (n, r)))
        .filter(|(_, r)| !r.scores.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, (a, ra)) in with.iter().enumerate() {
        for (b, rb) in &with[i + 1..] {
            let mut worst: Option<(f64, &str)> = None;
            let (mut queries, mut max_diff) = (0, 0.0f64);
            for (query, sa) in &ra.scores {
                let Some((_, sb)) = rb.scores.iter().find(|(q, _)| q == query) else {
                    continue;
                };
                // Scorings of different lengths rank different documents: as unlike as can be.
                let tau = if sa.len() == sb.len() {
                    kendall_tau(sa, sb)
                } else {
                    -1.0
                };
                for (x, y) in sa.iter().zip(sb) {
                    max_diff = max_diff.max((f64::from(*x) - f64::from(*y)).abs());
                }
                queries += 1;
                if worst.is_none_or(|(w, _)| tau < w) {
                    worst = Some((tau, query));
                }
            }
            let Some((min, query)) = worst else {
                continue;
            };
            let ok = min >= min_tau;
            let hint = if !ok {
                Some(HINT.to_string())
            } else if max_diff > SCORES_APART {
                Some(SCORES_HINT.to_string())
            } else {
                None
            };
            out.push(RankAgreement {
                a: (*a).clone(),
                b: (*b).clone(),
                queries,
                min_tau: (min * 1e6).round() / 1e6,
                worst_query: crate::scrub::controls(query).into_owned(),
                max_score_diff: (max_diff * 1e6).round() / 1e6,
                ok,
                hint,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(s: &[(&str, Vec<f32>)]) -> AccuracyReport {
        let mut r = AccuracyReport::of(vec![]);
        r.scores = s
            .iter()
            .map(|(q, v)| ((*q).to_string(), v.clone()))
            .collect();
        r
    }

    #[test]
    fn tau_of_alike_reversed_and_tied_orderings() {
        assert_eq!(kendall_tau(&[0.9, 0.5, 0.1], &[0.8, 0.4, 0.2]), 1.0);
        assert_eq!(kendall_tau(&[0.9, 0.5, 0.1], &[0.1, 0.5, 0.9]), -1.0);
        let one_swap = kendall_tau(&[4.0, 3.0, 2.0, 1.0], &[4.0, 3.0, 1.0, 2.0]);
        assert!((one_swap - 4.0 / 6.0).abs() < 1e-12, "{one_swap}");
        assert_eq!(kendall_tau(&[1.0, 1.0], &[2.0, 2.0]), 1.0);
    }

    #[test]
    fn a_reversed_target_is_flagged_and_a_rescaled_one_scores_apart() {
        let a = scored(&[("q1", vec![0.9, 0.2, 0.1]), ("q2", vec![0.1, 0.8, 0.3])]);
        let flipped = scored(&[("q1", vec![0.1, 0.2, 0.9]), ("q2", vec![0.1, 0.8, 0.3])]);
        let logits = scored(&[("q1", vec![4.0, 1.0, -2.0]), ("q2", vec![-2.0, 3.0, 0.5])]);
        let r = rank_agreement(
            &[
                ("a".into(), Some(a)),
                ("flipped".into(), Some(flipped)),
                ("logits".into(), Some(logits)),
            ],
            MIN_TAU,
        );
        assert_eq!(r.len(), 3);
        let (ab, ac) = (&r[0], &r[1]);
        assert!(
            !ab.ok && ab.min_tau == -1.0 && ab.worst_query == "q1",
            "{ab:?}"
        );
        assert_eq!(ab.hint.as_deref(), Some(HINT));
        assert!(
            ac.ok && ac.min_tau == 1.0 && ac.max_score_diff > 3.0,
            "{ac:?}"
        );
        assert_eq!(ac.hint.as_deref(), Some(SCORES_HINT));
    }
}
