//! Sweep results as phases finish: batch rows with efficiency and cost, concurrency rows with
//! the tail ratio, the knee and the saturation point marked, and one line of advice.

use crate::tui::panels::{Keep, block, fit};
use crate::tui::state::App;
use encbench_core::plan::PhaseKind;
use encbench_core::results::{PhaseResult, analysis};
use encbench_core::text::{ms, num};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

/// The keys that scroll this panel, as its `+N more` line names them.
pub const SCROLL_HINT: &str = "[ ] scroll";

type Rows = Vec<(Keep, Line<'static>)>;

/// The batch column's name, its samples' and its gain's: a reranker's are D and documents.
fn batch_words(rerank: bool) -> [&'static str; 3] {
    if rerank {
        ["D", "docs/s", "×D=1"]
    } else {
        ["b", "smp/s", "×b=1"]
    }
}

fn batch_lines(rows: &[&PhaseResult], knee_at: f64, rerank: bool) -> Rows {
    let knee = analysis::knee(rows, knee_at);
    let [b, smp, gain] = batch_words(rerank);
    let mut out = vec![(
        Keep::Always,
        Line::styled(
            format!(
                "{:>3} {:>5} {:>5} {:>7} {:>4} {:>4} {:>5}",
                b, "p50", "p99", smp, gain, "eff", "$/1M"
            ),
            Style::default().add_modifier(Modifier::BOLD),
        ),
    )];
    for (i, p) in rows.iter().enumerate() {
        let text = format!(
            "{:>3} {:>5} {:>5} {:>7.1} {:>4} {:>4} {:>5}",
            p.batch_size,
            ms(p.latency_ms.p50),
            ms(p.latency_ms.p99),
            p.samples_per_s,
            num(p.batch_efficiency.map(|e| e * p.batch_size as f64), 1),
            num(p.batch_efficiency, 2).trim_start_matches('0'),
            num(p.cost_per_1m_usd, 2),
        );
        out.push(if knee == Some(i) {
            (
                Keep::Always,
                Line::styled(format!("{text} ◀ knee"), Style::default().fg(Color::Yellow)),
            )
        } else {
            (Keep::Scroll, Line::from(text))
        });
    }
    out
}

fn concurrency_lines(rows: &[&PhaseResult]) -> Rows {
    let saturated = analysis::saturation(rows);
    let mut out = vec![(
        Keep::Always,
        Line::styled(
            format!(
                "{:>4} {:>6} {:>6} {:>7} {:>7}",
                "conc", "p50", "p99", "req/s", "p99/p50"
            ),
            Style::default().add_modifier(Modifier::BOLD),
        ),
    )];
    for (i, p) in rows.iter().enumerate() {
        let text = format!(
            "{:>4} {:>6} {:>6} {:>7.1} {:>7}",
            p.concurrency,
            ms(p.latency_ms.p50),
            ms(p.latency_ms.p99),
            p.req_per_s,
            num(p.p99_over_p50, 2)
        );
        out.push(if saturated == Some(i) {
            (
                Keep::Always,
                Line::styled(
                    format!("{text} ◀ saturated"),
                    Style::default().fg(Color::Yellow),
                ),
            )
        } else {
            (Keep::Scroll, Line::from(text))
        });
    }
    out
}

/// The capacity search under way (its probes and bracket), then the answers found: the
/// answers and the headings always stay, the probes scroll.
fn capacity_lines(s: &encbench_load::engine::Snapshot, rerank: bool) -> Rows {
    let [b, smp, _] = batch_words(rerank);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut out = Vec::new();
    if let Some(c) = &s.searching {
        let bracket = match (c.max_rate_per_s, c.failed_at_per_s.or(c.ceiling_per_s)) {
            (lo, Some(hi)) => format!(
                " · bracket {}–{} req/s",
                lo.map_or("0".into(), encbench_core::text::sig3),
                encbench_core::text::sig3(hi)
            ),
            _ => " · closed-loop ceiling first".into(),
        };
        out.push((
            Keep::Always,
            Line::styled(
                format!("capacity {} · {b}={}{bracket}", c.slo, c.batch_size),
                bold,
            ),
        ));
        out.push((
            Keep::Always,
            Line::styled(
                format!(
                    "{:>7} {:>6} {:>6} {:<12} {:>5} {:<10}",
                    "req/s", "n", "p99", "95% CI", "SLO", "stable"
                ),
                bold,
            ),
        ));
        for p in &c.probes {
            let text = format!(
                "{:>7} {:>6} {:>6} {:<12} {:>5} {:<10}",
                encbench_core::text::sig3(p.rate_per_s),
                p.n,
                ms(p.p99),
                p.p99_ci95
                    .map_or("-".into(), encbench_core::interval::Interval::shown),
                match (p.bound, p.meets) {
                    (false, _) => "cut",
                    (true, true) => "pass",
                    (true, false) => "fail",
                },
                if p.stable {
                    "yes".to_string()
                } else {
                    format!("no ({})", p.stop_reason)
                }
            );
            let colour = if p.meets { Color::Green } else { Color::Red };
            out.push((
                Keep::Scroll,
                Line::styled(text, Style::default().fg(colour)),
            ));
        }
    }
    if !s.capacity.is_empty() {
        if !out.is_empty() {
            out.push((Keep::Spacer, Line::raw("")));
        }
        out.push((
            Keep::Always,
            Line::styled(
                format!(
                    "{:>3} {:>9} {:>14} {:>7} {:>6} {:>7} {:>6}",
                    b, "max req/s", "95% CI", smp, "p99", "$/1M", "probes"
                ),
                bold,
            ),
        ));
        for c in &s.capacity {
            out.push((
                Keep::Always,
                Line::from(format!(
                    "{:>3} {:>9} {:>14} {:>7} {:>6} {:>7} {:>6}",
                    c.batch_size,
                    num(c.max_rate_per_s, 1),
                    c.max_rate_per_s_ci95_per_s
                        .map_or("-".into(), encbench_core::capacity::shown),
                    num(c.samples_per_s, 1),
                    c.latency_ms.map_or("-".into(), |l| ms(l.p99)),
                    num(c.cost_per_1m_usd, 4),
                    c.probes.len()
                )),
            ));
        }
    }
    out
}

/// The panel's title, its table lines and its advice.
fn content(app: &App) -> (String, Rows, Vec<String>) {
    let s = &app.snap;
    let running = s
        .phase
        .as_ref()
        .filter(|p| p.kind != PhaseKind::Live)
        .map(|p| match p.step {
            Some((i, n)) => format!(" · running {} {i}/{n}", p.kind.name()),
            None => format!(" · running phase {}", p.index),
        });
    let title = format!(
        " sweeps, capacity{} (b, s, f) ",
        running.unwrap_or_default()
    );

    let batch = analysis::latest_sweep(&s.phases, PhaseKind::Batch);
    let conc = analysis::latest_sweep(&s.phases, PhaseKind::Concurrency);
    let mut lines = Vec::new();
    let mut advice = Vec::new();
    // The most recent sweep goes first; the other follows if there is room.
    let batch_last = s
        .phases
        .iter()
        .rev()
        .find(|p| p.kind != PhaseKind::Live)
        .is_none_or(|p| p.kind == PhaseKind::Batch);
    let mut parts: Vec<(bool, Rows)> = Vec::new();
    if !batch.is_empty() {
        parts.push((true, batch_lines(&batch, app.info.knee, app.info.rerank)));
        let said = analysis::batch_advice(&batch, app.info.knee).filter(|_| batch.len() > 1);
        advice.extend(said.map(|a| {
            if app.info.rerank {
                a.replace("batch cap ", "D at most ")
            } else {
                a
            }
        }));
    }
    if !conc.is_empty() {
        parts.push((false, concurrency_lines(&conc)));
        advice.extend(analysis::concurrency_advice(&conc));
    }
    parts.sort_by_key(|(is_batch, _)| *is_batch != batch_last);
    // A search under way, or the last thing that ran, goes first.
    let capacity = capacity_lines(s, app.info.rerank);
    if !capacity.is_empty() {
        let last_was_search = s.searching.is_some()
            || s.phases
                .iter()
                .rev()
                .find(|p| p.kind != PhaseKind::Live)
                .is_some_and(|p| p.kind == PhaseKind::Capacity);
        if last_was_search {
            parts.insert(0, (false, capacity));
        } else {
            parts.push((false, capacity));
        }
        advice.extend(encbench_core::capacity::advice(&s.capacity));
        if s.searching.is_none() && encbench_core::capacity::advice(&s.capacity).is_none() {
            advice.push(format!(
                "no rate meets {}",
                s.capacity.last().map_or("", |c| c.slo.as_str())
            ));
        }
    }
    for (_, part) in parts {
        if !lines.is_empty() {
            lines.push((Keep::Spacer, Line::raw("")));
        }
        lines.extend(part);
    }
    if lines.is_empty() {
        lines.push((
            Keep::Always,
            Line::raw("no sweep yet: b batch sizes, s concurrency"),
        ));
    }
    (title, lines, advice)
}

/// The rows the panel needs to show everything in `width` columns, borders included.
pub fn height(app: &App, width: u16) -> u16 {
    let (_, lines, advice) = content(app);
    let advice = advice_lines(&advice, usize::from(width.saturating_sub(2)));
    u16::try_from(lines.len() + advice.len() + 2).unwrap_or(u16::MAX)
}

/// Advice stays visible at the bottom, whatever the tables' length.
fn table_room(inner: Rect, advice: usize) -> usize {
    (inner.height as usize).saturating_sub(advice)
}

/// Each piece of advice after `»`, wrapped at word boundaries to `width` rather than cut.
fn advice_lines(advice: &[String], width: usize) -> Vec<Line<'static>> {
    let style = Style::default().fg(Color::Cyan);
    let mut out = Vec::new();
    for a in advice {
        let mut line = String::from("»");
        let mut words = 0;
        for word in a.split_whitespace() {
            if words > 0 && line.chars().count() + 1 + word.chars().count() > width {
                out.push(Line::styled(
                    std::mem::replace(&mut line, " ".into()),
                    style,
                ));
                words = 0;
            }
            line.push(' ');
            line.push_str(word);
            words += 1;
        }
        out.push(Line::styled(line, style));
    }
    out
}

/// Draws the panel; returns how far its rows can scroll in this area.
pub fn render(f: &mut Frame, area: Rect, app: &App) -> usize {
    let (title, lines, advice) = content(app);
    let b = block(title);
    let inner = b.inner(area);
    f.render_widget(b, area);
    let advice = advice_lines(&advice, inner.width as usize);
    let room = table_room(inner, advice.len());
    let (lines, max_scroll) = fit(lines, room, app.sweep_scroll, SCROLL_HINT);
    let mut lines = super::cut_all(lines, inner.width as usize);
    lines.extend(advice);
    f.render_widget(Paragraph::new(lines), inner);
    max_scroll
}
