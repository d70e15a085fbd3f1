//! The event loop of the screens that draw a view published by work of their own (a
//! comparison, a tune): keys, signals and the terminal's loss stop the work, its result
//! comes back with the terminal restored, and a second interrupt aborts.

use crate::tui::state::is_interrupt;
use ratatui::Frame;
use ratatui::crossterm::event::{Event, KeyCode, KeyEventKind};
use std::future::Future;
use std::time::Duration;
use tokio::sync::watch;

/// Draws `view` with `draw` until `work` ends and the operator quits. Quitting early (q,
/// Esc, Ctrl-C, SIGINT, SIGTERM, the terminal gone) sends `stop`; the work's result is
/// returned either way, with the terminal restored. Interrupting again while it stops calls
/// `abort`, then exits at once.
pub async fn run<V: Clone, E>(
    mut view: watch::Receiver<V>,
    stop: watch::Sender<bool>,
    work: impl Future<Output = E>,
    abort: &dyn Fn(&V),
    draw: fn(&mut Frame, &V, bool),
) -> std::io::Result<E> {
    let hangup = crate::signals::Hangup::default();
    let (mut terminal, restore) = super::terminal::init(&hangup)?;
    let mut events = super::terminal::events(&hangup);
    let mut signals = crate::signals::signals();
    // The terminal gone stops the comparison once, like SIGHUP; never as a second interrupt.
    let (mut hung_up, mut events_open) = (false, true);
    tokio::pin!(work);
    let mut frame = tokio::time::interval(Duration::from_millis(100));
    frame.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut result = None;
    let mut quitting = false;
    loop {
        let snapshot = view.borrow_and_update().clone();
        terminal.draw(|f| draw(f, &snapshot, quitting))?;
        if quitting && let Some(e) = result.take() {
            drop(restore);
            return Ok(e);
        }
        let interrupted = tokio::select! {
            e = &mut work, if result.is_none() => {
                result = Some(e);
                false
            }
            ev = events.recv(), if events_open => match ev {
                Some(Event::Key(k)) if k.kind != KeyEventKind::Release => {
                    matches!(k.code, KeyCode::Char('q') | KeyCode::Esc) || is_interrupt(&k)
                }
                Some(_) => false,
                None => {
                    events_open = false;
                    hangup.hang_up();
                    false
                }
            },
            () = hangup.gone(), if !hung_up => {
                hung_up = true;
                !quitting
            }
            Some(()) = signals.recv() => true,
            _ = frame.tick() => false,
        };
        if interrupted {
            if quitting && result.is_none() {
                drop(restore);
                abort(&view.borrow());
                std::process::exit(crate::signals::ABORT_EXIT_CODE);
            }
            quitting = true;
            let _ = stop.send(true);
        }
    }
}
