//! Whether two deployments differ: the relative difference of a figure and its 95 %
//! interval, so that `compare` names a winner only where the data can tell them apart.
//!
//! The interval comes from one of two sources. With three repetitions or more (`--repeat`,
//! the targets taking turns) it is Student's t over the repetitions' log ratios, paired by
//! repetition: drift of the machine that falls on both targets of a pair cancels, and what
//! is left is the noise a repeat of the comparison would meet. Otherwise it combines the two
//! figures' own intervals (the order statistics of a percentile, the spread of a closed
//! loop's latencies behind its rate, a capacity search's own) on the log scale, as two
//! independent normal errors add: it sees the noise of the samples drawn, not the drift
//! between runs that these machines show (±30 % in throughput), which the notes say.

use crate::interval::Interval;
use serde::{Deserialize, Serialize};

/// The figures a comparison judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    P50Ms,
    P99Ms,
    ReqPerS,
    #[serde(rename = "cost_per_1m_usd")]
    CostPer1mUsd,
    CapacityPerS,
}

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::P50Ms => "p50",
            Figure::P99Ms => "p99",
            Figure::ReqPerS => "req/s",
            Figure::CostPer1mUsd => "$/1M",
            Figure::CapacityPerS => "capacity",
        }
    }

    /// Latency and cost: less is better; throughput and capacity: more.
    pub fn lower_is_better(self) -> bool {
        matches!(self, Figure::P50Ms | Figure::P99Ms | Figure::CostPer1mUsd)
    }

    /// The quantile a latency figure is.
    fn quantile(self) -> Option<f64> {
        match self {
            Figure::P50Ms => Some(0.5),
            Figure::P99Ms => Some(0.99),
            _ => None,
        }
    }
}

/// One figure of one target, as the difference needs it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measure {
    pub value: f64,
    /// Its 95 % interval from the phase's own samples, where it has one.
    pub within: Option<Interval>,
    /// Requests behind `within` (what `-n` would change).
    pub n: u64,
    /// (repetition, value) of each repetition, where there were any.
    pub reps: Vec<(u32, f64)>,
}

/// Where a difference's interval came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Student's t over the repetitions, paired.
    Repetitions,
    /// The two figures' own intervals combined.
    Samples,
    /// Nothing to tell it by (a single run's throughput without its latencies' spread).
    None,
}

/// B against A in one figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    /// b / a − 1.
    pub relative: f64,
    /// Its 95 % interval: `[lo, hi]`, lo −1 where nothing bounds it below, hi null where
    /// nothing bounds it above.
    pub ci95: Option<Interval>,
    pub basis: Basis,
    /// Repetitions paired (basis `repetitions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repetitions: Option<u32>,
    /// The interval leaves out zero.
    pub significant: bool,
    /// Where not significant: what would tell a difference of this size, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needed: Option<String>,
}

/// The repetitions needed from three on; past this a difference is as good as none.
const MAX_REPEAT: u32 = 1000;

/// B against A: from the paired repetitions when there are three or more, else from the
/// figures' own intervals.
pub fn judge(figure: Figure, a: &Measure, b: &Measure) -> Judged {
    let paired = paired_logs(a, b);
    if paired.len() >= 3 {
        return across_repetitions(&paired);
    }
    if let (Some(wa), Some(wb)) = (a.within, b.within)
        && a.value > 0.0
        && b.value > 0.0
    {
        return from_samples(figure, a, b, wa, wb);
    }
    Judged {
        relative: ratio(a.value, b.value) - 1.0,
        ci95: None,
        basis: Basis::None,
        repetitions: None,
        significant: false,
        needed: Some("--repeat 3 or more: one run gives this figure no interval".into()),
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if a > 0.0 { b / a } else { f64::NAN }
}

/// ln(b/a) of each repetition both measured, in repetition order.
fn paired_logs(a: &Measure, b: &Measure) -> Vec<f64> {
    a.reps
        .iter()
        .filter_map(|&(k, x)| {
            let &(_, y) = b.reps.iter().find(|r| r.0 == k)?;
            (x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite()).then(|| (y / x).ln())
        })
        .collect()
}

fn across_repetitions(logs: &[f64]) -> Judged {
    let k = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / k;
    let sd = (logs.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt();
    let half = t_quantile(0.975, k - 1.0) * sd / k.sqrt();
    let (lo, hi) = (mean - half, mean + half);
    let significant = lo > 0.0 || hi < 0.0;
    let needed = (!significant).then(|| repetitions_needed(mean, sd, logs.len() as u32));
    Judged {
        relative: mean.exp_m1(),
        ci95: Some(Interval(lo.exp_m1(), Some(hi.exp_m1()))),
        basis: Basis::Repetitions,
        repetitions: Some(logs.len() as u32),
        significant,
        needed,
    }
}

/// The fewest repetitions whose interval, at this spread, would leave out zero for a
/// difference this size.
fn repetitions_needed(mean: f64, sd: f64, had: u32) -> String {
    let size = magnitude(mean.exp_m1());
    let found = (had + 1..=MAX_REPEAT).find(|&k| {
        let k = f64::from(k);
        t_quantile(0.975, k - 1.0) * sd / k.sqrt() < mean.abs()
    });
    match found {
        Some(k) => format!("--repeat {k} would tell a difference of {size}"),
        None => format!(
            "a difference of {size} is within the noise between repetitions ({} each): \
             more than {MAX_REPEAT} would be needed",
            magnitude(sd.exp_m1())
        ),
    }
}

/// Two independent errors on the log scale: each side of the difference's interval is the
/// root of the squares of the sides of the two intervals that move it that way.
fn from_samples(figure: Figure, a: &Measure, b: &Measure, wa: Interval, wb: Interval) -> Judged {
    let d = (b.value / a.value).ln();
    let below = |v: f64, lo: f64| {
        if lo > 0.0 {
            (v / lo).ln().max(0.0)
        } else {
            f64::INFINITY
        }
    };
    let above = |v: f64, hi: Option<f64>| hi.map_or(f64::INFINITY, |h| (h / v).ln().max(0.0));
    let down = below(b.value, wb.0).hypot(above(a.value, wa.1));
    let up = above(b.value, wb.1).hypot(below(a.value, wa.0));
    let (lo, hi) = (d - down, d + up);
    let significant = lo > 0.0 || hi < 0.0;
    let needed = (!significant).then(|| {
        let toward_zero = if d >= 0.0 { down } else { up };
        samples_needed(figure, d, toward_zero, a.n.min(b.n))
    });
    Judged {
        relative: d.exp_m1(),
        ci95: Some(Interval(lo.exp_m1(), hi.is_finite().then(|| hi.exp_m1()))),
        basis: Basis::Samples,
        repetitions: None,
        significant,
        needed,
    }
}

/// An interval from samples narrows as 1/√n: the requests at which one of this width would
/// leave out zero for a difference of this size.
fn samples_needed(figure: Figure, d: f64, half: f64, n: u64) -> String {
    let size = magnitude(d.exp_m1());
    let drift = "; --repeat 3 or more measures the drift between runs too";
    if d == 0.0 {
        return format!("no difference was measured{drift}");
    }
    if half.is_finite() {
        let want = (n as f64 * (half / d.abs()).powi(2)).ceil() as u64;
        return format!(
            "about -n {} would tell a difference of {size}{drift}",
            round2(want)
        );
    }
    // A percentile no sample bounds from above: first enough requests that one does.
    let q = figure.quantile().unwrap_or(0.5);
    let bound = (1..=40)
        .map(|i| 1u64 << i)
        .find(|&m| crate::interval::ranks(m, q).1.is_some())
        .unwrap_or(u64::MAX);
    format!(
        "{} at n {n} has no upper bound: -n {} at least{drift}",
        figure.name(),
        round2(bound.max(n * 2))
    )
}

/// 2 significant figures, rounded up: 2,371 → 2,400.
fn round2(x: u64) -> u64 {
    let mut scale = 1;
    while x / scale >= 100 {
        scale *= 10;
    }
    x.div_ceil(scale) * scale
}

/// The size of a relative difference, either way: "3.2 %".
fn magnitude(x: f64) -> String {
    percent(x.abs()).trim_start_matches('+').to_string()
}

/// "+15.0 %", "−3.2 %", "+528 %".
pub fn percent(x: f64) -> String {
    format!("{} %", signed(x))
}

/// A share as a signed percentage figure: one decimal under 100, none past it.
fn signed(x: f64) -> String {
    let v = x * 100.0;
    let digits = usize::from(v.abs() < 100.0);
    format!("{v:+.digits$}").replacen('-', "−", 1)
}

/// "[+9.2, +21.1] %", "[−100, +4.0] %" (nothing bounds it below), "[+2.0, …) %".
pub fn interval_percent(ci: Interval) -> String {
    match ci.1 {
        Some(hi) => format!("[{}, {}] %", signed(ci.0), signed(hi)),
        None => format!("[{}, …) %", signed(ci.0)),
    }
}

/// The quantile p of Student's t with `df` degrees of freedom, from `statrs`; df too large
/// for its incomplete beta (a million and more: the tables' normal) is the normal's.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal, StudentsT};
    if df >= 1e6 || !df.is_finite() {
        return Normal::standard().inverse_cdf(p);
    }
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| t.inverse_cdf(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_are_the_tables() {
        for (df, want) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (4.0, 2.776),
            (9.0, 2.262),
            (30.0, 2.042),
            (1e9, 1.960),
        ] {
            let got = t_quantile(0.975, df);
            assert!((got - want).abs() < 5e-4, "df {df}: {got}");
        }
        assert!((t_quantile(0.995, 4.0) - 4.604).abs() < 5e-4);
        assert!((t_quantile(0.025, 4.0) + 2.776).abs() < 5e-4);
    }

    fn reps(values: &[f64]) -> Measure {
        Measure {
            value: values.iter().sum::<f64>() / values.len() as f64,
            within: None,
            n: 1000,
            reps: values
                .iter()
                .enumerate()
                .map(|(i, &v)| (i as u32 + 1, v))
                .collect(),
        }
    }

    #[test]
    fn paired_repetitions_cancel_the_drift_both_targets_share() {
        // The machine's speed drifts by a third across the repetitions; B is always 15 %
        // slower than A within a repetition, give or take 1 %.
        let drift = [1.0, 1.3, 0.9, 1.2, 1.1];
        let noise = [0.01, -0.01, 0.005, -0.004, 0.0];
        let a: Vec<f64> = drift.iter().map(|d| 20.0 * d).collect();
        let b: Vec<f64> = drift
            .iter()
            .zip(noise)
            .map(|(d, e)| 23.0 * d * (1.0 + e))
            .collect();
        let j = judge(Figure::P50Ms, &reps(&a), &reps(&b));
        assert_eq!((j.basis, j.repetitions), (Basis::Repetitions, Some(5)));
        assert!(j.significant, "{j:?}");
        let Interval(lo, hi) = j.ci95.unwrap();
        assert!(lo < 0.15 && 0.15 < hi.unwrap(), "{j:?}");
        assert!(hi.unwrap() - lo < 0.04, "{j:?}");
        // The same figures unpaired would not tell it: the drift is larger than 15 %.
        let same = judge(Figure::P50Ms, &reps(&a), &reps(&a));
        assert!(!same.significant && same.relative == 0.0);
    }

    #[test]
    fn a_difference_inside_the_noise_says_what_would_tell_it() {
        let a = [20.0, 21.0, 19.5, 20.5, 20.0];
        let b = [20.4, 20.6, 20.1, 20.9, 19.7];
        let j = judge(Figure::P99Ms, &reps(&a), &reps(&b));
        assert!(!j.significant, "{j:?}");
        let needed = j.needed.unwrap();
        assert!(needed.starts_with("--repeat "), "{needed}");
        let k: u32 = needed["--repeat ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(k > 5, "{needed}");
    }

    #[test]
    fn without_repetitions_the_figures_own_intervals_combine() {
        let m = |v: f64, lo: f64, hi: Option<f64>, n| Measure {
            value: v,
            within: Some(Interval(lo, hi)),
            n,
            reps: vec![],
        };
        // 26.4 [26.3, 26.5] against 50.4 [50.2, 50.6]: +90.9 %, sure.
        let j = judge(
            Figure::P50Ms,
            &m(26.4, 26.3, Some(26.5), 100),
            &m(50.4, 50.2, Some(50.6), 100),
        );
        assert_eq!(j.basis, Basis::Samples);
        assert!(j.significant && (j.relative - (50.4 / 26.4 - 1.0)).abs() < 1e-12);
        // Overlapping: 2 % apart with ±5 % each side; four times the requests halve the
        // widths, so about (5√2 / 2)² ≈ 12.5 times as many tell it.
        let j = judge(
            Figure::P50Ms,
            &m(20.0, 19.0, Some(21.0), 1000),
            &m(20.4, 19.4, Some(21.4), 1000),
        );
        assert!(!j.significant);
        let needed = j.needed.unwrap();
        assert!(needed.starts_with("about -n 1"), "{needed}");
        // A p99 no sample bounds from above: B may be any amount slower.
        let j = judge(
            Figure::P99Ms,
            &m(26.7, 26.6, None, 100),
            &m(26.8, 26.6, None, 100),
        );
        let Interval(lo, hi) = j.ci95.unwrap();
        assert_eq!((lo, hi), (-1.0, None));
        assert!(
            j.needed
                .unwrap()
                .starts_with("p99 at n 100 has no upper bound: -n ")
        );
        // One run's throughput with nothing to tell it by.
        let bare = Measure {
            value: 10.0,
            ..Measure::default()
        };
        let j = judge(
            Figure::ReqPerS,
            &bare,
            &Measure {
                value: 12.0,
                ..bare.clone()
            },
        );
        assert_eq!(j.basis, Basis::None);
        assert!(!j.significant && (j.relative - 0.2).abs() < 1e-12);
    }

    #[test]
    fn percents_read_as_signed_figures() {
        assert_eq!(percent(0.15), "+15.0 %");
        assert_eq!(percent(-0.032), "−3.2 %");
        assert_eq!(
            interval_percent(Interval(0.092, Some(0.211))),
            "[+9.2, +21.1] %"
        );
        assert_eq!(
            interval_percent(Interval(-1.0, Some(0.04))),
            "[−100, +4.0] %"
        );
        assert_eq!(interval_percent(Interval(0.02, None)), "[+2.0, …) %");
        assert_eq!(round2(2371), 2400);
        assert_eq!(round2(99), 99);
    }
}
