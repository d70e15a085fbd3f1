//! `report`: exports back into tables — for the terminal, for a Markdown document, for a
//! spreadsheet — and `--merge`, which adds exports of one workload (several hosts loading one
//! endpoint) into one export with exact combined percentiles.

pub mod merge;
pub mod table;

use crate::engine::PhaseResult;
use crate::export::Export;
use std::path::Path;
use table::{Table, num};

/// Reads an export, naming the file in every error.
pub fn load(path: &Path) -> Result<Export, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let export: Export =
        serde_json::from_str(&text).map_err(|e| format!("not an encbench-tui export: {e}"))?;
    if export.schema_version != crate::export::SCHEMA_VERSION {
        return Err(format!(
            "schema_version {} (this version reads {})",
            export.schema_version,
            crate::export::SCHEMA_VERSION
        ));
    }
    Ok(export)
}

fn describe_target(e: &Export) -> String {
    let t = &e.config["target"];
    let s = |k: &str| t[k].as_str().map(str::to_string);
    let mut out = s("endpoint")
        .or(s("url"))
        .unwrap_or_else(|| "unknown target".into());
    for (k, label) in [
        ("target_container", "container"),
        ("inference_component", "component"),
        ("target_model", "model"),
        ("target_variant", "variant"),
    ] {
        if let Some(v) = s(k) {
            out.push_str(&format!(" {label} {v}"));
        }
    }
    out
}

/// What the run was, in one line above its tables.
pub fn heading(e: &Export, source: &str) -> String {
    let c = &e.config;
    let shape = if c["pad_to_max"].as_bool() == Some(true) {
        format!("inputs padded to {} tokens", c["max_len"])
    } else {
        "inputs at natural length".into()
    };
    let what = match &e.compare {
        Some(cmp) => format!("{} targets compared", cmp.targets.len()),
        None => format!(
            "{} — engine {}",
            describe_target(e),
            c["target"]["engine"].as_str().unwrap_or("?")
        ),
    };
    let merged = c["merged_from"]
        .as_array()
        .map(|m| format!(" — merged from {} exports", m.len()))
        .unwrap_or_default();
    let early = if e.stopped_early {
        " — stopped early"
    } else {
        ""
    };
    let order = match &e.compare {
        Some(cmp) => format!("\norder: {}", cmp.order_note),
        None => String::new(),
    };
    format!(
        "{source}: {what}; {shape}; started {}{merged}{early}{order}",
        e.started_at
    )
}

fn kind(p: &PhaseResult) -> String {
    format!("{:?}", p.kind).to_lowercase()
}

/// A plain run's phases, one row each, with every percentile and n beside them.
pub fn run_tables(e: &Export) -> Vec<Table> {
    let mut t = Table::new(
        "Phases (n = measured requests; at n=100 p99 is nearly the maximum)",
        &[
            "kind",
            "batch",
            "conc",
            "rate",
            "n",
            "errors",
            "p50 ms",
            "p90 ms",
            "p95 ms",
            "p99 ms",
            "p99.9 ms",
            "max ms",
            "p99/p50",
            "req/s",
            "samples/s",
            "efficiency",
            "$/1M",
        ],
    );
    for p in &e.phases {
        let l = &p.latency_ms;
        t.row(vec![
            kind(p),
            p.batch_size.to_string(),
            p.concurrency.to_string(),
            p.request_rate.map_or("inf".into(), |r| format!("{r:.1}")),
            p.n.to_string(),
            p.errors.values().sum::<u64>().to_string(),
            num(Some(l.p50), 1),
            num(Some(l.p90), 1),
            num(Some(l.p95), 1),
            num(Some(l.p99), 1),
            num(Some(l.p999), 1),
            num(Some(l.max), 1),
            num(p.p99_over_p50, 2),
            num(Some(p.req_per_s), 1),
            num(Some(p.samples_per_s), 1),
            num(p.batch_efficiency, 2),
            num(p.cost_per_1m_usd, 2),
        ]);
    }
    let mut out = vec![t];
    let mut kinds: Vec<&String> = e.phases.iter().flat_map(|p| p.errors.keys()).collect();
    kinds.sort();
    kinds.dedup();
    if !kinds.is_empty() {
        let mut t = Table::new(
            "Errors by kind",
            &["kind", "batch", "conc", "error", "count"],
        );
        for p in &e.phases {
            for (k, n) in &p.errors {
                t.row(vec![
                    kind(p),
                    p.batch_size.to_string(),
                    p.concurrency.to_string(),
                    k.clone(),
                    n.to_string(),
                ]);
            }
        }
        out.push(t);
    }
    if let Some(a) = &e.accuracy {
        let mut t = Table::new(
            format!("Accuracy {}/{}", a.passed, a.total),
            &["ok", "expected", "predicted", "premise", "hypothesis"],
        );
        for v in &a.samples {
            t.row(vec![
                if v.ok { "ok" } else { "MISMATCH" }.into(),
                v.expected.clone(),
                v.predicted.clone().unwrap_or_else(|| "-".into()),
                crate::accuracy::truncate(&v.premise, 48),
                crate::accuracy::truncate(&v.hypothesis, 48),
            ]);
        }
        out.push(t);
    }
    out
}

pub fn tables(e: &Export) -> Vec<Table> {
    if e.compare.is_some() {
        crate::compare::tables::tables(e)
    } else {
        run_tables(e)
    }
}

const CSV_HEADERS: [&str; 23] = [
    "source",
    "target",
    "kind",
    "batch_size",
    "concurrency",
    "request_rate",
    "pad_to_max",
    "max_len",
    "n",
    "ok",
    "errors",
    "min_ms",
    "mean_ms",
    "p50_ms",
    "p90_ms",
    "p95_ms",
    "p99_ms",
    "p999_ms",
    "max_ms",
    "p99_over_p50",
    "req_per_s",
    "samples_per_s",
    "cost_per_1m_usd",
];

/// One flat table for spreadsheets: a row per phase of every export, full precision.
pub fn csv_table(exports: &[(String, Export)]) -> Table {
    let mut t = Table::new("phases", &CSV_HEADERS);
    let f = |x: f64| x.to_string();
    let o = |x: Option<f64>| x.map(f).unwrap_or_default();
    for (source, e) in exports {
        for p in &e.phases {
            let l = &p.latency_ms;
            t.row(vec![
                source.clone(),
                p.target.clone().unwrap_or_default(),
                kind(p),
                p.batch_size.to_string(),
                p.concurrency.to_string(),
                o(p.request_rate),
                p.pad_to_max.to_string(),
                p.max_len.to_string(),
                p.n.to_string(),
                p.ok.to_string(),
                p.errors.values().sum::<u64>().to_string(),
                f(l.min),
                f(l.mean),
                f(l.p50),
                f(l.p90),
                f(l.p95),
                f(l.p99),
                f(l.p999),
                f(l.max),
                o(p.p99_over_p50),
                f(p.req_per_s),
                f(p.samples_per_s),
                o(p.cost_per_1m_usd),
            ]);
        }
    }
    t
}

/// Every export rendered in `format`, each under its heading (CSV: one table for all).
pub fn render(exports: &[(String, Export)], format: crate::cli::ReportFormat) -> String {
    use crate::cli::ReportFormat;
    if format == ReportFormat::Csv {
        return csv_table(exports).csv();
    }
    let mut out = String::new();
    for (i, (source, e)) in exports.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let head = heading(e, source);
        match format {
            ReportFormat::Markdown => out.push_str(&format!("## {head}\n\n")),
            _ => out.push_str(&format!("{head}\n\n")),
        }
        for (k, t) in tables(e).iter().enumerate() {
            if k > 0 {
                out.push('\n');
            }
            out.push_str(&match format {
                ReportFormat::Markdown => t.markdown(),
                _ => t.terminal(),
            });
        }
    }
    out
}
