//! The keys, or a short status message.

use crate::tui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

const LONG: &str = " space pause · ↑↓ rate ×÷1.25 · i rate inf · ←→ burstiness · c/C concurrency −+ · b batch sweep · \
                    s concurrency sweep · a accuracy · r reset · e export · w window · ? help · q quit";
const SHORT: &str =
    " spc pause ↑↓ rate i inf ←→ burst c/C conc b/s sweep a acc r reset e export ? q";

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let line = match &app.status {
        Some(msg) => Line::styled(format!(" {msg}"), Style::default().fg(Color::Yellow)),
        None if area.width as usize >= LONG.chars().count() => {
            Line::styled(LONG, Style::default().fg(Color::DarkGray))
        }
        None => Line::styled(SHORT, Style::default().fg(Color::DarkGray)),
    };
    f.render_widget(Paragraph::new(line), area);
}
