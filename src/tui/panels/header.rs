//! Target, engine, loop, phase, state and elapsed time.

use crate::engine::RunState;
use crate::fmt;
use crate::tui::app::App;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let s = &app.snap;
    let mut first = vec![
        Span::styled(
            " encbench-tui ",
            Style::default()
                .add_modifier(Modifier::BOLD)
                .fg(Color::Cyan),
        ),
        Span::raw(format!("{} · {}", s.target, app.info.format)),
    ];
    if app.info.simulated {
        first.push(Span::styled(
            " · simulated endpoint",
            Style::default().fg(Color::Yellow),
        ));
    }
    let phase = match &s.phase {
        Some(p) => {
            let of = p.planned.map(|n| format!("/{n}")).unwrap_or_default();
            format!("phase {}{of} {}", p.index, p.kind.name())
        }
        None => "starting".into(),
    };
    let state_style = match s.state {
        RunState::Running => Style::default().fg(Color::Green),
        RunState::Paused => Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD),
        RunState::Warming | RunState::CheckingAccuracy => Style::default().fg(Color::Cyan),
        _ => Style::default(),
    };
    // State and elapsed time first: a narrow terminal cuts the end of the line.
    let second = Line::from(vec![
        Span::raw(" "),
        Span::styled(s.state.label(), state_style),
        Span::raw(format!(
            " · {} · {phase} · {} · conc {} · batch {} · in flight {}",
            fmt::elapsed(s.elapsed),
            fmt::pace(&s.pace),
            s.concurrency,
            s.batch_size,
            s.in_flight
        )),
    ]);
    f.render_widget(Paragraph::new(vec![Line::from(first), second]), area);
}
