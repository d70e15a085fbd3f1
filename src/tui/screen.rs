//! The whole screen, assembled from the panels:
//!
//! ```text
//! ┌ header: target · engine · loop · phase · state · elapsed (2 lines) ─────────────┐
//! ├─ latency histogram (60 %) ────────────────┬─ percentiles (40 %) ────────────────┤
//! ├─ throughput sparklines ───────────────────┼─ errors by kind ────────────────────┤
//! ├─ sweep tables, knee, advice ──────────────┼─ accuracy verdicts ─────────────────┤
//! └ footer: keys or status (1 line) ────────────────────────────────────────────────┘
//! ```
//! `?` draws the help overlay on top. Below 80×24 only a message is drawn.

use crate::tui::app::App;
use crate::tui::panels;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

pub fn draw(f: &mut Frame, app: &App) {
    let area = f.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "terminal too small: {}×{}, encbench-tui needs at least {MIN_WIDTH}×{MIN_HEIGHT} (q quits)",
            area.width, area.height
        );
        f.render_widget(
            Paragraph::new(Line::from(msg)).wrap(Wrap { trim: true }),
            area,
        );
        return;
    }
    let middle = if area.height >= 40 { 10 } else { 6 };
    let [header, top, mid, bottom, footer] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Fill(3),
        Constraint::Length(middle),
        Constraint::Fill(4),
        Constraint::Length(1),
    ])
    .areas(area);
    let columns = || Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]);
    let [hist, pct] = columns().areas(top);
    let [thr, err] = columns().areas(mid);
    let [sweep, acc] = columns().areas(bottom);

    panels::header::render(f, header, app);
    panels::histogram::render(f, hist, app);
    panels::percentiles::render(f, pct, app);
    panels::throughput::render(f, thr, app);
    panels::errors::render(f, err, app);
    panels::sweep::render(f, sweep, app);
    panels::accuracy::render(f, acc, app);
    panels::footer::render(f, footer, app);
    if app.show_help {
        panels::help::render(f, area);
    }
}
