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
    if let Some(o) = s.accuracy_before.as_ref().and_then(|a| a.output) {
        first.push(Span::raw(format!(" · {o}")));
    }
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
    // State, how far behind the schedule and elapsed time first: a narrow terminal cuts the
    // end of the line.
    let mut second = vec![Span::raw(" "), Span::styled(s.state.label(), state_style)];
    if let Some(text) = s.schedule.and_then(|q| {
        fmt::behind(
            q.offered_per_s,
            s.current.req_per_s,
            q.backlog,
            q.lag,
            q.overloaded,
        )
        .map(|t| (t, q.overloaded))
    }) {
        let style = if text.1 {
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(Color::Yellow)
        };
        second.push(Span::raw(" · "));
        second.push(Span::styled(text.0, style));
    }
    second.push(Span::raw(format!(
        " · {} · {phase} · {} · conc {} · batch {} · in flight {}",
        fmt::elapsed(s.elapsed),
        fmt::pace(&s.pace),
        s.concurrency,
        s.batch_size,
        s.in_flight
    )));
    f.render_widget(
        Paragraph::new(vec![Line::from(first), Line::from(second)]),
        area,
    );
}
