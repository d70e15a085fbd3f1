//! The TUI's state (what to show) and its key bindings (what each key asks of the engine).
//! Rendering never mutates this; keys never draw.

use super::keys::{self, Press, Scroll};
use encbench_core::stats::TimelineEntry;
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
    /// A reranker's run: its batch is D documents a query, its samples documents.
    pub rerank: bool,
    /// `--input-tokens`: the length mix the inputs were drawn from.
    pub lengths: Option<encbench_core::lengths::LengthMix>,
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
    /// After a key that asks the engine for something: the time of the timeline's last
    /// event then, and the run's time. The engine's answer (done, refused, ignored) is its
    /// next event, and goes in the footer: a key the engine refuses must not look like a key
    /// that did nothing. A key that changes nothing (the rate at its floor) logs nothing: an
    /// event seconds later is not its answer.
    pub awaiting_answer: Option<(f64, std::time::Duration)>,
    /// The footer's message changed since the screen last looked (it keeps it a while).
    pub status_new: bool,
}

/// How long after a key the engine's next event is taken as its answer.
const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

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
            awaiting_answer: None,
            status_new: false,
        }
    }

    /// A message for the footer, shown for a while.
    pub fn say(&mut self, text: impl Into<String>) {
        self.status = Some(text.into());
        self.status_new = true;
    }

    /// A new snapshot: the engine's answer to the last key, if it came.
    pub fn on_snapshot(&mut self, snap: Arc<Snapshot>) {
        self.snap = snap;
        let Some((since, asked)) = self.awaiting_answer else {
            return;
        };
        if self.snap.elapsed > asked + ANSWER_WITHIN {
            self.awaiting_answer = None;
            return;
        }
        let answer = self.snap.timeline_tail.iter().find_map(|e| match e {
            TimelineEntry::Event { t_s, event } if *t_s > since => Some(event.clone()),
            _ => None,
        });
        if let Some(answer) = answer {
            self.awaiting_answer = None;
            self.say(answer);
        }
    }

    /// The time of the timeline's last event (-1 before any).
    fn last_event(&self) -> f64 {
        self.snap
            .timeline_tail
            .iter()
            .rev()
            .find_map(|e| match e {
                TimelineEntry::Event { t_s, .. } => Some(*t_s),
                TimelineEntry::Point { .. } => None,
            })
            .unwrap_or(-1.0)
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
        let Some((binding, press)) = keys::binding_of(key.code, key.modifiers) else {
            return Action::None;
        };
        match press {
            Press::Engine(c) => {
                // Said at once; the engine's own words replace it when they come.
                self.say(format!("{}: {}…", binding.keys, binding.help));
                self.awaiting_answer = Some((self.last_event(), self.snap.elapsed));
                Action::Engine(c.clone())
            }
            Press::ExportNow => Action::ExportNow,
            Press::Quit => Action::Quit,
            Press::ToggleHelp => {
                self.show_help = true;
                Action::None
            }
            Press::ToggleWindow => {
                self.whole_run = !self.whole_run;
                Action::None
            }
            Press::Scroll(by) => {
                self.scroll(*by);
                Action::None
            }
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

    /// A key the engine refuses (f without --slo logs why only in the timeline) is answered
    /// in the footer: first the key's own words, then the engine's event once it comes.
    #[test]
    fn an_engine_key_is_answered_in_the_footer() {
        let mut a = app();
        assert_eq!(
            a.on_key(key(KeyCode::Char('f'))),
            Action::Engine(Command::FindCapacity)
        );
        assert!(a.status.as_deref().unwrap().contains("capacity search"));
        let mut snap = fixtures::snapshot();
        let last = snap.timeline_tail.len();
        a.on_snapshot(Arc::new(snap.clone()));
        assert!(
            a.status.as_deref().unwrap().starts_with("f: "),
            "no answer yet"
        );
        let refused = "capacity search needs an SLO: start with --slo p99=100ms";
        snap.timeline_tail.push(TimelineEntry::Event {
            t_s: 1e6,
            event: refused.into(),
        });
        assert!(snap.timeline_tail.len() > last);
        a.status_new = false;
        a.on_snapshot(Arc::new(snap));
        assert_eq!(a.status.as_deref(), Some(refused));
        assert!(a.status_new, "the screen keeps it a while");
        assert_eq!(a.awaiting_answer, None);
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
