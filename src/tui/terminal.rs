//! The terminal the screens draw on, set up and restored so that losing it (a tmux session
//! killed, an ssh connection dropped) cannot lose the run. ratatui's own `init`/`restore` is
//! not used: its restore and its terminal's drop print their failures with `eprintln!`, which
//! panics when stderr is that same dead terminal, and its panic hook restores (and prints)
//! again, a panic while panicking: the process aborted (exit 134) before any export.

use crate::signals::Hangup;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event};
use ratatui::crossterm::{execute, terminal};
use std::io::{self, Write};
use tokio::sync::mpsc;

/// The live screens' terminal: stdout through `TtyOut`.
pub type Term = Terminal<CrosstermBackend<TtyOut>>;

/// Stdout for drawing. A write that fails means the screen cannot be drawn any more: it is
/// said through `hangup` (the run then stops as on SIGHUP) and swallowed, so that neither a
/// frame nor the terminal's drop ever fails on it.
pub struct TtyOut {
    out: io::Stdout,
    hangup: Hangup,
}

impl TtyOut {
    fn failed(&self, e: &io::Error) -> bool {
        if e.kind() == io::ErrorKind::Interrupted {
            return false;
        }
        self.hangup.hang_up();
        true
    }
}

impl Write for TtyOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.hangup.is_gone() {
            return Ok(buf.len());
        }
        match self.out.write(buf) {
            Err(e) if self.failed(&e) => Ok(buf.len()),
            r => r,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.hangup.is_gone() {
            return Ok(());
        }
        match self.out.flush() {
            Err(e) if self.failed(&e) => Ok(()),
            r => r,
        }
    }
}

/// Restores the terminal however the screen is left (return, `?`, panic unwinding), and
/// never fails doing so: on a terminal that is gone there is nothing to restore.
pub(crate) struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = terminal::disable_raw_mode();
        let _ = execute!(
            io::stdout(),
            terminal::LeaveAlternateScreen,
            ratatui::crossterm::cursor::Show
        );
    }
}

/// Raw mode and the alternate screen, and a terminal that draws through `TtyOut`.
pub(crate) fn init(hangup: &Hangup) -> io::Result<(Term, Restore)> {
    terminal::enable_raw_mode()?;
    let restore = Restore;
    execute!(io::stdout(), terminal::EnterAlternateScreen)?;
    let out = TtyOut {
        out: io::stdout(),
        hangup: hangup.clone(),
    };
    Ok((Terminal::new(CrosstermBackend::new(out))?, restore))
}

/// Terminal events, read on a thread of their own: crossterm's reader blocks. A read that
/// fails is the terminal gone.
pub(crate) fn events(hangup: &Hangup) -> mpsc::UnboundedReceiver<Event> {
    let (tx, events) = mpsc::unbounded_channel();
    let hangup = hangup.clone();
    std::thread::spawn(move || {
        loop {
            match event::read() {
                Ok(ev) => {
                    if tx.send(ev).is_err() {
                        break;
                    }
                }
                Err(_) => {
                    hangup.hang_up();
                    break;
                }
            }
        }
    });
    events
}
