//! The binary's lines on stderr. Only the front-ends (`app`, `headless`, `tui`) write there:
//! the layers below report through returned values, callbacks and the engine's timeline,
//! and each front-end decides what shows where (a line here, or the live screen's footer).

use std::io::Write;

/// A line on stderr that cannot fail: with stderr closed or full (`2>&-`, `2>/dev/full`,
/// `2>&1 | head -1`) `eprintln!` panics, and a progress line is not worth a run.
pub fn say(args: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// `say` without the newline (a progress line redrawn in place).
pub fn say_raw(args: std::fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `say_raw` that tells whether the line got out: a progress line on a terminal is how a
/// front-end learns that the terminal went away without a SIGHUP.
pub fn try_say_raw(args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    let mut err = std::io::stderr().lock();
    err.write_fmt(args).and_then(|()| err.flush())
}

/// Whether a read or write on a terminal failed because the terminal is gone: EIO once its
/// session ended (tmux session killed, ssh dropped), ENXIO from a pty whose other end is
/// closed, EPIPE. The numbers are the same on Linux, macOS and the BSDs.
pub fn terminal_gone(e: &std::io::Error) -> bool {
    const EIO: i32 = 5;
    const ENXIO: i32 = 6;
    e.kind() == std::io::ErrorKind::BrokenPipe || matches!(e.raw_os_error(), Some(EIO | ENXIO))
}
