//! What the HTML report draws, from the exports: which charts exist and what each holds.
//! A chart is drawn only where the exports have its data, and the curves of several exports
//! (or of a comparison's targets) share one chart's axes.
//!
//! The sources of a chart's curves: each export, and in a comparison each of its targets,
//! named by the file's label (only when there are several files) and the target.

use super::chart::{Axis, Bar, Chart, Level, Mark, Scale, Series, Style};
use encbench_core::export::Export;
use encbench_core::interval::{Interval, of_quantile};
use encbench_core::percentile::Percentile;
use encbench_core::plan::PhaseKind;
use encbench_core::results::{PhaseResult, analysis, decode_histogram};
use encbench_core::stats::LatencySummary;
use std::str::FromStr;

/// Batch efficiency under which a batch size is past the knee, when the export does not say
/// (as the tables read it).
const DEFAULT_KNEE: f64 = 0.8;

/// The quantile's nines the spectrum is sampled at: 0.02 apart is a smooth curve in a few
/// hundred points.
const NINES_STEP: f64 = 0.02;

/// One curve's owner: an export, or one target of a comparison.
struct Source<'a> {
    name: String,
    export: &'a Export,
    phases: Vec<&'a PhaseResult>,
}

fn sources(files: &[(String, Export)]) -> Vec<Source<'_>> {
    let several = files.len() > 1;
    let mut out = Vec::new();
    for (label, e) in files {
        let join = |t: &str| {
            if several {
                format!("{label} · {t}")
            } else {
                t.to_string()
            }
        };
        let parts: Option<Vec<&str>> = match (&e.compare, &e.tune) {
            (Some(cmp), _) => Some(cmp.targets.iter().map(|t| t.name.as_str()).collect()),
            (None, Some(t)) => Some(t.configurations.iter().map(|c| c.label.as_str()).collect()),
            (None, None) => None,
        };
        match parts {
            Some(names) => {
                for name in names {
                    out.push(Source {
                        name: join(name),
                        export: e,
                        phases: e
                            .phases
                            .iter()
                            .filter(|p| p.target.as_deref() == Some(name))
                            .collect(),
                    });
                }
            }
            None => out.push(Source {
                name: if several {
                    label.clone()
                } else {
                    String::new()
                },
                export: e,
                phases: e.phases.iter().collect(),
            }),
        }
    }
    out
}

/// Whether the export's curves are its parts' (a comparison's targets, a tune's
/// configurations), each named.
fn split(e: &Export) -> bool {
    e.compare.is_some() || e.tune.is_some()
}

/// "a · b", leaving out an empty part.
fn named(source: &str, what: &str) -> String {
    match (source.is_empty(), what.is_empty()) {
        (true, _) => what.to_string(),
        (false, true) => source.to_string(),
        (false, false) => format!("{source} · {what}"),
    }
}

/// Every chart the exports have data for, in reading order.
pub fn all(files: &[(String, Export)]) -> Vec<Chart> {
    let sources = sources(files);
    let mut out = Vec::new();
    out.extend(batch(&sources));
    out.extend(concurrency(&sources));
    out.extend(capacity(&sources));
    out.extend(tune(files));
    out.extend(spectra(&sources));
    out.extend(super::slices::charts(files));
    out.extend(timelines(files));
    out
}

/// A phase's distinguishing setting within its group.
fn phase_tag(p: &PhaseResult, nth: usize) -> String {
    match p.kind {
        PhaseKind::Batch => format!("b={}", p.batch_size),
        PhaseKind::Concurrency => format!("c={}", p.concurrency),
        PhaseKind::Live => format!("segment {}", nth + 1),
        PhaseKind::Capacity => format!("{:.0}/s", p.request_rate.unwrap_or(0.0)),
    }
}

/// A spectrum's points and its 95 % band.
type Spectrum = (Vec<(f64, f64)>, Vec<(f64, f64, f64)>);

/// Quantile → milliseconds from an exported histogram, from the least value out to the
/// quantile the sample size supports (one in n: 99.9 % needs a thousand), and the band of
/// each point's 95 % interval as far as the requests bound it from above.
fn spectrum(b64: &str) -> Option<Spectrum> {
    let h = decode_histogram(b64).ok()?;
    if h.is_empty() {
        return None;
    }
    let top = (h.len() as f64).log10().clamp(1.0, 6.0);
    let steps = (top / NINES_STEP).ceil() as usize;
    let nines: Vec<f64> = (0..=steps)
        .map(|i| (i as f64 * NINES_STEP).min(top))
        .collect();
    let quantile = |x: f64| 1.0 - 10f64.powf(-x);
    let points = nines
        .iter()
        .map(|&x| (x, h.value_at_quantile(quantile(x)) as f64 / 1000.0))
        .collect();
    let band = nines
        .iter()
        .map_while(|&x| match of_quantile(&h, quantile(x))? {
            Interval(lo, Some(hi)) => Some((x, lo, hi)),
            Interval(_, None) => None,
        })
        .collect();
    Some((points, band))
}

/// The percentile spectrum of every phase, a chart per kind of phase (in a comparison, per
/// setting, its targets side by side): scheduled latency solid, service time dashed in the
/// same colour, so coordinated omission shows as the gap between the two. Capacity probes
/// are left to the capacity chart.
fn spectra(sources: &[Source<'_>]) -> Vec<Chart> {
    let mut groups: Vec<(String, Vec<Series>)> = Vec::new();
    for s in sources {
        let compare = split(s.export);
        let mut seen_live = 0;
        for p in &s.phases {
            if p.kind == PhaseKind::Capacity {
                continue;
            }
            let nth = if p.kind == PhaseKind::Live {
                seen_live += 1;
                seen_live - 1
            } else {
                0
            };
            let (key, what) = if compare {
                let key = match p.kind {
                    PhaseKind::Concurrency => format!("concurrency {}", p.concurrency),
                    _ => format!("batch {}", p.batch_size),
                };
                (key, String::new())
            } else {
                (format!("{} phases", p.kind.name()), phase_tag(p, nth))
            };
            let Some((sched, band)) = spectrum(&p.histogram_hdr_b64) else {
                continue;
            };
            let at = match groups.iter().position(|g| g.0 == key) {
                Some(i) => i,
                None => {
                    groups.push((key, Vec::new()));
                    groups.len() - 1
                }
            };
            let series = &mut groups[at].1;
            let colour = series.len() / 2;
            let label = named(&s.name, &what);
            series.push(Series {
                label: named(&label, "scheduled"),
                points: sched,
                colour,
                style: Style::Line,
                right: false,
                bars: vec![],
                band,
            });
            // The service curve's band is left out: two in one colour would hide the gap
            // between the curves the chart is drawn for.
            if let Some((service, _)) = p.service_hdr_b64.as_deref().and_then(spectrum) {
                series.push(Series {
                    label: named(&label, "service"),
                    points: service,
                    colour,
                    style: Style::Dashed,
                    right: false,
                    bars: vec![],
                    band: vec![],
                });
            }
        }
    }
    groups
        .into_iter()
        .map(|(key, series)| Chart {
            kind: "spectrum",
            title: format!("Latency percentile spectrum — {key}"),
            caption: "Solid: scheduled latency, from when each request was due; dashed: service time, from when it was sent. The gap between them is time spent waiting to be sent, which a tool that ignores coordinated omission would not show. Shaded: each scheduled percentile's 95 % interval from the order statistics, ending where too few requests bound it from above.".into(),
            x: Axis::new("percentile", Scale::Nines),
            y: Axis::new("latency (ms)", Scale::Linear),
            y2: None,
            series,
            marks: vec![],
            levels: vec![],
            listed: vec![],
        })
        .collect()
}

/// Each source's latest sweep of `kind` (its last run of consecutive phases of that kind),
/// when it measured at least two settings.
fn sweeps<'a>(
    sources: &'a [Source<'a>],
    kind: PhaseKind,
) -> Vec<(&'a Source<'a>, Vec<&'a PhaseResult>)> {
    sources
        .iter()
        .filter_map(|s| {
            let mut rows: Vec<&PhaseResult> = Vec::new();
            let mut previous = None;
            for p in &s.phases {
                if p.kind == kind {
                    if previous != Some(kind) {
                        rows.clear();
                    }
                    rows.push(p);
                }
                previous = Some(p.kind);
            }
            (rows.len() >= 2).then_some((s, rows))
        })
        .collect()
}

/// One mark per place: sources that mark the same point share one line, named once with
/// the sources after it ("knee at 8: gpu, cpu"); one source alone is not named.
fn shared_marks(found: Vec<(f64, String, &String)>) -> Vec<Mark> {
    let mut out: Vec<(f64, String, Vec<&String>)> = Vec::new();
    for (x, what, source) in found {
        match out.iter_mut().find(|m| m.0 == x && m.1 == what) {
            Some(m) => m.2.push(source),
            None => out.push((x, what, vec![source])),
        }
    }
    out.into_iter()
        .map(|(x, what, sources)| {
            let names: Vec<&str> = sources
                .iter()
                .map(|s| s.as_str())
                .filter(|s| !s.is_empty())
                .collect();
            Mark {
                x,
                label: if names.is_empty() {
                    what
                } else {
                    format!("{what}: {}", names.join(", "))
                },
            }
        })
        .collect()
}

/// A source's p50 (solid) and p99 (dashed) over its sweep, in its colour, each point with
/// its 95 % interval where the export holds one.
fn p50_p99(
    name: &str,
    colour: usize,
    rows: &[&PhaseResult],
    x: impl Fn(&PhaseResult) -> f64,
) -> [Series; 2] {
    let at_x: Vec<(f64, &LatencySummary)> = rows.iter().map(|p| (x(p), &p.latency_ms)).collect();
    let of = |at: Percentile, label: &str, style| {
        percentile_curve(named(name, label), colour, style, at, &at_x)
    };
    [
        of(Percentile::P50, "p50", Style::Line),
        of(Percentile::P99, "p99", Style::Dashed),
    ]
}

/// Percentile `at` of each latency summary at its x, with its 95 % interval as a bar.
pub(super) fn percentile_curve(
    label: String,
    colour: usize,
    style: Style,
    at: Percentile,
    at_x: &[(f64, &LatencySummary)],
) -> Series {
    let points = at_x.iter().map(|&(x, l)| (x, at.of(l))).collect();
    let bars = at_x
        .iter()
        .filter_map(|&(x, l)| {
            let Interval(lo, hi) = l.ci95?.of_percentile(at);
            Some(Bar {
                x,
                y: at.of(l),
                lo,
                hi,
            })
        })
        .collect();
    Series {
        bars,
        ..line(label, colour, style, points)
    }
}

/// What a latency chart's bars are, after its caption: an arrow where any has no upper end.
fn bars_said(caption: &str, series: &[Series]) -> String {
    let bars = series.iter().flat_map(|s| &s.bars);
    match (bars.clone().next(), bars.clone().any(|b| b.hi.is_none())) {
        (None, _) => caption.to_string(),
        (Some(_), false) => {
            format!("{caption} Bars: each percentile's 95 % interval from the order statistics.")
        }
        (Some(_), true) => format!(
            "{caption} Bars: each percentile's 95 % interval from the order statistics; an arrow \
             up from its low end has no upper end: too few requests to bound it."
        ),
    }
}

pub(super) fn line(label: String, colour: usize, style: Style, points: Vec<(f64, f64)>) -> Series {
    Series {
        label,
        points,
        colour,
        style,
        right: false,
        bars: vec![],
        band: vec![],
    }
}

/// Concurrency sweeps: throughput and p50/p99 against the cap, the saturation point marked.
fn concurrency(sources: &[Source<'_>]) -> Vec<Chart> {
    let found = sweeps(sources, PhaseKind::Concurrency);
    if found.is_empty() {
        return vec![];
    }
    let x = |p: &PhaseResult| p.concurrency as f64;
    let mut rate = Vec::new();
    let mut latency = Vec::new();
    let mut marks = Vec::new();
    for (i, (s, rows)) in found.iter().enumerate() {
        rate.push(line(
            named(&s.name, "req/s"),
            i,
            Style::Line,
            rows.iter().map(|p| (x(p), p.req_per_s)).collect(),
        ));
        latency.extend(p50_p99(&s.name, i, rows, x));
        if let Some(k) = analysis::saturation(rows) {
            marks.push((
                x(rows[k]),
                format!("saturated at {}", rows[k].concurrency),
                &s.name,
            ));
        }
    }
    let marks = shared_marks(marks);
    let axis = || Axis::new("concurrency (requests in flight)", Scale::Log2);
    vec![
        Chart {
            kind: "concurrency",
            title: "Concurrency sweep — throughput".into(),
            caption: "Requests per second at each concurrency cap, closed loop; the dashed line marks where one more step bought under 5 % while p99 grew (saturation).".into(),
            x: axis(),
            y: Axis::new("requests per second", Scale::Linear),
            y2: None,
            series: rate,
            marks: marks.clone(),
            levels: vec![],
            listed: vec![],
        },
        Chart {
            kind: "concurrency",
            title: "Concurrency sweep — latency".into(),
            caption: bars_said("p50 solid, p99 dashed, at each concurrency cap.", &latency),
            x: axis(),
            y: Axis::new("scheduled latency (ms)", Scale::Linear),
            y2: None,
            series: latency,
            marks,
            levels: vec![],
            listed: vec![],
        },
    ]
}

/// Batch sweeps: latency, samples/s (with $/1M on the right when priced) and batch
/// efficiency against the batch size, the knee marked.
fn batch(sources: &[Source<'_>]) -> Vec<Chart> {
    let found = sweeps(sources, PhaseKind::Batch);
    if found.is_empty() {
        return vec![];
    }
    let x = |p: &PhaseResult| p.batch_size as f64;
    let (mut latency, mut rate, mut eff) = (Vec::new(), Vec::new(), Vec::new());
    let mut marks = Vec::new();
    let mut levels = Vec::new();
    for (i, (s, rows)) in found.iter().enumerate() {
        latency.extend(p50_p99(&s.name, i, rows, x));
        rate.extend(samples_and_cost(&s.name, i, rows));
        let e: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|p| p.batch_efficiency.map(|v| (x(p), v)))
            .collect();
        if e.is_empty() {
            continue;
        }
        eff.push(line(named(&s.name, "efficiency"), i, Style::Line, e));
        let knee = s.export.config["knee"].as_f64().unwrap_or(DEFAULT_KNEE);
        if levels.is_empty() {
            levels.push(Level {
                y: knee,
                label: format!("knee threshold {knee}"),
            });
        }
        if let Some(k) = analysis::knee(rows, knee) {
            marks.push((
                x(rows[k]),
                format!("knee at {}", rows[k].batch_size),
                &s.name,
            ));
        }
    }
    let marks = shared_marks(marks);
    let axis = || Axis::new("batch size (inputs per request)", Scale::Log2);
    let priced = rate.iter().any(|s| s.right);
    let mut out = vec![
        Chart {
            kind: "batch",
            title: "Batch sweep — latency".into(),
            caption: bars_said(
                "p50 solid, p99 dashed, per request of each batch size; the dashed line marks the knee.",
                &latency,
            ),
            x: axis(),
            y: Axis::new("scheduled latency (ms)", Scale::Linear),
            y2: None,
            series: latency,
            marks: marks.clone(),
            levels: vec![],
            listed: vec![],
        },
        Chart {
            kind: "batch",
            title: if priced {
                "Batch sweep — throughput and cost".into()
            } else {
                "Batch sweep — throughput".into()
            },
            caption: if priced {
                "Samples (inputs) per second, solid, against the left axis; $ per million samples at the instance's price, dashed, against the right.".into()
            } else {
                "Samples (inputs) per second at each batch size.".into()
            },
            x: axis(),
            y: Axis::new("samples per second", Scale::Linear),
            y2: priced.then(|| Axis::new("$ per 1M samples", Scale::Linear)),
            series: rate,
            marks: marks.clone(),
            levels: vec![],
            listed: vec![],
        },
    ];
    if !eff.is_empty() {
        out.push(Chart {
            kind: "batch",
            title: "Batch sweep — efficiency (samples/s per input over batch 1's)".into(),
            caption: "Samples per second over batch size × batch 1's rate: 1.0 is perfect batching. Past the knee (efficiency under the threshold) a larger batch buys too little.".into(),
            x: axis(),
            y: Axis::new("batch efficiency", Scale::Linear),
            y2: None,
            series: eff,
            marks,
            levels,
            listed: vec![],
        });
    }
    out
}

/// A batch sweep's samples/s, and its $/1M on the right axis when it was priced.
fn samples_and_cost(name: &str, i: usize, rows: &[&PhaseResult]) -> Vec<Series> {
    let x = |p: &PhaseResult| p.batch_size as f64;
    let mut out = vec![line(
        named(name, "samples/s"),
        i,
        Style::Line,
        rows.iter().map(|p| (x(p), p.samples_per_s)).collect(),
    )];
    let cost: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|p| p.cost_per_1m_usd.map(|c| (x(p), c)))
        .collect();
    if !cost.is_empty() {
        out.push(Series {
            right: true,
            ..line(named(name, "$ per 1M samples"), i, Style::Dashed, cost)
        });
    }
    out
}

/// Capacity searches: each probe's offered rate against its p99, those that met the SLO
/// apart from those that missed it, the latency objectives as lines and the answer marked.
fn capacity(sources: &[Source<'_>]) -> Vec<Chart> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for s in sources {
        // A comparison's searches are in its export once, named by target.
        if !seen.insert(std::ptr::from_ref(s.export)) && !split(s.export) {
            continue;
        }
        let bounds: Vec<Level> = s.export.config["slo"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o.as_str())
            .filter_map(|o| encbench_core::slo::Objective::from_str(o).ok())
            .filter_map(|o| match o {
                encbench_core::slo::Objective::Latency { bound_ms, .. } => Some(Level {
                    y: bound_ms,
                    label: format!("SLO {o}"),
                }),
                encbench_core::slo::Objective::Errors { .. } => None,
            })
            .collect();
        for c in &s.export.capacity {
            let target = c.target.as_deref().unwrap_or("");
            if split(s.export) && !s.name.ends_with(target) {
                continue;
            }
            let probes = |meets: bool| -> Vec<(f64, f64)> {
                c.probes
                    .iter()
                    .filter(|p| p.bound && p.meets == meets)
                    .map(|p| (p.rate_per_s, p.p99))
                    .collect()
            };
            // Each probe's p99 interval, the probe noise the answer's own interval comes from.
            let bars = |meets: bool| -> Vec<Bar> {
                c.probes
                    .iter()
                    .filter(|p| p.bound && p.meets == meets)
                    .filter_map(|p| {
                        let Interval(lo, hi) = p.p99_ci95?;
                        Some(Bar {
                            x: p.rate_per_s,
                            y: p.p99,
                            lo,
                            hi,
                        })
                    })
                    .collect()
            };
            let mut series = vec![];
            for (meets, label, colour, style) in [
                (true, "probes that met the SLO", 2, Style::Dots),
                (false, "probes that missed it", 1, Style::Crosses),
            ] {
                let points = probes(meets);
                if !points.is_empty() {
                    series.push(Series {
                        bars: bars(meets),
                        ..line(label.into(), colour, style, points)
                    });
                }
            }
            if series.is_empty() {
                continue;
            }
            let sure = c
                .max_rate_ci95_per_s
                .map(|[lo, hi]| format!(" [{lo:.1}, {hi:.1}]"))
                .unwrap_or_default();
            let marks = c
                .max_rate_per_s
                .map(|r| Mark {
                    x: r,
                    label: format!("capacity {r:.1}{sure} req/s"),
                })
                .into_iter()
                .collect();
            out.push(Chart {
                kind: "capacity",
                title: format!(
                    "Capacity search — {}",
                    named(&s.name, &format!("batch {}, {}", c.batch_size, c.slo))
                ),
                caption: format!(
                    "Each probe's offered rate and p99 with its 95 % interval; dots met every objective, crosses missed one; the capacity's interval{} holds the bracket the search stopped in and the probes' noise. {}",
                    if sure.is_empty() { " (none: the search did not converge)".to_string() } else { sure.clone() },
                    c.verdict
                ),
                x: Axis::new("offered rate (requests per second)", Scale::Linear),
                y: Axis::new("p99 scheduled latency (ms)", Scale::Linear),
                y2: None,
                series,
                marks,
                levels: bounds.clone(),
                listed: vec![],
            });
        }
    }
    out
}

/// A tune's configurations: each one's samples/s within the SLO (its best phase's without a
/// search) against its cost per million samples, the Pareto front joined; unpriced, in
/// the order they ran.
fn tune(files: &[(String, Export)]) -> Vec<Chart> {
    let mut out = Vec::new();
    for (label, e) in files {
        let points = crate::tune::points(e);
        if points.is_empty() {
            continue;
        }
        let priced = points.iter().all(|p| p.cost_per_1m_usd.is_some());
        let x = |i: usize, p: &encbench_core::tune::Point| {
            p.cost_per_1m_usd
                .filter(|_| priced)
                .unwrap_or((i + 1) as f64)
        };
        let mut series: Vec<Series> = points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                line(
                    p.label.clone(),
                    i,
                    Style::Dots,
                    vec![(x(i, p), p.samples_per_s)],
                )
            })
            .collect();
        let front = encbench_core::tune::pareto_front(&points);
        if priced && front.len() > 1 {
            let joined = front
                .iter()
                .map(|p| (p.cost_per_1m_usd.unwrap_or(0.0), p.samples_per_s))
                .collect();
            series.push(line("Pareto front".into(), 6, Style::Line, joined));
        }
        let within = crate::tune::slo(e)
            .map(|s| format!(" within {s}"))
            .unwrap_or_default();
        out.push(Chart {
            kind: "tune",
            title: named(
                if files.len() > 1 { label } else { "" },
                &format!("Tune — samples/s{within} and cost per configuration"),
            ),
            caption: if priced {
                format!("Each configuration that ran to the end: samples per second{within} against its $ per million samples there; the line joins those no other beats on both (the Pareto front).")
            } else {
                format!("Each configuration that ran to the end, in the order run: samples per second{within}. No price for each, so no cost axis (give --price-per-hour or --instance-type).")
            },
            x: Axis::new(
                if priced { "$ per 1M samples" } else { "configuration (in the order run)" },
                Scale::Linear,
            ),
            y: Axis::new(format!("samples per second{within}"), Scale::Linear),
            y2: None,
            series,
            marks: vec![],
            levels: vec![],
            listed: vec![],
        });
    }
    out
}

/// A run's timeline: requests per second and p99 for every second, each live change (rate,
/// burstiness, concurrency, pause, sweep) marked by its number in the list under the chart.
fn timelines(files: &[(String, Export)]) -> Vec<Chart> {
    use encbench_core::stats::TimelineEntry;
    let several = files.len() > 1;
    let mut out = Vec::new();
    for (label, e) in files {
        let (mut rate, mut p99, mut marks) = (Vec::new(), Vec::new(), Vec::new());
        let mut p50 = Vec::new();
        let mut listed = Vec::new();
        for t in &e.timeline {
            match t {
                TimelineEntry::Point {
                    t_s,
                    req_per_s,
                    p50_ms,
                    p99_ms,
                    ..
                } => {
                    rate.push((*t_s, *req_per_s));
                    if let Some(v) = p99_ms {
                        p99.push((*t_s, *v));
                    }
                    if let Some(v) = p50_ms {
                        p50.push((*t_s, *v));
                    }
                }
                // A phase's end is the next one's start a millisecond later: marking both
                // would put two numbers on one line.
                TimelineEntry::Event { event, .. } if is_phase_end(event) => {}
                TimelineEntry::Event { t_s, event } => {
                    marks.push(Mark {
                        x: *t_s,
                        label: (marks.len() + 1).to_string(),
                    });
                    listed.push(format!("{t_s:.1} s: {event}"));
                }
            }
        }
        if rate.len() < 2 {
            continue;
        }
        let mut series = vec![line("req/s".into(), 0, Style::Line, rate)];
        if !p99.is_empty() {
            series.push(Series {
                right: true,
                ..line("p99 ms".into(), 1, Style::Dashed, p99)
            });
            series.push(Series {
                right: true,
                ..line("p50 ms".into(), 2, Style::Dashed, p50)
            });
        }
        out.push(Chart {
            kind: "timeline",
            title: if several {
                format!("Timeline — {label}")
            } else {
                "Timeline".into()
            },
            // A second's p99 is read from that second's requests alone, whose histogram the
            // export does not keep: it has no interval, and says so.
            caption: if listed.is_empty() {
                "Requests per second (solid, left) and p50 and p99 (dashed, right) for every second of the run; a second's percentiles are of its own few requests, with no interval (the phases' are in the tables).".into()
            } else {
                "Requests per second (solid, left) and p50 and p99 (dashed, right) for every second of the run, with no interval for a second's percentiles (the phases' are in the tables); numbered lines are the changes listed below.".into()
            },
            x: Axis::new("time since start (s)", Scale::Linear),
            y: Axis::new("requests per second", Scale::Linear),
            y2: Some(Axis::new("p50 and p99 latency (ms)", Scale::Linear)),
            series,
            marks,
            levels: vec![],
            listed,
        });
    }
    out
}

/// "phase 3 end: n 100 p50 …", as the engine logs a phase's end.
fn is_phase_end(event: &str) -> bool {
    event
        .strip_prefix("phase ")
        .and_then(|rest| rest.split_once(' '))
        .is_some_and(|(n, rest)| n.parse::<u32>().is_ok() && rest.starts_with("end:"))
}
