//! The tables of a tune, from its export: each configuration's own run tables (titled with
//! its values), then one row per configuration — its capacity within the SLO (or its best
//! phase), samples/s there, p50/p99, $/1M, how its server started and ended — with the
//! Pareto front of capacity against cost and the advice: the configuration with the most
//! samples/s within the SLO per dollar, named a winner only where the searches tell it
//! apart from the rest (`differences::capacity_verdict_among`).

use super::cell::Cell;
use super::table::Table;
use encbench_core::export::Export;
use encbench_core::export::tune::{TuneConfiguration, TuneSection, TuneStatus};
use encbench_core::interval::Interval;
use encbench_core::results::PhaseResult;
use encbench_core::text::{num, sig3};
use encbench_core::tune::{Point, pareto_front};

/// Log lines shown under the table for a configuration that failed or was cut short.
const TAIL_SHOWN: usize = 10;

/// What the tune was, in a few lines above its tables.
pub fn heading(e: &Export) -> Vec<String> {
    let Some(t) = &e.tune else {
        return vec![];
    };
    let params: Vec<String> = t
        .params
        .iter()
        .map(|p| format!("{} {}", p.name, p.values.join(", ")))
        .collect();
    let mut lines = vec![
        format!(
            "encbench-tui {} — tune of {} ({}{}) — engine {}",
            e.tool_version,
            encbench_core::text::count(t.configurations.len(), "configuration"),
            params.join("; "),
            if t.zip { ", in step" } else { "" },
            e.config["target"]["engine"].as_str().unwrap_or("?"),
        ),
        format!(
            "server: {} — answering at {} — stopped by SIGTERM, SIGKILL after {} s",
            t.serve,
            t.url,
            sig3(t.stop_grace_s)
        ),
        super::started(e),
    ];
    lines.extend(super::intervals_line(e));
    if e.stopped_early {
        lines.push("stopped before every configuration ran".into());
    }
    if let Some(err) = &e.error {
        lines.push(format!("error: {err}"));
    }
    lines.extend(e.notices.iter().map(|n| format!("note: {n}")));
    lines
}

/// Each configuration's run tables, then the tune's own.
pub fn tables(e: &Export) -> Vec<Table> {
    let Some(t) = &e.tune else {
        return vec![];
    };
    let mut out = Vec::new();
    for c in &t.configurations {
        let own = of_configuration(e, c);
        if own.phases.is_empty() && own.capacity.is_empty() {
            continue;
        }
        for mut table in super::run::tables(&own) {
            table.title = format!("{}: {}", c.label, table.title);
            out.push(table);
        }
    }
    out.push(summary(e, t));
    out
}

/// One configuration as a run's export of its own.
fn of_configuration(e: &Export, c: &TuneConfiguration) -> Export {
    let mine = |t: &Option<String>| t.as_deref() == Some(c.label.as_str());
    Export {
        config: c.config.clone().unwrap_or_else(|| e.config.clone()),
        phases: e
            .phases
            .iter()
            .filter(|p| mine(&p.target))
            .cloned()
            .collect(),
        capacity: e
            .capacity
            .iter()
            .filter(|x| mine(&x.target))
            .cloned()
            .collect(),
        accuracy: c.accuracy.clone(),
        tune: None,
        ..e.clone()
    }
}

/// Whether the tune searched capacity (`--find-capacity --slo`).
fn searched(t: &TuneSection) -> bool {
    t.configurations.iter().any(|c| c.capacity.is_some())
}

/// A configuration's phase with the most samples/s: what a tune without a search compares.
fn best_phase<'a>(e: &'a Export, label: &str) -> Option<&'a PhaseResult> {
    e.phases
        .iter()
        .filter(|p| p.target.as_deref() == Some(label) && p.ok > 0)
        .max_by(|a, b| a.samples_per_s.total_cmp(&b.samples_per_s))
}

/// The row's figures: rate, samples/s, p50, p99, $/1M.
fn figures(e: &Export, c: &TuneConfiguration) -> [Option<f64>; 5] {
    if let Some(s) = &c.capacity {
        return [
            s.max_rate_per_s,
            s.samples_per_s,
            s.p50_ms,
            s.p99_ms,
            s.cost_per_1m_usd,
        ];
    }
    match best_phase(e, &c.label) {
        Some(p) => [
            Some(p.req_per_s),
            Some(p.samples_per_s),
            Some(p.latency_ms.p50),
            Some(p.latency_ms.p99),
            p.cost_per_1m_usd,
        ],
        None => [None; 5],
    }
}

/// The row's rate, p50 and p99 with their 95 % intervals, as every table shows them: the
/// answer's rate with its interval (none where `--repeat` averaged several searches), its
/// latencies with the intervals of the search they came from; or the best phase's.
fn sure_cells(e: &Export, c: &TuneConfiguration) -> [Cell; 3] {
    use super::run::sure;
    use encbench_core::percentile::Percentile;
    let [r, _, p50, p99, _] = figures(e, c);
    if let Some(s) = &c.capacity {
        let latency = e
            .capacity
            .iter()
            .find(|x| x.target.as_deref() == Some(c.label.as_str()) && x.batch_size == s.batch_size)
            .and_then(|x| x.latency_ms)
            .and_then(|l| l.ci95);
        return [
            sure(
                r,
                s.max_rate_ci95_per_s.map(|[lo, hi]| Interval(lo, Some(hi))),
            ),
            sure(p50, latency.map(|i| i.of_percentile(Percentile::P50))),
            sure(p99, latency.map(|i| i.of_percentile(Percentile::P99))),
        ];
    }
    let ci = |at| {
        best_phase(e, &c.label)
            .and_then(|p| p.latency_ms.ci95)
            .map(|i| i.of_percentile(at))
    };
    [
        sure(r, None),
        sure(p50, ci(Percentile::P50)),
        sure(p99, ci(Percentile::P99)),
    ]
}

fn summary(e: &Export, t: &TuneSection) -> Table {
    let slo = slo(e);
    let (title, rate) = match &slo {
        Some(slo) => (
            format!("Tune: capacity within {slo}, one row per configuration"),
            "max req/s",
        ),
        None => (
            "Tune: each configuration's phase with the most samples/s".to_string(),
            "req/s",
        ),
    };
    let mut table = Table::new(
        title,
        &[
            "configuration",
            "status",
            rate,
            "samples/s",
            "p50 ms",
            "p99 ms",
            "$/1M",
            "$/h",
            "ready s",
            "server",
        ],
    );
    for c in &t.configurations {
        let [_, s, _, _, cost] = figures(e, c);
        let [r, p50, p99] = sure_cells(e, c);
        let status = if c.resumed {
            format!("{} (resumed)", c.status.name())
        } else {
            c.status.name().to_string()
        };
        table.row(vec![
            c.label.clone().into(),
            status.into(),
            r,
            num(s, 1).into(),
            p50,
            p99,
            num(cost, 4).into(),
            num(c.price_per_hour_usd, 3).into(),
            num(c.ready_after_s, 1).into(),
            c.server_exit.clone().unwrap_or_else(|| "-".into()).into(),
        ]);
    }
    table.notes.extend(troubles(t));
    table.notes.extend(front(e, slo.as_deref()));
    table.notes.extend(advice(e, t));
    table
}

/// Why each configuration that did not measure did not, with the end of its server's log.
fn troubles(t: &TuneSection) -> Vec<String> {
    let mut out = Vec::new();
    for c in &t.configurations {
        if !matches!(c.status, TuneStatus::Failed | TuneStatus::Incomplete) {
            continue;
        }
        let log = c
            .log
            .as_deref()
            .map(|l| format!(" (log: {l})"))
            .unwrap_or_default();
        out.push(format!(
            "{} {}: {}{log}",
            c.label,
            c.status.name(),
            c.reason.as_deref().unwrap_or("no reason recorded")
        ));
        let shown = &c.log_tail[c.log_tail.len().saturating_sub(TAIL_SHOWN)..];
        out.extend(shown.iter().map(|l| format!("  | {l}")));
    }
    out
}

fn measured(t: &TuneSection) -> impl Iterator<Item = &TuneConfiguration> {
    t.configurations
        .iter()
        .filter(|c| c.status == TuneStatus::Measured)
}

/// Each configuration that ran to the end: samples/s within the SLO (its best phase's
/// without a search) and its cost per million there.
pub(crate) fn points(e: &Export) -> Vec<Point> {
    let Some(t) = &e.tune else {
        return vec![];
    };
    measured(t)
        .filter_map(|c| {
            let [_, s, _, _, cost] = figures(e, c);
            Some(Point {
                label: c.label.clone(),
                samples_per_s: s?,
                cost_per_1m_usd: cost,
            })
        })
        .collect()
}

/// The SLO the configurations were searched against, as the tables name it.
pub(crate) fn slo(e: &Export) -> Option<String> {
    e.tune
        .as_ref()?
        .configurations
        .iter()
        .find_map(|c| c.capacity.as_ref().map(|s| s.slo.clone()))
}

/// The configurations no other beats on both samples/s and cost, in one line.
fn front(e: &Export, slo: Option<&str>) -> Option<String> {
    let points = points(e);
    let on = pareto_front(&points);
    if on.is_empty() {
        return None;
    }
    let within = slo.map(|s| format!(" within {s}")).unwrap_or_default();
    let listed: Vec<String> = on
        .iter()
        .map(|p| match p.cost_per_1m_usd {
            Some(c) => format!(
                "{} ({} samples/s, ${c:.4} per 1M)",
                p.label,
                sig3(p.samples_per_s)
            ),
            None => format!("{} ({} samples/s)", p.label, sig3(p.samples_per_s)),
        })
        .collect();
    Some(if points.iter().all(|p| p.cost_per_1m_usd.is_some()) {
        format!(
            "Pareto front (the most samples/s{within} for no more per 1M samples): {}",
            listed.join(", ")
        )
    } else {
        format!(
            "no price for every configuration (give --price-per-hour or --instance-type; either may be a --param): the front is the most samples/s{within}: {}",
            listed.join(", ")
        )
    })
}

/// The configuration with the most samples/s within the SLO per dollar (without prices,
/// the most samples/s), a winner only where the searches tell it apart; without a search,
/// the best phases compared as measured, once each.
fn advice(e: &Export, t: &TuneSection) -> Option<String> {
    let targets: Vec<(String, Option<f64>)> = measured(t)
        .map(|c| (c.label.clone(), c.price_per_hour_usd))
        .collect();
    if searched(t) {
        let theirs: Vec<_> = e
            .capacity
            .iter()
            .filter(|c| targets.iter().any(|(n, _)| c.target.as_deref() == Some(n)))
            .cloned()
            .collect();
        return Some(
            match super::differences::capacity_verdict_among(&theirs, &targets) {
                Some(line) => format!("advice: {line}"),
                None => "advice: no configuration measured meets the SLO at any rate probed".into(),
            },
        );
    }
    let best: Vec<(&str, f64, Option<f64>)> = measured(t)
        .filter_map(|c| {
            let [_, s, _, _, cost] = figures(e, c);
            Some((c.label.as_str(), s?, cost))
        })
        .collect();
    let priced = !best.is_empty() && best.iter().all(|b| b.2.is_some());
    let pick = if priced {
        best.iter().min_by(|a, b| {
            a.2.unwrap_or(f64::INFINITY)
                .total_cmp(&b.2.unwrap_or(f64::INFINITY))
        })
    } else {
        best.iter().max_by(|a, b| a.1.total_cmp(&b.1))
    }?;
    let once = "one run each, not judged for significance: --find-capacity --slo for the answer within an objective";
    Some(match pick.2.filter(|_| priced) {
        Some(cost) => format!(
            "advice: cheapest per 1M samples: {} (${cost:.4}, {} samples/s; {once})",
            pick.0,
            sig3(pick.1)
        ),
        None => format!(
            "advice: most samples/s: {} ({} samples/s; {once})",
            pick.0,
            sig3(pick.1)
        ),
    })
}
