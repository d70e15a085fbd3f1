//! Where each SLO objective first broke in a phase's slices, judged on spans that hold
//! enough requests for the objective: slices too small alone are pooled with their
//! neighbours, and the slice table says so.

use super::{Counts, SliceResult, judge};
use crate::results::decode_histogram;
use crate::slo::{Objective, Slo};
use crate::stats::{LatencySummary, round3};
use serde::{Deserialize, Serialize};

/// Where one objective of the SLO first broke in a phase's slices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloBreak {
    /// The objective as `--slo` reads it ("p99=100ms").
    pub objective: String,
    /// 1-based, as tables number slices: the first slice of the span that broke it.
    pub slice: usize,
    /// Slices too small to judge alone are pooled with their neighbours until they hold
    /// enough requests: the last slice of the pooled span that broke (absent when it is one
    /// slice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_slice: Option<usize>,
    pub start_s: f64,
    /// The span's offered rate: on a ramp, the rate at which the objective broke.
    pub offered_per_s: f64,
    /// What the span measured ("p99 132.1 ms > 100 ms").
    pub measured: String,
    /// The offered rate of the judged span before it, which met the objective (`None`
    /// when the first judged span broke it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_per_s: Option<f64>,
    /// A latency objective: where the percentile crossed its bound, interpolated linearly
    /// between the span that held and the one that broke (a slice spans a range of a
    /// ramp's rates; this is the rate at the crossing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossed_per_s: Option<f64>,
}

impl SloBreak {
    /// "p99=100ms crossed at 190 req/s: held at 188 req/s, broke at 215 req/s in slice 16
    /// (15 s in: p99 184.3 ms > 100 ms)".
    pub fn describe(&self) -> String {
        let slices = match self.to_slice {
            Some(last) => format!("slices {}–{last}, pooled", self.slice),
            None => format!("slice {}", self.slice),
        };
        let broke = format!(
            "broke at {:.0} req/s in {slices} ({:.0} s in: {})",
            self.offered_per_s, self.start_s, self.measured
        );
        match (self.crossed_per_s, self.held_per_s) {
            (Some(c), Some(h)) => format!(
                "{} crossed at {c:.0} req/s: held at {h:.0} req/s, {broke}",
                self.objective
            ),
            (None, Some(h)) => format!("{} held at {h:.0} req/s, {broke}", self.objective),
            _ => format!("{} {broke}", self.objective),
        }
    }
}

/// Requests due a span must hold for `o` to be judged on it: 100 for p99 (of ten
/// requests, p99 is their maximum), one for an error share.
pub fn requests_to_judge(o: &Objective) -> u64 {
    match o {
        Objective::Latency { percentile, .. } => {
            (1.0 / (1.0 - percentile.quantile())).round() as u64
        }
        Objective::Errors { .. } => 1,
    }
}

/// For each objective of `slo`, where it first broke: the first span that missed it and
/// whose next judged span missed it too (or that is the last). One span's miss between two
/// that met is a blip of the machine or the network, shown in the slice table but not
/// called a break. A latency objective is judged only on spans with enough requests due to
/// hold its percentile (`requests_to_judge`): a slice with fewer is pooled with the slices
/// after it until they hold that many, so slices too small to judge alone still say where
/// the objective broke.
pub fn first_breaks(slices: &[SliceResult], slo: &Slo) -> Vec<SloBreak> {
    slo.objectives
        .iter()
        .filter_map(|o| first_break(slices, o))
        .collect()
}

/// Consecutive slices pooled into one span, judged as one slice would be.
struct Span {
    /// 0-based, inclusive.
    first: usize,
    last: usize,
    start_s: f64,
    offered_per_s: f64,
    latency_ms: LatencySummary,
    missed: Option<String>,
}

fn due(s: &SliceResult) -> u64 {
    s.ok + s.errors + s.unsent
}

/// The slices in order as spans of at least `need` requests due, each slice once: slices
/// that hold `need` alone stand alone, smaller ones join the slices after them, and a small
/// remainder at the end joins the span before it.
fn spans(slices: &[SliceResult], need: u64) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let (mut first, mut held) = (0, 0);
    for (i, s) in slices.iter().enumerate() {
        // A span starts at a slice with requests due: an empty one is no part of a span.
        if held == 0 {
            first = i;
        }
        held += due(s);
        if held >= need {
            out.push((first, i));
            (first, held) = (i + 1, 0);
        }
    }
    // Too few left for a span of their own: the last span takes them.
    if held > 0
        && let Some(last) = out.last_mut()
    {
        last.1 = slices.len() - 1;
    }
    out
}

fn judged_span(slices: &[SliceResult], (first, last): (usize, usize), one: &Slo) -> Option<Span> {
    let part = &slices[first..=last];
    let mut latency = decode_histogram(&part[0].histogram_hdr_b64).ok()?;
    for s in &part[1..] {
        latency
            .add(decode_histogram(&s.histogram_hdr_b64).ok()?)
            .ok()?;
    }
    let sum = |f: fn(&SliceResult) -> u64| part.iter().map(f).sum::<u64>();
    let (start, end) = (part[0].start_s, part[part.len() - 1].end_s);
    let per_s = |n: u64| {
        if end > start {
            n as f64 / (end - start)
        } else {
            0.0
        }
    };
    let c = Counts {
        latency,
        ok: sum(|s| s.ok),
        errors: sum(|s| s.errors),
        unsent: sum(|s| s.unsent),
        done: sum(|s| s.done),
    };
    let missed = judge(one, &c, per_s(c.done));
    Some(Span {
        first,
        last,
        start_s: start,
        offered_per_s: round3(per_s(c.ok + c.errors + c.unsent)),
        latency_ms: LatencySummary::of(&c.latency),
        missed,
    })
}

fn first_break(slices: &[SliceResult], o: &Objective) -> Option<SloBreak> {
    let one = Slo {
        objectives: vec![*o],
    };
    let judged: Vec<Span> = spans(slices, requests_to_judge(o))
        .into_iter()
        .filter_map(|span| judged_span(slices, span, &one))
        .collect();
    let k = (0..judged.len()).find(|&k| {
        judged[k].missed.is_some() && judged.get(k + 1).is_none_or(|next| next.missed.is_some())
    })?;
    let s = &judged[k];
    // The judged span before a break met the objective (else the break was there).
    let held = k.checked_sub(1).map(|j| &judged[j]);
    Some(SloBreak {
        objective: objective_name(o),
        slice: s.first + 1,
        to_slice: (s.last > s.first).then_some(s.last + 1),
        start_s: s.start_s,
        offered_per_s: s.offered_per_s,
        measured: s.missed.clone().unwrap_or_default(),
        held_per_s: held.map(|h| h.offered_per_s),
        crossed_per_s: held.and_then(|h| crossing(o, h, s)),
    })
}

/// Where a latency objective's percentile crossed its bound between the span that held
/// (`a`) and the one that broke (`b`), linearly in the offered rate.
fn crossing(o: &Objective, a: &Span, b: &Span) -> Option<f64> {
    let Objective::Latency {
        percentile,
        bound_ms,
    } = *o
    else {
        return None;
    };
    let (va, vb) = (percentile.of(&a.latency_ms), percentile.of(&b.latency_ms));
    let (ra, rb) = (a.offered_per_s, b.offered_per_s);
    if !va.is_finite() || !vb.is_finite() || vb <= va {
        return None;
    }
    let f = ((bound_ms - va) / (vb - va)).clamp(0.0, 1.0);
    Some(round3(ra + f * (rb - ra)))
}

/// When some slices hold too few requests to judge a latency objective alone, what the
/// slice table should say: how many they hold, how many it needs, and a `--slice` that
/// would give the middle slice that many ("slices of 40 requests: p99 needs 100: use
/// --slice 5s"). `None` when every slice can be judged, or there is no latency objective.
pub fn too_small(slices: &[SliceResult], slo: &Slo, width_s: f64) -> Option<String> {
    let (percentile, need) = (slo.objectives.iter())
        .filter_map(|o| match o {
            Objective::Latency { percentile, .. } => {
                Some((percentile.name(), requests_to_judge(o)))
            }
            Objective::Errors { .. } => None,
        })
        .max_by_key(|&(_, n)| n)?;
    let mut held: Vec<u64> = slices.iter().map(due).filter(|&n| n > 0).collect();
    held.sort_unstable();
    let (&least, &most) = (held.first()?, held.last()?);
    if least >= need {
        return None;
    }
    let middle = held[held.len() / 2].max(1);
    let counts = if least == most {
        format!("{least}")
    } else {
        format!("{least} to {most}")
    };
    let advice = if middle >= need {
        String::new()
    } else {
        format!(
            ": use --slice {}",
            nice_duration(width_s * need as f64 / middle as f64)
        )
    };
    Some(format!(
        "slices of {counts} requests: {percentile} needs {need}{advice}; where they hold fewer, neighbouring slices are pooled until they hold {need} to find where it broke"
    ))
}

/// A duration at least `s` seconds long, rounded up to 1, 2 or 5 of its power of ten, as a
/// `--slice` value (`500ms`, `5s`).
fn nice_duration(s: f64) -> String {
    let ms = (s * 1000.0).max(1.0);
    let power = 10f64.powf(ms.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|k| k * power)
        .find(|&v| v >= ms * (1.0 - 1e-9))
        .unwrap_or(10.0 * power);
    if step >= 1000.0 {
        format!("{}s", step / 1000.0)
    } else {
        format!("{step}ms")
    }
}

fn objective_name(o: &Objective) -> String {
    o.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slices::SliceRecorder;
    use std::time::{Duration, Instant};

    fn slo(s: &str) -> Slo {
        Slo {
            objectives: vec![s.parse().expect("a valid objective")],
        }
    }

    #[test]
    fn a_break_is_a_miss_that_lasts_and_its_crossing_is_interpolated() {
        let t0 = Instant::now();
        let mut r = SliceRecorder::new(Duration::from_secs(1));
        r.start(t0);
        // Slice k: 100 + 10k requests, p99 per slice: 50, 150 (a blip), 60, 80, 120, 300 ms.
        for (k, p99_ms) in [50u64, 150, 60, 80, 120, 300].into_iter().enumerate() {
            let n = 100 + 10 * k as u64;
            for j in 0..n {
                let at = t0 + Duration::from_secs(k as u64) + Duration::from_millis(j);
                let ms = if j + 2 >= n { p99_ms } else { 10 };
                r.record(at, at, Some(ms * 1000));
            }
        }
        let s = r.results(Duration::from_secs(6), &slo("p99=100ms"));
        assert_eq!(s.len(), 6);
        assert!(s[1].slo_missed.is_some(), "the blip shows in its slice");
        let b = first_breaks(&s, &slo("p99=100ms"));
        assert_eq!(b.len(), 1);
        assert_eq!((b[0].slice, b[0].held_per_s), (5, Some(130.0)));
        // p99 80 at 130/s, 120 at 140/s: 100 ms is crossed half way.
        let c = b[0].crossed_per_s.unwrap();
        assert!((c - 135.0).abs() < 1.0, "{c}");
        assert!(
            b[0].describe().contains("crossed at 135 req/s"),
            "{}",
            b[0].describe()
        );
    }

    #[test]
    fn slices_too_small_to_judge_are_pooled_to_find_the_break_and_say_so() {
        let t0 = Instant::now();
        let mut r = SliceRecorder::new(Duration::from_secs(1));
        r.start(t0);
        // Ten slices of 40 requests: p99 50 ms in the first five, 300 ms from the sixth on.
        for k in 0..10u64 {
            for j in 0..40u64 {
                let at = t0 + Duration::from_secs(k) + Duration::from_millis(j * 20);
                let ms = if k >= 5 && j >= 30 { 300 } else { 10 };
                let ms = if k < 5 && j == 39 { 50 } else { ms };
                r.record(at, at, Some(ms * 1000));
            }
        }
        let s = r.results(Duration::from_secs(10), &slo("p99=100ms"));
        // Spans of 3 slices (120 requests); the last slice joins the span before it.
        assert_eq!(spans(&s, 100), [(0, 2), (3, 5), (6, 9)]);
        let b = first_breaks(&s, &slo("p99=100ms"));
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!((b[0].slice, b[0].to_slice), (4, Some(6)));
        assert_eq!((b[0].held_per_s, b[0].offered_per_s), (Some(40.0), 40.0));
        assert!(
            b[0].describe().contains("in slices 4–6, pooled"),
            "{}",
            b[0].describe()
        );
        assert_eq!(
            too_small(&s, &slo("p99=100ms"), 2.0).as_deref(),
            Some(
                "slices of 40 requests: p99 needs 100: use --slice 5s; where they hold fewer, neighbouring slices are pooled until they hold 100 to find where it broke"
            )
        );
        // An error share is judged on any slice; slices of 100 need no word.
        assert_eq!(too_small(&s, &slo("errors=1%"), 1.0), None);
        let mut big = SliceRecorder::new(Duration::from_secs(1));
        big.start(t0);
        for j in 0..100 {
            big.record(t0, t0, Some(1000 + j));
        }
        let one = big.results(Duration::from_secs(1), &slo("p99=100ms"));
        assert_eq!(too_small(&one, &slo("p99=100ms"), 1.0), None);
        // Slices that differ: the middle one's count sets the advice.
        assert_eq!(nice_duration(0.25 * 100.0 / 52.0), "500ms");
        assert_eq!(nice_duration(12.0), "20s");
        assert_eq!(nice_duration(1e-6), "1ms");
    }

    #[test]
    fn empty_slices_start_no_span() {
        let t0 = Instant::now();
        let mut r = SliceRecorder::new(Duration::from_secs(1));
        r.start(t0);
        for (k, n) in [(0u64, 60u64), (3, 60), (4, 150)] {
            for j in 0..n {
                let at = t0 + Duration::from_secs(k) + Duration::from_millis(j);
                r.record(at, at, Some(1000));
            }
        }
        let s = r.results(Duration::from_secs(5), &Slo::default());
        assert_eq!(s.len(), 5);
        // Slice 0 waits through the empty 1 and 2 to pool with 3; 4 stands alone.
        assert_eq!(spans(&s, 100), [(0, 3), (4, 4)]);
    }
}
