//! Sweep results as phases finish: batch rows with efficiency and cost, concurrency rows with
//! the tail ratio, the knee and the saturation point marked, and one line of advice.

use crate::tui::panels::{Keep, block, fit};
use crate::tui::state::App;
use encbench_core::interval::Interval;
use encbench_core::percentile::Percentile;
use encbench_core::plan::PhaseKind;
use encbench_core::results::{PhaseResult, analysis};
use encbench_core::stats::LatencySummary;
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

/// How a finished phase's percentiles read in the room the panel has: beside their 95 %
/// intervals (`26.1 [25.6, 26.9]`), as a margin that holds the interval (`26.1±.8`), or as a
/// margin with the columns another one implies (×b=1, p99/p50) left out. The first form in
/// which every row fits is taken.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    Interval,
    Margin,
    Lean,
}

const FORMS: [Form; 3] = [Form::Interval, Form::Margin, Form::Lean];

/// Percentile `at` of `l` in `form`, as the figure's part and the interval's part (which
/// line up apart); `≥ x` where too few requests bound it from above.
fn pct(l: &LatencySummary, at: Percentile, form: Form) -> Cell {
    let v = at.of(l);
    let one = |s: String| (s, String::new());
    match (l.ci95.map(|c| c.of_percentile(at)), form) {
        (None, _) => one(ms(v)),
        (Some(Interval(lo, None)), Form::Interval) => one(format!("≥ {}", ms(lo))),
        (Some(Interval(lo, None)), _) => one(format!("≥{}", ms(lo))),
        (Some(i), Form::Interval) => (ms(v), i.shown()),
        (Some(Interval(lo, Some(hi))), _) => {
            one(format!("{}±{}", ms(v), margin((v - lo).max(hi - v), v)))
        }
    }
}

/// Percentile `at` of `l` with a margin that holds its interval (`26.1±.8`, `≥26.6`): a
/// finished phase's figure where a screen has a narrow column for it.
pub(crate) fn with_margin(l: &LatencySummary, at: Percentile) -> String {
    pct(l, at, Form::Margin).0
}

/// The larger side of an interval, at the figure's own decimals (`.8`, `12`): the interval
/// `v ± margin` holds the one measured, so it claims no more than it.
fn margin(m: f64, v: f64) -> String {
    let digits = ms(v).split_once('.').map_or(0, |(_, d)| d.len());
    let scale = 10f64.powi(i32::try_from(digits).unwrap_or(0));
    // Up, never down: a margin rounded down would be an interval narrower than measured.
    let m = (m * scale - 1e-9).ceil().max(0.0) / scale;
    let text = format!("{m:.digits$}");
    match text.strip_prefix('0') {
        Some(rest) if rest.starts_with('.') => rest.to_string(),
        _ => text,
    }
}

/// A cell as the figure's part and the interval's part (empty but for a percentile's).
type Cell = (String, String);

/// A column: its header and its cells.
type Column<'a> = (&'a str, Vec<Cell>);

/// Columns one space apart, each cell's figure right-aligned on one edge and its interval
/// left-aligned after it, so digits line up down a column: the header line, then a line per
/// row.
fn lay_out(columns: &[Column<'_>]) -> (String, Vec<String>) {
    let shown: Vec<Vec<String>> = columns
        .iter()
        .map(|(_, cells)| {
            let wide = |f: fn(&Cell) -> &String| {
                cells
                    .iter()
                    .map(|c| f(c).chars().count())
                    .max()
                    .unwrap_or(0)
            };
            let (wa, wb) = (wide(|c| &c.0), wide(|c| &c.1));
            cells
                .iter()
                .map(|(a, b)| match wb {
                    0 => a.clone(),
                    _ => format!("{a:>wa$} {b:<wb$}"),
                })
                .collect()
        })
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .zip(&shown)
        .map(|((h, _), cells)| {
            cells
                .iter()
                .map(|c| c.chars().count())
                .chain([h.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cell: &dyn Fn(usize) -> String| {
        (0..columns.len())
            .map(|c| format!("{:>w$}", cell(c), w = widths[c]))
            .collect::<Vec<_>>()
            .join(" ")
            .trim_end()
            .to_string()
    };
    let rows = shown.first().map_or(0, Vec::len);
    (
        line(&|c| columns[c].0.to_string()),
        (0..rows).map(|r| line(&|c| shown[c][r].clone())).collect(),
    )
}

/// A table's header in bold, then its rows, the one `marked` in yellow with its mark.
fn styled(header: String, rows: Vec<String>, marked: Option<(usize, &str)>) -> Rows {
    let mut out = vec![(
        Keep::Always,
        Line::styled(header, Style::default().add_modifier(Modifier::BOLD)),
    )];
    for (i, text) in rows.into_iter().enumerate() {
        out.push(match marked {
            Some((m, mark)) if m == i => (
                Keep::Always,
                Line::styled(
                    format!("{text} ◀ {mark}"),
                    Style::default().fg(Color::Yellow),
                ),
            ),
            _ => (Keep::Scroll, Line::from(text)),
        });
    }
    out
}

fn batch_lines(rows: &[&PhaseResult], knee_at: f64, rerank: bool, form: Form) -> Rows {
    let [b, smp, gain] = batch_words(rerank);
    let col =
        |f: &dyn Fn(&PhaseResult) -> String| rows.iter().map(|p| (f(p), String::new())).collect();
    let pcts = |at| rows.iter().map(|p| pct(&p.latency_ms, at, form)).collect();
    let mut columns: Vec<Column<'_>> = vec![
        (b, col(&|p| p.batch_size.to_string())),
        ("p50", pcts(Percentile::P50)),
        ("p99", pcts(Percentile::P99)),
        (smp, col(&|p| format!("{:.1}", p.samples_per_s))),
    ];
    if form != Form::Lean {
        columns.push((
            gain,
            col(&|p| num(p.batch_efficiency.map(|e| e * p.batch_size as f64), 1)),
        ));
    }
    columns.extend([
        (
            "eff",
            col(&|p| {
                num(p.batch_efficiency, 2)
                    .trim_start_matches('0')
                    .to_string()
            }),
        ),
        ("$/1M", col(&|p| num(p.cost_per_1m_usd, 2))),
    ]);
    let (header, lines) = lay_out(&columns);
    styled(
        header,
        lines,
        analysis::knee(rows, knee_at).map(|k| (k, "knee")),
    )
}

fn concurrency_lines(rows: &[&PhaseResult], form: Form) -> Rows {
    let col =
        |f: &dyn Fn(&PhaseResult) -> String| rows.iter().map(|p| (f(p), String::new())).collect();
    let pcts = |at| rows.iter().map(|p| pct(&p.latency_ms, at, form)).collect();
    let mut columns: Vec<Column<'_>> = vec![
        ("conc", col(&|p| p.concurrency.to_string())),
        ("p50", pcts(Percentile::P50)),
        ("p99", pcts(Percentile::P99)),
        ("req/s", col(&|p| format!("{:.1}", p.req_per_s))),
    ];
    if form != Form::Lean {
        columns.push(("p99/p50", col(&|p| num(p.p99_over_p50, 2))));
    }
    let (header, lines) = lay_out(&columns);
    styled(
        header,
        lines,
        analysis::saturation(rows).map(|k| (k, "saturated")),
    )
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
                    "req/s", "n", "p99", "95% CI", "SLO", "ended"
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
                p.stop_reason
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
                    c.max_rate_ci95_per_s
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

/// The batch and the concurrency sweep's lines (where there was one) in the first form in
/// which every line of both fits `width` columns.
fn sweep_lines(
    batch: &[&PhaseResult],
    conc: &[&PhaseResult],
    app: &App,
    width: usize,
) -> (Option<Rows>, Option<Rows>) {
    let of = |form| {
        (
            (!batch.is_empty()).then(|| batch_lines(batch, app.info.knee, app.info.rerank, form)),
            (!conc.is_empty()).then(|| concurrency_lines(conc, form)),
        )
    };
    let fits = |rows: &Option<Rows>| rows.iter().flatten().all(|(_, l)| l.width() <= width);
    FORMS
        .into_iter()
        .map(of)
        .find(|(b, c)| fits(b) && fits(c))
        .unwrap_or_else(|| of(Form::Lean))
}

/// The panel's title, its table lines and its advice, for `width` columns inside its borders.
fn content(app: &App, width: usize) -> (String, Rows, Vec<String>) {
    let s = &app.snap;
    let running = s
        .phase
        .as_ref()
        .filter(|p| p.kind != PhaseKind::Live)
        .map(|p| {
            let rep = p
                .repetition
                .map(|(k, of)| format!(" rep {k}/{of}"))
                .unwrap_or_default();
            match p.step {
                Some((i, n)) => format!(" · running {} {i}/{n}{rep}", p.kind.name()),
                None => format!(" · running phase {}{rep}", p.index),
            }
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
    let (batch_rows, conc_rows) = sweep_lines(&batch, &conc, app, width);
    let mut parts: Vec<(bool, Rows)> = Vec::new();
    if let Some(rows) = batch_rows {
        parts.push((true, rows));
        let said = analysis::batch_advice(&batch, app.info.knee).filter(|_| batch.len() > 1);
        advice.extend(said.map(|a| {
            if app.info.rerank {
                a.replace("batch cap ", "D at most ")
            } else {
                a
            }
        }));
    }
    if let Some(rows) = conc_rows {
        parts.push((false, rows));
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
    let inner = usize::from(width.saturating_sub(2));
    let (_, lines, advice) = content(app, inner);
    let advice = advice_lines(&advice, inner);
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
    let inner = block(String::new()).inner(area);
    let (title, lines, advice) = content(app, inner.width as usize);
    let b = block(title);
    f.render_widget(b, area);
    let advice = advice_lines(&advice, inner.width as usize);
    let room = table_room(inner, advice.len());
    let (lines, max_scroll) = fit(lines, room, app.sweep_scroll, SCROLL_HINT);
    let mut lines = super::cut_all(lines, inner.width as usize);
    lines.extend(advice);
    f.render_widget(Paragraph::new(lines), inner);
    max_scroll
}

#[cfg(test)]
mod tests {
    use super::margin;

    /// A margin rounds up at the figure's own decimals: rounded down, `v ± margin` would be
    /// narrower than the interval it stands for.
    #[test]
    fn a_margin_holds_the_interval_it_stands_for() {
        assert_eq!(margin(0.01, 26.1), ".1");
        assert_eq!(margin(0.8, 26.1), ".8");
        assert_eq!(margin(0.049, 4.52), ".05");
        assert_eq!(margin(11.2, 368.0), "12");
        assert_eq!(margin(1.6, 52.0), "1.6");
        assert_eq!(margin(0.0, 26.1), ".0");
    }
}
