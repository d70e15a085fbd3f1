//! Sparklines of req/s and samples/s per second, with the target rate, and where the panel
//! is tall enough (seven lines) p99 per second beside p50, so an operator who turns the
//! rate up sees the tail move when it moves. Squeezed (under four lines) it keeps both
//! rates on one line over the req/s sparkline.

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
    let seconds: Vec<&TimelineEntry> = s
        .timeline_tail
        .iter()
        .filter(|e| matches!(e, TimelineEntry::Point { .. }))
        .collect();
    let points: Vec<(f64, f64)> = seconds
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
    let tall = inner.height >= 7;
    let rows = if tall { 3 } else { 2 };
    let spark_h = (inner.height.saturating_sub(rows) / rows).max(1);
    let [l1, s1, l2, s2, l3, s3] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(spark_h),
        Constraint::Length(1),
        Constraint::Length(spark_h),
        Constraint::Length(u16::from(tall)),
        Constraint::Fill(1),
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
    if tall {
        latency(f, (l3, s3), &seconds[seconds.len().saturating_sub(width)..]);
    }
}

/// p99 per second as a sparkline (in tenths of a millisecond, so a fast server's tail still
/// has a shape), under the last second's p50 and p99.
fn latency(f: &mut Frame, (label, spark): (Rect, Rect), seconds: &[&TimelineEntry]) {
    let p = |e: &TimelineEntry| match e {
        TimelineEntry::Point { p50_ms, p99_ms, .. } => (*p50_ms, *p99_ms),
        TimelineEntry::Event { .. } => (None, None),
    };
    let p99: Vec<u64> = seconds
        .iter()
        .map(|e| p(e).1.map_or(0, |v| (v * 10.0).round() as u64))
        .collect();
    let (p50_now, p99_now) = seconds.last().map_or((None, None), |e| p(e));
    let now = match (p50_now, p99_now) {
        (Some(a), Some(b)) => format!("p50 {} · p99 {} ms last second", text::ms(a), text::ms(b)),
        _ => "p50 - · p99 - ms last second".into(),
    };
    f.render_widget(Paragraph::new(format!("latency {now}")), label);
    f.render_widget(
        Sparkline::default()
            .data(&p99)
            .style(Style::default().fg(Color::Red)),
        spark,
    );
}
