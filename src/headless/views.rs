//! Headless progress of work that publishes a view of its own (a comparison, a tune): lines
//! on stderr as it goes; SIGINT, SIGTERM and SIGHUP stop it, keeping what was measured, and
//! a second one calls `abort`, then the process exits.

use crate::signals::ABORT_EXIT_CODE;
use std::future::Future;
use std::time::Duration;
use tokio::sync::watch;

/// How often `say` is asked for lines; every fifth time it is also due a progress line.
const TICK: Duration = Duration::from_secs(1);
const PROGRESS_EVERY: u32 = 5;

/// Runs `work` to its end, printing what `say(view, progress_due)` returns each second;
/// `stopping` is said at the first interrupt (what ends now).
pub async fn run<V, E>(
    stopping: &str,
    view: watch::Receiver<V>,
    stop: watch::Sender<bool>,
    work: impl Future<Output = E>,
    abort: &dyn Fn(&V),
    mut say: impl FnMut(&V, bool) -> Vec<String>,
) -> E {
    let mut progress_view = view.clone();
    let progress = async {
        let mut iv = tokio::time::interval(TICK);
        iv.tick().await;
        for k in 1u32.. {
            iv.tick().await;
            for line in say(&progress_view.borrow_and_update(), k % PROGRESS_EVERY == 0) {
                crate::stderr::say(format_args!("{line}"));
            }
        }
    };
    let mut signals = crate::signals::signals();
    let interrupts = async {
        signals.recv().await;
        crate::stderr::say(format_args!(
            "\nstopping: {stopping}, results so far are kept (again to exit at once)"
        ));
        let _ = stop.send(true);
        signals.recv().await;
        abort(&view.borrow());
        std::process::exit(ABORT_EXIT_CODE)
    };
    tokio::select! {
        e = work => e,
        () = progress => unreachable!("progress never ends"),
        () = interrupts => unreachable!("the process has exited"),
    }
}
