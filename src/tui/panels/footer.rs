//! The keys (from the key table), or a short status message. A message wider than the
//! terminal loses its middle, not its end: an export's path ends with the file's name.

use crate::tui::keys;
use crate::tui::state::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let line = if let Some(msg) = &app.status {
        let room = (area.width as usize).saturating_sub(1);
        Line::styled(
            format!(" {}", middle_out(msg, room)),
            Style::default().fg(Color::Yellow),
        )
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

/// `text` in `width` characters, an ellipsis standing for the middle if it is longer.
fn middle_out(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n <= width {
        return text.to_string();
    }
    let head = width.saturating_sub(1) / 2;
    let tail = width.saturating_sub(1 + head);
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(n - tail).collect();
    format!("{start}…{end}")
}
