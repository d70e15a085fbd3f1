//! The answer from every probe near it: the rate at which the latency reaches the bound,
//! each probe's own estimate of it weighed by how sure that probe is, with a 95 % interval.
//!
//! Near the answer the objective's ratio r (measured over allowed) follows its elasticity
//! ε = d ln r / d ln λ, so a probe at λᵢ that measured rᵢ puts the crossing at
//! ln λᵢ − ln rᵢ / ε, whether it met or not. Its noise is the probe's own (`se`, batch
//! means over its samples, over ε); a probe further away adds the curve's bend: a queue's
//! latency grows as 1/(capacity − λ), whose ε grows as ε(1 + ε) per unit of ln λ, so the
//! line misses by about (1 + ε)/2 · d² at a distance d. The estimates are weighed by the
//! inverse of their variance, and the interval is widened where they scatter more than
//! their noise says (a probe disturbed by the machine, a drifting endpoint).
//!
//! The highest rate that met, today's answer before 2026-12-07, uses one probe's verdict:
//! whichever side of the bound its noise threw it, the answer moved by the precision, and
//! a probe that measured little was as good as one that measured much. Pooling uses every
//! request measured near the answer.

use super::judge::Point;

/// Probes further than this from the estimate (in ln λ: 15 %) are left out: the line's bend
/// there is larger than a probe's noise.
const WINDOW: f64 = 0.1398;

/// The interval's half-width in standard errors: 95 % (the noise is itself estimated from
/// ten runs a probe, pooled over the probes: t with tens of degrees of freedom).
const Z95: f64 = 2.0;

/// How much wider than its noise says the interval is drawn. Batch means under-read the
/// noise of a percentile whose late requests come in few long spells (an M/M/4 at ρ 0.875:
/// 0.6 to 0.9 of the spread over seeds at 10,000 to 30,000 requests a probe, `sim_tests`),
/// and the interval must hold there too: with 1.6, 1,000 simulated searches of each
/// known-answer endpoint at default flags covered theory in 96.5 % (M/M/4), 98.7 % (M/M/1)
/// and 99.1 % (M/D/1) of them (with 1.5: 95.6 %, 98.5 %, 98.6 %).
const CALIBRATION: f64 = 1.6;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Pooled {
    pub rate: f64,
    /// The 95 % interval on the rate.
    pub ci: [f64; 2],
    /// Probes pooled, and the requests they measured.
    pub probes: usize,
    pub requests: u64,
}

impl Pooled {
    /// Half the interval's width, as a share of the rate (its ln).
    pub fn half_width(&self) -> f64 {
        (self.ci[1] / self.ci[0]).ln() / 2.0
    }
}

/// The pooled answer over the probes within `WINDOW` of `around` (the middle of the
/// bracket); `None` where none of them is a point of the curve with a measured noise.
///
/// Each probe's noise is the same per request near the answer (the same queue at nearly
/// the same load), so it is pooled too: the batch means of every probe give one figure per
/// request, far steadier than ten runs of one probe, and each probe is weighed by its
/// requests. A probe's own figure would weigh it by its luck: a probe whose runs happened
/// to agree would count for more than one that measured as much.
pub(super) fn pooled(points: &[Point], ceiling: f64, around: f64) -> Option<Pooled> {
    let x0 = around.ln();
    // The crossing from each probe: the line of queueing's own curve through the ceiling,
    // ε = λ/(ceiling − λ), which no probe's noise moves (the probes' own slope between
    // rates a few percent apart is mostly their noise). It is exact for an M/M/1; where
    // part of the latency does not queue (a service time of its own beside the bound) the
    // curve's true ε is smaller (an M/M/4 at its answer: 6.1 against 9.2), which moves an
    // estimate between probes on both sides of it little, but would narrow the interval:
    // that takes the smaller of it and the slope of ln r over every probe.
    let e = around / (ceiling - around);
    let e_ci = e.min(elasticity_over_all(points).unwrap_or(e));
    let near: Vec<&Point> = points
        .iter()
        .filter(|p| p.judged && p.ratio.is_finite() && p.ratio > 0.0 && p.rate < ceiling)
        .filter(|p| p.noise.is_some() && p.n > 0 && (p.rate.ln() - x0).abs() <= WINDOW)
        .collect();
    if near.is_empty() {
        return None;
    }
    // The noise of ln r for one request: se² · n, averaged over the probes.
    let per_request = near
        .iter()
        .map(|p| p.noise.map_or(0.0, |x| x.log_se).powi(2) * p.n as f64)
        .sum::<f64>()
        / near.len() as f64;
    let estimates: Vec<(f64, f64)> = near
        .iter()
        .map(|p| {
            let d = p.rate.ln() - x0;
            let bend = f64::midpoint(1.0, e) * d * d;
            let var = per_request / p.n as f64 / (e_ci * e_ci) + bend * bend;
            (p.rate.ln() - p.ratio.ln() / e, var)
        })
        .collect();
    let w: f64 = estimates.iter().map(|(_, v)| 1.0 / v).sum();
    let mean = estimates.iter().map(|(x, v)| x / v).sum::<f64>() / w;
    let mut var = 1.0 / w;
    if estimates.len() >= 3 {
        let chi2: f64 = estimates.iter().map(|(x, v)| (x - mean).powi(2) / v).sum();
        var *= (chi2 / (estimates.len() - 1) as f64).max(1.0);
    }
    let half = CALIBRATION * Z95 * var.sqrt();
    // No open loop above the ceiling keeps up: it bounds the answer outright.
    let rate = mean.exp().min(ceiling);
    Some(Pooled {
        rate,
        ci: [
            (mean - half).exp().min(rate),
            (mean + half).exp().min(ceiling).max(rate),
        ],
        probes: near.len(),
        requests: near.iter().map(|p| p.n).sum(),
    })
}

/// The least-squares slope of ln r against ln λ over every probe that is a point of the
/// curve; `None` with fewer than two rates or a slope that does not rise with load.
fn elasticity_over_all(points: &[Point]) -> Option<f64> {
    let v: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.judged && p.ratio.is_finite() && p.ratio > 0.0)
        .map(|p| (p.rate.ln(), p.ratio.ln()))
        .collect();
    super::uncertainty::log_slope(&v)
}
