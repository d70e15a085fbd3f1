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
        let mut lines = Vec::new();
        for (k, n) in kinds {
            let share = *n as f64 / c.n.max(1) as f64 * 100.0;
            let count = format!(" {n} ({share:.1}%)");
            let name = truncate(k, width.saturating_sub(count.chars().count()));
            let pad = width.saturating_sub(name.chars().count() + count.chars().count());
            lines.push(Line::styled(
                format!("{name}{}{count}", " ".repeat(pad)),
                Style::default().fg(Color::Red),
            ));
            // Why, in the server's words: "HTTP 422" alone sends users to the wrong cause.
            if let Some(words) = c.said.get(k) {
                for part in wrapped(words, width.saturating_sub(2), WORDS_LINES) {
                    lines.push(Line::styled(
                        format!("  {part}"),
                        Style::default().fg(Color::Gray),
                    ));
                }
            }
        }
        lines
    };
    let rows = lines.into_iter().map(|l| (Keep::Scroll, l)).collect();
    let (lines, _) = fit(rows, inner.height as usize, 0, "");
    f.render_widget(Paragraph::new(lines), inner);
}

/// Lines of a server's words under its kind: a validation message's reason tends to come
/// after its type and location.
const WORDS_LINES: usize = 3;

/// `text` in lines of `width` characters, at most `most` of them, the last cut with `…`.
fn wrapped(text: &str, width: usize, most: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let width = width.max(1);
    let mut lines: Vec<String> = chars
        .chunks(width)
        .take(most)
        .map(|c| c.iter().collect())
        .collect();
    if chars.len() > width * most
        && let Some(last) = lines.last_mut()
    {
        *last = truncate(&format!("{last}…"), width);
    }
    lines
}

/// The rows the panel needs to list every kind, borders included.
pub fn height(app: &App) -> u16 {
    let c = &app.snap.current;
    u16::try_from(c.errors.len().max(1) + WORDS_LINES * c.said.len() + 2).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    #[test]
    fn words_wrap_to_the_panel_and_say_where_they_were_cut() {
        assert_eq!(super::wrapped("abcdefg", 3, 3), ["abc", "def", "g"]);
        assert_eq!(super::wrapped("abcdefghijk", 3, 3), ["abc", "def", "gh…"]);
        assert_eq!(super::wrapped("", 3, 3), Vec::<String>::new());
    }
}
