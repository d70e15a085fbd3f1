//! The live screen of `tune`: one row per configuration, filling in as each ends, the one
//! under way with its load's figures so far, and the probes of its capacity search.
//!
//! ```text
//!  encbench-tui tune · 3 configurations · running · 00:01:12
//!  configuration 2 of 3: workers=2 · measuring · server output: tune.logs/02-workers=2.log
//! ╭ configurations · now = its state; the last four columns once it ended ──────────╮
//! │ configuration  now        n     p50    p99    req/s  err  max req/s  smp/s  $/1M │
//! │ workers=1      measured   -     -      -      -      -    28.1       28.1   9.87 │
//! │ workers=2      running    1204  21.0   48.2   61.0   0    -          -      -    │
//! │ workers=4      waiting    -     -      -      -      -    -          -      -    │
//! ╰─────────────────────────────────────────────────────────────────────────────────╯
//! ╭ workers=2 · capacity search within p99 ≤ 100 ms ──────────────────────────────╮
//! │ b=1: 75.2 req/s meets (p99 88.1 ms, n 3000, stable)                           │
//! ╰───────────────────────────────────────────────────────────────────────────────╯
//!  workers=3 failed: its server exited with status 2 … (the reasons of those that failed)
//!  q quit (the configuration under way stops, its server too; results so far are kept)
//! ```

use crate::tui::panels::block;
use crate::tui::screen::{MIN_HEIGHT, MIN_WIDTH};
use encbench_core::export::tune::TuneStatus;
use encbench_core::results::capacity::Capacity;
use encbench_core::text::{elapsed, ms, sig3};
use encbench_load::tune::{ConfigurationState, Row, TuneView};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row as TableRow, Table, Wrap};

pub fn draw(f: &mut Frame, v: &TuneView, quitting: bool) {
    let area = f.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "terminal too small: {}×{}, encbench-tui needs at least {MIN_WIDTH}×{MIN_HEIGHT} (q quits)",
            area.width, area.height
        );
        f.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
        return;
    }
    let [head, table, probes, notes, foot] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(v.rows.len() as u16 + 3),
        Constraint::Min(3),
        Constraint::Max(4),
        Constraint::Length(1),
    ])
    .areas(area);
    f.render_widget(heading(v), head);
    f.render_widget(configurations(v), table);
    f.render_widget(search(v), probes);
    f.render_widget(Paragraph::new(troubles(v)).wrap(Wrap { trim: true }), notes);
    let footer = if quitting {
        " stopping: the configuration under way ends and its server is stopped; results so far are kept…"
    } else if v.finished {
        " finished · q quit (the tables follow)"
    } else {
        " q quit (the configuration under way stops, its server too; results so far are kept)"
    };
    f.render_widget(Paragraph::new(footer), foot);
}

fn heading(v: &TuneView) -> Paragraph<'static> {
    let status = if v.finished { "finished" } else { "running" };
    let under_way = match v.current {
        Some(i) => format!(
            " configuration {} of {}: {} · {}{}",
            i + 1,
            v.rows.len(),
            v.rows[i].label,
            now(&v.rows[i]),
            v.log
                .as_deref()
                .map(|l| format!(" · server output: {l}"))
                .unwrap_or_default()
        ),
        None => format!(" {} of {} ended", v.done(), v.rows.len()),
    };
    Paragraph::new(vec![
        Line::from(format!(
            " encbench-tui tune · {} configurations · {status} · {}",
            v.rows.len(),
            elapsed(v.elapsed)
        ))
        .style(Style::default().add_modifier(Modifier::BOLD)),
        Line::from(under_way),
    ])
}

/// What a row is doing: its state, or while it loads, the engine's.
fn now(r: &Row) -> String {
    match (r.state, &r.snapshot) {
        (ConfigurationState::Measuring, Some(s)) => s.state.label().to_string(),
        (state, _) => state.label().to_string(),
    }
}

fn configurations(v: &TuneView) -> Table<'static> {
    let searched = v.slo.is_some();
    let header = TableRow::new(vec![
        "configuration",
        "now",
        "n",
        "p50",
        "p99",
        "req/s",
        "err",
        if searched { "max req/s" } else { "-" },
        if searched { "smp/s" } else { "-" },
        "$/1M",
    ])
    .style(Style::default().add_modifier(Modifier::BOLD));
    let widths = [
        Constraint::Min(12),
        Constraint::Min(10),
        Constraint::Length(6),
        Constraint::Length(6),
        Constraint::Length(6),
        Constraint::Length(7),
        Constraint::Length(4),
        Constraint::Length(9),
        Constraint::Length(7),
        Constraint::Length(7),
    ];
    Table::new(v.rows.iter().map(row), widths)
        .header(header)
        .column_spacing(1)
        .block(block(
            " configurations · now = its state; the last three columns once it ended ".into(),
        ))
}

fn row(r: &Row) -> TableRow<'static> {
    let live = r
        .snapshot
        .as_ref()
        .filter(|_| r.state == ConfigurationState::Measuring)
        .map(|s| &s.current);
    let fig = |x: Option<f64>, f: fn(f64) -> String| x.map_or("-".to_string(), f);
    let one = |x: f64| format!("{x:.1}");
    let answer = r.record.as_ref().and_then(|c| c.capacity.as_ref());
    let style = match r.state {
        ConfigurationState::Done(TuneStatus::Failed) => Style::default().fg(Color::Red),
        ConfigurationState::Done(TuneStatus::Incomplete) => Style::default().fg(Color::Yellow),
        _ => Style::default(),
    };
    TableRow::new(vec![
        Cell::from(r.label.clone()),
        Cell::from(now(r)).style(style),
        Cell::from(live.map_or("-".into(), |s| s.n.to_string())),
        Cell::from(fig(live.filter(|s| s.ok > 0).map(|s| s.latency.p50), ms)),
        Cell::from(fig(live.filter(|s| s.ok > 0).map(|s| s.latency.p99), ms)),
        Cell::from(fig(live.map(|s| s.req_per_s), one)),
        Cell::from(live.map_or("-".into(), |s| s.error_count().to_string())),
        Cell::from(fig(answer.and_then(|a| a.max_rate_per_s), one)),
        Cell::from(fig(answer.and_then(|a| a.samples_per_s), one)),
        Cell::from(fig(answer.and_then(|a| a.cost_per_1m_usd), |x| {
            format!("{x:.2}")
        })),
    ])
}

/// The capacity search of the configuration under way: its answers and probes so far.
fn search(v: &TuneView) -> Paragraph<'static> {
    let current = v.current.map(|i| &v.rows[i]);
    let snap = current.and_then(|r| r.snapshot.as_ref());
    let mut lines: Vec<Line<'static>> = Vec::new();
    if let Some(s) = snap {
        for c in s.capacity.iter().chain(&s.searching) {
            lines.extend(probes(c));
        }
    }
    if lines.is_empty() {
        lines.push(Line::from(match (&v.slo, current) {
            (Some(_), Some(_)) => "no probe has ended yet".to_string(),
            (Some(_), None) => "-".to_string(),
            (None, _) => "no capacity search: give --find-capacity --slo p99=100ms".to_string(),
        }));
    }
    let title = match (current, &v.slo) {
        (Some(r), Some(slo)) => format!(" {} · capacity search within {slo} ", r.label),
        (Some(r), None) => format!(" {} ", r.label),
        (None, _) => " under way: nothing ".into(),
    };
    // The latest probes are the ones worth the room.
    let keep = lines.len().saturating_sub(12);
    Paragraph::new(lines.split_off(keep)).block(block(title))
}

fn probes(c: &Capacity) -> Vec<Line<'static>> {
    let mut out: Vec<Line<'static>> = c
        .probes
        .iter()
        .map(|p| {
            Line::from(format!(
                "b={}: {} req/s {} (p99 {} ms, n {}, {})",
                c.batch_size,
                sig3(p.rate_per_s),
                match (p.bound, p.meets) {
                    (false, _) => "cut short",
                    (true, true) => "meets",
                    (true, false) => "misses",
                },
                ms(p.p99),
                p.n,
                if p.stable {
                    "stable"
                } else {
                    p.stop_reason.as_str()
                }
            ))
        })
        .collect();
    if c.complete || c.max_rate_per_s.is_some() {
        out.push(
            Line::from(format!("b={}: {}", c.batch_size, c.verdict))
                .style(Style::default().add_modifier(Modifier::BOLD)),
        );
    }
    out
}

/// Each configuration that failed, and why.
fn troubles(v: &TuneView) -> Vec<Line<'static>> {
    v.rows
        .iter()
        .filter_map(|r| {
            let c = r
                .record
                .as_ref()
                .filter(|c| c.status == TuneStatus::Failed)?;
            Some(
                Line::from(format!(
                    "{} failed: {}",
                    r.label,
                    c.reason.as_deref().unwrap_or("-")
                ))
                .style(Style::default().fg(Color::Red)),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use encbench_core::export::tune::TuneConfiguration;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn record(label: &str, status: TuneStatus, reason: Option<&str>) -> TuneConfiguration {
        TuneConfiguration {
            label: label.into(),
            values: std::collections::BTreeMap::new(),
            status,
            reason: reason.map(String::from),
            url: None,
            instance_type: None,
            price_per_hour_usd: None,
            capacity: None,
            ready_after_s: None,
            server_exit: None,
            log: None,
            log_tail: vec![],
            config: None,
            accuracy: None,
            resumed: false,
        }
    }

    fn screen(v: &TuneView) -> String {
        let mut t = Terminal::new(TestBackend::new(100, 24)).unwrap();
        t.draw(|f| draw(f, v, false)).unwrap();
        let buf = t.backend().buffer().clone();
        (0..buf.area.height)
            .map(|y| {
                (0..buf.area.width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_table_fills_in_as_configurations_end() {
        let labels = ["workers=1", "workers=0", "workers=2"]
            .map(String::from)
            .to_vec();
        let mut v = TuneView::new(labels, Some("p99 ≤ 100 ms".into()));
        let mut done = record("workers=1", TuneStatus::Measured, None);
        done.capacity = Some(encbench_core::export::tune::CapacitySummary {
            slo: "p99 ≤ 100 ms".into(),
            batch_size: 1,
            max_rate_per_s: Some(28.1),
            max_rate_ci95_per_s: None,
            samples_per_s: Some(28.1),
            p50_ms: Some(21.0),
            p99_ms: Some(97.0),
            cost_per_1m_usd: Some(9.87),
            searches: 1,
        });
        v.rows[0].state = ConfigurationState::Done(TuneStatus::Measured);
        v.rows[0].record = Some(done);
        v.rows[1].state = ConfigurationState::Done(TuneStatus::Failed);
        v.rows[1].record = Some(record(
            "workers=0",
            TuneStatus::Failed,
            Some("its server exited with status 2 0.1 s after it started, before it was ready"),
        ));
        v.rows[2].state = ConfigurationState::Starting;
        v.current = Some(2);
        v.log = Some("t.logs/03-workers=2.log".into());
        let s = screen(&v);
        assert!(
            s.contains("configuration 3 of 3: workers=2 · starting"),
            "{s}"
        );
        assert!(s.contains("server output: t.logs/03-workers=2.log"), "{s}");
        let first = s.lines().find(|l| l.contains("workers=1")).unwrap();
        for figure in ["measured", "28.1", "9.87"] {
            assert!(first.contains(figure), "{first}");
        }
        assert!(
            s.contains("workers=0 failed: its server exited with status 2"),
            "{s}"
        );
        assert!(s.contains("no probe has ended yet"), "{s}");
    }
}
