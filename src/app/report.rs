//! `report`: render exports, or merge exports of one workload into one.

use super::{AppError, Stdout, check_export_path, is_stdout, usage, write_export};
use crate::cli::ReportArgs;
use encbench_core::export::{write_atomic, write_text_atomic};
use encbench_report::{
    ReportFormat, load_any, merge::merge, read, render, render_loaded, validate,
};
use std::path::Path;

/// The file name alone: reports of the same exports read the same wherever they lie.
fn name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

pub(super) fn main(a: ReportArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    if a.format == ReportFormat::Html && !a.merge {
        return page(&a, stdout);
    }
    if a.output.is_some() && !a.merge {
        return Err(usage(
            "-o",
            "names where --merge writes its export or --format html its page; a report's tables go to stdout",
        ));
    }
    if !a.labels.is_empty() {
        return Err(usage("--label", "names curves: only with --format html"));
    }
    if !a.merge {
        let mut exports = Vec::with_capacity(a.files.len());
        for path in &a.files {
            let export = load_any(path).map_err(|e| usage(&path.display().to_string(), e))?;
            exports.push((name(path), export));
        }
        let text = render_loaded(&exports, a.format).map_err(|e| usage("--format", e))?;
        return stdout.print(&text);
    }
    let out = a.output.expect("clap requires -o with --merge");
    if a.files.len() < 2 {
        return Err(usage(
            "--merge",
            "one export given: a merge adds the exports of two or more hosts (`report FILE` shows one)",
        ));
    }
    check_export_path("-o", &out)?;
    let mut sources = Vec::with_capacity(a.files.len());
    for path in &a.files {
        let json = read(path).map_err(|e| usage(&path.display().to_string(), e))?;
        sources.push((name(path), json));
    }
    let exports = validate::inputs(sources).map_err(|e| usage("--merge", e))?;
    let merged = merge(&exports).map_err(|e| usage("--merge", e))?;
    let json = serde_json::to_value(&merged)
        .map_err(|e| AppError::Failed(format!("--merge: cannot serialize the result: {e}")))?;
    // The inputs were checked one by one; this catches what only their sum gets wrong.
    if let Some(why) = validate::schema_violation(&json) {
        return Err(usage(
            "--merge",
            format!("the exports add up to one outside the export schema: {why}"),
        ));
    }
    let (shown, to) = if is_stdout(&out) {
        write_export("-o", &out, &merged, stdout)?;
        ("merged".to_string(), "stdout".to_string())
    } else {
        write_atomic(&out, &merged)
            .map_err(|e| AppError::Failed(format!("-o {}: cannot write: {e}", out.display())))?;
        (name(&out), out.display().to_string())
    };
    stdout.tables(Some(&out), &render(&[(shown, merged)], a.format))?;
    crate::stderr::say(format_args!("merged {} exports into {to}", exports.len()));
    Ok(())
}

/// `--format html`: one page of every file, each named by its `--label` or its file name,
/// written atomically to `-o` (or to stdout).
fn page(a: &ReportArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    if a.labels.len() > a.files.len() {
        return Err(usage(
            "--label",
            format!(
                "{} for {}: one per file, in their order",
                encbench_core::text::count(a.labels.len(), "label"),
                encbench_core::text::count(a.files.len(), "file")
            ),
        ));
    }
    if let Some(out) = &a.output {
        check_export_path("-o", out)?;
    }
    let mut files = Vec::with_capacity(a.files.len());
    for (i, path) in a.files.iter().enumerate() {
        let shown = path.display().to_string();
        let export = load_any(path).map_err(|e| usage(&shown, e))?;
        let label = a.labels.get(i).cloned().unwrap_or_else(|| name(path));
        files.push((label, export));
    }
    let html = render_loaded(&files, ReportFormat::Html).map_err(|e| usage("--format", e))?;
    match &a.output {
        Some(out) if !is_stdout(out) => {
            write_text_atomic(out, &html).map_err(|e| {
                AppError::Failed(format!("-o {}: cannot write: {e}", out.display()))
            })?;
            crate::stderr::say(format_args!("report written to {}", out.display()));
            Ok(())
        }
        _ => stdout.print(&html),
    }
}
