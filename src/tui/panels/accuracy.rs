//! Each verdict of the latest accuracy check, against the one before the load; when they do
//! not all fit, the wrong ones stay and the rest are counted (`+3 more`).

use crate::tui::panels::{Keep, block, fit};
use crate::tui::state::App;
use encbench_core::text::truncate;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use std::fmt::Write as _;

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let s = &app.snap;
    let score = |r: &Option<encbench_core::verdicts::AccuracyReport>| {
        r.as_ref().map(|r| format!("{}/{}", r.passed, r.total))
    };
    let mut title = String::from(" accuracy");
    if let Some(l) = score(&s.accuracy_latest) {
        let _ = write!(title, " {l}");
    }
    if let Some(b) = score(&s.accuracy_before) {
        let _ = write!(title, " · before {b}");
    }
    if s.accuracy_running {
        title += " · checking…";
    }
    title += " ";
    let b = block(title);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let Some(report) = &s.accuracy_latest else {
        let text = if s.accuracy_running {
            "checking…"
        } else {
            "no check (--no-accuracy)"
        };
        f.render_widget(Paragraph::new(text), inner);
        return;
    };
    if let (true, Some(note)) = (report.samples.is_empty(), &report.note) {
        f.render_widget(
            Paragraph::new(note.as_str()).wrap(ratatui::widgets::Wrap { trim: true }),
            inner,
        );
        return;
    }
    let width = inner.width as usize;
    let rows: Vec<(Keep, Line<'static>)> = report
        .samples
        .iter()
        .map(|v| {
            let keep = if v.ok { Keep::Scroll } else { Keep::Always };
            (keep, verdict(v, width))
        })
        .collect();
    let (lines, _) = fit(rows, inner.height as usize, 0, "");
    f.render_widget(Paragraph::new(lines), inner);
}

/// The rows the panel needs to show every verdict, borders included.
pub fn height(app: &App) -> u16 {
    let lines = match &app.snap.accuracy_latest {
        Some(r) if !r.samples.is_empty() => r.samples.len(),
        // A note wraps: a few lines.
        Some(r) if r.note.is_some() => 3,
        _ => 1,
    };
    u16::try_from(lines + 2).unwrap_or(u16::MAX)
}

fn verdict(v: &encbench_core::verdicts::Verdict, width: usize) -> Line<'static> {
    // A retrieval item: its query, and the candidate put nearest.
    if !v.candidates.is_empty() {
        let got = v
            .predicted
            .clone()
            .or(v.error.clone())
            .unwrap_or_else(|| "-".into());
        let (mark, colour) = if v.ok {
            ("✓", Color::Green)
        } else {
            ("✗", Color::Red)
        };
        let text = format!("{mark} {} → {got}", v.premise);
        return Line::styled(truncate(&shown(&text), width), Style::default().fg(colour));
    }
    if v.ok {
        let text = format!("✓ {:<13} {}", v.expected, v.hypothesis);
        Line::styled(
            truncate(&shown(&text), width),
            Style::default().fg(Color::Green),
        )
    } else {
        let got = v
            .predicted
            .clone()
            .or(v.error.clone())
            .unwrap_or_else(|| "-".into());
        let text = format!("✗ expected {} got {} · {}", v.expected, got, v.hypothesis);
        Line::styled(
            truncate(&shown(&text), width),
            Style::default().fg(Color::Red),
        )
    }
}

/// Samples come from a file: their control characters are shown escaped, as the tables
/// show them, rather than dropped.
fn shown(text: &str) -> String {
    encbench_core::scrub::controls(text).into_owned()
}
