//! The whole screen, assembled from the panels in two columns whose panels take the rows
//! they need:
//!
//! ```text
//! ┌ header: target · engine · loop · phase · state · elapsed (2 lines) ─────────────┐
//! ├─ latency histogram (60 %) ────────────────┬─ percentiles (40 %) ────────────────┤
//! ├─ throughput sparklines ───────────────────┼─ errors by kind ────────────────────┤
//! ├─ sweep tables, knee, advice ──────────────┼─ accuracy verdicts ─────────────────┤
//! └ footer: keys or status (1 line) ────────────────────────────────────────────────┘
//! ```
//! After a sweep its table and advice are what a user reads, so the sweep panel is served
//! first and the histogram and sparklines shrink for it; the percentiles keep every count.
//! Where the columns' needs allow, the panels line up as bands. `?` draws the help overlay
//! on top. Below 80×24 only a message is drawn.

use crate::tui::panels;
use crate::tui::state::{App, SweepRoom};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

/// The fewest histogram buckets while anything else can give up rows.
const FEWEST_BUCKETS: u16 = 4;
/// The throughput panel at its thinnest: its borders and the line of figures.
const THINNEST: u16 = 3;
/// Histogram buckets past this many are not worth rows a table could use, nor their cost: a
/// bar row is the dearest thing on the screen (16 buckets instead of 13 made a 160×48 frame
/// 40 % dearer in `benches/frame_render.rs`).
const MOST_BUCKETS: u16 = 13;

/// Where each panel goes.
pub struct Areas {
    pub header: Rect,
    pub histogram: Rect,
    pub percentiles: Rect,
    pub throughput: Rect,
    pub errors: Rect,
    pub sweep: Rect,
    pub accuracy: Rect,
    pub footer: Rect,
}

pub fn layout(area: Rect, app: &App) -> Areas {
    let [header, body, footer] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(body);
    let rows = body.height;

    // Left: the sweep panel first, then the histogram's fewest buckets, then the
    // sparklines, then more buckets. At 80×24 the throughput keeps its figures and loses
    // its sparkline before the histogram goes below a shape (2 buckets are no shape).
    let least = FEWEST_BUCKETS + 2 + THINNEST;
    let sweep = panels::sweep::height(app, left.width).min(rows.saturating_sub(least));
    let rest = rows - sweep;
    let throughput = (if rows >= 37 { 10 } else { 6 })
        .min(rest.saturating_sub(FEWEST_BUCKETS + 2))
        .max(THINNEST.min(rest));
    let histogram = (rest - throughput).min(MOST_BUCKETS + 2);
    let sweep = rows - throughput - histogram;

    // Right: lined up with the left where each panel fits there, else by need, the
    // percentiles first.
    let want = [
        panels::percentiles::height(app, right.width),
        panels::errors::height(app),
        panels::accuracy::height(app),
    ];
    let beside = [histogram, throughput, sweep];
    let [pct, err, acc] = if want.iter().zip(&beside).all(|(w, b)| w <= b) {
        beside
    } else {
        let pct = want[0].min(rows.saturating_sub(2 * 3));
        let err = want[1].min(rows.saturating_sub(pct + 3));
        [pct, err, rows - pct - err]
    };

    let column = |heights: [u16; 3], area| {
        Layout::vertical(heights.map(Constraint::Length)).areas::<3>(area)
    };
    let [histogram, throughput, sweep] = column([histogram, throughput, sweep], left);
    let [percentiles, errors, accuracy] = column([pct, err, acc], right);
    Areas {
        header,
        histogram,
        percentiles,
        throughput,
        errors,
        sweep,
        accuracy,
        footer,
    }
}

/// Draws the screen; returns the room the sweep rows had, for the keys that scroll them.
pub fn draw(f: &mut Frame, app: &App) -> SweepRoom {
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
        return SweepRoom::default();
    }
    let a = layout(area, app);
    panels::header::render(f, a.header, app);
    panels::histogram::render(f, a.histogram, app);
    panels::percentiles::render(f, a.percentiles, app);
    panels::throughput::render(f, a.throughput, app);
    panels::errors::render(f, a.errors, app);
    let max = panels::sweep::render(f, a.sweep, app);
    panels::accuracy::render(f, a.accuracy, app);
    panels::footer::render(f, a.footer, app);
    if app.show_help {
        panels::help::render(f, area);
    }
    SweepRoom {
        max,
        page: usize::from(a.sweep.height.saturating_sub(4)).max(1),
    }
}
