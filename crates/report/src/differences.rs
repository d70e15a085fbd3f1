//! `compare`'s differences: each pair of targets in each headline figure, with its 95 %
//! interval and whether it is significant; and the advice, which names a winner only where
//! the difference to the next target is significant and otherwise says what would tell.

use super::table::Table;
use encbench_core::differences::Difference;
use encbench_core::export::Export;
use encbench_core::interval::Interval;
use encbench_core::plan::PhaseKind;
use encbench_core::significance::{Basis, Figure, Judged, interval_percent, percent};
use encbench_core::text::sig3;

const NOT_DISTINGUISHABLE: &str = "not distinguishable at this n";

/// The table of every difference, with the advice under it.
pub fn table(e: &Export) -> Option<Table> {
    let cmp = e.compare.as_ref()?;
    let diffs = &cmp.differences;
    if diffs.is_empty() {
        return None;
    }
    let mut t = Table::new(
        format!(
            "Differences (the second target against the first; {})",
            basis_words(diffs)
        ),
        &[
            "phase",
            "figure",
            "targets",
            "first",
            "second",
            "difference",
            "95% interval",
            "verdict",
        ],
    );
    for d in diffs {
        t.row(vec![
            d.phase(),
            d.figure.name().into(),
            format!("{} vs {}", d.b, d.a),
            value(d.figure, d.a_value),
            value(d.figure, d.b_value),
            percent(d.judged.relative),
            d.judged.ci95.map_or("-".into(), interval_percent),
            if d.judged.significant {
                "significant".into()
            } else {
                NOT_DISTINGUISHABLE.into()
            },
        ]);
    }
    t.notes.extend(advice(e, diffs));
    Some(t)
}

fn value(figure: Figure, v: f64) -> String {
    match figure {
        Figure::CostPer1mUsd => format!("{v:.4}"),
        _ => sig3(v),
    }
}

/// Where the intervals came from, in words, for the title.
fn basis_words(diffs: &[Difference]) -> String {
    let reps = diffs.iter().find_map(|d| d.judged.repetitions);
    let samples = diffs.iter().any(|d| d.judged.basis == Basis::Samples);
    match (reps, samples) {
        (Some(k), false) => format!("95 % intervals across {k} paired repetitions"),
        (Some(k), true) => format!(
            "95 % intervals across {k} paired repetitions, or from each figure's own samples"
        ),
        (None, _) => "95 % intervals from each figure's own samples: one run; --repeat 3 or more also measures the drift between runs".into(),
    }
}

/// The advice lines: for each phase the lowest p99, at the largest batch the most
/// throughput and the lowest cost, and per batch size searched the most capacity.
pub fn advice(e: &Export, diffs: &[Difference]) -> Vec<String> {
    if e.compare.is_none() {
        return vec![];
    }
    let mut phases: Vec<(PhaseKind, usize, usize)> = Vec::new();
    for d in diffs {
        let key = (d.kind, d.batch_size, d.concurrency);
        if !phases.contains(&key) {
            phases.push(key);
        }
    }
    let largest = phases
        .iter()
        .filter(|k| k.0 == PhaseKind::Batch)
        .max_by_key(|k| k.1)
        .copied();
    let mut out = Vec::new();
    for &key in &phases {
        let mut figures = vec![];
        match key.0 {
            PhaseKind::Capacity => figures.push(Figure::CapacityPerS),
            _ => figures.push(Figure::P99Ms),
        }
        if Some(key) == largest {
            figures.extend([Figure::ReqPerS, Figure::CostPer1mUsd]);
        }
        for f in figures {
            out.extend(winner(diffs, key, f));
        }
    }
    out
}

/// "lowest p99 at b=1 c=1: ic (−47.6 % [−47.9, −47.3] % against lmi, the next)", or the
/// two that cannot be told apart and what would tell them.
fn winner(diffs: &[Difference], key: (PhaseKind, usize, usize), figure: Figure) -> Option<String> {
    let of = |d: &&Difference| (d.kind, d.batch_size, d.concurrency) == key && d.figure == figure;
    let here: Vec<&Difference> = diffs.iter().filter(of).collect();
    let ranked = ranked(&here, figure);
    let [best, rest @ ..] = ranked.as_slice() else {
        return None;
    };
    let judged: Vec<(&str, Judged)> = rest
        .iter()
        .filter_map(|other| Some((*other, between(&here, best, other)?)))
        .collect();
    // The targets the data cannot tell from the best share its place.
    let (tied, behind): (Vec<_>, Vec<_>) = judged.iter().partition(|(_, j)| !j.significant);
    let what = match figure {
        Figure::P99Ms => "lowest p99",
        Figure::P50Ms => "lowest p50",
        Figure::ReqPerS => "most req/s",
        Figure::CostPer1mUsd => "cheapest per 1M samples",
        Figure::CapacityPerS => "most capacity within the SLO",
    };
    let at = here.first()?.phase();
    let shown = |j: &Judged| {
        format!(
            "{} {}",
            percent(j.relative),
            j.ci95.map_or(String::new(), interval_percent)
        )
    };
    let ahead = behind
        .first()
        .map(|(other, j)| format!("{best} {} against {other}", shown(j)));
    let Some((next, j)) = tied.first() else {
        let (other, j) = behind.first()?;
        return Some(format!(
            "advice: {what} at {at}: {best} ({} against {other}, the next)",
            shown(j)
        ));
    };
    let mut names: Vec<&str> = std::iter::once(*best)
        .chain(tied.iter().map(|(n, _)| *n))
        .collect();
    let last = names.pop().unwrap_or_default();
    let needed = j
        .needed
        .as_deref()
        .map(|n| format!(": {n}"))
        .unwrap_or_default();
    let rest = ahead
        .map(|a| format!("; ahead of the rest ({a})"))
        .unwrap_or_default();
    Some(format!(
        "advice: {what} at {at}: {} and {last} are {NOT_DISTINGUISHABLE} ({best} {} against {next}{needed}){rest}",
        names.join(", "),
        shown(j)
    ))
}

/// The targets of one figure, best first.
fn ranked<'a>(here: &[&'a Difference], figure: Figure) -> Vec<&'a str> {
    let mut values: Vec<(&str, f64)> = Vec::new();
    for d in here {
        for (n, v) in [(d.a.as_str(), d.a_value), (d.b.as_str(), d.b_value)] {
            if v.is_finite() && !values.iter().any(|x| x.0 == n) {
                values.push((n, v));
            }
        }
    }
    values.sort_by(|x, y| {
        let o = x.1.total_cmp(&y.1);
        if figure.lower_is_better() {
            o
        } else {
            o.reverse()
        }
    });
    values.into_iter().map(|v| v.0).collect()
}

/// `best` against `next`: the difference as recorded, turned round when recorded the
/// other way (b/a − 1 becomes a/b − 1, its interval's ends swapped).
fn between(here: &[&Difference], best: &str, next: &str) -> Option<Judged> {
    if let Some(d) = here.iter().find(|d| d.a == next && d.b == best) {
        return Some(d.judged.clone());
    }
    let d = here.iter().find(|d| d.a == best && d.b == next)?;
    let turn = |x: f64| 1.0 / (1.0 + x) - 1.0;
    Some(Judged {
        relative: turn(d.judged.relative),
        ci95: d.judged.ci95.map(|Interval(lo, hi)| {
            // The upper end unbounded turns into a lower end of −100 %.
            let new_lo = hi.map_or(-1.0, turn);
            let new_hi = (lo > -1.0).then(|| turn(lo));
            Interval(new_lo, new_hi)
        }),
        ..d.judged.clone()
    })
}

/// `compare --slo`'s answer: the cheapest target within the SLO (or, without prices, the one
/// with the most capacity), as `capacity::cheapest` names it, kept only where its capacity
/// (or cost) is significantly better than every other target's best; otherwise the targets
/// the searches cannot tell apart.
pub fn capacity_verdict(e: &Export) -> Option<String> {
    let cmp = e.compare.as_ref()?;
    let targets: Vec<(String, Option<f64>)> = cmp
        .targets
        .iter()
        .map(|t| (t.name.clone(), t.price_per_hour_usd))
        .collect();
    capacity_verdict_among(&e.capacity, &targets)
}

/// [`capacity_verdict`] of capacity answers that name their `targets` (name, hourly
/// price): a comparison's targets, a tune's configurations.
pub fn capacity_verdict_among(
    capacity: &[encbench_core::results::capacity::Capacity],
    targets: &[(String, Option<f64>)],
) -> Option<String> {
    use encbench_core::differences::capacity_measure;
    use encbench_core::significance::judge;
    let line = encbench_core::capacity::cheapest(capacity)?;
    let price = |t: &str| targets.iter().find(|x| x.0 == t).and_then(|x| x.1);
    let priced = line.starts_with("cheapest");
    // Each target's best batch size, as `cheapest` ranks them.
    let per_sample = |t: &str, b: usize| {
        let (m, _) = capacity_measure(capacity, Some(t), b)?;
        let samples = m.value * b as f64;
        Some(if priced {
            price(t)? / samples
        } else {
            -samples
        })
    };
    let mut best: Vec<(&str, usize, f64)> = Vec::new();
    for (name, _) in targets {
        let sizes = capacity
            .iter()
            .filter(|c| c.target.as_deref() == Some(name.as_str()));
        let found = sizes
            .filter_map(|c| Some((c.batch_size, per_sample(name, c.batch_size)?)))
            .min_by(|x, y| x.1.total_cmp(&y.1));
        if let Some((b, v)) = found {
            best.push((name.as_str(), b, v));
        }
    }
    best.sort_by(|x, y| x.2.total_cmp(&y.2));
    let [(w, bw, _), rest @ ..] = best.as_slice() else {
        return Some(line);
    };
    let mut tied = Vec::new();
    for &(t, bt, _) in rest {
        let (Some((mw, _)), Some((mt, _))) = (
            capacity_measure(capacity, Some(w), *bw),
            capacity_measure(capacity, Some(t), bt),
        ) else {
            continue;
        };
        // The winner's rate against the other's; its cost per sample (or its samples/s)
        // against the other's follows by the prices and batch sizes, which are exact.
        let j = judge(Figure::CapacityPerS, &mt, &mw);
        let Some(Interval(lo, hi)) = j.ci95 else {
            tied.push(format!(
                "{t} (no interval: {})",
                j.needed.unwrap_or_default()
            ));
            continue;
        };
        let (bw, bt) = (*bw as f64, bt as f64);
        let (what, ratio, ends) = if priced {
            let k = price(w).zip(price(t)).map_or(1.0, |(pw, pt)| pw / pt) * bt / bw;
            let ends = (
                hi.map_or(0.0, |h| k / (1.0 + h)),
                (lo > -1.0).then(|| k / (1.0 + lo)),
            );
            ("per sample", k / (1.0 + j.relative), ends)
        } else {
            let q = bw / bt;
            (
                "in samples/s",
                (1.0 + j.relative) * q,
                ((1.0 + lo) * q, hi.map(|h| (1.0 + h) * q)),
            )
        };
        let told = if priced {
            ends.1.is_some_and(|h| h < 1.0)
        } else {
            ends.0 > 1.0
        };
        if !told {
            let shown = Interval(ends.0 - 1.0, ends.1.map(|h| h - 1.0));
            tied.push(format!(
                "{t} ({} {} {what}{})",
                percent(ratio - 1.0),
                interval_percent(shown),
                j.needed
                    .as_deref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            ));
        }
    }
    Some(if tied.is_empty() {
        line
    } else {
        format!(
            "{line}; but {w} is {NOT_DISTINGUISHABLE} from {}: no winner",
            tied.join(", ")
        )
    })
}
