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
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType};

/// The bordered block every panel sits in.
pub fn block(title: String) -> Block<'static> {
    Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(Color::DarkGray))
        .title(title)
        .title_style(Style::default().add_modifier(Modifier::BOLD))
}

/// How a line of a panel fares when the panel is too short for all of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Keep {
    /// Always shown: a table's header, the knee, the saturation point, a failed verdict.
    Always,
    /// Shown while there is room; where the panel scrolls, in a window the keys move.
    Scroll,
    /// A blank between tables: the first to go.
    Spacer,
}

/// A panel's lines cut to `height`, and how far the scrollable ones can move (0 when
/// everything fits). Lines keep their order; when any is left out the last line says how
/// many (`+3 more`) and, if the panel scrolls, with which keys (`hint`).
pub fn fit(
    rows: Vec<(Keep, Line<'static>)>,
    height: usize,
    scroll: usize,
    hint: &str,
) -> (Vec<Line<'static>>, usize) {
    if rows.len() <= height {
        return (rows.into_iter().map(|(_, l)| l).collect(), 0);
    }
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|(k, _)| *k != Keep::Spacer)
        .collect();
    if rows.len() <= height {
        return (rows.into_iter().map(|(_, l)| l).collect(), 0);
    }
    let room = height.saturating_sub(1);
    let always = rows.iter().filter(|(k, _)| *k == Keep::Always).count();
    let scrolled = rows.len() - always;
    let window = room.saturating_sub(always);
    let max_scroll = scrolled.saturating_sub(window);
    let from = scroll.min(max_scroll);
    let total = rows.len();
    let (mut shown, mut nth, mut kept) = (Vec::with_capacity(height), 0, 0);
    for (keep, line) in rows {
        let show = match keep {
            Keep::Always => {
                kept += 1;
                kept <= room
            }
            _ => {
                nth += 1;
                (from..from + window).contains(&(nth - 1))
            }
        };
        if show {
            shown.push(line);
        }
    }
    if height > 0 {
        let more = total - shown.len();
        let text = if hint.is_empty() || max_scroll == 0 {
            format!("+{more} more")
        } else {
            format!("+{more} more · {hint}")
        };
        shown.push(Line::styled(text, Style::default().fg(Color::DarkGray)));
    }
    (shown, max_scroll)
}

/// A line in `width` columns: one that is wider ends at a word or a figure's boundary with
/// an ellipsis (`fell behind its…`, `bracket 18.9…`), never mid-word unless a single word
/// takes more than half the room. Each part keeps its style.
pub fn cut(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width || width == 0 {
        return line;
    }
    let text: Vec<char> = line.spans.iter().flat_map(|s| s.content.chars()).collect();
    let room = width - 1;
    // After the last whole word or figure that fits: before a space, or after `–`/`,`/`/`.
    let boundary = (1..=room.min(text.len())).rev().find(|&i| {
        text.get(i).is_some_and(|c| *c == ' ') || matches!(text[i - 1], '–' | ',' | '/' | '·')
    });
    let mut end = match boundary {
        Some(i) if i * 2 >= room => i,
        _ => room,
    };
    // No dangling separator before the ellipsis: `18.9–…` reads as a range cut short.
    while end > 0 && matches!(text[end - 1], ' ' | '–' | ',' | '/' | '·' | ':') {
        end -= 1;
    }
    let mut left = end;
    let mut spans = Vec::new();
    let mut last_style = line.style;
    for s in line.spans {
        if left == 0 {
            break;
        }
        let n = s.content.chars().count().min(left);
        left -= n;
        last_style = s.style;
        spans.push(ratatui::text::Span::styled(
            s.content.chars().take(n).collect::<String>(),
            s.style,
        ));
    }
    spans.push(ratatui::text::Span::styled("…", last_style));
    Line::from(spans).style(line.style)
}

/// `cut` for every line.
pub fn cut_all(lines: Vec<Line<'static>>, width: usize) -> Vec<Line<'static>> {
    lines.into_iter().map(|l| cut(l, width)).collect()
}
