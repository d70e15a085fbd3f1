//! The TUI's state (what to show) and its key bindings (what each key asks of the engine).
//! Rendering never mutates this; keys never draw.

use super::keys::{self, Press, Scroll};
use encbench_load::engine::{Command, Snapshot};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::sync::Arc;

/// What does not change during a run.
#[derive(Debug, Clone)]
pub struct Info {
    pub target: String,
    /// The payload format (`--engine`).
    pub format: String,
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

/// How far the sweep rows can scroll, and a page of them: the room the layout gave them at
/// the last draw, which only the screen knows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepRoom {
    pub max: usize,
    pub page: usize,
}

pub struct App {
    pub info: Info,
    pub snap: Arc<Snapshot>,
    pub show_help: bool,
    /// Histogram over the whole run instead of the recent window.
    pub whole_run: bool,
    /// A short message in the footer (export written, stopping…).
    pub status: Option<String>,
    /// How many of the sweep panel's scrollable rows are scrolled past.
    pub sweep_scroll: usize,
    /// How far the sweep rows could scroll when the screen was last drawn.
    pub sweep_room: SweepRoom,
}

/// Ctrl-C as a key press: the raw-mode terminal delivers it as a key, not as SIGINT.
pub fn is_interrupt(key: &KeyEvent) -> bool {
    key.kind != KeyEventKind::Release
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
            sweep_scroll: 0,
            sweep_room: SweepRoom::default(),
        }
    }

    /// One key event, through the key table. Terminals that report key releases (kitty's
    /// protocol, Windows) report every key twice: only the press counts.
    pub fn on_key(&mut self, key: KeyEvent) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        if self.show_help && matches!(key.code, KeyCode::Esc | KeyCode::Char('?')) {
            self.show_help = false;
            return Action::None;
        }
        match keys::lookup(key.code, key.modifiers) {
            Some(Press::Engine(c)) => Action::Engine(c.clone()),
            Some(Press::ExportNow) => Action::ExportNow,
            Some(Press::Quit) => Action::Quit,
            Some(Press::ToggleHelp) => {
                self.show_help = true;
                Action::None
            }
            Some(Press::ToggleWindow) => {
                self.whole_run = !self.whole_run;
                Action::None
            }
            Some(Press::Scroll(by)) => {
                self.scroll(*by);
                Action::None
            }
            None => Action::None,
        }
    }

    /// Moves the sweep rows, never past either end: a key pressed at the end does nothing,
    /// rather than having to be undone by as many presses the other way.
    fn scroll(&mut self, by: Scroll) {
        let SweepRoom { max, page } = self.sweep_room;
        let now = self.sweep_scroll.min(max);
        self.sweep_scroll = match by {
            Scroll::Up => now.saturating_sub(1),
            Scroll::Down => now + 1,
            Scroll::PageUp => now.saturating_sub(page),
            Scroll::PageDown => now + page,
        }
        .min(max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;
    use encbench_core::plan::SweepKind;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn app() -> App {
        App::new(fixtures::info(), Arc::new(fixtures::snapshot()))
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
    }

    #[test]
    fn a_key_release_does_nothing() {
        let mut a = app();
        for code in [KeyCode::Up, KeyCode::Char('q'), KeyCode::Char('w')] {
            let mut release = key(code);
            release.kind = KeyEventKind::Release;
            assert_eq!(a.on_key(release), Action::None, "{code:?}");
        }
        assert!(!a.whole_run, "a released w does not toggle the window");
        let mut repeat = key(KeyCode::Up);
        repeat.kind = KeyEventKind::Repeat;
        assert_eq!(
            a.on_key(repeat),
            Action::Engine(Command::ScaleRate(1.25)),
            "holding a key repeats it"
        );
    }

    #[test]
    fn every_key_in_the_table_acts_and_is_in_the_footer() {
        let long = keys::footer(false);
        for b in keys::KEYS.iter() {
            assert!(long.contains(&b.footer), "{} missing from {long}", b.footer);
            for (code, modifiers, press) in &b.presses {
                let mut a = app();
                let want = match press {
                    Press::Engine(c) => Action::Engine(c.clone()),
                    Press::ExportNow => Action::ExportNow,
                    Press::Quit => Action::Quit,
                    Press::ToggleHelp | Press::ToggleWindow | Press::Scroll(_) => Action::None,
                };
                assert_eq!(
                    a.on_key(KeyEvent::new(*code, *modifiers)),
                    want,
                    "{code:?} {modifiers:?} ({})",
                    b.keys
                );
            }
        }
        assert!(
            long.contains("×÷1.25"),
            "the footer shows the rate step: {long}"
        );
    }
}
