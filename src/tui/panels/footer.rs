//! The keys (from the key table), or a short status message.

use crate::tui::app::App;
use crate::tui::keys;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let line = if let Some(msg) = &app.status {
        Line::styled(format!(" {msg}"), Style::default().fg(Color::Yellow))
    } else {
        let long = keys::footer(false);
        let text = if area.width as usize >= long.chars().count() {
            long
        } else {
            keys::footer(true)
        };
        Line::styled(text, Style::default().fg(Color::DarkGray))
    };
    f.render_widget(Paragraph::new(line), area);
}
