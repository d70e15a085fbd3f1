//! Where the next probe goes: on the rate the probes' own latencies point to, kept inside
//! the bracket, with bisection whenever they point nowhere useful.
//!
//! The model: a queue's latency grows as 1/(capacity − λ) near saturation (exactly, for
//! M/M/1's p99 = ln 100/(μ − λ)), so the objective's ratio r (measured over allowed) is
//! close to a line in u = 1/(ceiling − λ): r = a + b·u. Two probes fit it; one, with a = 0
//! (the line through the ceiling's infinite latency), gives a first estimate. The rate
//! where the line reaches r = 1 is the estimate; the probe goes a little below it, since a
//! rate that meets is the answer, and never where its outcome could not shrink the bracket
//! past the precision on one side.

use super::judge::Point;

/// The first probe's share of the ceiling. Where the answer lies between half the ceiling
/// and the ceiling (an M/M/1 at its true capacity: 0.54; the demo and M/M/4: 0.94), three
/// quarters is within 40 % of it either way, and a first probe that fails above the answer
/// is as good a point of the curve as one that meets below.
pub(super) const FIRST_SHARE: f64 = 0.75;

/// How far below the estimate a probe goes, in shares of the precision: a probe that
/// meets a quarter of the precision below it leaves the bracket to close with one probe
/// above.
const AIM: f64 = 0.25;

/// The bracket as the search stands: the highest rate that met (none yet going down) and
/// the lowest that did not, or the ceiling.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bracket {
    pub lo: Option<f64>,
    pub hi: f64,
    pub ceiling: f64,
    pub precision: f64,
}

/// The line r = a + b·u through the bracket's ends where both are probes (the one that met
/// and the one that did not: it rises with load, whatever the noise), else through the two
/// probes nearest the bound (in ratio); `None` when fewer than two are points of the curve
/// or the two do not rise with load (noise larger than the step between them: the fit says
/// nothing).
pub(super) fn fit(points: &[Point], ceiling: f64, b: Option<Bracket>) -> Option<(f64, f64)> {
    let [p, q] = ends(points, b).or_else(|| nearest_two(points, ceiling))?;
    let (u1, u2) = (u(p.rate, ceiling), u(q.rate, ceiling));
    let slope = (q.ratio - p.ratio) / (u2 - u1);
    (slope.is_finite() && slope > 0.0).then_some((p.ratio - slope * u1, slope))
}

/// The probes at the bracket's ends, where both are points of the curve.
fn ends(points: &[Point], b: Option<Bracket>) -> Option<[Point; 2]> {
    let b = b?;
    let at = |rate: f64| {
        points
            .iter()
            .rev()
            .find(|p| p.rate == rate && p.judged && p.ratio.is_finite() && p.ratio > 0.0)
            .copied()
    };
    Some([at(b.lo?)?, at(b.hi)?])
}

fn u(rate: f64, ceiling: f64) -> f64 {
    1.0 / (ceiling - rate)
}

fn usable(points: &[Point], ceiling: f64) -> Vec<Point> {
    let mut v: Vec<Point> = points
        .iter()
        .filter(|p| p.judged && p.ratio.is_finite() && p.ratio > 0.0 && p.rate < ceiling)
        .copied()
        .collect();
    v.sort_by(|a, b| a.ratio.ln().abs().total_cmp(&b.ratio.ln().abs()));
    v
}

fn nearest_two(points: &[Point], ceiling: f64) -> Option<[Point; 2]> {
    let v = usable(points, ceiling);
    let p = *v.first()?;
    let q = v.iter().skip(1).find(|q| q.rate != p.rate)?;
    Some([p, *q])
}

/// The rate at which the probes' latencies reach the bound: on the fitted line, or with a
/// single point of the curve on the line through it and the ceiling's infinite latency.
/// `None` when the two nearest do not rise with load.
pub(super) fn estimate(points: &[Point], ceiling: f64, bracket: Option<Bracket>) -> Option<f64> {
    let v = usable(points, ceiling);
    let e = if v.iter().any(|q| q.rate != v[0].rate) {
        let (a, b) = fit(points, ceiling, bracket)?;
        ceiling - b / (1.0 - a)
    } else {
        let p = v.first()?;
        ceiling - p.ratio * (ceiling - p.rate)
    };
    (e.is_finite() && e > 0.0 && e < ceiling).then_some(e)
}

/// The next probe's rate. `halving`: the bracket did not halve over the last two probes
/// (or the latencies, going down, have missed twice): bisect.
pub(super) fn rate(points: &[Point], b: Bracket, halving: bool) -> f64 {
    if points.is_empty() {
        return b.ceiling * FIRST_SHARE;
    }
    let step = 1.0 + b.precision;
    let e = if halving {
        None
    } else {
        estimate(points, b.ceiling, Some(b))
    };
    let Some(lo) = b.lo else {
        // Going down: half the precision below the estimate, as a rate that meets ends the
        // going down (and the line through one probe and the ceiling points too high where
        // the ceiling is below the endpoint's own capacity); no more than three quarters of
        // the way to zero in one probe.
        return e.map_or(b.hi / 2.0, |e| {
            (e * (1.0 - b.precision / 2.0)).clamp(b.hi / 4.0, b.hi / step)
        });
    };
    if b.hi <= lo * step * step {
        // One probe closes it whatever its outcome.
        return (lo * b.hi).sqrt();
    }
    match e.filter(|&e| lo < e && e < b.hi) {
        // Just above the highest rate that met: a probe a precision above it that misses
        // closes the bracket.
        Some(e) if e <= lo * step => lo * step,
        // Anywhere below the precision above it, a probe that misses closes the bracket
        // too, and one that meets leaves one probe a precision above it to close it.
        Some(e) => {
            (e * (1.0 - AIM * b.precision)).clamp(lo * (1.0 + AIM * b.precision), b.hi / step)
        }
        None => f64::midpoint(lo, b.hi),
    }
}

/// Going down, two probes that missed at λ and at most λ/2: latency grows with load, and
/// ever faster (convex), so the line through the two lies below the latency at every rate
/// under the lower one. `true` when even that line is past the bound at zero load: no rate
/// meets the SLO.
pub(super) fn no_rate_meets(upper: &Point, lower: &Point) -> bool {
    if lower.rate > upper.rate / 2.0 {
        return false;
    }
    let slope = (upper.ratio - lower.ratio) / (upper.rate - lower.rate);
    lower.ratio - lower.rate * slope > 1.0
}
