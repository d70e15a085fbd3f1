//! SIGINT, SIGTERM and SIGHUP for every front-end: the first asks the run to stop and keep
//! what was measured; a second means now: what was measured so far is written and the
//! process exits. SIGHUP (the terminal or the ssh session went away) is one more way of
//! being asked to stop: left to its default it killed the process with nothing written and
//! the terminal left on the alternate screen.

use encbench_core::results::RunReport;
use encbench_load::engine::Interim;

/// What a second interrupt does: write what was measured so far, then the process exits at
/// once (code 130) instead of waiting for requests in flight or an accuracy check.
pub type Abort = Box<dyn Fn(&RunReport) + Send + Sync>;

/// Exit code after a second interrupt (128 + SIGINT, as shells report it).
pub const ABORT_EXIT_CODE: i32 = 130;

/// Writes the interim report through `abort` and exits the process.
pub fn abort_now(abort: &Abort, interim: &Interim) -> ! {
    let mut report = interim.report();
    report.error = Some("interrupted twice: requests in flight were not waited for".into());
    // Nobody will wait for them now: they are abandoned, not silently missing.
    if let Some(p) = report.phases.last_mut() {
        p.abandon_in_flight();
    }
    abort(&report);
    std::process::exit(ABORT_EXIT_CODE)
}

/// Every SIGINT/SIGTERM/SIGHUP from now on, one message each: the first stops, a second means now.
/// "From now on": the handlers are installed before this returns, not when the task that
/// forwards them first runs, so a signal right after cannot kill the process.
pub fn signals() -> tokio::sync::mpsc::UnboundedReceiver<()> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        let mut hup = signal(SignalKind::hangup()).expect("SIGHUP handler");
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = int.recv() => {},
                    _ = term.recv() => {},
                    _ = hup.recv() => {},
                }
                if tx.send(()).is_err() {
                    break;
                }
            }
        });
    }
    #[cfg(not(unix))]
    tokio::spawn(async move {
        loop {
            wait_for_signal().await;
            if tx.send(()).is_err() {
                break;
            }
        }
    });
    rx
}

/// The terminal went away without a SIGHUP reaching us (`trap '' HUP`, a shell that stays):
/// a read or a write on it failed. Ends the run as SIGHUP's first stop does, and is never a
/// second interrupt: every later write to the terminal fails the same way.
#[derive(Clone)]
pub struct Hangup(std::sync::Arc<tokio::sync::watch::Sender<bool>>);

impl Default for Hangup {
    fn default() -> Hangup {
        Hangup(std::sync::Arc::new(tokio::sync::watch::Sender::new(false)))
    }
}

impl Hangup {
    pub fn hang_up(&self) {
        self.0.send_replace(true);
    }

    pub fn is_gone(&self) -> bool {
        *self.0.borrow()
    }

    /// Once the terminal has gone (at once if it already has).
    pub async fn gone(&self) {
        let _ = self.0.subscribe().wait_for(|gone| *gone).await;
    }
}

/// The first reason to stop: a signal, or the terminal gone.
pub async fn stop_asked(hangup: &Hangup) {
    tokio::select! {
        () = wait_for_signal() => {},
        () = hangup.gone() => {},
    }
}

/// The next SIGINT, SIGTERM or SIGHUP.
pub async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
        let mut hup = signal(SignalKind::hangup()).expect("SIGHUP handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {},
            _ = term.recv() => {},
            _ = hup.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}
