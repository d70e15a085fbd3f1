//! `compare`'s differences: for each pair of targets, each phase they both ran and each
//! headline figure, how far apart they are and whether the data can tell (`significance`).

use crate::interval::Interval;
use crate::plan::PhaseKind;
use crate::results::PhaseResult;
use crate::results::capacity::Capacity;
use crate::significance::{Figure, Judged, Measure, judge};
use serde::{Deserialize, Serialize};

/// Target `b` against target `a` in one figure of one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// The phase both ran: batch, concurrency, or capacity (the search at that batch size).
    pub kind: PhaseKind,
    pub batch_size: usize,
    pub concurrency: usize,
    pub figure: Figure,
    pub a: String,
    pub b: String,
    pub a_value: f64,
    pub b_value: f64,
    #[serde(flatten)]
    pub judged: Judged,
}

impl Difference {
    /// "b=1 c=1", "c=8 b=1", "capacity b=1".
    pub fn phase(&self) -> String {
        match self.kind {
            PhaseKind::Concurrency => format!("c={} b={}", self.concurrency, self.batch_size),
            PhaseKind::Capacity => format!("capacity b={}", self.batch_size),
            _ => format!("b={} c={}", self.batch_size, self.concurrency),
        }
    }
}

/// Every pair of `targets` (in their order: the first of a pair is `a`), every phase of
/// theirs in the order it first ran, every figure both have.
pub fn differences(
    phases: &[PhaseResult],
    capacity: &[Capacity],
    targets: &[String],
) -> Vec<Difference> {
    let mut out = Vec::new();
    let mut seen: Vec<(PhaseKind, usize, usize)> = Vec::new();
    for p in phases.iter().filter(|p| p.kind != PhaseKind::Capacity) {
        let key = (p.kind, p.batch_size, p.concurrency);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let of = |t: &String| {
            phases.iter().find(|q| {
                q.target.as_ref() == Some(t) && (q.kind, q.batch_size, q.concurrency) == key
            })
        };
        for (i, a) in targets.iter().enumerate() {
            for b in &targets[i + 1..] {
                if let (Some(pa), Some(pb)) = (of(a), of(b)) {
                    out.extend(phase_differences(pa, pb, a, b));
                }
            }
        }
    }
    let mut sizes: Vec<usize> = capacity.iter().map(|c| c.batch_size).collect();
    sizes.dedup();
    for b_size in sizes {
        for (i, a) in targets.iter().enumerate() {
            for b in &targets[i + 1..] {
                let (ma, mb) = (
                    capacity_measure(capacity, Some(a), b_size),
                    capacity_measure(capacity, Some(b), b_size),
                );
                if let (Some((ma, conc)), Some((mb, _))) = (ma, mb) {
                    out.push(difference(
                        (PhaseKind::Capacity, b_size, conc),
                        Figure::CapacityPerS,
                        (a, &ma),
                        (b, &mb),
                    ));
                }
            }
        }
    }
    out
}

fn difference(
    (kind, batch_size, concurrency): (PhaseKind, usize, usize),
    figure: Figure,
    (a, ma): (&str, &Measure),
    (b, mb): (&str, &Measure),
) -> Difference {
    Difference {
        kind,
        batch_size,
        concurrency,
        figure,
        a: a.to_string(),
        b: b.to_string(),
        a_value: ma.value,
        b_value: mb.value,
        judged: judge(figure, ma, mb),
    }
}

fn phase_differences(pa: &PhaseResult, pb: &PhaseResult, a: &str, b: &str) -> Vec<Difference> {
    let key = (pa.kind, pa.batch_size, pa.concurrency);
    let mut figures = vec![];
    if pa.ok > 0 && pb.ok > 0 {
        figures.extend([Figure::P50Ms, Figure::P99Ms]);
    }
    // An open loop's rate is the rate it was offered, whoever serves it.
    if pa.closed_loop && pb.closed_loop {
        figures.push(Figure::ReqPerS);
    }
    if pa.cost_per_1m_usd.is_some() && pb.cost_per_1m_usd.is_some() {
        figures.push(Figure::CostPer1mUsd);
    }
    figures
        .into_iter()
        .map(|f| difference(key, f, (a, &measure(pa, f)), (b, &measure(pb, f))))
        .collect()
}

/// A phase's figure, its interval from its own samples and its repetitions' values.
pub fn measure(p: &PhaseResult, figure: Figure) -> Measure {
    let one = |r: &PhaseResult| -> Option<f64> {
        match figure {
            Figure::P50Ms => (r.ok > 0).then_some(r.latency_ms.p50),
            Figure::P99Ms => (r.ok > 0).then_some(r.latency_ms.p99),
            Figure::ReqPerS => Some(r.req_per_s),
            Figure::CostPer1mUsd => r.cost_per_1m_usd,
            Figure::CapacityPerS => None,
        }
    };
    let ci = p.latency_ms.ci95;
    let within = match figure {
        Figure::P50Ms => ci.map(|c| c.p50),
        Figure::P99Ms => ci.map(|c| c.p99),
        Figure::ReqPerS => rate_interval(p),
        Figure::CostPer1mUsd => rate_interval(p).and_then(|Interval(lo, hi)| {
            // Cost is the price over the rate: the rate's interval turned over.
            let cost = p.cost_per_1m_usd?;
            let hi = hi?;
            (lo > 0.0).then(|| Interval(cost * p.req_per_s / hi, Some(cost * p.req_per_s / lo)))
        }),
        Figure::CapacityPerS => None,
    };
    Measure {
        value: one(p).unwrap_or(f64::NAN),
        within,
        n: p.ok,
        reps: p
            .repetitions
            .iter()
            .filter_map(|r| Some((r.repetition?, one(r)?)))
            .collect(),
    }
}

/// A closed loop's rate is its cap over its mean latency (Little's law), so the mean's 95 %
/// interval (its standard error from the phase's histogram) bounds the rate: the noise of the
/// latencies drawn, not the drift between runs.
pub fn rate_interval(p: &PhaseResult) -> Option<Interval> {
    if !p.closed_loop || p.req_per_s <= 0.0 {
        return None;
    }
    let h = crate::results::decode_histogram(&p.histogram_hdr_b64).ok()?;
    if h.len() < 2 || h.mean() <= 0.0 {
        return None;
    }
    let relative = 1.96 * h.stdev() / h.mean() / (h.len() as f64).sqrt();
    (relative < 1.0).then(|| {
        Interval(
            p.req_per_s / (1.0 + relative),
            Some(p.req_per_s / (1.0 - relative)),
        )
    })
}

/// A target's capacity at one batch size: the mean over its searches, each search's answer
/// as a repetition, and a single search's own interval; with the concurrency it ran at.
pub fn capacity_measure(
    all: &[Capacity],
    target: Option<&str>,
    batch_size: usize,
) -> Option<(Measure, usize)> {
    let found: Vec<&Capacity> = all
        .iter()
        .filter(|c| c.target.as_deref() == target && c.batch_size == batch_size)
        .collect();
    let rates: Vec<f64> = found.iter().filter_map(|c| c.max_rate_per_s).collect();
    if rates.len() != found.len() || rates.is_empty() {
        return None;
    }
    let within = match found.as_slice() {
        [one] => one
            .max_rate_ci95_per_s
            .map(|[lo, hi]| Interval(lo, Some(hi))),
        _ => None,
    };
    Some((
        Measure {
            value: rates.iter().sum::<f64>() / rates.len() as f64,
            within,
            n: 0,
            reps: found
                .iter()
                .filter_map(|c| Some((c.repetition?, c.max_rate_per_s?)))
                .collect(),
        },
        found[0].concurrency,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::phase_row;

    fn target(name: &str, p50: f64, rps: f64, reps: &[(f64, f64)]) -> PhaseResult {
        let mut p = phase_row(PhaseKind::Batch, 1, 1, rps, p50, p50 * 1.2, None);
        p.target = Some(name.into());
        p.repetitions = reps
            .iter()
            .enumerate()
            .map(|(k, &(p50, rps))| {
                let mut r = phase_row(PhaseKind::Batch, 1, 1, rps, p50, p50 * 1.2, None);
                r.repetition = Some(k as u32 + 1);
                r
            })
            .collect();
        p
    }

    #[test]
    fn every_pair_every_figure_of_each_phase() {
        let names = ["a", "b", "c"].map(String::from);
        let phases = vec![
            target("a", 20.0, 50.0, &[(20.0, 50.0), (22.0, 45.0), (19.0, 52.0)]),
            target("b", 23.0, 43.0, &[(23.0, 43.0), (25.3, 39.0), (21.9, 45.0)]),
            target("c", 20.0, 50.0, &[]),
        ];
        let d = differences(&phases, &[], &names);
        // a/b, a/c, b/c: p50, p99, req/s each.
        assert_eq!(d.len(), 9, "{d:?}");
        let ab = &d[0];
        assert_eq!(
            (ab.a.as_str(), ab.b.as_str(), ab.figure),
            ("a", "b", Figure::P50Ms)
        );
        assert_eq!(ab.judged.basis, crate::significance::Basis::Repetitions);
        assert!(ab.judged.significant, "{ab:?}");
        assert_eq!(ab.phase(), "b=1 c=1");
        // c ran once: its pairs fall back on the figures' own intervals.
        let ac = d.iter().find(|x| x.b == "c" && x.a == "a").unwrap();
        assert_eq!(ac.judged.basis, crate::significance::Basis::Samples);
        assert!(!ac.judged.significant);
    }
}
