//! How many requests a probe measures: fixed before it starts, from what its verdict needs,
//! never from what it is measuring.
//!
//! A probe that ends as soon as its figures look settled ends while the tail may not yet
//! have shown: its p99 is then low, and the rule favours "meets" (the rule before
//! 2026-12-07: an M/M/1 whose true answer is 53.95 req/s was answered 61–68 req/s).
//! Fixed-size probes have no such bias. Their size comes from the objective: a percentile
//! q is judged on the requests past it, so a probe measures `TAIL_SAMPLES` of them at
//! least (10,000 requests for a p99), and spans `SPAN_LATENCIES` of the latencies measured
//! so far, since requests in flight together share their fate (with L in the system at
//! once, about L neighbours wait behind the same busy spell). `--max-probe-secs` still
//! bounds each probe's time; a probe it cut short is weighed by what it measured.

use crate::slo::{Objective, Slo};

/// Requests past the objective's percentile a probe measures: 100 (10,000 for p99). The
/// answer's noise shrinks as the square root of the requests measured near it; the search
/// pools its probes, so three or four such probes near the answer pin it to a few percent
/// on the known-answer endpoints (`sim_tests`).
pub const TAIL_SAMPLES: f64 = 100.0;

/// Separate spells past the percentile a probe aims at, from the rate at which the latest
/// probe saw them (`quantile_noise::Noise::clusters`): a queue's late requests come in
/// spells, and a percentile is as sure as the spells behind it, not the requests (10,000
/// requests held about 19 spells past an M/M/1's p99 at ρ 0.54, 14 of an M/M/4's at
/// 0.875 and 10 of an M/D/1's at 0.77, in simulation). At most `SPELL_GROWTH` times the
/// tail's requests.
pub const SPELLS: f64 = 30.0;
pub const SPELL_GROWTH: f64 = 4.0;

/// A probe spans at least this many of the latest probe's median latency.
pub const SPAN_LATENCIES: f64 = 1000.0;

/// The smallest share of requests an objective is judged on: 1 − q for a latency
/// percentile, the allowed share for an errors objective (no less than a thousandth: an
/// `errors=0` objective is judged on whatever a probe sends).
fn judged_share(slo: &Slo) -> f64 {
    slo.objectives
        .iter()
        .map(|o| match *o {
            Objective::Latency { percentile, .. } => 1.0 - percentile.quantile(),
            Objective::Errors { share } => share,
        })
        .fold(1.0, f64::min)
        .max(1e-3)
}

/// The requests a probe at `rate` measures: `min` (`--min-probe-requests`) at least, the
/// objective's tail and the span of `latency_s` (the latest probe's median, where there
/// is one).
pub(super) fn requests(slo: &Slo, min: u64, rate: f64, seen: Seen) -> u64 {
    let tail = (TAIL_SAMPLES / judged_share(slo)).ceil();
    let span = seen
        .latency_s
        .map_or(0.0, |l| (rate * l * SPAN_LATENCIES).ceil());
    let spells = match seen.spells_per_request {
        Some(k) if k > 0.0 => (SPELLS / k).min(tail * SPELL_GROWTH).ceil(),
        _ => 0.0,
    };
    (tail.max(span).max(spells) as u64).max(min)
}

/// What the latest probes measured that sizes the next one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Seen {
    /// The latest bound probe's median latency, in seconds.
    pub latency_s: Option<f64>,
    /// Spells past the percentile per request, at the latest probe that measured them.
    pub spells_per_request: Option<f64>,
}

/// The most probes a batch size's search runs: bisection's from the ceiling to the
/// precision (6 at 5 %), so that pooling never costs more probes than halving did.
pub(super) fn most_probes(precision: f64) -> usize {
    (1.0 / precision).log2().ceil() as usize + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slo(s: &[&str]) -> Slo {
        Slo {
            objectives: s.iter().map(|o| o.parse().unwrap()).collect(),
        }
    }

    #[test]
    fn the_tail_the_span_and_the_minimum_each_can_decide() {
        let none = Seen::default();
        let full = |s: &[&str], min| requests(&slo(s), min, 50.0, none);
        assert_eq!(full(&["p99=100ms"], 200), 10_000);
        assert_eq!(full(&["p50=20ms", "p999=1s"], 200), 100_000);
        assert_eq!(full(&["p50=20ms"], 200), 200);
        assert_eq!(full(&["p50=20ms"], 500), 500);
        assert_eq!(full(&["errors=1%"], 200), 10_000);
        assert_eq!(full(&["errors=0"], 200), 100_000);
        // 64 in flight at once (64 req/s of 1 s each): 1,000 latencies of them.
        let slow = Seen {
            latency_s: Some(1.0),
            spells_per_request: None,
        };
        assert_eq!(requests(&slo(&["p99=2s"]), 200, 64.0, slow), 64_000);
        // 10 spells in 10,000 requests: 30,000 for 30 of them; 1 in 10,000: capped at 4×.
        let spells = |k: f64| Seen {
            latency_s: None,
            spells_per_request: Some(k / 10_000.0),
        };
        let p99 = slo(&["p99=100ms"]);
        assert_eq!(requests(&p99, 200, 50.0, spells(10.0)), 30_000);
        assert_eq!(requests(&p99, 200, 50.0, spells(1.0)), 40_000);
        assert_eq!(most_probes(0.05), 6);
        assert_eq!(most_probes(0.03), 7);
    }
}
