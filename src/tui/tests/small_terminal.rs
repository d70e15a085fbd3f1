//! What a small terminal keeps: the screen after each sweep at 80×24, 100×32 and 160×48,
//! scrolling the rows that did not fit, and lines that shorten or wrap instead of being cut.

use super::{app, overloaded, render};
use crate::fixtures;
use crate::tui::state::App;
use crate::tui::{panels, screen};
use std::sync::Arc;

/// The snapshots sit with the other screens'.
fn snapshots(check: impl FnOnce()) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("snapshots");
    settings.bind(check);
}

/// After both sweeps, `last` the one that ran last: three batch sizes with the knee at 8 and
/// five concurrency levels saturating at 8, then the live phase again.
fn after_sweeps(last: encbench_core::plan::PhaseKind) -> App {
    use crate::fixtures::phase_row;
    use encbench_core::plan::PhaseKind::{Batch, Concurrency};
    let batch = vec![
        phase_row(Batch, 1, 1, 38.3, 26.1, 26.3, None),
        phase_row(Batch, 8, 1, 9.7, 103.3, 103.4, None),
        phase_row(Batch, 32, 1, 2.7, 367.6, 367.9, None),
    ];
    let conc = vec![
        phase_row(Concurrency, 1, 1, 38.0, 26.1, 26.4, None),
        phase_row(Concurrency, 1, 2, 75.1, 26.2, 26.9, None),
        phase_row(Concurrency, 1, 4, 148.0, 26.9, 28.0, None),
        phase_row(Concurrency, 1, 8, 151.0, 52.0, 55.0, None),
        phase_row(Concurrency, 1, 16, 150.2, 104.1, 109.0, None),
    ];
    let mut phases = if last == Batch {
        [conc, batch].concat()
    } else {
        [batch, conc].concat()
    };
    encbench_core::results::derive(&mut phases, Some(5.752));
    let mut snap = fixtures::snapshot();
    snap.phases = Arc::new(phases);
    App::new(fixtures::info(), Arc::new(snap))
}

/// The sweep rows as the panel starts them (`│` and the first column), batch then
/// concurrency.
const SWEEP_ROWS: [&str; 8] = [
    "│ 1 ", "│ 8 ", "│32 ", "│   1 ", "│   2 ", "│   4 ", "│   8 ", "│  16 ",
];

/// What must hold on every screen after the sweeps: the knee and the saturation rows, and
/// `+N more` naming exactly the rows cut; the percentiles' counts; a whole status line.
fn check_after_sweeps(text: &str, w: u16) {
    // Each marked row whole, its p50 beside its interval (or the margin that holds it) and
    // its p99 at least its low end: the fixtures' phases are of 100 requests.
    let row = |start: &str, mark: &str| {
        text.lines()
            .find(|l| l.contains(start) && l.contains(mark))
            .unwrap_or_else(|| panic!("{w}: no {start:?} … {mark:?} in {text}"))
            .to_string()
    };
    let knee = row("│ 8 ", "◀ knee");
    assert!(
        (knee.contains("103 [") || knee.contains("103±")) && knee.contains("≥"),
        "{w}: {knee}"
    );
    let saturated = row("│   8 ", "◀ saturated");
    assert!(
        (saturated.contains("52.0 [") || saturated.contains("52.0±")) && saturated.contains("≥"),
        "{w}: {saturated}"
    );
    let shown = SWEEP_ROWS.iter().filter(|r| text.contains(*r)).count();
    let cut = SWEEP_ROWS.len() - shown;
    if cut > 0 {
        assert!(
            text.contains(&format!("+{cut} more · [ ] scroll")),
            "{w}: {text}"
        );
    } else {
        assert!(!text.contains(" more"), "{w}: {text}");
    }
    assert!(text.contains("n 1000  ok 996  errors 4"), "{w}: {text}");
    let status = text.lines().nth(1).unwrap();
    assert!(
        status.trim_matches('"').trim_end().ends_with("in flight 1")
            && status.contains("running")
            && status.contains("conc 2"),
        "{w}: {status}"
    );
    assert!(
        text.contains("» batch cap 1: efficiency 1.00 → 0.25 at 8"),
        "{w}: {text}"
    );
    assert!(
        text.contains("» concurrency cap 4: at 8 req/s +2%, p99 ×2.0"),
        "{w}: {text}"
    );
}

#[test]
fn whole_screen_after_sweeps_at_three_sizes() {
    use encbench_core::plan::PhaseKind::{Batch, Concurrency};
    for (last, name) in [(Batch, "batch"), (Concurrency, "concurrency")] {
        let a = after_sweeps(last);
        for (w, h) in [(80, 24), (100, 32), (160, 48)] {
            let t = render(w, h, &a, |f, _, a| screen::draw(f, a));
            let text = format!("{}", t.backend());
            check_after_sweeps(&text, w);
            if (w, h) == (80, 24) {
                assert!(
                    text.contains(" more · [ ] scroll"),
                    "rows are cut at 80×24: {text}"
                );
            } else {
                assert!(!text.contains(" more"), "{w}×{h} has room for all: {text}");
            }
            snapshots(|| {
                insta::assert_snapshot!(format!("after_{name}_sweep_{w}x{h}"), t.backend());
            });
        }
    }
}

/// `]` and `PgDn` bring the cut rows into view, the knee and saturation rows stay, and a key
/// pressed at the end does nothing (`[` then moves back at once).
#[test]
fn sweep_rows_scroll_and_stop_at_the_ends() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut a = after_sweeps(encbench_core::plan::PhaseKind::Concurrency);
    let press = |a: &mut App, code| a.on_key(KeyEvent::new(code, KeyModifiers::NONE));
    // Drawn as the live screen draws: the keys then scroll within the room it gave.
    let screen = |a: &mut App| {
        let mut room = a.sweep_room;
        let text = format!(
            "{}",
            render(80, 24, a, |f, _, a| room = screen::draw(f, a)).backend()
        );
        a.sweep_room = room;
        text
    };
    let shown = |text: &str| -> Vec<&str> {
        SWEEP_ROWS
            .iter()
            .copied()
            .filter(|r| text.contains(*r))
            .collect()
    };
    let top = screen(&mut a);
    let max = a.sweep_room.max;
    assert!(max > 0, "{top}");
    for _ in 0..max + 3 {
        press(&mut a, KeyCode::Char(']'));
    }
    assert_eq!(a.sweep_scroll, max);
    let bottom = screen(&mut a);
    check_after_sweeps(&bottom, 80);
    assert_ne!(shown(&top), shown(&bottom), "{top}\n{bottom}");
    assert!(bottom.contains("│32 "), "the last batch row: {bottom}");
    press(&mut a, KeyCode::Char('['));
    assert_eq!(a.sweep_scroll, max - 1);
    press(&mut a, KeyCode::PageUp);
    assert_eq!(a.sweep_scroll, 0);
    assert_eq!(screen(&mut a), top, "scrolled back to the top");
    press(&mut a, KeyCode::PageDown);
    assert!(a.sweep_scroll > 1, "a page is more than a row");
}

/// At 80 columns the status line takes shorter words, whatever the state: open loop, a
/// sweep phase in closed loop, an endpoint falling behind.
#[test]
fn the_status_line_is_whole_at_80_columns() {
    let base = fixtures::snapshot();
    let mut sweep = fixtures::snapshot();
    sweep.pace.rate_per_s = None;
    sweep.concurrency = 16;
    sweep.in_flight = 16;
    if let Some(p) = sweep.phase.as_mut() {
        p.kind = encbench_core::plan::PhaseKind::Concurrency;
        p.index = 7;
        p.step = Some((2, 5));
    }
    let behind = overloaded();
    let mut bursty = fixtures::snapshot();
    bursty.pace.rate_per_s = Some(59.1);
    bursty.pace.burstiness = 2.0;
    bursty.concurrency = 1;
    bursty.batch_size = 1;
    for (snap, want) in [
        (
            bursty,
            vec!["59.1 req/s burst 2", "conc 1", "batch 1", "in flight 1"],
        ),
        (
            base,
            vec![
                "running",
                "1:23",
                "#9 live",
                "50.0 req/s Poisson",
                "conc 2",
                "in flight 1",
            ],
        ),
        (
            sweep,
            vec![
                "running",
                "#7 conc 2/5",
                "closed",
                "conc 16",
                "in flight 16",
            ],
        ),
        (
            behind,
            vec![
                "running",
                "OVERLOADED: lag 2.6 s",
                "1:23",
                "#9 live",
                "conc 2",
            ],
        ),
    ] {
        let a = App::new(fixtures::info(), Arc::new(snap));
        let t = render(80, 2, &a, panels::header::render);
        let line = format!("{}", t.backend())
            .lines()
            .nth(1)
            .unwrap()
            .to_string();
        assert!(!line.contains('…'), "{line}");
        // Burstiness and batch each by their word: a bare `b` meant both.
        assert!(!line.contains("b=") && !line.contains(" b "), "{line}");
        for w in want {
            assert!(line.contains(w), "{w:?} in {line}");
        }
    }
}

/// Advice wider than the panel wraps at a word, under its `»`, rather than being cut.
#[test]
fn advice_wraps_instead_of_being_cut() {
    use encbench_core::plan::PhaseKind::Concurrency;
    let mut phases: Vec<_> = [(1, 38.0), (2, 75.0), (4, 148.0), (8, 290.0), (16, 575.5)]
        .into_iter()
        .map(|(c, rps)| fixtures::phase_row(Concurrency, 1, c, rps, 26.0, 27.0, None))
        .collect();
    encbench_core::results::derive(&mut phases, None);
    let mut snap = fixtures::snapshot();
    snap.phases = Arc::new(phases);
    let a = App::new(fixtures::info(), Arc::new(snap));
    let t = render(36, 10, &a, panels::sweep::render);
    let text = format!("{}", t.backend());
    assert!(
        text.contains("│» no saturation up to concurrency │"),
        "{text}"
    );
    assert!(text.contains("│  16: 575.5 req/s "), "{text}");
}

/// A status message wider than the footer keeps its start and its end (the file's name).
#[test]
fn a_long_footer_message_keeps_its_end() {
    let mut a = app();
    let path = format!("/home/someone/{}/run-2026-12-02.json", "results/".repeat(8));
    a.status = Some(format!("exported to {path}"));
    let t = render(80, 1, &a, panels::footer::render);
    let line = format!("{}", t.backend());
    assert!(
        line.contains(" exported to /home/")
            && line.contains("…")
            && line.contains("/run-2026-12-02.json"),
        "{line}"
    );
}

/// Before any sweep the histogram takes the room, and every other panel still shows all it
/// has.
#[test]
fn before_any_sweep_the_histogram_takes_the_room() {
    let mut snap = fixtures::snapshot();
    snap.phases = Arc::new(Vec::new());
    let a = App::new(fixtures::info(), Arc::new(snap));
    let t = render(80, 24, &a, |f, _, a| screen::draw(f, a));
    let text = format!("{}", t.backend());
    assert!(
        text.contains("no sweep yet: b batch sizes, s concurrency"),
        "{text}"
    );
    assert!(
        text.contains("n 1000  ok 996  errors 4") && text.contains("ModelError(500)"),
        "{text}"
    );
    assert_eq!(text.matches("│✓ ").count(), 4, "{text}");
    let buckets = text
        .lines()
        .filter(|l| l.contains(" ms█") || l.contains(" ms "))
        .count();
    assert!(buckets >= 8, "{buckets} buckets: {text}");
    assert!(!text.contains(" more"), "{text}");
}

/// 80×24 in the middle of a capacity search, the live phase missing its SLO by falling
/// behind: what does not fit ends at a word or a figure with an ellipsis (it was cut as
/// `fell behind its sc` and `bracket 18.9–28.`), and the histogram keeps four buckets (it
/// had two) while the sweep rows scroll.
#[test]
fn at_80x24_lines_end_at_a_word_and_the_histogram_keeps_its_shape() {
    let mut a = after_sweeps(encbench_core::plan::PhaseKind::Concurrency);
    let mut snap = (*a.snap).clone();
    snap.current.slo = Some(encbench_core::slo::Judgement {
        met: false,
        goodput_per_s: 20.0,
        goodput_share: 0.4,
        missed: Some("fell behind its schedule (overloaded)".into()),
    });
    snap.searching = Some(encbench_core::results::capacity::Capacity {
        target: None,
        repetition: None,
        max_rate_ci95_per_s: None,
        pooled_probes: None,
        pooled_requests: None,
        batch_size: 1,
        concurrency: 2,
        slo: "p99 ≤ 100 ms".into(),
        ceiling_per_s: Some(40.0),
        max_rate_per_s: Some(18.9),
        failed_at_per_s: Some(28.1),
        samples_per_s: None,
        latency_ms: None,
        goodput_per_s: None,
        cost_per_1m_usd: None,
        probes: vec![],
        verdict: String::new(),
        complete: false,
    });
    a.snap = Arc::new(snap);
    let t = render(80, 24, &a, |f, _, a| screen::draw(f, a));
    let text = format!("{}", t.backend());
    assert!(text.contains("│SLO missed: fell behind its…"), "{text}");
    assert!(text.contains("b=1 · bracket 18.9…"), "{text}");
    let buckets = text
        .lines()
        .filter(|l| l.contains("ms█") || l.contains("ms ") && l.contains("–"))
        .filter(|l| l.starts_with("\"│ "))
        .count();
    assert!(buckets >= 4, "{buckets} buckets:\n{text}");
}

/// `--input-tokens`' mix in the header's first line: whole where there is room, shorter,
/// then gone before the target is cut.
#[test]
fn the_length_mix_shortens_then_leaves_the_first_line() {
    let mut info = fixtures::info();
    info.lengths = Some(encbench_core::lengths::LengthMix::parse("128:32").unwrap());
    let a = App::new(info, Arc::new(fixtures::snapshot()));
    let first = |w: u16| {
        let t = render(w, 2, &a, panels::header::render);
        format!("{}", t.backend())
            .lines()
            .next()
            .unwrap()
            .to_string()
    };
    assert!(
        first(120).contains("inputs normal 128 ± 32 tokens · simulated endpoint"),
        "{}",
        first(120)
    );
    assert!(
        first(80).contains("128±32 tok · simulated"),
        "{}",
        first(80)
    );
    let narrow = first(50);
    assert!(
        !narrow.contains("tok") && narrow.contains("127.0.0.1:8080"),
        "{narrow}"
    );
}
