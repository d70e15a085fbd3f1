//! A known answer's verdict from what the endpoint answered: a ranking from its scores, a
//! retrieval item from the candidate found nearest. Texts are kept escaped: they are shown
//! and exported from here.

use super::Verdict;
use crate::input::{RerankSample, RetrievalSample};
use crate::scrub;

/// A ranked query's verdict: its documents ordered by score, right when the first is a
/// relevant one.
pub fn ranking(item: &RerankSample, scores: Result<&[f32], String>) -> Verdict {
    let shown = |t: &str| scrub::controls(t).into_owned();
    let expected = item
        .relevant
        .first()
        .map_or("", |&i| item.documents[i].as_str());
    let (ranking, error) = match scores {
        Ok(s) => {
            let mut order: Vec<usize> = (0..s.len()).collect();
            // Best first; a tie keeps the documents' order, so the same scores give the
            // same ranking everywhere.
            order.sort_by(|&a, &b| s[b].total_cmp(&s[a]));
            (order, None)
        }
        Err(e) => (vec![], Some(e)),
    };
    let top = ranking.first().copied();
    Verdict {
        premise: shown(&item.query),
        hypothesis: String::new(),
        ok: top.is_some_and(|t| item.relevant.contains(&t)),
        expected: shown(expected),
        predicted: top.map(|t| shown(&item.documents[t])),
        error,
        candidates: item.documents.iter().map(|c| shown(c)).collect(),
        ranking,
    }
}

/// A retrieval item's verdict: the candidate predicted nearest, or why none was.
pub fn retrieval(
    item: &RetrievalSample,
    predicted: Option<&str>,
    error: Option<String>,
) -> Verdict {
    let shown = |t: &str| scrub::controls(t).into_owned();
    Verdict {
        premise: shown(&item.query),
        hypothesis: String::new(),
        ok: predicted == Some(item.expected.as_str()),
        expected: shown(&item.expected),
        predicted: predicted.map(shown),
        error: error.or_else(|| {
            predicted
                .is_none()
                .then(|| "no candidate had a vector".into())
        }),
        candidates: item.candidates.iter().map(|c| shown(c)).collect(),
        ranking: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ranking_is_right_when_its_top_document_is_relevant_and_ties_keep_their_order() {
        let item = RerankSample {
            query: "q".into(),
            documents: vec!["a".into(), "b".into(), "c".into()],
            relevant: vec![1],
        };
        let v = ranking(&item, Ok(&[0.5, 0.9, 0.9]));
        assert_eq!((v.ranking, v.ok), (vec![1, 2, 0], true));
        assert_eq!(
            (v.expected.as_str(), v.predicted.as_deref()),
            ("b", Some("b"))
        );
        let v = ranking(&item, Err("refused".into()));
        assert!(!v.ok && v.ranking.is_empty() && v.predicted.is_none());
    }

    #[test]
    fn a_retrieval_item_without_a_prediction_says_why() {
        let item = RetrievalSample {
            query: "q".into(),
            candidates: vec!["a".into(), "b".into()],
            expected: "b".into(),
        };
        assert!(retrieval(&item, Some("b"), None).ok);
        let none = retrieval(&item, None, None);
        assert_eq!(none.error.as_deref(), Some("no candidate had a vector"));
    }
}
