//! `report`: exports into tables — for the terminal, for a Markdown document, for a
//! spreadsheet — and `--merge`, which adds exports of one workload (several hosts loading one
//! endpoint) into one export with exact combined percentiles.
//!
//! This is the one renderer of results: a run, a comparison and a cold-start probe print
//! their own export through it when they end, so `report` on that export prints the same.

mod cell;
pub mod cold_start;
pub mod compare;
mod differences;
mod endpoint_lost;
pub mod html;
mod lengths;
pub mod merge;
mod repeats;
mod rerank;
pub use rerank::answer_in_documents;
mod run;
mod server;
pub mod shards;
mod slices;
pub mod table;
mod tune;
pub mod validate;

use encbench_core::export::Export;
use encbench_core::results::cold_start::ColdStartExport;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use table::{Cell, Estimate, Table};

/// How `report` renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    /// Aligned columns.
    Terminal,
    /// Pipe tables to paste into a document.
    Markdown,
    /// One row per phase of every export, for spreadsheets.
    Csv,
    /// One self-contained page: charts (inline SVG) over the Markdown tables; the curves
    /// of several exports overlaid.
    Html,
}

impl encbench_core::choice::Choice for ReportFormat {
    const ALL: &'static [ReportFormat] = &[
        ReportFormat::Terminal,
        ReportFormat::Markdown,
        ReportFormat::Csv,
        ReportFormat::Html,
    ];

    fn name(self) -> &'static str {
        match self {
            ReportFormat::Terminal => "terminal",
            ReportFormat::Markdown => "markdown",
            ReportFormat::Csv => "csv",
            ReportFormat::Html => "html",
        }
    }
}

encbench_core::parse_by_name!(ReportFormat);

/// Largest export read: a day-long run with a timeline entry per second is tens of MiB.
pub const MAX_EXPORT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads an export, naming the file in every error.
pub fn load(path: &Path) -> Result<Export, String> {
    parse(read(path)?)
}

/// A file's JSON, not yet read as an export.
pub fn read(path: &Path) -> Result<Value, String> {
    let text = encbench_core::input::read_capped_text(path, MAX_EXPORT_BYTES)
        .map_err(|e| format!("cannot read: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("not an encbench-tui export: {e}"))
}

/// What `report` reads: a run's or a comparison's export, or a cold-start probe's.
#[derive(Debug, Clone)]
// One per file `report` reads, a handful at most: boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Loaded {
    Run(Export),
    ColdStart(ColdStartExport),
}

/// Reads either kind of export, naming the file in every error.
pub fn load_any(path: &Path) -> Result<Loaded, String> {
    let json = read(path)?;
    if cold_start::is_one(&json) {
        cold_start::parse(json).map(Loaded::ColdStart)
    } else {
        // Shown or merged, an export is held to the same checks: a forged count is no more
        // a measurement on its own than added to another.
        validate::check(json).map(|e| Loaded::Run(with_intervals(e)))
    }
}

/// An export written before the intervals, given each phase's from the histograms its
/// percentiles were read from: the intervals its run would have written. (Tokenization and
/// the server's time keep no histogram, and stay without.)
fn with_intervals(mut e: Export) -> Export {
    for p in &mut e.phases {
        let summaries = [
            (&mut p.latency_ms, Some(&p.histogram_hdr_b64)),
            (&mut p.service_ms, p.service_hdr_b64.as_ref()),
            (&mut p.dispatch_delay_ms, p.dispatch_delay_hdr_b64.as_ref()),
        ];
        for (s, b64) in summaries {
            if s.ci95.is_none()
                && let Some(h) = b64.and_then(|b| encbench_core::results::decode_histogram(b).ok())
            {
                s.ci95 = encbench_core::interval::Ci95::of(&h);
            }
        }
    }
    e
}

/// JSON as an export of the version this one reads.
pub fn parse(json: Value) -> Result<Export, String> {
    let export: Export =
        serde_json::from_value(json).map_err(|e| format!("not an encbench-tui export: {e}"))?;
    if export.schema_version != encbench_core::export::SCHEMA_VERSION {
        return Err(format!(
            "schema_version {} (this version reads {})",
            export.schema_version,
            encbench_core::export::SCHEMA_VERSION
        ));
    }
    Ok(export)
}

/// The run's target as its export records it (never credentials), named as the run named
/// it: the URL, or `sagemaker:ENDPOINT` with its routing.
fn describe_target(e: &Export) -> String {
    let t = &e.config["target"];
    let s = |k: &str| t[k].as_str();
    match s("endpoint") {
        Some(endpoint) => encbench_core::text::sagemaker_target(
            endpoint,
            [
                "target_container",
                "inference_component",
                "target_model",
                "target_variant",
            ]
            .map(s),
        ),
        None => s("url").unwrap_or("unknown target").to_string(),
    }
}

/// When the export's run started, and whether it is several runs merged.
fn started(e: &Export) -> String {
    let merged = e.config["merged_from"]
        .as_array()
        .map(|m| format!(" — merged from {} exports", m.len()))
        .unwrap_or_default();
    let shard = shards::of(e)
        .ok()
        .flatten()
        .map(|s| format!(" — shard {s}: this host's part of one run"))
        .unwrap_or_default();
    format!("started {}{merged}{shard}", e.started_at)
}

/// How the tables show a percentile, said once above them where the export has intervals.
fn intervals_line(e: &Export) -> Option<String> {
    e.phases
        .iter()
        .any(|p| p.latency_ms.ci95.is_some())
        .then(|| {
            "percentiles with 95 % intervals (order statistics): p [low, high]; ≥ low where \
             too few requests bound it from above"
                .into()
        })
}

/// What the export holds, in a few lines above its tables.
pub fn heading(e: &Export) -> Vec<String> {
    if e.compare.is_some() {
        compare::heading(e)
    } else if e.tune.is_some() {
        tune::heading(e)
    } else {
        run::heading(e)
    }
}

pub fn tables(e: &Export) -> Vec<Table> {
    let mut tables = if e.compare.is_some() {
        compare::tables(e)
    } else if e.tune.is_some() {
        tune::tables(e)
    } else {
        run::tables(e)
    };
    if rerank::is_rerank(e) {
        rerank::tables(&mut tables);
    }
    tables
}

const CSV_HEADERS: [&str; 24] = [
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
    // true: fewer measured requests than the concurrency cap, the three rates before it
    // are not meaningful (the terminal and Markdown tables show them as n<c).
    "rate_not_meaningful",
];

/// One flat table for spreadsheets: a row per phase of every export, full precision.
pub fn csv_table(exports: &[(String, Export)]) -> Table {
    use encbench_core::percentile::Percentile as P;
    let mut t = Table::new("phases", &CSV_HEADERS);
    let f = |x: f64| x.to_string();
    let o = |x: Option<f64>| x.map(f).unwrap_or_default();
    for (source, e) in exports {
        for p in &e.phases {
            let l = &p.latency_ms;
            let at = |q| Cell::from(Estimate::of(l, q, 0).full());
            let text = |s: String| Cell::Text(s);
            t.row(vec![
                text(source.clone()),
                text(p.target.clone().unwrap_or_default()),
                text(p.kind.name().into()),
                text(p.batch_size.to_string()),
                text(p.concurrency.to_string()),
                text(o(p.request_rate)),
                text(p.pad_to_max.to_string()),
                text(p.max_len.to_string()),
                text(p.n.to_string()),
                text(p.ok.to_string()),
                text(p.error_count().to_string()),
                text(f(l.min)),
                text(f(l.mean)),
                at(P::P50),
                at(P::P90),
                at(P::P95),
                at(P::P99),
                at(P::P999),
                text(f(l.max)),
                text(o(p.p99_over_p50)),
                text(f(p.req_per_s)),
                text(f(p.samples_per_s)),
                text(o(p.cost_per_1m_usd)),
                text(p.rate_not_meaningful.to_string()),
            ]);
        }
    }
    t
}

/// Every export rendered in `format`, each under its heading (CSV: one table for all). With
/// more than one export each heading starts with the export's name.
pub fn render(exports: &[(String, Export)], format: ReportFormat) -> String {
    match format {
        ReportFormat::Csv => return csv_table(exports).csv(),
        ReportFormat::Html => return html::render(exports),
        ReportFormat::Terminal | ReportFormat::Markdown => {}
    }
    sections(
        exports
            .iter()
            .map(|(s, e)| (s.as_str(), heading(e), tables(e))),
        format,
    )
}

/// [`render`] of exports of either kind. A CSV is one table, so it takes one kind only.
pub fn render_loaded(files: &[(String, Loaded)], format: ReportFormat) -> Result<String, String> {
    let (mut runs, mut colds) = (Vec::new(), Vec::new());
    for (source, l) in files {
        match l {
            Loaded::Run(e) => runs.push((source.clone(), e.clone())),
            Loaded::ColdStart(e) => colds.push((source.clone(), e)),
        }
    }
    if format == ReportFormat::Html {
        return if colds.is_empty() {
            Ok(html::render(&runs))
        } else {
            Err("html draws runs and comparisons: a cold-start export has no curves (use --format markdown)".into())
        };
    }
    if format == ReportFormat::Csv {
        return match (runs.is_empty(), colds.is_empty()) {
            (_, true) => Ok(csv_table(&runs).csv()),
            (true, false) => Ok(cold_start::csv_table(&colds).csv()),
            (false, false) => {
                Err("a CSV is one table: give run exports or cold-start exports, not both".into())
            }
        };
    }
    Ok(sections(
        files.iter().map(|(s, l)| match l {
            Loaded::Run(e) => (s.as_str(), heading(e), tables(e)),
            Loaded::ColdStart(e) => (s.as_str(), cold_start::heading(e), cold_start::tables(e)),
        }),
        format,
    ))
}

/// Each (source, heading, tables) in `format`; with more than one, each heading starts with
/// its source's name.
fn sections<'a>(
    parts: impl ExactSizeIterator<Item = (&'a str, Vec<String>, Vec<Table>)>,
    format: ReportFormat,
) -> String {
    let several = parts.len() > 1;
    let mut out = String::new();
    for (i, (source, mut head, tables)) in parts.enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if several {
            head[0] = format!("{source}: {}", head[0]);
        }
        // Headings quote the export (its target, its error): a file's text, like the tables'.
        let head: Vec<String> = head
            .iter()
            .map(|l| encbench_core::scrub::controls(l).into_owned())
            .collect();
        match format {
            ReportFormat::Markdown => {
                let _ = write!(out, "## {}\n\n", head[0]);
                for line in &head[1..] {
                    let _ = writeln!(out, "{line}  ");
                }
            }
            _ => {
                for line in &head {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
        for t in tables {
            out.push('\n');
            out.push_str(&match format {
                ReportFormat::Markdown => t.markdown(),
                _ => t.terminal(),
            });
        }
    }
    out
}
