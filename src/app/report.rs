//! `report`: render exports, or merge exports of one workload into one.

use super::{AppError, Stdout, usage};
use crate::cli::ReportArgs;
use crate::export::{check_writable, write_atomic};
use crate::report::{load, merge::merge, render};

pub(super) fn main(a: ReportArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    if let Some(out) = a.output.as_ref().filter(|_| a.merge) {
        check_writable(out)
            .map_err(|e| usage("-o", format!("{}: cannot write: {e}", out.display())))?;
    }
    let mut exports = Vec::with_capacity(a.files.len());
    for path in &a.files {
        let shown = path.display().to_string();
        let export = load(path).map_err(|e| usage(&shown, e))?;
        // The file name alone: reports of the same exports read the same wherever they lie.
        let name = path
            .file_name()
            .map_or(shown, |n| n.to_string_lossy().into_owned());
        exports.push((name, export));
    }
    if !a.merge {
        return stdout.print(&render(&exports, a.format));
    }
    let merged = merge(&exports).map_err(|e| usage("--merge", e))?;
    let out = a.output.expect("clap requires -o with --merge");
    write_atomic(&out, &merged)
        .map_err(|e| AppError::Failed(format!("-o {}: cannot write: {e}", out.display())))?;
    let name = out
        .file_name()
        .map_or("merged".into(), |n| n.to_string_lossy().into_owned());
    stdout.print(&render(&[(name, merged)], a.format))?;
    eprintln!("merged {} exports into {}", exports.len(), out.display());
    Ok(())
}
