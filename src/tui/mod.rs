//! The live terminal UI: a front-end that steers the engine with keys and draws its snapshots.
//! It never sees a single request: frame cost depends on the screen, not on the run's length.

pub mod app;
pub mod compare;
#[cfg(test)]
mod fixture;
pub mod format;
pub mod panels;
pub mod screen;
#[cfg(test)]
mod tests;

use crate::engine::{Command, Engine, RunReport};
use app::{Action, App, Info};
use ratatui::crossterm::event::{self, Event, KeyEventKind};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;
use tokio::sync::mpsc;

/// Writes an export of what has been measured so far; returns where, or why not.
pub type ExportNow = Box<dyn Fn(&RunReport) -> Result<String, String> + Send>;

/// Restores the terminal however the TUI is left (return, `?`, panic unwinding).
pub(crate) struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// Terminal events, read on a thread of their own: crossterm's reader blocks.
pub(crate) fn terminal_events() -> mpsc::UnboundedReceiver<Event> {
    let (tx, events) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        while let Ok(ev) = event::read() {
            if tx.send(ev).is_err() {
                break;
            }
        }
    });
    events
}

/// Runs the screen until the operator quits or a signal arrives, then stops the engine and
/// returns its report. The terminal is restored before this returns.
pub async fn run(
    engine: Engine,
    info: Info,
    fps: u64,
    export_now: ExportNow,
    abort: crate::headless::Abort,
) -> std::io::Result<RunReport> {
    let mut terminal = ratatui::try_init()?;
    let restore = Restore;
    let mut events = terminal_events();

    let mut snaps = engine.snapshots();
    let mut app = App::new(info, snaps.borrow().clone());
    let mut frame = tokio::time::interval(Duration::from_millis(1000 / fps.clamp(1, 60)));
    frame.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let signal = crate::headless::wait_for_signal();
    tokio::pin!(signal);
    let mut status_until = None;

    loop {
        // A bug in a panel must not lose the run: stop drawing, keep the measurements.
        if catch_unwind(AssertUnwindSafe(|| {
            terminal.draw(|f| screen::draw(f, &app)).map(|_| ())
        }))
        .is_err()
        {
            break;
        }
        tokio::select! {
            ev = events.recv() => match ev {
                Some(Event::Key(k)) if k.kind != KeyEventKind::Release => match app.on_key(k) {
                    Action::Engine(c) => engine.send(c),
                    Action::Quit => break,
                    Action::ExportNow => {
                        app.status = Some(match export_now(&engine.interim_report()) {
                            Ok(path) => format!("exported to {path}"),
                            Err(e) => format!("export failed: {e}"),
                        });
                        status_until = Some(tokio::time::Instant::now() + Duration::from_secs(4));
                    }
                    Action::None => {}
                },
                Some(_) => {} // resize and others: the next draw adapts
                None => break,
            },
            _ = frame.tick() => {
                app.snap = snaps.borrow_and_update().clone();
                if status_until.is_some_and(|t| tokio::time::Instant::now() >= t) {
                    app.status = None;
                    status_until = None;
                }
            }
            _ = &mut signal => break,
        }
    }

    app.status =
        Some("stopping: waiting briefly for requests in flight… (Ctrl-C again: exit now)".into());
    let _ = terminal.draw(|f| screen::draw(f, &app));
    engine.send(Command::Stop);
    let interim = engine.interim();
    let finishing = engine.finish();
    tokio::pin!(finishing);
    // The signal future already fired if that is how we got here: listen for a fresh one.
    let again = crate::headless::wait_for_signal();
    tokio::pin!(again);
    let report = loop {
        tokio::select! {
            report = &mut finishing => break report,
            ev = events.recv() => match ev {
                Some(Event::Key(k)) if app::is_interrupt(&k) => {
                    drop(restore);
                    crate::headless::abort_now(&abort, &interim);
                }
                Some(_) => {}
                None => break finishing.await,
            },
            _ = &mut again => {
                drop(restore);
                crate::headless::abort_now(&abort, &interim);
            }
        }
    };
    drop(restore);
    Ok(report)
}
