//! The server's side beside the client's, per phase: what its metrics endpoint counted
//! (`--metrics-url`), and every metric the user named (`--metric`).

use super::table::{Cell, Estimate, Table};
use encbench_core::percentile::Percentile;
use encbench_core::results::PhaseResult;
use encbench_core::server_metrics::ServerMetrics;
use encbench_core::stats::LatencySummary;
use encbench_core::text::num;

fn with_metrics(phases: &[PhaseResult]) -> Vec<(&PhaseResult, &ServerMetrics)> {
    phases
        .iter()
        .filter_map(|p| p.server_metrics.as_ref().map(|m| (p, m)))
        .collect()
}

/// Phases whose metrics give the server's time per request.
fn timed(phases: &[PhaseResult]) -> Vec<(&PhaseResult, &ServerMetrics)> {
    with_metrics(phases)
        .into_iter()
        .filter(|(_, m)| m.queue_ms_per_request.is_some() || m.compute_ms_per_request.is_some())
        .collect()
}

/// The columns both side-by-side tables share, and a phase's cells in them.
const SIDE_BY_SIDE: [&str; 9] = [
    "kind",
    "batch",
    "conc",
    "client p50",
    "service p50",
    "server",
    "queue",
    "compute",
    "batch factor",
];

fn side_by_side(p: &PhaseResult, m: &ServerMetrics) -> Vec<Cell> {
    vec![
        p.kind.name().into(),
        p.batch_size.to_string().into(),
        p.concurrency.to_string().into(),
        p50(&p.latency_ms),
        p50(&p.service_ms),
        num(m.request_ms_per_request, 2).into(),
        num(m.queue_ms_per_request, 2).into(),
        num(m.compute_ms_per_request, 2).into(),
        num(m.batch_factor, 2).into(),
    ]
}

/// Our own p50 beside the server's figures, with its interval.
fn p50(s: &LatencySummary) -> Cell {
    Estimate::of(s, Percentile::P50, 2).into()
}

/// What the server's own figures are, under a table that shows them beside ours.
const THEIRS: &str = "the server's figures are its own means over each phase: no interval";

/// Client latency, service time and the server's time per request side by side: what is
/// the model, what the server's queue, and what is left for the network and the front end.
pub(super) fn breakdown_table(phases: &[PhaseResult]) -> Option<Table> {
    let rows = timed(phases);
    if rows.is_empty() {
        return None;
    }
    let headers: Vec<&str> = SIDE_BY_SIDE.into_iter().chain(["server n"]).collect();
    let mut t = Table::new(
        "Client and server side by side (ms; server per request from its metrics, warmup included)",
        &headers,
    );
    for (p, m) in rows {
        let mut cells = side_by_side(p, m);
        cells.push(m.requests.map_or("-".into(), |n| n.to_string()).into());
        t.row(cells);
    }
    t.notes.push(
        "server: arrival to response inside the server; service p50 minus it is the network and the client".into(),
    );
    t.notes.push(THEIRS.into());
    Some(t)
}

/// One row per phase and named metric.
pub(super) fn named_table(phases: &[PhaseResult]) -> Option<Table> {
    let rows = with_metrics(phases);
    if rows.iter().all(|(_, m)| m.metrics.is_empty()) {
        return None;
    }
    let mut t = Table::new(
        "Server metrics named with --metric (over each phase; gauges at its end)",
        &[
            "kind", "batch", "conc", "metric", "type", "increase", "per s", "mean", "p50", "p99",
            "value",
        ],
    );
    for (p, m) in rows {
        for (name, x) in &m.metrics {
            t.row(vec![
                p.kind.name().into(),
                p.batch_size.to_string(),
                p.concurrency.to_string(),
                encbench_core::scrub::controls(name).into_owned(),
                x.kind.clone(),
                num(x.increase, 1),
                num(x.per_s, 2),
                num(x.mean, 4),
                num(x.p50, 4),
                num(x.p99, 4),
                num(x.value, 2),
            ]);
        }
    }
    t.notes.push(
        "p50, p99: read from the server's own histogram buckets, not from requests we timed: \
         no order statistics, so no interval"
            .into(),
    );
    Some(t)
}

/// SageMaker's own account of each phase beside the client's: the model's time, SageMaker's
/// overhead on top, and what it counted.
pub(super) fn cloudwatch_table(phases: &[PhaseResult]) -> Option<Table> {
    let rows: Vec<_> = phases
        .iter()
        .filter_map(|p| p.cloudwatch.as_ref().map(|c| (p, c)))
        .collect();
    let period = rows.first()?.1.period_s;
    let mut t = Table::new(
        format!(
            "SageMaker CloudWatch (ms; {period}-s periods, each phase's window widened to whole periods)"
        ),
        &[
            "kind",
            "batch",
            "conc",
            "client p50",
            "service p50",
            "model avg",
            "overhead avg",
            "model max",
            "invocations",
            "4xx",
            "5xx",
            "setup",
        ],
    );
    for (p, c) in rows {
        let m = |name: &str| c.metrics.get(name);
        let avg = |name: &str| num(m(name).and_then(|x| x.average), 2);
        let count = |name: &str| m(name).map_or("-".into(), |x| format!("{}", x.sum));
        t.row(vec![
            p.kind.name().into(),
            p.batch_size.to_string().into(),
            p.concurrency.to_string().into(),
            p50(&p.latency_ms),
            p50(&p.service_ms),
            avg("ModelLatency").into(),
            avg("OverheadLatency").into(),
            num(m("ModelLatency").and_then(|x| x.max), 2).into(),
            count("Invocations").into(),
            count("Invocation4XXErrors").into(),
            count("Invocation5XXErrors").into(),
            avg("ModelSetupTime").into(),
        ]);
    }
    t.notes.push(
        "a period also holds any other traffic of its minute; CloudWatch publishes a minute or more late; its averages and maxima are its own: no interval".into(),
    );
    Some(t)
}

/// `compare`: the server's side per target, where a target's `metrics-url=` gave it, each
/// phase's targets next to each other.
pub(super) fn per_target_table(phases: &[PhaseResult]) -> Option<Table> {
    let mut rows = timed(phases);
    if rows.is_empty() {
        return None;
    }
    rows.sort_by_key(|(p, _)| (p.kind.name(), p.batch_size, p.concurrency));
    let headers: Vec<&str> = std::iter::once("target").chain(SIDE_BY_SIDE).collect();
    let mut t = Table::new(
        "Server side per target (ms per request from each target's metrics-url, warmup included)",
        &headers,
    );
    for (p, m) in rows {
        let mut cells = vec![p.target.clone().unwrap_or_default().into()];
        cells.extend(side_by_side(p, m));
        t.row(cells);
    }
    t.notes.push(THEIRS.into());
    Some(t)
}

/// The server's time per request as its replies' headers said it (TEI's `x-queue-time`,
/// `x-inference-time`, `x-tokenization-time`), beside the client's latency: a row per phase
/// and figure, so each p50 and p99 has room for its interval. In `compare` each phase's
/// targets are next to each other.
pub(super) fn headers_table(phases: &[PhaseResult], per_target: bool) -> Option<Table> {
    let mut rows: Vec<_> = phases
        .iter()
        .filter_map(|p| p.server_time_ms.as_ref().map(|t| (p, t)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    if per_target {
        rows.sort_by_key(|(p, _)| (p.kind.name(), p.batch_size, p.concurrency));
    }
    let columns = ["kind", "batch", "conc", "time", "p50 ms", "p99 ms", "n"];
    let headers: Vec<&str> = per_target
        .then_some("target")
        .into_iter()
        .chain(columns)
        .collect();
    let mut t = Table::new(
        "Server time from its replies' headers (ms per request: x-queue-time, x-inference-time, x-tokenization-time)",
        &headers,
    );
    for (p, h) in rows {
        let figures = [
            ("client", Some(p.latency_ms), p.ok),
            ("queue", h.queue, h.replies),
            ("inference", h.inference, h.replies),
            ("tokenization", h.tokenization, h.replies),
        ];
        for (what, s, n) in figures {
            let Some(s) = s else { continue };
            let mut cells: Vec<Cell> = per_target
                .then(|| p.target.clone().unwrap_or_default().into())
                .into_iter()
                .collect();
            cells.extend([
                p.kind.name().into(),
                p.batch_size.to_string().into(),
                p.concurrency.to_string().into(),
                what.into(),
                Estimate::of(&s, Percentile::P50, 1).into(),
                Estimate::of(&s, Percentile::P99, 1).into(),
                n.to_string().into(),
            ]);
            t.row(cells);
        }
    }
    t.notes.push(
        "as the server measured itself, in its own units (TEI: whole milliseconds, for a batch the mean over its inputs); n: the requests timed (the client's ok requests, the replies that carried the headers), which each interval is over".into(),
    );
    Some(t)
}
