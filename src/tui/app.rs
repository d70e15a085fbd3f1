//! The TUI's state (what to show) and its key bindings (what each key asks of the engine).
//! Rendering never mutates this; keys never draw.

use crate::engine::{Command, Snapshot};
use crate::sweep::SweepKind;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::sync::Arc;

/// What does not change during a run.
#[derive(Debug, Clone)]
pub struct Info {
    pub target: String,
    pub engine: String,
    pub simulated: bool,
    pub knee: f64,
    pub window_s: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Engine(Command),
    ExportNow,
    Quit,
    None,
}

pub struct App {
    pub info: Info,
    pub snap: Arc<Snapshot>,
    pub show_help: bool,
    /// Histogram over the whole run instead of the recent window.
    pub whole_run: bool,
    /// A short message in the footer (export written, stopping…).
    pub status: Option<String>,
}

/// ↑/↓ multiply or divide the request rate by this.
pub const RATE_STEP: f64 = 1.25;

/// Ctrl-C as a key press: the raw-mode terminal delivers it as a key, not as SIGINT.
pub fn is_interrupt(key: &KeyEvent) -> bool {
    key.kind != ratatui::crossterm::event::KeyEventKind::Release
        && key.code == KeyCode::Char('c')
        && key.modifiers.contains(KeyModifiers::CONTROL)
}

impl App {
    pub fn new(info: Info, snap: Arc<Snapshot>) -> App {
        App {
            info,
            snap,
            show_help: false,
            whole_run: false,
            status: None,
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if self.show_help && matches!(key.code, KeyCode::Esc | KeyCode::Char('?')) {
            self.show_help = false;
            return Action::None;
        }
        let engine = Action::Engine;
        match key.code {
            KeyCode::Char('c') if ctrl => Action::Quit,
            KeyCode::Char('q') | KeyCode::Esc => Action::Quit,
            KeyCode::Char(' ') => engine(Command::TogglePause),
            KeyCode::Up => engine(Command::ScaleRate(RATE_STEP)),
            KeyCode::Down => engine(Command::ScaleRate(1.0 / RATE_STEP)),
            KeyCode::Char('i') => engine(Command::ToggleRateInf),
            KeyCode::Left => engine(Command::ScaleBurstiness(0.5)),
            KeyCode::Right => engine(Command::ScaleBurstiness(2.0)),
            KeyCode::Char('c') => engine(Command::AddConcurrency(-1)),
            KeyCode::Char('C') => engine(Command::AddConcurrency(1)),
            KeyCode::Char('b') => engine(Command::StartSweep(SweepKind::Batch)),
            KeyCode::Char('s') => engine(Command::StartSweep(SweepKind::Concurrency)),
            KeyCode::Char('a') => engine(Command::CheckAccuracy),
            KeyCode::Char('r') => engine(Command::Reset),
            KeyCode::Char('e') => Action::ExportNow,
            KeyCode::Char('?') => {
                self.show_help = true;
                Action::None
            }
            KeyCode::Char('w') => {
                self.whole_run = !self.whole_run;
                Action::None
            }
            _ => Action::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::fixture;
    use ratatui::crossterm::event::KeyEventKind;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn app() -> App {
        App::new(fixture::info(), Arc::new(fixture::snapshot()))
    }

    #[test]
    fn every_key_maps_to_its_engine_command() {
        let mut a = app();
        let cases = [
            (KeyCode::Char(' '), Command::TogglePause),
            (KeyCode::Up, Command::ScaleRate(1.25)),
            (KeyCode::Down, Command::ScaleRate(0.8)),
            (KeyCode::Char('i'), Command::ToggleRateInf),
            (KeyCode::Left, Command::ScaleBurstiness(0.5)),
            (KeyCode::Right, Command::ScaleBurstiness(2.0)),
            (KeyCode::Char('c'), Command::AddConcurrency(-1)),
            (KeyCode::Char('C'), Command::AddConcurrency(1)),
            (KeyCode::Char('b'), Command::StartSweep(SweepKind::Batch)),
            (
                KeyCode::Char('s'),
                Command::StartSweep(SweepKind::Concurrency),
            ),
            (KeyCode::Char('a'), Command::CheckAccuracy),
            (KeyCode::Char('r'), Command::Reset),
        ];
        for (code, want) in cases {
            assert_eq!(a.on_key(key(code)), Action::Engine(want), "{code:?}");
        }
    }

    #[test]
    fn quit_export_and_view_keys() {
        let mut a = app();
        assert_eq!(a.on_key(key(KeyCode::Char('q'))), Action::Quit);
        assert_eq!(a.on_key(key(KeyCode::Esc)), Action::Quit);
        assert_eq!(
            a.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Action::Quit
        );
        assert_eq!(a.on_key(key(KeyCode::Char('e'))), Action::ExportNow);
        assert_eq!(a.on_key(key(KeyCode::Char('w'))), Action::None);
        assert!(a.whole_run);
        a.on_key(key(KeyCode::Char('w')));
        assert!(!a.whole_run);
        assert_eq!(a.on_key(key(KeyCode::Char('x'))), Action::None);
    }

    #[test]
    fn help_overlay_opens_and_esc_closes_it_instead_of_quitting() {
        let mut a = app();
        a.on_key(key(KeyCode::Char('?')));
        assert!(a.show_help);
        assert_eq!(a.on_key(key(KeyCode::Esc)), Action::None);
        assert!(!a.show_help);
        a.on_key(key(KeyCode::Char('?')));
        assert_eq!(a.on_key(key(KeyCode::Char('?'))), Action::None);
        assert!(!a.show_help);
        // Keys still act while help is open.
        a.on_key(key(KeyCode::Char('?')));
        assert_eq!(
            a.on_key(key(KeyCode::Up)),
            Action::Engine(Command::ScaleRate(1.25))
        );
        let mut release = key(KeyCode::Up);
        release.kind = KeyEventKind::Release;
        assert_eq!(release.kind, KeyEventKind::Release);
    }
}
