//! `--records`: its path checked with the other files before any load, the writer opened
//! for the engine, and closed however the run ends (its end, or a second interrupt).

use super::super::{AppError, check_export_path, is_stdout, usage};
use crate::cli::RunArgs;
use encbench_core::export::records::Records;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Refuses what could not work before anything is sent; `live` when the screen will own
/// the terminal.
pub(super) fn check_path(a: &RunArgs, live: bool) -> Result<(), AppError> {
    let Some(path) = &a.records else {
        return Ok(());
    };
    if is_stdout(path) {
        if live {
            return Err(usage(
                "--records",
                "- writes to stdout, which the live screen draws on: add --headless, or give a file",
            ));
        }
        if a.export.as_deref().is_some_and(is_stdout) {
            return Err(usage(
                "--records",
                "- writes to stdout, which --export - takes already: give one of them a file",
            ));
        }
        return Ok(());
    }
    for (flag, other) in [("--export", &a.export), ("--report", &a.report)] {
        if other
            .as_deref()
            .is_some_and(|o| !is_stdout(o) && same_place(path, o))
        {
            return Err(usage(
                "--records",
                format!("{} is {flag}'s file too: give each its own", path.display()),
            ));
        }
    }
    check_export_path("--records", path)
}

/// Where `p` is, links and `..` resolved; a file not made yet is its folder's.
fn place(p: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(p).ok().or_else(|| {
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
    })
}

fn same_place(a: &Path, b: &Path) -> bool {
    matches!((place(a), place(b)), (Some(x), Some(y)) if x == y)
}

/// The records' writer. A FIFO is opened here, before anything is sent: its open waits for
/// a reader, said on stderr, and a signal ends the wait (and the run, which has measured
/// nothing yet).
pub(super) async fn open(path: Option<&Path>) -> Result<Option<Arc<Records>>, AppError> {
    let Some(path) = path else {
        return Ok(None);
    };
    let cannot = |e: std::io::Error| {
        usage(
            "--records",
            format!("{}: cannot write: {e}", path.display()),
        )
    };
    let records = if is_stdout(path) {
        Records::to_stdout()
    } else if Records::is_stream(path) {
        Records::to_opened(reader_of(path).await?.map_err(cannot)?)
    } else {
        Records::to_path(path).map_err(cannot)?
    };
    Ok(Some(Arc::new(records)))
}

/// `path` opened for writing once something reads it, or the run stopped by a signal.
async fn reader_of(path: &Path) -> Result<std::io::Result<std::fs::File>, AppError> {
    crate::stderr::say(format_args!(
        "--records {}: waiting for a reader (Ctrl-C stops)",
        path.display()
    ));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let p = path.to_path_buf();
    // A thread of its own: the open cannot be cancelled, and is left behind if a signal
    // comes first (the process ends then).
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::OpenOptions::new().write(true).open(p));
    });
    let mut signals = crate::signals::signals();
    tokio::select! {
        opened = rx => Ok(opened.unwrap_or_else(|_| Err(std::io::Error::other("the open failed")))),
        _ = signals.recv() => Err(AppError::Failed(format!(
            "--records {}: stopped while waiting for a reader; nothing was sent",
            path.display()
        ))),
    }
}

/// Ends the records written to `path`, saying where they went. A signal while a FIFO's
/// reader does not read ends the wait: the lines not written are lost, and said.
pub(super) async fn close_to(
    path: Option<&Path>,
    records: Option<&Arc<Records>>,
) -> Result<(), AppError> {
    let (Some(path), Some(records)) = (path, records) else {
        return Ok(());
    };
    let closing = {
        let records = records.clone();
        tokio::task::spawn_blocking(move || records.close())
    };
    let mut signals = crate::signals::signals();
    tokio::pin!(closing);
    let closed = tokio::select! {
        c = &mut closing => c,
        _ = signals.recv() => {
            records.give_up();
            closing.await
        }
    };
    let closed =
        closed.unwrap_or_else(|_| Err(std::io::Error::other("the records' writer failed")));
    said_closed(path, closed)
}

/// `close_to` at once, for a second interrupt: at most a second for what is queued.
pub(super) fn close_now(path: Option<&Path>, records: Option<&Records>) -> Result<(), AppError> {
    let (Some(path), Some(records)) = (path, records) else {
        return Ok(());
    };
    said_closed(
        path,
        records.close_within(std::time::Duration::from_secs(1)),
    )
}

fn said_closed(path: &Path, closed: std::io::Result<Option<u64>>) -> Result<(), AppError> {
    match closed {
        Ok(Some(n)) if !is_stdout(path) => {
            crate::stderr::say(format_args!(
                "records of {} written to {}",
                encbench_core::text::count(n, "request"),
                path.display()
            ));
            Ok(())
        }
        Ok(_) => Ok(()),
        // A reader gone (`| head`) is not a failure, as for the export.
        Err(e) if is_stdout(path) && e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(AppError::Failed(format!(
            "--records {}: cannot write: {e}",
            path.display()
        ))),
    }
}

/// `--records -`: the tables then go to stderr, as with `--export -`.
pub(super) fn stdout_taken(path: Option<&Path>) -> Option<&Path> {
    path.filter(|p| is_stdout(p))
}
