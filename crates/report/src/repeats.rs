//! `--repeat`: how each phase's headline figures spread across its repetitions, and the
//! capacity searches' answers across theirs. The other tables show each phase pooled.

use super::cell::{Cell, Estimate};
use super::table::Table;
use encbench_core::interval::Interval;
use encbench_core::results::PhaseResult;
use encbench_core::results::capacity::Capacity;
use encbench_core::results::repeat::Spread;
use encbench_core::text::sig3;

/// "26.3 [26.1, 26.5]": the mean over the repetitions and the 95 % interval of that mean,
/// a cell like a percentile's (its ends in columns of their own in CSV).
fn spread(s: Option<Spread>, digits: usize) -> Cell {
    Cell::Estimate(Estimate {
        value: s.map(|s| s.mean),
        ci: s
            .and_then(|s| s.ci95)
            .map(|[lo, hi]| Interval(lo, Some(hi))),
        decimals: Some(digits),
    })
}

/// One row per repeated phase: K, and the mean of each headline figure with its interval.
pub fn phases_table(phases: &[PhaseResult]) -> Option<Table> {
    let repeated: Vec<&PhaseResult> = phases.iter().filter(|p| p.across.is_some()).collect();
    let k = repeated
        .iter()
        .filter_map(|p| p.across.as_ref())
        .map(|a| a.repetitions)
        .max()?;
    let compare = repeated.iter().any(|p| p.target.is_some());
    let mut headers = vec![
        "kind",
        "batch",
        "conc",
        "reps",
        "p50 ms",
        "p99 ms",
        "req/s",
        "samples/s",
        "$/1M",
    ];
    if compare {
        headers.insert(0, "target");
    }
    let mut t = Table::new(
        format!(
            "Across repetitions (mean of {k} [its 95 % interval, Student's t]: what a repeat of the run would give)"
        ),
        &headers,
    );
    for p in repeated {
        let a = p.across.as_ref().expect("filtered above");
        let mut row: Vec<Cell> = vec![
            p.kind.name().into(),
            p.batch_size.to_string().into(),
            p.concurrency.to_string().into(),
            a.repetitions.to_string().into(),
            spread(a.p50_ms, 1),
            spread(a.p99_ms, 1),
            spread(a.req_per_s, 1),
            spread(a.samples_per_s, 1),
            spread(a.cost_per_1m_usd, 2),
        ];
        if compare {
            row.insert(0, p.target.clone().unwrap_or_default().into());
        }
        t.row(row);
    }
    t.notes.push(
        "the tables above pool every repetition's requests; these intervals see the drift \
         between repetitions, which one phase's own intervals cannot"
            .into(),
    );
    Some(t)
}

/// One row per (target,) batch size searched more than once: the answers' mean and interval.
pub fn capacity_table(found: &[Capacity]) -> Option<Table> {
    let mut keys: Vec<(Option<&str>, usize)> = found
        .iter()
        .filter(|c| c.repetition.is_some())
        .map(|c| (c.target.as_deref(), c.batch_size))
        .collect();
    keys.dedup();
    let first = found.first()?;
    if keys.is_empty() {
        return None;
    }
    let mut t = Table::new(
        format!(
            "Capacity within {} across searches (mean [95 % interval])",
            first.slo
        ),
        &[
            "target",
            "batch",
            "searches",
            "max req/s",
            "samples/s",
            "$/1M",
            "answers req/s",
        ],
    );
    for (target, batch) in keys {
        let runs: Vec<&Capacity> = found
            .iter()
            .filter(|c| c.target.as_deref() == target && c.batch_size == batch)
            .collect();
        let of = |f: fn(&Capacity) -> Option<f64>| {
            let v: Option<Vec<f64>> = runs.iter().map(|c| f(c)).collect();
            v.and_then(|v| Spread::of(&v))
        };
        let answers: Vec<String> = runs
            .iter()
            .map(|c| c.max_rate_per_s.map_or("none".into(), sig3))
            .collect();
        t.row(vec![
            target.unwrap_or("-").into(),
            batch.to_string().into(),
            runs.len().to_string().into(),
            spread(of(|c| c.max_rate_per_s), 1),
            spread(of(|c| c.samples_per_s), 1),
            spread(of(|c| c.cost_per_1m_usd), 4),
            Cell::Text(answers.join(", ")),
        ]);
    }
    Some(t)
}
