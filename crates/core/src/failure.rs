//! Internal failures. A panic anywhere (the engine's thread, a request task, a front-end) is
//! recorded here by the panic hook the binary installs, so the run still ends the way a
//! failure must: one line on stderr, an export that holds what was measured and says what
//! failed, and exit code 1, never 0.

use std::sync::OnceLock;

static FIRST: OnceLock<String> = OnceLock::new();

/// Keeps `what` when it is the process's first panic: the first is the cause, any later one
/// most likely its consequence.
pub fn record(what: String) {
    let _ = FIRST.set(what);
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
