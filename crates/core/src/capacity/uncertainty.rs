//! How sure the answer is: the bracket it stopped in, widened where the noise of the probes
//! at its ends reaches past it.
//!
//! The probe that met at `lo` measured the objective's percentile with a 95 % interval (the
//! order statistics over the requests due, `interval`). Where the top of that interval is
//! past the bound, the true curve may cross the bound below `lo`: by as much as the excess
//! over the curve's local slope. Likewise below the bound at the probe that missed, above
//! it. The ceiling bounds the answer outright: no open loop above it keeps up.
//!
//! The order statistics assume independent samples; a queue's are not (a busy period makes
//! a run of late requests), so the intervals are widened by a factor that grows with the
//! load (`AUTOCORRELATION`), calibrated on simulated M/M/1 and M/M/4 searches so that the
//! answer's interval covers queueing theory's answer about 95 % of the time (`sim_tests`).

use super::judge::Point;

/// How much wider than the order statistics' a probe's interval on its percentile is when
/// its samples come from a queue: `AUTOCORRELATION` × (1 + ε)^`POWER`, ε being the latency's
/// elasticity to load near the answer, which the probes measure without knowing the
/// endpoint. A queue forgets its state over a relaxation time that grows as 1/(1 − ρ)²
/// (heavy traffic), and the late requests that decide a p99 come in runs within it; a
/// latency that grows as 1/(1 − ρ) has ε = ρ/(1 − ρ), so 1/(1 − ρ) = 1 + ε. The variance of
/// a mean suggests the first power; the simulated searches (`sim_tests`, 1,000 seeded runs
/// each) needed the second: with (1 + ε)¹ no one factor covered both M/M/1 (ρ 0.54) and
/// M/M/4 (ρ 0.875) near 95 % (2.5: 99 % and 90 %; 2.0: 97 % and 84 %), with 0.75 ×
/// (1 + ε)² the answers' intervals covered theory in 97 % and 95 %.
const AUTOCORRELATION: f64 = 0.75;
const POWER: f64 = 2.0;

/// `[lo, hi]` around the answer `lo`, given the lowest rate that missed (`failed`) or none
/// (the ceiling is then the upper end).
pub(super) fn interval(points: &[Point], lo: f64, failed: Option<f64>, ceiling: f64) -> [f64; 2] {
    widened(points, lo, failed, ceiling, (AUTOCORRELATION, POWER))
}

/// `interval` with `k0` for `AUTOCORRELATION` and (1 + ε) to the power `power`.
///
/// Latency grows with load, so every probe that met bounds the answer from below (by its
/// rate, less how far its noise reaches past the bound) and every probe that missed bounds
/// it from above: the interval takes the highest and the lowest of these, so a probe of few
/// requests at the bracket's end, bounded loosely, does not hide a surer one just below it.
pub(super) fn widened(
    points: &[Point],
    lo: f64,
    failed: Option<f64>,
    ceiling: f64,
    (k0, power): (f64, f64),
) -> [f64; 2] {
    // The ratio's interval at a probe, widened for autocorrelation, mapped to rates through
    // the local slope dr/dλ = ε·r/λ: how far past the probe's rate the bound may lie
    // (negative: below it).
    let reach = |p: &Point, end: f64| {
        let e = elasticity(points, p.rate, ceiling);
        let moved = p.ratio + k0 * (1.0 + e).powf(power) * (end - p.ratio);
        (1.0 - moved) / (e * p.ratio / p.rate)
    };
    let low = points
        .iter()
        .filter(|p| p.met && p.rate <= lo)
        .map(|p| {
            p.ci.map_or(p.rate, |(_, top)| p.rate + reach(p, top).min(0.0))
        })
        .fold(0.0, f64::max);
    let high = points
        .iter()
        .filter(|p| !p.met && failed.is_some_and(|hi| p.rate >= hi))
        .map(|p| {
            p.ci.map_or(p.rate, |(bottom, _)| p.rate + reach(p, bottom).max(0.0))
        })
        .fold(ceiling, f64::min);
    [low.min(lo), high.max(failed.unwrap_or(lo))]
}

/// The latency's elasticity to load, ε = d ln r / d ln λ, at the answer: the least-squares
/// slope of ln r against ln λ over the probes within `NEAR` of it, or over all where that is
/// steeper (a curve that steepens with load has its steepest near the answer, and noise
/// between probes a precision apart can flatten theirs), or with fewer than two probes that
/// rise with load, the ceiling's: r ∝ 1/(ceiling − λ).
pub(super) fn elasticity(points: &[Point], rate: f64, ceiling: f64) -> f64 {
    let curve: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.judged && p.ratio.is_finite() && p.ratio > 0.0)
        .map(|p| (p.rate.ln(), p.ratio.ln()))
        .collect();
    let near: Vec<(f64, f64)> = curve
        .iter()
        .filter(|p| (p.0 - rate.ln()).abs() <= NEAR.ln())
        .copied()
        .collect();
    match (log_slope(&near), log_slope(&curve)) {
        (Some(a), Some(b)) => a.max(b),
        (a, b) => a
            .or(b)
            .unwrap_or(rate / (ceiling - rate).max(f64::MIN_POSITIVE)),
    }
}

/// How near the answer a probe's rate is for the local slope: within 15 %.
const NEAR: f64 = 1.15;

pub(super) fn log_slope(v: &[(f64, f64)]) -> Option<f64> {
    let n = v.len() as f64;
    let mx = v.iter().map(|p| p.0).sum::<f64>() / n;
    let my = v.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = v.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = v.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    (v.len() >= 2 && sxx > 1e-9 && slope.is_finite() && slope > 0.0).then_some(slope)
}
