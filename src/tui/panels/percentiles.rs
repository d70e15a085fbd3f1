//! The percentiles of the segment under way (a live change opens a new one), tail ratio,
//! mean and max, always with n beside them; warmup requests excluded, as everywhere. `w`
//! shows the whole run instead, as it does for the histogram. A short panel keeps the percentiles, the counts
//! and the SLO verdict, and says how many other lines it left out.

use crate::tui::panels::{Keep, block, fit};
use crate::tui::state::App;
use encbench_core::stats::LatencySummary;
use encbench_core::text::{ms, num};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let title = if app.whole_run {
        format!(" run percentiles · n {} ", whole_run_n(app))
    } else {
        format!(" percentiles · n {} ", app.snap.current.n)
    };
    let b = block(title);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let rows = split_wide(lines(app, inner.width as usize), inner.width as usize);
    let (lines, _) = fit(rows, inner.height as usize, 0, "");
    f.render_widget(
        Paragraph::new(super::cut_all(lines, inner.width as usize)),
        inner,
    );
}

/// The rows the panel needs to show every line in `width` columns, borders included.
pub fn height(app: &App, width: u16) -> u16 {
    let inner = usize::from(width.saturating_sub(2));
    let rows = split_wide(lines(app, inner), inner);
    u16::try_from(rows.len() + 2).unwrap_or(u16::MAX)
}

/// Lines wider than the panel broken at their " · " into more lines, rather than cut.
fn split_wide(rows: Vec<(Keep, Line<'static>)>, width: usize) -> Vec<(Keep, Line<'static>)> {
    let mut out = Vec::with_capacity(rows.len());
    for (keep, line) in rows {
        if line.width() <= width || line.spans.len() != 1 {
            out.push((keep, line));
            continue;
        }
        let style = line.spans[0].style;
        for (i, part) in line.spans[0].content.split(" · ").enumerate() {
            let text = if i == 0 {
                part.to_string()
            } else {
                format!("  · {part}")
            };
            out.push((keep, Line::styled(text, style)));
        }
    }
    out
}

/// Measured requests of the whole run (since the start or the last reset).
fn whole_run_n(app: &App) -> u64 {
    app.snap.run_latency.len() + app.snap.run_errors
}

fn pair(a: &str, x: &str, b: &str, y: &str) -> Line<'static> {
    Line::from(format!("{a:<5}{x:>6} ms  {b:<7}{y:>7}"))
}

fn percentile_lines(l: &LatencySummary) -> Vec<(Keep, Line<'static>)> {
    let tail = (l.p50 > 0.0).then(|| l.p99 / l.p50);
    [
        pair("p50", &ms(l.p50), "p99.9", &format!("{} ms", ms(l.p999))),
        pair("p90", &ms(l.p90), "max", &format!("{} ms", ms(l.max))),
        pair("p95", &ms(l.p95), "mean", &format!("{} ms", ms(l.mean))),
        pair("p99", &ms(l.p99), "p99/p50", &num(tail, 2)),
    ]
    .into_iter()
    .map(|l| (Keep::Always, l))
    .collect()
}

/// The server's time per request from its metrics: the phase under way, else the last
/// phase that had them.
fn server_lines(app: &App) -> Option<[String; 2]> {
    let from_phases = || {
        app.snap
            .phases
            .iter()
            .rev()
            .find_map(|p| p.server_metrics.clone())
    };
    let m = app.snap.current.server.clone().or_else(from_phases)?;
    let (queue, compute) = (m.queue_ms_per_request?, m.compute_ms_per_request?);
    let total = m.request_ms_per_request.map_or("-".into(), ms);
    Some([
        format!("server {total} · queue {} ms", ms(queue)),
        format!(
            "  compute {} · batch ×{}",
            ms(compute),
            num(m.batch_factor, 1)
        ),
    ])
}

/// Every phase and segment so far pooled: the figures to compare with an overall SLO, not
/// with any one setting.
fn whole_run_lines(app: &App) -> Vec<(Keep, Line<'static>)> {
    let s = &app.snap;
    let pooled = LatencySummary::of(&s.run_latency);
    let mut lines = percentile_lines(&pooled);
    lines.push((
        Keep::Always,
        Line::from(format!(
            "n {}  ok {}  errors {}",
            whole_run_n(app),
            s.run_latency.len(),
            s.run_errors
        )),
    ));
    lines.extend(ci_line(&pooled));
    lines.push((
        Keep::Scroll,
        Line::from("all settings pooled · w: this segment"),
    ));
    lines
}

/// How sure the two headline percentiles are: their 95 % intervals, `≥ low` where too few
/// requests bound one from above.
fn ci_line(l: &LatencySummary) -> Option<(Keep, Line<'static>)> {
    let ci = l.ci95?;
    Some((
        Keep::Scroll,
        Line::from(format!(
            "95% CI p50 {} · p99 {}",
            ci.p50.shown(),
            ci.p99.shown()
        )),
    ))
}

/// Service time and dispatch delay, with their intervals where each part fits the panel's
/// `width` on a line of its own; in a narrow panel the figures alone, so that the accuracy
/// panel below keeps its rows (the tables and the export give these intervals).
fn breakdown_line(c: &encbench_load::engine::LiveStats, width: usize) -> String {
    let service = with_interval(c.service.p50, c.service.ci95.map(|i| i.p50));
    let dispatch = with_interval(c.dispatch_delay.p99, c.dispatch_delay.ci95.map(|i| i.p99));
    let long = format!("ms: service p50 {service} · dispatch p99 {dispatch}");
    if long
        .split(" · ")
        .all(|part| part.chars().count() + 4 <= width)
    {
        long
    } else {
        format!(
            "ms: service p50 {} · dispatch p99 {}",
            ms(c.service.p50),
            ms(c.dispatch_delay.p99)
        )
    }
}

/// A percentile beside its interval, `26.2 [26.1, 26.3]`, as the tables print it: `≥ 30.0`
/// where too few requests bound it from above, the bare figure before the first request.
fn with_interval(v: f64, ci: Option<encbench_core::interval::Interval>) -> String {
    match ci {
        Some(i) if i.1.is_some() => format!("{} {}", ms(v), i.shown()),
        Some(i) => i.shown(),
        None => ms(v),
    }
}

fn lines(app: &App, width: usize) -> Vec<(Keep, Line<'static>)> {
    if app.whole_run {
        return whole_run_lines(app);
    }
    let c = &app.snap.current;
    let mut lines = percentile_lines(&c.latency);
    let errors = c.error_count();
    lines.push((
        Keep::Always,
        Line::from(format!("n {}  ok {}  errors {}", c.n, c.ok, errors)),
    ));
    lines.extend(ci_line(&c.latency));
    let mut more = |line| lines.push((Keep::Scroll, line));
    more(Line::from(breakdown_line(c, width)));
    if let Some(t) = &c.tokenize {
        more(Line::from(format!(
            "client tokenize p50 {} · p99 {} ms",
            ms(t.p50),
            ms(t.p99)
        )));
    }
    if let Some(t) = &c.server_time {
        more(Line::from(server_time_line(t)));
    }
    if let Some([first, second]) = server_lines(app) {
        // Two short lines rather than one long one: whole at 80 columns.
        more(Line::from(first));
        more(Line::from(second));
    } else if let Some(s) = app.snap.phases.iter().rev().find_map(|p| p.server) {
        more(Line::from(format!(
            "server: queue {} · infer {} ms · batch ×{}",
            ms(s.queue_ms),
            ms(s.compute_infer_ms),
            num(s.batch_factor, 1)
        )));
    }
    if app
        .snap
        .notices
        .iter()
        .any(|n| n.starts_with("server statistics refused"))
    {
        more(Line::styled(
            "server statistics refused: see --header",
            Style::default().fg(Color::Yellow),
        ));
    }
    if let Some(j) = &c.slo {
        let text = match &j.missed {
            None => format!("SLO met · goodput {:.1}%", j.goodput_share * 100.0),
            Some(why) => format!("SLO missed: {why}"),
        };
        let colour = if j.met { Color::Green } else { Color::Red };
        lines.push((
            Keep::Always,
            Line::styled(text, Style::default().fg(colour)),
        ));
    }
    if c.n > 0 && c.n < 100 {
        lines.push((
            Keep::Scroll,
            Line::from(format!("n={}: p99 is close to the maximum", c.n)),
        ));
    }
    lines
}

/// What the replies' headers said of the server's time: `server said: queue p50 3.0 · infer
/// p50 20.0 · tokenize p50 0.00 ms`.
fn server_time_line(t: &encbench_core::server_metrics::headers::ServerTimeSummary) -> String {
    let parts: Vec<String> = [
        ("queue", t.queue),
        ("infer", t.inference),
        ("tokenize", t.tokenization),
    ]
    .into_iter()
    .filter_map(|(name, s)| Some(format!("{name} p50 {}", ms(s?.p50))))
    .collect();
    format!("server said: {} ms", parts.join(" · "))
}
