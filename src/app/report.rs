//! `report`: render exports, or merge exports of one workload into one.

use super::{AppError, Stdout, check_export_path, is_stdout, usage, write_export};
use crate::cli::ReportArgs;
use crate::export::write_atomic;
use crate::report::{load_any, merge::merge, read, render, render_loaded, validate};
use std::path::Path;

/// The file name alone: reports of the same exports read the same wherever they lie.
fn name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

pub(super) fn main(a: ReportArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
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
    crate::failure::say(format_args!("merged {} exports into {to}", exports.len()));
    Ok(())
}
