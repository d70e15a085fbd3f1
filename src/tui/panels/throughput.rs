//! Sparklines of req/s and samples/s per second, with the target rate. Squeezed (under four
//! lines) it keeps both figures on one line over the req/s sparkline.

use crate::tui::panels::block;
use crate::tui::state::App;
use encbench_core::stats::TimelineEntry;
use encbench_core::text;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Sparkline};

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let s = &app.snap;
    let target = match s.pace.rate_per_s {
        Some(r) => format!("target {} req/s", text::rate_short(Some(r))),
        None => format!("closed loop at {}", s.concurrency),
    };
    let b = block(format!(" throughput · {target} "));
    let inner = b.inner(area);
    f.render_widget(b, area);
    let points: Vec<(f64, f64)> = s
        .timeline_tail
        .iter()
        .filter_map(|e| match e {
            TimelineEntry::Point {
                req_per_s,
                samples_per_s,
                ..
            } => Some((*req_per_s, *samples_per_s)),
            TimelineEntry::Event { .. } => None,
        })
        .collect();
    // The rightmost columns are the latest seconds.
    let width = inner.width as usize;
    let recent = &points[points.len().saturating_sub(width)..];
    let req: Vec<u64> = recent.iter().map(|p| p.0.round() as u64).collect();
    let samples: Vec<u64> = recent.iter().map(|p| p.1.round() as u64).collect();
    let last = recent.last().copied().unwrap_or((0.0, 0.0));
    // A reranker's samples are its documents.
    let (samples_word, short) = if app.info.rerank {
        ("docs/s", "docs/s")
    } else {
        ("samples/s", "smp/s")
    };
    if inner.height < 4 {
        let [l1, s1] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
        let both = format!(
            "req/s {:.1} now, {:.1} avg · {short} {:.1}, {:.1}",
            last.0, s.current.req_per_s, last.1, s.current.samples_per_s
        );
        let text = if both.chars().count() <= width {
            both
        } else {
            format!("req/s {:.1} · {samples_word} {:.1} now", last.0, last.1)
        };
        f.render_widget(Paragraph::new(text), l1);
        f.render_widget(
            Sparkline::default()
                .data(&req)
                .style(Style::default().fg(Color::Green)),
            s1,
        );
        return;
    }
    let spark_h = inner.height.saturating_sub(2) / 2;
    let [l1, s1, l2, s2] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(spark_h.max(1)),
        Constraint::Length(1),
        Constraint::Length(spark_h.max(1)),
    ])
    .areas(inner);
    let label = |name: &str, now: f64, phase: f64| {
        Line::from(format!("{name} {now:.1} now · {phase:.1} phase avg"))
    };
    f.render_widget(
        Paragraph::new(label("req/s", last.0, s.current.req_per_s)),
        l1,
    );
    f.render_widget(
        Sparkline::default()
            .data(&req)
            .style(Style::default().fg(Color::Green)),
        s1,
    );
    f.render_widget(
        Paragraph::new(label(samples_word, last.1, s.current.samples_per_s)),
        l2,
    );
    f.render_widget(
        Sparkline::default()
            .data(&samples)
            .style(Style::default().fg(Color::Blue)),
        s2,
    );
}
