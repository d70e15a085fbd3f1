//! Errors of the current phase, by kind, the most frequent first; kinds past the panel's
//! room are counted (`+2 more`).

use crate::tui::panels::{Keep, block, fit};
use crate::tui::state::App;
use encbench_core::text::truncate;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let c = &app.snap.current;
    let total = c.error_count();
    let b = block(format!(" errors · {total} "));
    let inner = b.inner(area);
    f.render_widget(b, area);
    let lines: Vec<Line> = if c.errors.is_empty() {
        vec![Line::styled("none", Style::default().fg(Color::Green))]
    } else {
        let mut kinds: Vec<(&String, &u64)> = c.errors.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let width = inner.width as usize;
        kinds
            .into_iter()
            .map(|(k, n)| {
                let share = *n as f64 / c.n.max(1) as f64 * 100.0;
                let count = format!(" {n} ({share:.1}%)");
                let name = truncate(k, width.saturating_sub(count.chars().count()));
                let pad = width.saturating_sub(name.chars().count() + count.chars().count());
                Line::styled(
                    format!("{name}{}{count}", " ".repeat(pad)),
                    Style::default().fg(Color::Red),
                )
            })
            .collect()
    };
    let rows = lines.into_iter().map(|l| (Keep::Scroll, l)).collect();
    let (lines, _) = fit(rows, inner.height as usize, 0, "");
    f.render_widget(Paragraph::new(lines), inner);
}

/// The rows the panel needs to list every kind, borders included.
pub fn height(app: &App) -> u16 {
    u16::try_from(app.snap.current.errors.len().max(1) + 2).unwrap_or(u16::MAX)
}
