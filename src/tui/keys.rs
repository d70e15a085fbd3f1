//! The one key table: `App::on_key` looks keys up in it, and the footer and the help overlay
//! print it, so a key cannot be bound without being shown, or shown without being bound.

use encbench_core::plan::SweepKind;
use encbench_load::engine::Command;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use std::sync::LazyLock;

/// ↑/↓ multiply or divide the request rate by this.
pub const RATE_STEP: f64 = 1.25;

/// What a key asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Press {
    Engine(Command),
    ExportNow,
    Quit,
    ToggleHelp,
    ToggleWindow,
    Scroll(Scroll),
}

/// Moves the sweep panel's rows when they do not all fit: a row, or a page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scroll {
    Up,
    Down,
    PageUp,
    PageDown,
}

/// One row of the table: one or a few keys with one meaning.
pub struct Binding {
    /// The keys as the help overlay names them.
    pub keys: &'static str,
    /// What they do, in the help overlay.
    pub help: String,
    /// The footer's words for them on a wide terminal.
    pub footer: String,
    /// The footer's words on a narrow one (`None`: left out there).
    pub short: Option<&'static str>,
    /// Each key press (code and modifiers) and what it asks for.
    pub presses: Vec<(KeyCode, KeyModifiers, Press)>,
}

fn binding(
    keys: &'static str,
    help: impl Into<String>,
    footer: impl Into<String>,
    short: Option<&'static str>,
    presses: Vec<(KeyCode, Press)>,
) -> Binding {
    Binding {
        keys,
        help: help.into(),
        footer: footer.into(),
        short,
        presses: presses
            .into_iter()
            .map(|(code, press)| (code, KeyModifiers::NONE, press))
            .collect(),
    }
}

fn engine(c: Command) -> Press {
    Press::Engine(c)
}

pub static KEYS: LazyLock<Vec<Binding>> = LazyLock::new(|| {
    use KeyCode::{Char, Down, Esc, Left, PageDown, PageUp, Right, Up};
    let mut quit = binding(
        "q Esc ^C",
        "quit (exports with --export)",
        "q quit",
        Some("q"),
        vec![(Char('q'), Press::Quit), (Esc, Press::Quit)],
    );
    // The raw-mode terminal delivers Ctrl-C as a key, not as SIGINT.
    quit.presses
        .push((Char('c'), KeyModifiers::CONTROL, Press::Quit));
    vec![
        binding(
            "space",
            "pause / resume sending",
            "space pause",
            Some("spc pause"),
            vec![(Char(' '), engine(Command::TogglePause))],
        ),
        binding(
            "↑ / ↓",
            format!("request rate × / ÷ {RATE_STEP} (from inf: last rate)"),
            format!("↑↓ rate ×÷{RATE_STEP}"),
            Some("↑↓ rate"),
            vec![
                (Up, engine(Command::ScaleRate(RATE_STEP))),
                (Down, engine(Command::ScaleRate(1.0 / RATE_STEP))),
            ],
        ),
        binding(
            "i",
            "rate inf (closed loop) ⇄ finite",
            "i rate inf",
            Some("i inf"),
            vec![(Char('i'), engine(Command::ToggleRateInf))],
        ),
        binding(
            "← / →",
            "burstiness ÷ / × 2 (1 Poisson, inf fixed)",
            "←→ burstiness",
            Some("←→ burst"),
            vec![
                (Left, engine(Command::ScaleBurstiness(0.5))),
                (Right, engine(Command::ScaleBurstiness(2.0))),
            ],
        ),
        binding(
            "c / C",
            "concurrency cap − / + 1",
            "c/C concurrency −+",
            Some("c/C conc"),
            vec![
                (Char('c'), engine(Command::AddConcurrency(-1))),
                (Char('C'), engine(Command::AddConcurrency(1))),
            ],
        ),
        binding(
            "b",
            "batch sweep (--batch-sizes), closed loop",
            "b batch sweep",
            Some("b/s/f sweep"),
            vec![(Char('b'), engine(Command::StartSweep(SweepKind::Batch)))],
        ),
        binding(
            "s",
            "concurrency sweep (--concurrency-levels)",
            "s concurrency sweep",
            None,
            vec![(
                Char('s'),
                engine(Command::StartSweep(SweepKind::Concurrency)),
            )],
        ),
        binding(
            "f",
            "capacity search: highest rate within --slo",
            "f capacity",
            None,
            vec![(Char('f'), engine(Command::FindCapacity))],
        ),
        binding(
            "a",
            "accuracy check now",
            "a accuracy",
            Some("a acc"),
            vec![(Char('a'), engine(Command::CheckAccuracy))],
        ),
        binding(
            "r",
            "reset statistics",
            "r reset",
            Some("r reset"),
            vec![(Char('r'), engine(Command::Reset))],
        ),
        binding(
            "e",
            "export now",
            "e export",
            Some("e exp"),
            vec![(Char('e'), Press::ExportNow)],
        ),
        binding(
            "w",
            "histogram, percentiles: segment ⇄ run",
            "w window",
            None,
            vec![(Char('w'), Press::ToggleWindow)],
        ),
        binding(
            "[ ] PgUp PgDn",
            "scroll the sweep tables: a row / a page",
            "[ ] scroll",
            None,
            vec![
                (Char('['), Press::Scroll(Scroll::Up)),
                (Char(']'), Press::Scroll(Scroll::Down)),
                (PageUp, Press::Scroll(Scroll::PageUp)),
                (PageDown, Press::Scroll(Scroll::PageDown)),
            ],
        ),
        binding(
            "?",
            "close this help",
            "? help",
            Some("?"),
            vec![(Char('?'), Press::ToggleHelp)],
        ),
        quit,
    ]
});

/// What a key press asks for, if anything: a binding with Control when Control is held
/// (Ctrl-C), else the key's own binding whatever the modifiers (Shift is part of 'C').
pub fn lookup(code: KeyCode, modifiers: KeyModifiers) -> Option<&'static Press> {
    binding_of(code, modifiers).map(|(_, p)| p)
}

/// The binding of a key press (for its words) and what it asks for.
pub fn binding_of(
    code: KeyCode,
    modifiers: KeyModifiers,
) -> Option<(&'static Binding, &'static Press)> {
    let presses = || {
        KEYS.iter()
            .flat_map(|b| b.presses.iter().map(move |p| (b, p)))
    };
    let ctrl = modifiers.contains(KeyModifiers::CONTROL);
    presses()
        .find(|(_, (c, m, _))| *c == code && ctrl && *m == KeyModifiers::CONTROL)
        .or_else(|| presses().find(|(_, (c, m, _))| *c == code && m.is_empty()))
        .map(|(b, (_, _, p))| (b, p))
}

/// The footer's line of keys: every binding's words, or the short ones.
pub fn footer(short: bool) -> String {
    let words: Vec<&str> = KEYS
        .iter()
        .filter_map(|b| {
            if short {
                b.short
            } else {
                Some(b.footer.as_str())
            }
        })
        .collect();
    format!(" {}", words.join(if short { " " } else { " · " }))
}
