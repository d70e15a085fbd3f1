//! The tables of a comparison, from a `compare` export (so `compare` itself and `report` on
//! its export print the same thing): latency per batch size, throughput with ×b=1, a table
//! per concurrency level, cost, and the verdict diff.

use super::table::{Cell, Estimate, Table};
use encbench_core::export::{CompareSection, Export};
use encbench_core::percentile::Percentile;
use encbench_core::plan::PhaseKind;
use encbench_core::results::PhaseResult;
use encbench_core::text::{num, truncate};
use std::cmp::Ordering;

/// What was compared, in a few lines above the tables.
pub fn heading(e: &Export) -> Vec<String> {
    let c = &e.config;
    let Some(cmp) = &e.compare else {
        return vec![];
    };
    let shape = if c["pad_to_max"].as_bool() == Some(true) {
        format!("inputs padded to {} tokens", c["max_len"])
    } else {
        "inputs at natural length".into()
    };
    let engines: Vec<&str> = c["target"]["engines"]
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .filter(|a: &Vec<&str>| !a.is_empty())
        .unwrap_or_else(|| vec![c["target"]["engine"].as_str().unwrap_or("?")]);
    let mut lines = vec![
        format!(
            "encbench-tui {} — {} compared — {} {}",
            e.tool_version,
            encbench_core::text::count(cmp.targets.len(), "target"),
            if engines.len() == 1 {
                "engine"
            } else {
                "engines"
            },
            engines.join(", ")
        ),
        format!("closed loop, one target at a time — {shape}"),
        super::started(e),
        format!("order: {}", cmp.order_note),
    ];
    if let Some(k) = c["repeat"].as_u64().filter(|&k| k > 1) {
        lines.push(format!(
            "each phase {k} times with fresh seeds, the targets taking turns within each repetition (A B A B …): the tables pool the repetitions; the differences' intervals come from their spread"
        ));
    }
    lines.extend(super::intervals_line(e));
    if e.stopped_early {
        lines.push("stopped before the comparison finished".into());
    }
    if let Some(err) = &e.error {
        lines.push(format!("error: {err}"));
    }
    lines.extend(e.notices.iter().map(|n| format!("note: {n}")));
    lines
}

/// The batch phases' cap (`compare --concurrency`; 1 in exports written before it).
fn batch_concurrency(e: &Export) -> usize {
    e.config["concurrency"]
        .as_u64()
        .and_then(|c| usize::try_from(c).ok())
        .unwrap_or(1)
}

fn by<'a>(
    e: &'a Export,
    target: &str,
    kind: PhaseKind,
    b: usize,
    c: usize,
) -> Option<&'a PhaseResult> {
    e.phases.iter().find(|p| {
        p.target.as_deref() == Some(target)
            && p.kind == kind
            && p.batch_size == b
            && p.concurrency == c
    })
}

fn sizes(e: &Export, kind: PhaseKind, pick: fn(&PhaseResult) -> usize) -> Vec<usize> {
    let mut v: Vec<usize> = e
        .phases
        .iter()
        .filter(|p| p.kind == kind)
        .map(pick)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Lowest first; targets without a figure go last.
fn ascending(a: Option<f64>, b: Option<f64>) -> Ordering {
    match (a, b) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

fn latency_table(
    e: &Export,
    names: &[String],
    title: String,
    kind: PhaseKind,
    b: usize,
    c: usize,
) -> Table {
    let mut t = Table::new(
        title,
        &[
            "target", "n", "p50 ms", "p90 ms", "p95 ms", "p99 ms", "p99/p50", "req/s", "errors",
        ],
    );
    let mut rows: Vec<(&String, Option<&PhaseResult>)> =
        names.iter().map(|n| (n, by(e, n, kind, b, c))).collect();
    rows.sort_by(|x, y| ascending(x.1.map(|p| p.latency_ms.p50), y.1.map(|p| p.latency_ms.p50)));
    // Under --slo each row says whether the phase met it.
    let judged = rows
        .iter()
        .any(|r| r.1.is_some_and(|p| p.slo_met.is_some()));
    if judged {
        t.headers.push("SLO".into());
    }
    for (name, p) in rows {
        let slo = match p.and_then(|p| p.slo_met) {
            Some(true) => "met",
            Some(false) => "missed",
            None => "-",
        };
        let mut cells: Vec<Cell> = match p {
            Some(p) if p.ok > 0 => {
                let at = |q| Estimate::of(&p.latency_ms, q, 1).into();
                vec![
                    name.clone().into(),
                    p.n.to_string().into(),
                    at(Percentile::P50),
                    at(Percentile::P90),
                    at(Percentile::P95),
                    at(Percentile::P99),
                    num(p.p99_over_p50, 2).into(),
                    num(Some(p.req_per_s), 1).into(),
                    p.error_count().to_string().into(),
                ]
            }
            _ => {
                let mut r: Vec<Cell> = vec![
                    name.clone().into(),
                    p.map_or("0".into(), |p| p.n.to_string()).into(),
                ];
                r.extend(std::iter::repeat_n(Cell::from("-"), 6));
                r.push(p.map_or("-".into(), |p| p.error_count().to_string()).into());
                r
            }
        };
        if judged {
            cells.push(slo.into());
        }
        t.row(cells);
    }
    t
}

pub fn tables(e: &Export) -> Vec<Table> {
    let Some(cmp) = &e.compare else {
        return vec![];
    };
    let names: Vec<String> = cmp.targets.iter().map(|t| t.name.clone()).collect();
    let batches = sizes(e, PhaseKind::Batch, |p| p.batch_size);
    let levels = sizes(e, PhaseKind::Concurrency, |p| p.concurrency);
    let mut out = Vec::new();
    let c1 = batch_concurrency(e);
    for &b in &batches {
        out.push(latency_table(
            e,
            &names,
            format!("Latency at batch {b}, concurrency {c1} (fastest p50 first)"),
            PhaseKind::Batch,
            b,
            c1,
        ));
    }
    if !batches.is_empty() {
        out.push(throughput_table(e, &names, &batches));
    }
    for &c in &levels {
        out.push(latency_table(
            e,
            &names,
            format!("Concurrency {c}, batch 1 (fastest p50 first)"),
            PhaseKind::Concurrency,
            1,
            c,
        ));
    }
    if let Some(&b) = batches.last() {
        out.push(cost_table(e, cmp, b));
    }
    out.extend(capacity_table(e));
    out.extend(super::repeats::phases_table(&e.phases));
    out.extend(super::repeats::capacity_table(&e.capacity));
    out.extend(super::differences::table(e));
    if cmp.targets.iter().any(|t| t.accuracy.is_some()) {
        out.push(verdicts_table(cmp));
    }
    out.extend(super::server::per_target_table(&e.phases));
    out.extend(super::server::headers_table(&e.phases, true));
    if !cmp.vector_agreement.is_empty() {
        out.push(agreement_table(cmp));
    }
    if !cmp.score_agreement.is_empty() {
        out.push(score_agreement_table(cmp));
    }
    out
}

/// Req/s and samples/s per batch size, and each batch size's gain over batch 1.
fn throughput_table(e: &Export, names: &[String], batches: &[usize]) -> Table {
    let largest = *batches.last().expect("a batch size");
    let mut headers = vec!["target".to_string()];
    for &b in batches {
        headers.push(format!("req/s b={b}"));
        headers.push(format!("samples/s b={b}"));
        if b != 1 {
            headers.push(format!("×b=1 at {b}"));
        }
    }
    let mut t = Table::new(
        format!(
            "Throughput, closed loop at concurrency {} (most samples/s at the largest batch first)",
            batch_concurrency(e)
        ),
        &headers.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let c1 = batch_concurrency(e);
    let sps = |n: &String, b: usize| by(e, n, PhaseKind::Batch, b, c1).map(|p| p.samples_per_s);
    let mut order: Vec<&String> = names.iter().collect();
    order.sort_by(|x, y| ascending(sps(y, largest), sps(x, largest)));
    for n in order {
        let mut r = vec![n.clone()];
        for &b in batches {
            let p = by(e, n, PhaseKind::Batch, b, c1);
            r.push(num(p.map(|p| p.req_per_s), 1));
            r.push(num(p.map(|p| p.samples_per_s), 1));
            if b != 1 {
                let x = sps(n, b)
                    .zip(sps(n, 1))
                    .and_then(|(s, s1)| (s1 > 0.0).then(|| s / s1));
                r.push(num(x, 2));
            }
        }
        t.row(r);
    }
    t
}

fn cost_table(e: &Export, cmp: &CompareSection, b: usize) -> Table {
    let sps_col = format!("samples/s b={b}");
    let mut t = Table::new(
        format!("Cost per million samples at batch {b} (cheapest first)"),
        &["target", "instance", "$/h", &sps_col, "$/1M"],
    );
    let mut rows: Vec<_> = cmp
        .targets
        .iter()
        .map(|ct| {
            (
                ct,
                by(e, &ct.name, PhaseKind::Batch, b, batch_concurrency(e)),
            )
        })
        .collect();
    rows.sort_by(|x, y| {
        ascending(
            x.1.and_then(|p| p.cost_per_1m_usd),
            y.1.and_then(|p| p.cost_per_1m_usd),
        )
    });
    for (ct, p) in rows {
        t.row(vec![
            ct.name.clone(),
            ct.instance_type.clone().unwrap_or_else(|| "-".into()),
            num(ct.price_per_hour_usd, 3),
            num(p.map(|p| p.samples_per_s), 1),
            num(p.and_then(|p| p.cost_per_1m_usd), 2),
        ]);
    }
    if cmp.targets.iter().all(|t| t.price_per_hour_usd.is_none()) {
        t.notes.push("no prices: give instance=… in --target, @INSTANCE in --mc/--ic/--lmi, or --instance-type".into());
    }
    t
}

/// Each target's capacity within the SLO, when the comparison searched for it.
fn capacity_table(e: &Export) -> Option<Table> {
    let first = e.capacity.first()?;
    let mut t = Table::new(
        format!(
            "Capacity within {} at concurrency {} (cheapest per million samples first)",
            first.slo, first.concurrency
        ),
        &[
            "target",
            "batch",
            "max req/s",
            "samples/s",
            "p99 ms",
            "$/1M",
            "probes",
            "answer",
        ],
    );
    let mut rows: Vec<_> = e.capacity.iter().collect();
    rows.sort_by(|x, y| {
        ascending(x.cost_per_1m_usd, y.cost_per_1m_usd)
            .then(ascending(y.samples_per_s, x.samples_per_s))
    });
    for c in rows {
        t.row(vec![
            c.target.clone().unwrap_or_default().into(),
            c.batch_size.to_string().into(),
            super::run::max_rate(c),
            num(c.samples_per_s, 1).into(),
            super::run::sure(
                c.latency_ms.map(|l| l.p99),
                c.latency_ms.and_then(|l| l.ci95).map(|i| i.p99),
            ),
            num(c.cost_per_1m_usd, 4).into(),
            c.probes.len().to_string().into(),
            c.verdict.clone().into(),
        ]);
    }
    t.notes.push(
        super::differences::capacity_verdict(e)
            .unwrap_or_else(|| format!("no target meets {} at any rate probed", first.slo)),
    );
    Some(t)
}

/// Each target's known-answer score, and the samples where one disagrees with the others.
fn verdicts_table(cmp: &CompareSection) -> Table {
    let mut t = Table::new(
        "Verdicts (known-answer samples, after the load)",
        &["target", "accuracy", "agrees with the others"],
    );
    for ct in &cmp.targets {
        let flagged = cmp.verdict_diff.iter().find(|d| d.target == ct.name);
        t.row(vec![
            ct.name.clone(),
            ct.accuracy.as_ref().map_or("-".into(), |a| match a.output {
                Some(o @ encbench_core::verdicts::Output::Vectors { .. }) => {
                    format!("{}/{} ({o})", a.passed, a.total)
                }
                _ => format!("{}/{}", a.passed, a.total),
            }),
            match (ct.accuracy.is_some(), flagged) {
                (false, _) => "-".into(),
                (true, None) => "yes".into(),
                (true, Some(d)) => format!("NO: {} sample(s) differ", d.samples.len()),
            },
        ]);
    }
    for d in &cmp.verdict_diff {
        t.notes
            .push(format!("{} disagrees with the other targets:", d.target));
        for s in &d.samples {
            // A ranked query has no hypothesis: the query alone.
            let sample = if s.hypothesis.is_empty() {
                truncate(&s.premise, 48)
            } else {
                format!(
                    "{} / {}",
                    truncate(&s.premise, 40),
                    truncate(&s.hypothesis, 40)
                )
            };
            t.notes.push(format!(
                "  {sample} → {} (others: {}, expected {})",
                s.predicted.as_deref().unwrap_or("no verdict"),
                s.others,
                truncate(&s.expected, 48)
            ));
        }
        t.notes.push(format!("  hint: {}", d.hint));
    }
    t
}

fn score_agreement_table(cmp: &CompareSection) -> Table {
    let mut t = Table::new(
        "Score agreement (Kendall's tau of two targets' orderings of each query's documents; the same reranker gives 1)",
        &[
            "targets",
            "queries",
            "least tau",
            "agree",
            "largest score diff",
            "least at",
        ],
    );
    for a in &cmp.score_agreement {
        t.row(vec![
            format!("{} / {}", a.a, a.b),
            a.queries.to_string(),
            format!("{:.4}", a.min_tau),
            if a.ok { "yes" } else { "NO" }.into(),
            format!("{:.4}", a.max_score_diff),
            truncate(&a.worst_query, 48),
        ]);
        if let Some(h) = &a.hint {
            let what = if a.ok { "score apart" } else { "rank apart" };
            t.notes.push(format!("{} and {} {what}: {h}", a.a, a.b));
        }
    }
    t
}

fn agreement_table(cmp: &CompareSection) -> Table {
    let mut t = Table::new(
        format!(
            "Vector agreement (least cosine between two targets' vectors for the same input; the same model gives ≥ {})",
            encbench_core::verdicts::agreement::MIN_COSINE
        ),
        &["targets", "inputs", "least cosine", "agree", "least at"],
    );
    for a in &cmp.vector_agreement {
        t.row(vec![
            format!("{} / {}", a.a, a.b),
            a.inputs.to_string(),
            format!("{:.6}", a.min_cosine),
            if a.ok { "yes" } else { "NO" }.into(),
            truncate(&a.worst_input, 48),
        ]);
        if let Some(h) = &a.hint {
            t.notes.push(format!("{} and {} differ: {h}", a.a, a.b));
        }
    }
    t
}
