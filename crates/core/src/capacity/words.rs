//! What a capacity search says in words: its answer, and the advice over batch sizes or
//! targets.

use super::Capacity;

/// A rate's interval as the answer shows it: `[51.0, 56.9]`.
pub fn shown([lo, hi]: [f64; 2]) -> String {
    format!("[{}, {}]", crate::text::sig3(lo), crate::text::sig3(hi))
}

/// "53.9 req/s [51.2, 56.8] (53.9 samples/s) meets p99 ≤ 100 ms where 4 probes (40,000
/// requests) put it", or where no probe near the answer could be weighed, "53.1 req/s
/// [51.0, 56.9] (425 samples/s) meets p99 ≤ 100 ms; 56.3 req/s did not"; either way with
/// what would make it surer where its interval is wider than the precision asked.
pub(super) fn answer(c: &Capacity, precision: f64) -> String {
    let rate = c.max_rate_per_s.unwrap_or(0.0);
    let how = match (c.pooled_probes, c.pooled_requests) {
        (Some(k), Some(n)) => format!(
            " where {} ({} requests) put it",
            crate::text::count(k, "probe"),
            crate::text::thousands(n)
        ),
        _ => match c.failed_at_per_s {
            Some(hi) => format!("; {} req/s did not", crate::text::sig3(hi)),
            None => format!(
                "; the closed-loop ceiling is {} req/s",
                crate::text::sig3(c.ceiling_per_s.unwrap_or(0.0))
            ),
        },
    };
    format!(
        "{} req/s{} ({} samples/s) meets {}{how}{}{}",
        crate::text::sig3(rate),
        c.max_rate_ci95_per_s
            .map(|i| format!(" {}", shown(i)))
            .unwrap_or_default(),
        crate::text::sig3(c.samples_per_s.unwrap_or(0.0)),
        c.slo,
        timed_out(c),
        wider(c, precision),
    )
}

/// " (2 probes ended at --max-probe-secs before their planned requests)".
fn timed_out(c: &Capacity) -> String {
    let k = c
        .probes
        .iter()
        .filter(|p| p.bound && p.stop_reason == "time")
        .count();
    match k {
        0 => String::new(),
        1 => " (1 probe ended at --max-probe-secs before its planned requests)".into(),
        k => format!(" ({k} probes ended at --max-probe-secs before their planned requests)"),
    }
}

/// Where the interval is wider than ± the precision: how much it is, and how many more
/// requests a probe would bring it there (the interval narrows as the square root of the
/// requests pooled).
fn wider(c: &Capacity, precision: f64) -> String {
    let (Some([lo, hi]), Some(rate)) = (c.max_rate_ci95_per_s, c.max_rate_per_s) else {
        return String::new();
    };
    let half = (hi / lo).ln() / 2.0;
    let want = (1.0 + precision).ln();
    if half <= want || rate <= 0.0 {
        return String::new();
    }
    let more = (half / want).powi(2);
    let per_probe = match (c.pooled_probes, c.pooled_requests) {
        (Some(k), Some(n)) if k > 0 => n as f64 / k as f64,
        _ => {
            return format!(
                "; ±{:.0} %, wider than the {:.0} % asked",
                half * 100.0,
                precision * 100.0
            );
        }
    };
    format!(
        "; ±{:.0} %, wider than the {:.0} % asked: about {} requests a probe would narrow it (--min-probe-requests, and --max-probe-secs for their time)",
        half * 100.0,
        precision * 100.0,
        crate::text::thousands(((per_probe * more / 1000.0).ceil() * 1000.0) as u64),
    )
}

/// The batch size with the most samples per second within the SLO (their mean over the
/// searches under `--repeat`), and its cost; named alone only where its samples/s are
/// significantly more than every other batch size's, from the answers' intervals.
pub fn advice(results: &[Capacity]) -> Option<String> {
    let mut sizes: Vec<usize> = results
        .iter()
        .filter(|c| c.max_rate_per_s.is_some())
        .map(|c| c.batch_size)
        .collect();
    sizes.dedup();
    let target = results.first()?.target.as_deref();
    let samples = |b: usize| {
        crate::differences::capacity_measure(results, target, b).map(|(m, _)| m.value * b as f64)
    };
    let best = sizes
        .iter()
        .copied()
        .filter_map(|b| Some((b, samples(b)?)))
        .max_by(|x, y| x.1.total_cmp(&y.1))?;
    let first = results.iter().find(|c| c.batch_size == best.0)?;
    let cost = first
        .cost_per_1m_usd
        .map(|c| format!(", ${c:.4} per 1M samples"))
        .unwrap_or_default();
    let tied: Vec<String> = sizes
        .iter()
        .filter(|&&b| b != best.0)
        .filter_map(|&b| untold(results, target, best.0, b))
        .collect();
    let rate = best.1 / best.0 as f64;
    let line = format!(
        "batch {}: the most samples/s within {}: {} samples/s at {} req/s{cost}",
        best.0,
        first.slo,
        crate::text::sig3(best.1),
        crate::text::sig3(rate),
    );
    Some(if tied.is_empty() {
        line
    } else {
        format!(
            "{line}; but not distinguishable at this n from {}",
            tied.join(", ")
        )
    })
}

/// Batch `other` where the searches cannot tell its samples/s from batch `best`'s: in
/// words, with the difference and its interval; `None` where `best` is significantly ahead.
fn untold(results: &[Capacity], target: Option<&str>, best: usize, other: usize) -> Option<String> {
    use crate::differences::capacity_measure;
    use crate::significance::{Figure, interval_percent, judge, percent};
    let (mb, _) = capacity_measure(results, target, best)?;
    let (mo, _) = capacity_measure(results, target, other)?;
    // The rates' ratio, times the batch sizes' (exact): samples/s against samples/s.
    let j = judge(Figure::CapacityPerS, &mo, &mb);
    let q = best as f64 / other as f64;
    let lo = j.ci95.map_or(0.0, |i| (1.0 + i.0) * q);
    if lo > 1.0 {
        return None;
    }
    let hi = j.ci95.and_then(|i| i.1).map(|h| (1.0 + h) * q - 1.0);
    let ratio = (1.0 + j.relative) * q - 1.0;
    Some(format!(
        "batch {other} ({} {} in samples/s)",
        percent(ratio),
        interval_percent(crate::interval::Interval(lo - 1.0, hi))
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
