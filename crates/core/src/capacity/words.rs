//! What a capacity search says in words: its answer, and the advice over batch sizes or
//! targets.

use super::Capacity;

/// A rate's interval as the answer shows it: `[51.0, 56.9]`.
pub fn shown([lo, hi]: [f64; 2]) -> String {
    format!("[{}, {}]", crate::text::sig3(lo), crate::text::sig3(hi))
}

/// "53.1 req/s [51.0, 56.9] (425 samples/s) meets p99 ≤ 100 ms; 56.3 req/s did not".
pub(super) fn answer(c: &Capacity) -> String {
    let lo = c.max_rate_per_s.unwrap_or(0.0);
    let above = match c.failed_at_per_s {
        Some(hi) => format!("; {} req/s did not", crate::text::sig3(hi)),
        None => format!(
            "; the closed-loop ceiling is {} req/s",
            crate::text::sig3(c.ceiling_per_s.unwrap_or(0.0))
        ),
    };
    // The bounds the answer rests on that ran out their time before they were stable.
    let unstable: Vec<String> = [Some(lo), c.failed_at_per_s]
        .into_iter()
        .flatten()
        .filter(|&rate| {
            c.probes
                .iter()
                .rev()
                .find(|p| p.bound && p.rate_per_s == crate::stats::round3(rate))
                .is_some_and(|p| p.stop_reason == "time")
        })
        .map(crate::text::sig3)
        .collect();
    let caveat = if unstable.is_empty() {
        String::new()
    } else {
        format!(
            " (not stable within the time bound at {} req/s)",
            unstable.join(" and ")
        )
    };
    format!(
        "{} req/s{} ({} samples/s) meets {}{above}{caveat}",
        crate::text::sig3(lo),
        c.max_rate_ci95_per_s
            .map(|i| format!(" {}", shown(i)))
            .unwrap_or_default(),
        crate::text::sig3(c.samples_per_s.unwrap_or(0.0)),
        c.slo
    )
}

/// The batch size with the most samples per second within the SLO, and its cost.
pub fn advice(results: &[Capacity]) -> Option<String> {
    let best = results
        .iter()
        .filter(|c| c.max_rate_per_s.is_some())
        .max_by(|a, b| {
            a.samples_per_s
                .unwrap_or(0.0)
                .total_cmp(&b.samples_per_s.unwrap_or(0.0))
        })?;
    let cost = best
        .cost_per_1m_usd
        .map(|c| format!(", ${c:.4} per 1M samples"))
        .unwrap_or_default();
    Some(format!(
        "batch {}: the most samples/s within {}: {} samples/s at {} req/s{cost}",
        best.batch_size,
        best.slo,
        crate::text::sig3(best.samples_per_s.unwrap_or(0.0)),
        crate::text::sig3(best.max_rate_per_s.unwrap_or(0.0)),
    ))
}

/// `compare --slo`: the target whose best batch size meets the SLO at the lowest cost per
/// million samples (or, without prices, with the most samples/s), in one line.
pub fn cheapest(results: &[Capacity]) -> Option<String> {
    let met: Vec<&Capacity> = results
        .iter()
        .filter(|c| c.max_rate_per_s.is_some() && c.target.is_some())
        .collect();
    let priced = met.iter().all(|c| c.cost_per_1m_usd.is_some());
    let best = if priced {
        met.iter().min_by(|a, b| {
            a.cost_per_1m_usd
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.cost_per_1m_usd.unwrap_or(f64::INFINITY))
        })
    } else {
        met.iter().max_by(|a, b| {
            a.samples_per_s
                .unwrap_or(0.0)
                .total_cmp(&b.samples_per_s.unwrap_or(0.0))
        })
    }?;
    let name = best.target.as_deref().unwrap_or("?");
    Some(if priced {
        format!(
            "cheapest within {}: {name} at batch {}, ${:.4} per 1M samples ({} samples/s at {} req/s)",
            best.slo,
            best.batch_size,
            best.cost_per_1m_usd.unwrap_or(0.0),
            crate::text::sig3(best.samples_per_s.unwrap_or(0.0)),
            crate::text::sig3(best.max_rate_per_s.unwrap_or(0.0)),
        )
    } else {
        format!(
            "most capacity within {} (no prices to compare costs): {name} at batch {}, {} samples/s",
            best.slo,
            best.batch_size,
            crate::text::sig3(best.samples_per_s.unwrap_or(0.0)),
        )
    })
}
