//! `report`: render exports, or merge exports of one workload into one.

use super::{AppError, Stdout, usage};
use crate::cli::ReportArgs;
use crate::export::{check_writable, write_atomic};
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
    check_writable(&out)
        .map_err(|e| usage("-o", format!("{}: cannot write: {e}", out.display())))?;
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
    write_atomic(&out, &merged)
        .map_err(|e| AppError::Failed(format!("-o {}: cannot write: {e}", out.display())))?;
    stdout.print(&render(&[(name(&out), merged)], a.format))?;
    crate::failure::say(format_args!(
        "merged {} exports into {}",
        exports.len(),
        out.display()
    ));
    Ok(())
}
