//! Input lengths: each phase's tokens per input and per request, and the run's in its
//! heading, so two runs' length mixes can be set side by side whatever their inputs were.

use super::table::Table;
use encbench_core::export::Export;
use encbench_core::lengths::{InputTokens, LengthMix};
use encbench_core::results::PhaseResult;
use encbench_core::text::num;

/// Tokens per input (with special tokens, untruncated) of every phase that counted them.
pub(crate) fn table(phases: &[PhaseResult]) -> Option<Table> {
    let counted: Vec<(&PhaseResult, &InputTokens)> = phases
        .iter()
        .filter_map(|p| p.input_tokens.as_ref().map(|t| (p, t)))
        .collect();
    if counted.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Input lengths (tokens per input by the tokenizer, special tokens counted; per request: a batch's sum)",
        &[
            "kind",
            "batch",
            "conc",
            "n",
            "tokens p50",
            "p90",
            "max",
            "mean",
            "per request",
        ],
    );
    for (p, l) in counted {
        t.row(vec![
            p.kind.name().to_string(),
            p.batch_size.to_string(),
            p.concurrency.to_string(),
            p.n.to_string(),
            l.p50.to_string(),
            l.p90.to_string(),
            l.max.to_string(),
            num(Some(l.mean), 1),
            num(Some(l.mean_per_request), 1),
        ]);
    }
    Some(t)
}

/// What the inputs were, for the heading: the drawn mix, or their natural length; then what
/// the phases sent, all together.
pub(crate) fn heading(e: &Export, unit: &str) -> String {
    let c = &e.config;
    let mix = serde_json::from_value::<LengthMix>(c["input_tokens"].clone()).ok();
    let source = match (mix, c["replay"]["format"].as_str()) {
        // A replay sends the recording's inputs, not the run's texts.
        (_, Some("data-capture")) => {
            return "bodies sent as captured (their inputs the endpoint's to read: no lengths counted)".into();
        }
        (_, Some(_)) => format!("the trace's {unit}s"),
        // A reranker's requests pair the drawn pairs' first sides with others' second
        // sides, so its pairs are not the drawn lengths: what was sent follows.
        (Some(m), None) => format!(
            "input lengths drawn from {} (--input-tokens), clipped to --max-len {}{}",
            m.describe(),
            c["max_len"],
            if unit == "input" {
                ""
            } else {
                ", their sides made queries and documents"
            }
        ),
        (None, None) => format!(
            "natural length, {} tokens per {unit}",
            num(c["natural_tokens_per_input"].as_f64(), 0)
        ),
    };
    match InputTokens::pooled(e.phases.iter().map(|p| &p.input_tokens)) {
        Some(l) => format!(
            "{source}; sent p50 {} p90 {} max {} tokens, mean {} per {unit}, {} per request",
            l.p50,
            l.p90,
            l.max,
            num(Some(l.mean), 1),
            num(Some(l.mean_per_request), 1)
        ),
        None => source,
    }
}
