//! Internal failures. A panic anywhere (the engine's thread, a request task, a front-end) is
//! recorded here by the process's panic hook, so the run still ends the way a failure must:
//! one line on stderr, an export that holds what was measured and says what failed, and exit
//! code 1, never 0.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

static FIRST: OnceLock<String> = OnceLock::new();

/// Set while a screen draws on the terminal a line would land on (`hush`).
static HUSHED: AtomicBool = AtomicBool::new(false);

/// Lines said from layers below the front-end (a server not ready yet) would be drawn
/// over a live screen that is not theirs; while `on`, `say` and `say_raw` drop them, the
/// screen showing the same state its own way.
pub fn hush(on: bool) {
    HUSHED.store(on, Ordering::Relaxed);
}

/// Replaces the default hook (a multi-line message and backtrace, printed over the live
/// screen where nobody can read it) with a record of the first panic; the binary reports it
/// once the terminal is restored.
pub fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let _ = FIRST.set(format!("{}{at}", what.replace('\n', " ")));
    }));
}

/// The first panic of the process, if any.
pub fn first() -> Option<&'static str> {
    FIRST.get().map(String::as_str)
}

/// What a run that met an internal failure says about it: `error` if the run knew what went
/// wrong, else the first panic.
pub fn describe(error: Option<String>) -> Option<String> {
    error.or_else(|| first().map(|p| format!("internal failure: {p}")))
}

/// Whether the test that started this process asked for the fault `point`. Debug builds
/// only: the tests run one, a release binary never fails on purpose.
/// Read once: it is asked on the dispatch path.
pub fn injected(point: &str) -> bool {
    static FAULT: OnceLock<Option<String>> = OnceLock::new();
    cfg!(debug_assertions)
        && FAULT
            .get_or_init(|| std::env::var("ENCBENCH_TEST_FAULT").ok())
            .as_deref()
            == Some(point)
}

/// A line on stderr that cannot fail: with stderr closed or full (`2>&-`, `2>/dev/full`,
/// `2>&1 | head -1`) `eprintln!` panics, and a progress line is not worth a run.
pub fn say(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if HUSHED.load(Ordering::Relaxed) {
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// `say` without the newline (a progress line redrawn in place).
pub fn say_raw(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    if HUSHED.load(Ordering::Relaxed) {
        return;
    }
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `say_raw` that tells whether the line got out: a progress line on a terminal is how a
/// front-end learns that the terminal went away without a SIGHUP.
pub fn try_say_raw(args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
    use std::io::Write;
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
