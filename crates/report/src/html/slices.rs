//! A phase's time slices (`--slice`) as charts: latency against the offered rate (a ramp's
//! knee curve in one run, the SLO's bounds and where each objective broke marked), and
//! the slices over time (offered against achieved, p50 and p99).

use super::chart::{Axis, Chart, Level, Mark, Scale, Series, Style};
use super::figures::{line, percentile_curve};
use encbench_core::choice::Choice;
use encbench_core::export::Export;
use encbench_core::percentile::Percentile;
use encbench_core::results::PhaseResult;
use encbench_core::slices::SliceResult;
use encbench_core::slo::Objective;
use encbench_core::stats::LatencySummary;
use std::str::FromStr;

/// Two charts per phase with slices, in phase order, for every export.
pub(super) fn charts(files: &[(String, Export)]) -> Vec<Chart> {
    let several = files.len() > 1;
    let mut out = Vec::new();
    for (label, e) in files {
        for (i, p) in e.phases.iter().enumerate() {
            if p.slices.len() < 2 {
                continue;
            }
            let name = match (several, &p.target) {
                (true, Some(t)) => format!("{label} · {t} · phase {}", i + 1),
                (true, None) => format!("{label} · phase {}", i + 1),
                (false, Some(t)) => format!("{t} · phase {}", i + 1),
                (false, None) => format!("phase {}", i + 1),
            };
            out.push(knee(&name, p, bounds(e)));
            out.push(over_time(&name, p));
        }
    }
    out
}

/// The SLO's latency bounds, as levels.
fn bounds(e: &Export) -> Vec<Level> {
    e.config["slo"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| Objective::from_str(o.as_str()?).ok())
        .filter_map(|o| match o {
            Objective::Latency { bound_ms, .. } => Some(Level {
                y: bound_ms,
                label: format!("SLO {o}"),
            }),
            Objective::Errors { .. } => None,
        })
        .collect()
}

/// A percentile of each slice that had ok requests, at `x`, with its interval as a bar.
fn percentile(
    slices: &[SliceResult],
    at: Percentile,
    x: impl Fn(&SliceResult) -> f64,
    label: &str,
    colour: usize,
    style: Style,
) -> Series {
    let at_x: Vec<(f64, &LatencySummary)> = (slices.iter())
        .filter(|s| s.ok > 0)
        .map(|s| (x(s), &s.latency_ms))
        .collect();
    percentile_curve(label.into(), colour, style, at, &at_x)
}

/// Past the knee a queue grows without bound and seconds of latency would flatten the
/// curve below it: the knee chart stops at the first slice whose p99 is over this many
/// times the highest SLO bound.
const PAST_BOUND: f64 = 4.0;

fn knee(name: &str, p: &PhaseResult, levels: Vec<Level>) -> Chart {
    let x = |s: &SliceResult| s.offered_per_s;
    let top = levels.iter().map(|l| l.y).fold(0.0, f64::max) * PAST_BOUND;
    let shown: Vec<SliceResult> = match p
        .slices
        .iter()
        .position(|s| top > 0.0 && s.latency_ms.p99 > top)
    {
        Some(k) => p.slices[..=k].to_vec(),
        None => p.slices.clone(),
    };
    let cut = if shown.len() < p.slices.len() {
        format!(
            " It stops at the first slice whose p99 was over {PAST_BOUND}× the SLO's bound; the slices table has the rest."
        )
    } else {
        String::new()
    };
    let marks = p
        .slo_breaks
        .iter()
        .map(|b| match b.crossed_per_s {
            Some(c) => Mark {
                x: c,
                label: format!("{} crossed at {c:.0} req/s", b.objective),
            },
            None => Mark {
                x: b.offered_per_s,
                label: format!("{} broke at {:.0} req/s", b.objective, b.offered_per_s),
            },
        })
        .collect();
    let how = p.ramp.map_or_else(
        || "each slice's offered rate".to_string(),
        |r| format!("a {} ramp's slices", r.shape.name()),
    );
    Chart {
        kind: "knee",
        title: format!("Latency against offered rate — {name}"),
        caption: format!(
            "p50 (solid) and p99 (dashed) of each slice against its offered rate ({how}), with their 95 % intervals; dashed levels are the SLO's bounds, vertical lines where each objective broke and stayed broken.{cut}"
        ),
        x: Axis::new("offered rate (requests per second)", Scale::Linear),
        y: Axis::new("scheduled latency (ms)", Scale::Linear),
        y2: None,
        series: vec![
            percentile(&shown, Percentile::P50, x, "p50", 0, Style::Line),
            percentile(&shown, Percentile::P99, x, "p99", 1, Style::Dashed),
        ],
        marks,
        levels,
        listed: p
            .slo_breaks
            .iter()
            .map(encbench_core::slices::SloBreak::describe)
            .collect(),
    }
}

fn over_time(name: &str, p: &PhaseResult) -> Chart {
    let mid = |s: &SliceResult| f64::midpoint(s.start_s, s.end_s);
    let rate = |label: &str, colour, style, get: fn(&SliceResult) -> f64| Series {
        right: true,
        ..line(
            label.into(),
            colour,
            style,
            p.slices.iter().map(|s| (mid(s), get(s))).collect(),
        )
    };
    Chart {
        kind: "slices",
        title: format!("Slices over time — {name}"),
        caption: "Each slice's p50 (solid) and p99 (dashed) latency on the left, by the requests due in it; on the right its offered rate (dots: requests due per second) and achieved rate (crosses: ok completions per second). Achieved under offered is a server falling behind.".into(),
        x: Axis::new("time since the phase's first measured request (s)", Scale::Linear),
        y: Axis::new("scheduled latency (ms)", Scale::Linear),
        y2: Some(Axis::new("requests per second", Scale::Linear)),
        series: vec![
            percentile(&p.slices, Percentile::P50, mid, "p50", 0, Style::Line),
            percentile(&p.slices, Percentile::P99, mid, "p99", 1, Style::Dashed),
            rate("offered/s", 2, Style::Dots, |s| s.offered_per_s),
            rate("achieved/s", 3, Style::Crosses, |s| s.achieved_per_s),
        ],
        marks: vec![],
        levels: vec![],
        listed: vec![],
    }
}
