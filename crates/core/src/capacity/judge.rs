//! What a probe's phase says to the search: its percentiles over the requests due (those the
//! SLO was judged on) with their 95 % intervals, and how far it stood from the bound.

use crate::interval::{Ci95, Interval};
use crate::results::PhaseResult;
use crate::slo::{Measured, Objective, Slo};
use crate::stats::LatencySummary;

/// A bound probe as the search reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Point {
    pub rate: f64,
    /// The worst objective's measured over allowed (≤ 1: met).
    pub ratio: f64,
    /// That ratio's 95 % interval, the upper end infinite where no sample bounds it; `None`
    /// for an errors objective, whose share the search takes as measured.
    pub ci: Option<(f64, f64)>,
    /// Whether the probe met the SLO.
    pub met: bool,
    /// Whether `ratio` is the figure the SLO was judged on, fit for the search's model of the
    /// latency curve: not where fewer than the objective's share completed ok (the ratio is
    /// then the ok requests' own), nor from a probe that fell behind its schedule.
    pub judged: bool,
    /// The noise of ln `ratio`, by batch means over the probe's own samples, and the
    /// spells past the percentile they came in (`quantile_noise`); `None` where they could
    /// not tell it (too few past the percentile, an errors objective).
    pub noise: Option<crate::quantile_noise::Noise>,
    /// The requests due.
    pub n: u64,
}

/// The record's histogram of its ok requests, where it holds them (not in a record that
/// did not come from a run): decoded once a probe, for the functions below.
pub(super) fn histogram(r: &PhaseResult) -> Option<hdrhistogram::Histogram<u64>> {
    crate::results::decode_histogram(&r.histogram_hdr_b64)
        .ok()
        .filter(|h| h.len() == r.ok && r.ok > 0)
}

fn due(r: &PhaseResult) -> u64 {
    r.ok + r.error_count() + r.unsent
}

fn measured<'a>(r: &PhaseResult, h: &'a hdrhistogram::Histogram<u64>) -> Measured<'a> {
    Measured {
        scheduled: h,
        ok: r.ok,
        errors: r.error_count(),
        unsent: r.unsent,
        overloaded: r.overloaded,
        req_per_s: r.req_per_s,
    }
}

/// The phase's latency over the requests due, errors and unsent requests counted as late,
/// with its intervals: what the SLO was judged on. A percentile that fewer than its share
/// of the requests due reached ok is the ok requests' own figure.
pub(super) fn over_due(
    r: &PhaseResult,
    h: Option<&hdrhistogram::Histogram<u64>>,
) -> Option<LatencySummary> {
    let h = h?;
    let m = measured(r, h);
    let l = &r.latency_ms;
    let at = |q: f64, own: f64| {
        let v = crate::slo::quantile_over_due_ms(&m, q);
        if v.is_finite() { v } else { own }
    };
    Some(LatencySummary {
        p50: at(0.5, l.p50),
        p90: at(0.9, l.p90),
        p95: at(0.95, l.p95),
        p99: at(0.99, l.p99),
        p999: at(0.999, l.p999),
        ci95: Ci95::over_due(h, due(r)),
        ..*l
    })
}

/// p50 and p99 as the SLO judged them, with their intervals: the ok requests' own (with
/// theirs) where fewer than that share completed ok (an infinite figure has no row) or the
/// record holds no histogram of its ok samples.
pub(super) fn percentiles(
    r: &PhaseResult,
    h: Option<&hdrhistogram::Histogram<u64>>,
) -> [(f64, Option<Interval>); 2] {
    let l = &r.latency_ms;
    let own = [
        (l.p50, l.ci95.map(|c| c.p50)),
        (l.p99, l.ci95.map(|c| c.p99)),
    ];
    let Some(h) = h else {
        return own;
    };
    let m = measured(r, h);
    let ci = Ci95::over_due(h, due(r));
    let judged = [(0.5, ci.map(|c| c.p50)), (0.99, ci.map(|c| c.p99))];
    let mut out = own;
    for (o, (q, i)) in out.iter_mut().zip(judged) {
        let v = crate::slo::quantile_over_due_ms(&m, q);
        if v.is_finite() {
            *o = (v, i);
        }
    }
    out
}

/// The probe at `rate` as a point of the latency curve: its worst objective's ratio over
/// the requests due, and that ratio's interval.
pub(super) fn point(
    slo: &Slo,
    rate: f64,
    r: &PhaseResult,
    h: Option<&hdrhistogram::Histogram<u64>>,
) -> Point {
    let due = due(r);
    let mut worst = Point {
        rate,
        ratio: 0.0,
        ci: None,
        met: r.slo_met == Some(true),
        judged: !r.overloaded,
        noise: None,
        n: due,
    };
    for o in &slo.objectives {
        let (ratio, ci, judged, noise) = match *o {
            Objective::Latency {
                percentile,
                bound_ms,
            } => {
                let (ratio, ci, judged) = latency_ratio(r, h, due, percentile, bound_ms);
                let noise = r.quantile_noise.and_then(|q| q.of(percentile));
                (ratio, ci, judged, noise)
            }
            Objective::Errors { share } => {
                let completed = r.ok + r.error_count();
                let got = crate::slo::error_share(r.error_count(), completed);
                (crate::slo::error_ratio(got, share), None, true, None)
            }
        };
        if ratio >= worst.ratio {
            worst.ratio = ratio;
            worst.ci = ci;
            worst.judged = judged && !r.overloaded;
            worst.noise = noise;
        }
    }
    worst
}

type Ratio = (f64, Option<(f64, f64)>, bool);

fn latency_ratio(
    r: &PhaseResult,
    h: Option<&hdrhistogram::Histogram<u64>>,
    due: u64,
    percentile: crate::percentile::Percentile,
    bound_ms: f64,
) -> Ratio {
    let of = |i: Interval| {
        (
            i.0 / bound_ms,
            i.1.map_or(f64::INFINITY, |hi| hi / bound_ms),
        )
    };
    let own = percentile.of(&r.latency_ms);
    let own_ci = r.latency_ms.ci95.map(|c| of(c.of_percentile(percentile)));
    let Some(h) = h else {
        let ratio = if r.ok == 0 {
            f64::INFINITY
        } else {
            own / bound_ms
        };
        return (ratio, own_ci, r.ok > 0);
    };
    let v = crate::slo::quantile_over_due_ms(&measured(r, h), percentile.quantile());
    if !v.is_finite() {
        // Fewer than the objective's share completed ok: the ok requests' own figure still
        // orders the going-down probes, but is no point of the curve.
        return (own / bound_ms, own_ci, false);
    }
    let ci = Ci95::over_due(h, due).map(|c| of(c.of_percentile(percentile)));
    (v / bound_ms, ci, true)
}
