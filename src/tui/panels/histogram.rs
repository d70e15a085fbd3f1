//! Scheduled latency on log-scale buckets: the recent window, or the whole run (`w`); measured
//! requests only, like the percentiles beside it.

use crate::tui::panels::block;
use crate::tui::state::App;
use encbench_core::text;
use hdrhistogram::Histogram;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// Counts per log-spaced bucket between the smallest and largest value: (lo ms, hi ms, count).
pub fn buckets(h: &Histogram<u64>, rows: usize) -> Vec<(f64, f64, u64)> {
    if h.is_empty() || rows == 0 {
        return vec![];
    }
    let lo = h.min().max(1) as f64;
    let hi = (h.max() as f64).max(lo * 1.01);
    let ratio = (hi / lo).ln();
    let mut counts = vec![0u64; rows];
    for v in h.iter_recorded() {
        let x = (v.value_iterated_to() as f64).clamp(lo, hi);
        let i = (((x / lo).ln() / ratio) * rows as f64) as usize;
        counts[i.min(rows - 1)] += v.count_since_last_iteration();
    }
    (0..rows)
        .map(|i| {
            let edge = |k: usize| lo * (ratio * k as f64 / rows as f64).exp() / 1000.0;
            (edge(i), edge(i + 1), counts[i])
        })
        .collect()
}

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let (h, what) = if app.whole_run {
        (&app.snap.run_latency, "whole run".to_string())
    } else {
        (
            &app.snap.recent_latency,
            format!("last {} s", app.info.window_s),
        )
    };
    let b = block(format!(" latency · {what} · n {} (w: toggle) ", h.len()));
    let inner = b.inner(area);
    f.render_widget(b, area);
    let rows = buckets(h, inner.height as usize);
    if rows.is_empty() {
        f.render_widget(Paragraph::new("waiting for responses…"), inner);
        return;
    }
    let top = rows.iter().map(|r| r.2).max().unwrap_or(1).max(1);
    let label_w = 15usize;
    let count_w = 7usize;
    let bar_w = (inner.width as usize).saturating_sub(label_w + count_w + 1);
    let lines: Vec<Line> = rows
        .iter()
        .map(|&(lo, hi, n)| {
            let len = ((n as f64 / top as f64) * bar_w as f64).round() as usize;
            let len = if n > 0 { len.max(1) } else { 0 };
            Line::from(vec![
                Span::raw(format!("{:>6}–{:<6}ms", text::ms(lo), text::ms(hi))),
                Span::styled("█".repeat(len), Style::default().fg(Color::Cyan)),
                Span::raw(" ".repeat(bar_w - len.min(bar_w))),
                Span::raw(format!(" {n:>6}")),
            ])
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_once() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 2).unwrap();
        for v in [1_000u64, 2_000, 4_000, 8_000, 8_000, 100_000] {
            h.record(v).unwrap();
        }
        let b = buckets(&h, 5);
        assert_eq!(b.len(), 5);
        assert_eq!(b.iter().map(|x| x.2).sum::<u64>(), 6);
        assert!((b[0].0 - 1.0).abs() < 0.02 && b[4].1 >= 99.0);
        assert!(b.windows(2).all(|w| (w[0].1 - w[1].0).abs() < 1e-9));
    }
}
