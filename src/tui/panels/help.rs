//! The `?` overlay: every key of the key table and what it does.

use crate::tui::keys::KEYS;
use crate::tui::panels::block;
use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Clear, Paragraph};

pub fn render(f: &mut Frame, area: Rect) {
    let keys = KEYS
        .iter()
        .map(|b| b.keys.chars().count())
        .max()
        .unwrap_or(0);
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|b| Line::from(format!(" {:<keys$} {}", b.keys, b.help)))
        .collect();
    let width = lines.iter().map(Line::width).max().unwrap_or(0) + 3;
    let [v] = Layout::vertical([Constraint::Length(lines.len() as u16 + 2)])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(u16::try_from(width).unwrap_or(u16::MAX))])
        .flex(Flex::Center)
        .areas(v);
    f.render_widget(Clear, rect);
    f.render_widget(Paragraph::new(lines).block(block(" keys ".into())), rect);
}
