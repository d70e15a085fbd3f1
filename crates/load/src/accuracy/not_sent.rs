//! The check after the load when the endpoint does not answer its first question: the known
//! answers the check before used, each a failed verdict saying why, none of them sent (a
//! server that is gone would make each wait for nothing, and the set is the one to compare).

use super::{AccuracySpec, One, Unanswered};
use encbench_core::input::RerankSample;
use encbench_core::scrub;
use encbench_core::verdicts::{AccuracyReport, Output, Verdict, judge};

/// Why the first question got no answer, in words.
pub(super) fn why(first: &Result<One, Unanswered>) -> String {
    match first {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

/// The known answers of `output`'s kind, none of them sent: the endpoint did not answer
/// the first question (`why`), and each would wait as long for nothing.
pub(super) fn report(
    setup: &AccuracySpec,
    ranked: &[RerankSample],
    output: Output,
    why: &str,
) -> AccuracyReport {
    let error = || Some(format!("not sent: the endpoint did not answer ({why})"));
    let (verdicts, what): (Vec<Verdict>, String) = match output {
        Output::Labels => (
            setup
                .samples
                .iter()
                .map(|s| Verdict {
                    premise: scrub::controls(&s.premise).into_owned(),
                    hypothesis: scrub::controls(&s.hypothesis).into_owned(),
                    expected: setup.labels.normalize(&s.expected),
                    predicted: None,
                    ok: false,
                    error: error(),
                    candidates: vec![],
                    ranking: vec![],
                })
                .collect(),
            format!("{} NLI samples", setup.samples.len()),
        ),
        Output::Vectors { .. } => (
            setup
                .retrieval
                .iter()
                .map(|r| judge::retrieval(r, None, error()))
                .collect(),
            format!("{} retrieval items", setup.retrieval.len()),
        ),
        Output::Rankings => (
            ranked
                .iter()
                .map(|r| judge::ranking(r, Err(error().unwrap_or_default())))
                .collect(),
            format!("{} ranked queries", ranked.len()),
        ),
    };
    let note = format!(
        "the endpoint did not answer the check's first question ({why}): its {what}, as checked before, were not sent"
    );
    AccuracyReport::new(verdicts, Some(output), Some(note), vec![])
}
