//! The tables of a run, from its export: what a run prints when it ends and what `report`
//! prints of its export are this one rendering.
//!
//! Batch phases with throughput, efficiency and cost (the knee marked, with advice), live
//! phases, concurrency phases (saturation marked, with advice), every phase's latency
//! spectrum and breakdown, errors by kind, client tokenization and the server's side,
//! SageMaker variants, and the accuracy verdicts.

use super::table::{Cell, Estimate, NOT_A_RATE, Table};
use encbench_core::arrival::Pace;
use encbench_core::export::{AccuracyExport, Export};
use encbench_core::interval::Interval;
use encbench_core::percentile::Percentile;
use encbench_core::plan::PhaseKind;
use encbench_core::results::capacity::Capacity;
use encbench_core::results::{PhaseResult, analysis};
use encbench_core::text::{self, num};
use encbench_core::verdicts::Output;

/// Batch efficiency under which a batch size is past the knee, when the export does not say.
const DEFAULT_KNEE: f64 = 0.8;

/// How many hosts' runs were merged each at the whole concurrency cap (1 for a run). A
/// merge of shards sums their shares into the run's cap, so it counts as one.
fn hosts_each_at_its_cap(e: &Export) -> usize {
    match e.config["merged_from"].as_array() {
        Some(m) if m.iter().all(|h| h["shard"].is_null()) => m.len().max(1),
        _ => 1,
    }
}

/// What the run was, in a few lines above its tables.
pub fn heading(e: &Export) -> Vec<String> {
    let c = &e.config;
    let t = &c["target"];
    let sim = if t["demo"].as_bool() == Some(true) {
        " (simulated endpoint)"
    } else {
        ""
    };
    let answers = e
        .accuracy
        .as_ref()
        .and_then(|a| a.output)
        .map(|o| format!(" — answers {o}"))
        .unwrap_or_default();
    // The route beside the family where it has several (`tei /rerank`), and what discovery
    // took the server for.
    let engine = match t["path"].as_str().filter(|_| t["api"].is_string()) {
        Some(path) => format!("{} {path}", t["engine"].as_str().unwrap_or("?")),
        None => t["engine"].as_str().unwrap_or("?").to_string(),
    };
    let found = t["detected"]["server"]
        .as_str()
        .map(|s| format!(" (found: {})", encbench_core::scrub::controls(s)))
        .unwrap_or_default();
    let mut lines = vec![format!(
        "encbench-tui {} — {}{sim} — engine {engine}{found}{answers}",
        e.tool_version,
        super::describe_target(e),
    )];
    let flags = Pace {
        rate_per_s: c["request_rate"].as_f64(),
        burstiness: c["burstiness"].as_f64().unwrap_or(f64::INFINITY),
    };
    // What ran, not what the flags said: a live run steered from the screen ran at other
    // paces than it started with.
    let paces: Vec<Pace> = e.phases.iter().map(pace_of).collect();
    let concs: Vec<usize> = e.phases.iter().map(|p| p.concurrency).collect();
    let same = |v: &[usize]| v.first().filter(|&&f| v.iter().all(|&x| x == f)).copied();
    let hosts = hosts_each_at_its_cap(e);
    let how = match paces.first() {
        None => text::pace_at(
            &flags,
            c["concurrency"].as_u64().unwrap_or(1) as usize,
            hosts,
        ),
        Some(first) if paces.iter().all(|p| p == first) => match same(&concs) {
            // No --concurrency: an open loop's cap of 1024 was not asked for, and says so.
            Some(conc) if first.rate_per_s.is_some() && c["concurrency_default"] == true => {
                format!(
                    "{} (the open loop's default)",
                    text::pace_at(first, conc, hosts)
                )
            }
            Some(c) => text::pace_at(first, c, hosts),
            None => format!("{}, concurrency per phase", text::pace(first)),
        },
        Some(_) => format!(
            "pace per phase in the tables (the run started {})",
            text::pace(&flags)
        ),
    };
    let rerank = super::rerank::is_rerank(e);
    let unit = if rerank {
        "(query, document) pair"
    } else {
        "input"
    };
    let shape = if c["pad_to_max"].as_bool() == Some(true) {
        format!("{unit}s padded to {} tokens", c["max_len"])
    } else {
        super::lengths::heading(e, unit)
    };
    let how = replay_pace(c).unwrap_or(how);
    lines.push(format!("{how} — {shape}"));
    lines.extend(replay_line(&c["replay"]));
    lines.extend(super::rerank::heading(e));
    if c["pretokenize"].as_bool() == Some(true) {
        lines.push(
            "client tokenization done before each phase (--pretokenize): not in the latency".into(),
        );
    }
    if let (Some(name), Some(price)) = (
        c["instance_type"].as_str(),
        c["price_per_hour_usd"].as_f64(),
    ) {
        lines.push(format!("price {name} ${price:.3}/h"));
    }
    lines.extend(super::slices::heading(c));
    if let Some(k) = c["repeat"].as_u64().filter(|&k| k > 1) {
        lines.push(format!(
            "each phase {k} times with fresh seeds, taking turns (--repeat): the tables pool the repetitions, and the table across them says how far a repeat of the run would move"
        ));
    }
    lines.push(super::started(e));
    lines.extend(super::intervals_line(e));
    if e.stopped_early && e.phases.last().is_some_and(|p| p.kind != PhaseKind::Live) {
        lines.push("stopped before the plan finished: the last phase is partial".into());
    }
    if let Some(err) = &e.error {
        lines.push(format!("error: {err}"));
    }
    lines.extend(e.notices.iter().map(|n| format!("note: {n}")));
    lines
}

/// A replay's pace: its arrivals are the recording's, not a Gamma process at its mean rate.
fn replay_pace(c: &serde_json::Value) -> Option<String> {
    let rate = c["request_rate"]
        .as_f64()
        .filter(|_| c["replay"].is_object())?;
    let default = if c["concurrency_default"] == true {
        " (the open loop's default)"
    } else {
        ""
    };
    Some(format!(
        "open loop at the recorded times, {} req/s on average, concurrency cap {}{default}",
        num(Some(rate), 1),
        c["concurrency"],
    ))
}

/// What a replay sent (`config.replay`): the file, its records and requests, and its time
/// at the speed it was played.
fn replay_line(r: &serde_json::Value) -> Option<String> {
    let file = encbench_core::scrub::controls(r["file"].as_str()?);
    let (records, requests) = (r["records"].as_u64()?, r["requests"].as_u64()?);
    let scale = r["scale"].as_u64().unwrap_or(1);
    let sent = if scale > 1 {
        format!("{records} records × {scale} = {requests} requests")
    } else {
        format!("{requests} requests")
    };
    let spread = if r["spread_within_seconds"] == true {
        "; each recorded second's requests spread within it, its count kept"
    } else {
        ""
    };
    let b = &r["batch_sizes"];
    // One batch size is the batch column's; a mix is said, the column holding its mean.
    let batches = match (b["min"].as_u64(), b["max"].as_u64()) {
        (Some(lo), Some(hi)) if lo < hi => format!(
            "; batches of {lo} to {hi} inputs, {} on average (the batch column rounds it)",
            num(b["mean"].as_f64(), 2)
        ),
        _ => String::new(),
    };
    Some(format!(
        "replay of {file} ({}): {sent}, {} s recorded, played at {}× in {} s{spread}{batches}",
        r["format"].as_str().unwrap_or("?"),
        num(r["recorded_s"].as_f64(), 1),
        r["speed"].as_f64().unwrap_or(1.0),
        num(r["duration_s"].as_f64(), 1),
    ))
}

pub fn tables(e: &Export) -> Vec<Table> {
    let knee = e.config["knee"].as_f64().unwrap_or(DEFAULT_KNEE);
    let mut out: Vec<Table> = [
        batch_table(&e.phases, knee, super::rerank::is_rerank(e)),
        live_table(&e.phases),
        concurrency_table(&e.phases),
        latency_table(&e.phases),
        breakdown_table(&e.phases),
        super::lengths::table(&e.phases),
        schedule_table(&e.phases),
        slo_table(&e.phases),
        super::repeats::phases_table(&e.phases),
        capacity_table(&e.capacity),
        probes_table(&e.capacity),
        super::repeats::capacity_table(&e.capacity),
        errors_table(&e.phases),
        super::endpoint_lost::table(&e.phases),
        server_table(&e.phases),
        super::server::breakdown_table(&e.phases),
        super::server::headers_table(&e.phases, false),
        super::server::named_table(&e.phases),
        super::server::cloudwatch_table(&e.phases),
        variants_table(&e.phases),
    ]
    .into_iter()
    .flatten()
    .collect();
    // Slices after the phases' own tables, the accuracy check last as always.
    out.extend(super::slices::tables(&e.phases, &e.config));
    out.extend(e.accuracy.as_ref().map(accuracy_table));
    out
}

fn of_kind(phases: &[PhaseResult], kind: PhaseKind) -> Vec<&PhaseResult> {
    phases.iter().filter(|p| p.kind == kind).collect()
}

/// One column of a table of phases: its header, and its cell for a phase.
struct Col(&'static str, fn(&PhaseResult) -> Cell);

const KIND: Col = Col("kind", |p| p.kind.name().into());
const BATCH: Col = Col("batch", |p| p.batch_size.to_string().into());
const CONC: Col = Col("conc", |p| p.concurrency.to_string().into());
const PACE: Col = Col("pace", |p| text::pace_short(&pace_of(p)).into());
const N: Col = Col("n", |p| p.n.to_string().into());
// Every percentile of a phase beside its 95 % interval (`≥ x` where too few requests bound
// it from above).
const P50: Col = Col("p50 ms", |p| pct(&p.latency_ms, Percentile::P50));
const P90: Col = Col("p90 ms", |p| pct(&p.latency_ms, Percentile::P90));
const P95: Col = Col("p95 ms", |p| pct(&p.latency_ms, Percentile::P95));
const P99: Col = Col("p99 ms", |p| pct(&p.latency_ms, Percentile::P99));
const P999: Col = Col("p99.9 ms", |p| pct(&p.latency_ms, Percentile::P999));
const MAX: Col = Col("max ms", |p| num(Some(p.latency_ms.max), 1).into());

fn pct(s: &encbench_core::stats::LatencySummary, at: Percentile) -> Cell {
    Estimate::of(s, at, 1).into()
}
const TAIL: Col = Col("p99/p50", |p| num(p.p99_over_p50, 2).into());
const REQ: Col = Col("req/s", |p| rate(p, p.req_per_s).into());
const SAMPLES: Col = Col("samples/s", |p| rate(p, p.samples_per_s).into());

/// A rate, or `n<c` where the phase measured fewer requests than its concurrency cap.
fn rate(p: &PhaseResult, v: f64) -> String {
    if p.rate_not_meaningful {
        NOT_A_RATE.into()
    } else {
        num(Some(v), 1)
    }
}
// ×b=1 is efficiency × batch size: both compare with the same sweep's batch-1 row.
const X_B1: Col = Col("×b=1", |p| {
    num(p.batch_efficiency.map(|e| e * p.batch_size as f64), 2).into()
});
const EFFICIENCY: Col = Col("efficiency", |p| num(p.batch_efficiency, 2).into());
const COST: Col = Col("$/1M", |p| {
    match p.cost_per_1m_usd {
        Some(c) if !p.rate_not_meaningful => num(Some(c), 2),
        Some(_) => NOT_A_RATE.into(),
        None => num(None, 2),
    }
    .into()
});
const ERRORS: Col = Col("errors", |p| p.error_count().to_string().into());
const SERVICE_P50: Col = Col("service p50 ms", |p| pct(&p.service_ms, Percentile::P50));
const SERVICE_P99: Col = Col("service p99 ms", |p| pct(&p.service_ms, Percentile::P99));
const DISPATCH_P50: Col = Col("dispatch p50 ms", |p| {
    pct(&p.dispatch_delay_ms, Percentile::P50)
});
const DISPATCH_P99: Col = Col("dispatch p99 ms", |p| {
    pct(&p.dispatch_delay_ms, Percentile::P99)
});

const OFFERED: Col = Col("offered/s", |p| num(p.offered_per_s, 1).into());
const UNSENT: Col = Col("unsent", |p| p.unsent.to_string().into());
const MAX_LAG: Col = Col("max lag ms", |p| num(p.max_lag_ms, 1).into());
const QUEUE_LAG: Col = Col("queue lag ms", |p| num(p.queue_lag_ms, 1).into());

fn pace_of(p: &PhaseResult) -> Pace {
    Pace {
        rate_per_s: p.request_rate,
        burstiness: p.burstiness.unwrap_or(f64::INFINITY),
    }
}

/// Open-loop phases: what the schedule offered, what the endpoint achieved, and the requests
/// that were due and never sent.
fn schedule_table(phases: &[PhaseResult]) -> Option<Table> {
    let open: Vec<&PhaseResult> = phases
        .iter()
        .filter(|p| p.offered_per_s.is_some())
        .collect();
    if open.is_empty() {
        return None;
    }
    let mut t = phase_table(
        "Open-loop schedule (unsent: due before the phase ended, never given a slot)",
        &[
            KIND, BATCH, CONC, PACE, OFFERED, REQ, UNSENT, MAX_LAG, QUEUE_LAG,
        ],
        &open,
        |p| p.overloaded.then_some("overloaded"),
    );
    if open.iter().any(|p| p.overloaded) {
        t.notes.push(
            "overloaded: the endpoint did not keep up with the offered rate and the lag (due \
             requests not yet sent) or the queue lag (requests queued at the server beyond \
             what its latency explains) kept growing; the unsent requests would each have \
             waited at least the lag, so the latency percentiles understate what clients at \
             this rate would see"
                .into(),
        );
    }
    Some(t)
}

const GOODPUT: Col = Col("goodput/s", |p| num(p.goodput_per_s, 1).into());
const GOOD_SHARE: Col = Col("good %", |p| {
    num(p.goodput_share.map(|s| s * 100.0), 1).into()
});
const SLO: Col = Col("SLO", |p| match (p.slo_met, &p.slo_missed) {
    (Some(true), _) => "met".into(),
    (_, Some(why)) => format!("missed: {why}").into(),
    _ => "missed".into(),
});
const STABLE: Col = Col("stable", |p| match (p.stable, p.stop_reason.as_deref()) {
    (Some(true), _) => "yes".into(),
    // A capacity probe's size is fixed before it starts: it is never judged on stability.
    (_, Some("count")) => "fixed size".into(),
    (Some(false), Some(r)) => format!("no ({r})").into(),
    _ => "-".into(),
});

/// Every phase judged against `--slo`: whether it met it, and its goodput.
fn slo_table(phases: &[PhaseResult]) -> Option<Table> {
    let judged: Vec<&PhaseResult> = phases.iter().filter(|p| p.slo_met.is_some()).collect();
    if judged.is_empty() {
        return None;
    }
    let mut t = phase_table(
        "SLO (scheduled latency; errors and unsent requests count as misses)",
        &[
            KIND, BATCH, CONC, PACE, N, P99, REQ, GOODPUT, GOOD_SHARE, STABLE, SLO,
        ],
        &judged,
        |_| None,
    );
    t.notes.push(
        "goodput: ok requests within the latency bound of the highest percentile objective;          good %: their share of the requests due"
            .into(),
    );
    Some(t)
}

/// One row per batch size searched: the most traffic that meets the SLO, where the probes
/// near it put the crossing (or, where none could be weighed, the highest rate that met).
fn capacity_table(found: &[Capacity]) -> Option<Table> {
    let first = found.first()?;
    let mut t = Table::new(
        format!(
            "Capacity within {} at concurrency {} (the rate at which the probes' latency reaches it)",
            first.slo, first.concurrency
        ),
        &[
            "batch",
            "max req/s",
            "samples/s",
            "p50 ms",
            "p99 ms",
            "goodput/s",
            "$/1M",
            "ceiling req/s",
            "probes",
            "answer",
        ],
    );
    for c in found {
        let ci = |at| {
            c.latency_ms
                .and_then(|l| l.ci95)
                .map(|i| i.of_percentile(at))
        };
        t.row(vec![
            c.batch_size.to_string().into(),
            max_rate(c),
            num(c.samples_per_s, 1).into(),
            sure(c.latency_ms.map(|l| l.p50), ci(Percentile::P50)),
            sure(c.latency_ms.map(|l| l.p99), ci(Percentile::P99)),
            num(c.goodput_per_s, 1).into(),
            num(c.cost_per_1m_usd, 4).into(),
            num(c.ceiling_per_s, 1).into(),
            c.probes.len().to_string().into(),
            c.verdict.clone().into(),
        ]);
    }
    if let Some(a) = encbench_core::capacity::advice(found) {
        t.notes.push(format!("advice: {a}"));
    } else {
        t.notes
            .push("no batch size meets the SLO at any rate probed".into());
    }
    Some(t)
}

/// Every probe of every search, in the order they ran.
fn probes_table(found: &[Capacity]) -> Option<Table> {
    if found.iter().all(|c| c.probes.is_empty()) {
        return None;
    }
    let mut t = Table::new(
        "Capacity probes (open loop, each of a fixed size or its time bound)",
        &[
            "batch", "req/s", "n", "p50 ms", "p99 ms", "meets", "ended", "missed",
        ],
    );
    for c in found {
        for p in &c.probes {
            t.row(vec![
                c.batch_size.to_string().into(),
                text::sig3(p.rate_per_s).into(),
                p.n.to_string().into(),
                sure(Some(p.p50), p.p50_ci95),
                sure(Some(p.p99), p.p99_ci95),
                match (p.bound, p.meets) {
                    (false, _) => "cut short",
                    (true, true) => "yes",
                    (true, false) => "no",
                }
                .into(),
                p.stop_reason.clone().into(),
                p.missed.clone().unwrap_or_default().into(),
            ]);
        }
    }
    Some(t)
}

/// A percentile and how sure it is, as every table shows one (`45.4 [38.1, 52.0]`, `≥ 38.1`
/// where no sample bounds it from above; its ends in columns of their own in CSV).
pub(crate) fn sure(v: Option<f64>, ci: Option<Interval>) -> Cell {
    Cell::Estimate(Estimate {
        value: v,
        ci,
        decimals: Some(1),
    })
}

/// The answer's rate with its 95 % interval: `185.0 [176.2, 192.3]`.
pub(crate) fn max_rate(c: &Capacity) -> Cell {
    sure(
        c.max_rate_per_s,
        c.max_rate_ci95_per_s.map(|[lo, hi]| Interval(lo, Some(hi))),
    )
}

/// A table of `rows` in `cols`, with a mark column (`◀ knee`) where `mark` gives a mark.
fn phase_table(
    title: impl Into<String>,
    cols: &[Col],
    rows: &[&PhaseResult],
    mark: impl Fn(&PhaseResult) -> Option<&'static str>,
) -> Table {
    let headers: Vec<&str> = cols.iter().map(|c| c.0).collect();
    let mut t = Table::new(title, &headers);
    let marked = rows.iter().any(|p| mark(p).is_some());
    if marked {
        t.headers.push(String::new());
    }
    for p in rows {
        let mut cells: Vec<Cell> = cols.iter().map(|c| (c.1)(p)).collect();
        if marked {
            cells.push(mark(p).map_or(String::new(), |m| format!("◀ {m}")).into());
        }
        t.row(cells);
    }
    if rows.iter().any(|p| p.rate_not_meaningful) && cols.iter().any(|c| c.0 == REQ.0) {
        t.notes.push(format!(
            "{NOT_A_RATE}: fewer measured requests than the concurrency cap, all perhaps in \
             flight at once: the rate is not meaningful (raise -n or --duration)"
        ));
    }
    t
}

/// A reranker's latency per document: a request's p50 over its D documents.
const P50_PER_DOC: Col = Col("p50/doc ms", |p| {
    Estimate::of(&p.latency_ms, Percentile::P50, 2)
        .over(p.batch_size.max(1) as f64)
        .into()
});

fn batch_table(phases: &[PhaseResult], knee: f64, rerank: bool) -> Option<Table> {
    let batch = of_kind(phases, PhaseKind::Batch);
    if batch.is_empty() {
        return None;
    }
    let sweep = analysis::latest_sweep(phases, PhaseKind::Batch);
    let knee_row = analysis::knee(&sweep, knee).map(|k| sweep[k]);
    // One concurrency for every row goes in the title: the column's room goes to the
    // percentiles' intervals, which keep a sweep of 1000 requests a row within 120 columns.
    let one_conc = batch
        .iter()
        .all(|p| p.concurrency == batch[0].concurrency)
        .then_some(batch[0].concurrency);
    let mut cols = vec![BATCH];
    if one_conc.is_none() {
        cols.push(CONC);
    }
    cols.extend([N, P50, P99]);
    if rerank {
        cols.push(P50_PER_DOC);
    }
    cols.extend([TAIL, REQ, SAMPLES, X_B1, EFFICIENCY, COST, ERRORS]);
    let title = match one_conc {
        Some(c) => format!("Batch (concurrency {c}; n = measured requests per row)"),
        None => "Batch (n = measured requests per row)".into(),
    };
    let mut t = phase_table(title, &cols, &batch, |p| {
        knee_row
            .is_some_and(|k| std::ptr::eq(k, p))
            .then_some("knee")
    });
    if sweep.len() > 1
        && let Some(advice) = analysis::batch_advice(&sweep, knee)
    {
        t.notes.push(format!("advice: {advice}"));
    }
    Some(t)
}

fn live_table(phases: &[PhaseResult]) -> Option<Table> {
    let live = of_kind(phases, PhaseKind::Live);
    (!live.is_empty()).then(|| {
        phase_table(
            "Live segments (one per setting: a change of rate, burstiness or concurrency from the screen opens the next)",
            &[BATCH, CONC, PACE, N, P50, P99, TAIL, REQ, SAMPLES, ERRORS],
            &live,
            |_| None,
        )
    })
}

fn concurrency_table(phases: &[PhaseResult]) -> Option<Table> {
    let conc = of_kind(phases, PhaseKind::Concurrency);
    let first = conc.first()?;
    let sweep = analysis::latest_sweep(phases, PhaseKind::Concurrency);
    let saturated = analysis::saturation(&sweep).map(|k| sweep[k]);
    let mut t = phase_table(
        format!("Concurrency (batch {})", first.batch_size),
        // p90 and p95 with their intervals are in the latency table: here they would push
        // the row past 120 columns.
        &[CONC, N, P50, P99, TAIL, REQ, SAMPLES, COST, ERRORS],
        &conc,
        |p| {
            saturated
                .is_some_and(|k| std::ptr::eq(k, p))
                .then_some("saturated")
        },
    );
    if let Some(advice) = analysis::concurrency_advice(&sweep) {
        t.notes.push(format!("advice: {advice}"));
    }
    Some(t)
}

fn latency_table(phases: &[PhaseResult]) -> Option<Table> {
    let all: Vec<&PhaseResult> = phases.iter().collect();
    (!all.is_empty()).then(|| {
        phase_table(
            "Latency percentiles (scheduled latency: from when each request was due)",
            &[KIND, BATCH, CONC, PACE, N, P50, P90, P95, P99, P999, MAX],
            &all,
            |_| None,
        )
    })
}

/// Scheduled latency split in two, each part's percentiles with their intervals: apart from
/// the percentiles' table, which they would push past any terminal's width.
fn breakdown_table(phases: &[PhaseResult]) -> Option<Table> {
    let all: Vec<&PhaseResult> = phases.iter().collect();
    (!all.is_empty()).then(|| {
        phase_table(
            "Latency breakdown (scheduled = dispatch delay, waiting to be sent, + service)",
            &[
                KIND,
                BATCH,
                CONC,
                PACE,
                N,
                SERVICE_P50,
                SERVICE_P99,
                DISPATCH_P50,
                DISPATCH_P99,
            ],
            &all,
            |_| None,
        )
    })
}

/// A table of one line of counts per phase that has any ("ModelError(500) 10, Timeout 2").
fn counts_table(
    phases: &[PhaseResult],
    title: &str,
    what: &str,
    counts: fn(&PhaseResult) -> &std::collections::BTreeMap<String, u64>,
) -> Option<Table> {
    let with: Vec<&PhaseResult> = phases.iter().filter(|p| !counts(p).is_empty()).collect();
    if with.is_empty() {
        return None;
    }
    let mut t = Table::new(title, &["kind", "batch", "conc", what]);
    for p in with {
        t.row(vec![
            p.kind.name().into(),
            p.batch_size.to_string(),
            p.concurrency.to_string(),
            text::counts(counts(p)),
        ]);
    }
    Some(t)
}

/// Errors by kind, and below them what the server said with each kind, once: the reason a
/// request was refused is the first thing a user needs from a failing run.
fn errors_table(phases: &[PhaseResult]) -> Option<Table> {
    let mut t = counts_table(phases, "Errors by kind", "errors", |p| &p.errors)?;
    let mut said: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
    for p in phases {
        for (kind, words) in &p.error_bodies {
            said.entry(kind).or_insert(words);
        }
    }
    for (kind, words) in said {
        t.notes.push(format!("{kind}: the server said {words}"));
    }
    Some(t)
}

fn variants_table(phases: &[PhaseResult]) -> Option<Table> {
    counts_table(
        phases,
        "Invoked production variants (successful requests)",
        "variants",
        |p| &p.variants,
    )
}

fn server_table(phases: &[PhaseResult]) -> Option<Table> {
    let rows: Vec<&PhaseResult> = phases
        .iter()
        .filter(|p| p.tokenize_ms.is_some() || p.server.is_some())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Client tokenization and server side (ms per request; server from KServe v2 statistics, warmup included)",
        &[
            "kind",
            "batch",
            "conc",
            "tokenize p50",
            "tokenize p99",
            "queue",
            "c.input",
            "c.infer",
            "c.output",
            "batch factor",
        ],
    );
    for p in rows {
        let tokenize = |at| -> Cell {
            p.tokenize_ms
                .map_or("-".into(), |t| Estimate::of(&t, at, 2).into())
        };
        let s = p.server.as_ref();
        let ms = |f: fn(&encbench_core::results::ServerBreakdown) -> f64| -> Cell {
            num(s.map(f), 2).into()
        };
        t.row(vec![
            p.kind.name().into(),
            p.batch_size.to_string().into(),
            p.concurrency.to_string().into(),
            tokenize(Percentile::P50),
            tokenize(Percentile::P99),
            ms(|s| s.queue_ms),
            ms(|s| s.compute_input_ms),
            ms(|s| s.compute_infer_ms),
            ms(|s| s.compute_output_ms),
            num(s.and_then(|s| s.batch_factor), 2).into(),
        ]);
    }
    Some(t)
}

/// The accuracy table's last two columns and its hint on a disagreement, by what the
/// endpoint answers: an NLI pair, a retrieval query with its candidates, a reranker's query
/// with the ordering it gave.
fn accuracy_words(output: Option<Output>) -> ([&'static str; 2], &'static str) {
    match output {
        Some(Output::Vectors { .. }) => (
            ["query", "candidates"],
            "verdicts differ from the expected ones: another candidate is nearest; check the \
             tokenization, truncation and pooling (--pooling) against the model's",
        ),
        Some(Output::Rankings) => (
            ["query", "ranking"],
            "verdicts differ from the expected ones: another document is ranked first; check \
             the pair's tokenization and truncation, and the query/document order",
        ),
        _ => (
            ["premise", "hypothesis"],
            "verdicts differ from the expected ones: check the label mapping (--labels), \
             tokenization and payload construction",
        ),
    }
}

fn accuracy_table(a: &AccuracyExport) -> Table {
    let title = match &a.before {
        Some(b) => format!(
            "Accuracy: before load {}/{}  after load {}/{}",
            b.passed, b.total, a.passed, a.total
        ),
        None => format!("Accuracy: before load {}/{}", a.passed, a.total),
    };
    let ([asked, among], hint) = accuracy_words(a.output);
    let mut t = Table::new(title, &["ok", "expected", "predicted", asked, among]);
    for v in &a.samples {
        // A reranker's whole ordering; an embedder's candidates counted.
        let last = if !v.ranking.is_empty() {
            v.said().unwrap_or_default()
        } else if v.candidates.is_empty() {
            text::truncate(&v.hypothesis, 48)
        } else if a.output == Some(Output::Rankings) {
            format!("({} documents)", v.candidates.len())
        } else {
            format!("(nearest of {} candidates)", v.candidates.len())
        };
        t.row(vec![
            if v.ok { "ok" } else { "MISMATCH" }.into(),
            // A retrieval item's verdicts are candidate sentences.
            text::truncate(&v.expected, 48),
            text::truncate(
                &v.predicted
                    .clone()
                    .or(v.error.clone())
                    .unwrap_or_else(|| "-".into()),
                48,
            ),
            text::truncate(&v.premise, 48),
            last,
        ]);
    }
    t.notes.extend(a.note.clone());
    t.notes.extend(a.switched.clone());
    // The hint only where verdicts were read: a refused request says nothing of them.
    let disagreed = a.samples.iter().any(|v| !v.ok && v.predicted.is_some());
    if disagreed {
        t.notes.push(hint.into());
    } else if a.passed < a.total {
        t.notes.push(
            "no verdict was read: the accuracy requests failed (the server's words are above), \
             so the labels were never compared"
                .into(),
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The answer's rate and every percentile of the capacity tables say how sure they are.
    #[test]
    fn capacity_tables_print_intervals() {
        let c: Capacity = serde_json::from_value(serde_json::json!({
            "batch_size": 1, "concurrency": 8, "slo": "p99 ≤ 100 ms",
            "ceiling_per_s": 200.0, "max_rate_per_s": 185.0, "failed_at_per_s": 190.0,
            "max_rate_ci95_per_s": [176.04, 192.3],
            "samples_per_s": 185.0, "goodput_per_s": 184.0, "cost_per_1m_usd": null,
            "latency_ms": {"min": 1.0, "mean": 30.0, "p50": 45.4, "p90": 60.0, "p95": 70.0,
                "p99": 95.0, "p999": 99.0, "max": 120.0,
                "ci95": {"p50": [38.1, 52.0], "p90": [50.0, 70.0], "p95": [60.0, 80.0],
                    "p99": [90.04, null], "p999": [95.0, null]}},
            "probes": [{"rate_per_s": 185.0, "n": 3000, "p50": 45.4, "p99": 95.0,
                "p50_ci95": [38.1, 52.0], "p99_ci95": [90.04, 99.96], "meets": true,
                "stable": true, "stop_reason": "stable"}],
            "verdict": "185 req/s [176, 192] (185 samples/s) meets p99 ≤ 100 ms; 190 req/s did not",
            "complete": true
        }))
        .unwrap();
        let t = capacity_table(std::slice::from_ref(&c)).unwrap();
        assert_eq!(t.headers[1], "max req/s");
        let shown = |r: &[Cell]| r.iter().map(Cell::shown).collect::<Vec<_>>();
        let row = shown(&t.rows[0]);
        assert_eq!(row[1], "185.0 [176, 193]");
        assert_eq!(row[3], "45.4 [38.1, 52.0]");
        // No sample bounds the p99 from above: at least its lower end, no figure to quote.
        assert_eq!(row[4], "≥ 90.0");
        let p = probes_table(&[c]).unwrap();
        assert_eq!(
            shown(&p.rows[0])[3..5],
            ["45.4 [38.1, 52.0]", "95.0 [90.0, 100.0]"]
        );
    }
}
