//! The `?` overlay: every key and what it does.

use crate::tui::app::RATE_STEP;
use crate::tui::panels::block;
use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph};

pub fn render(f: &mut Frame, area: Rect) {
    let keys = [
        ("space", "pause / resume sending".to_string()),
        ("↑ / ↓", format!("request rate × / ÷ {RATE_STEP}")),
        ("i", "rate inf (closed loop) ⇄ finite".into()),
        ("← / →", "burstiness ÷ / × 2 (1 Poisson, inf fixed)".into()),
        ("c / C", "concurrency cap − / + 1".into()),
        ("b", "batch sweep (--batch-sizes), closed loop".into()),
        ("s", "concurrency sweep (--concurrency-levels)".into()),
        ("a", "accuracy check now".into()),
        ("r", "reset statistics".into()),
        ("e", "export now".into()),
        ("w", "histogram: recent window ⇄ whole run".into()),
        ("q Esc ^C", "quit (exports with --export)".into()),
        ("?", "close this help".into()),
    ];
    let lines: Vec<Line> = keys
        .iter()
        .map(|(k, v)| Line::from(format!(" {k:<9} {v}")))
        .collect();
    let [v] = Layout::vertical([Constraint::Length(lines.len() as u16 + 2)])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(56)])
        .flex(Flex::Center)
        .areas(v);
    f.render_widget(Clear, rect);
    f.render_widget(Paragraph::new(lines).block(block(" keys ".into())), rect);
}
