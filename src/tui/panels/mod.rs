//! One file per panel; each draws itself from the app state into the area it is given.

pub mod accuracy;
pub mod errors;
pub mod footer;
pub mod header;
pub mod help;
pub mod histogram;
pub mod percentiles;
pub mod sweep;
pub mod throughput;

use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::{Block, BorderType};

/// The bordered block every panel sits in.
pub fn block(title: String) -> Block<'static> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(Color::DarkGray))
        .title(title)
        .title_style(Style::default().add_modifier(Modifier::BOLD))
}
