//! The live screen of `compare`: one row per target — what it is doing now, its current
//! phase's figures, and its finished phases' key numbers — drawn from the comparison's view.

use crate::tui::panels::block;
use crate::tui::screen::{MIN_HEIGHT, MIN_WIDTH};
use encbench_core::choice::Choice;
use encbench_core::export::Export;
use encbench_core::percentile::Percentile;
use encbench_core::plan::PhaseKind;
use encbench_core::results::PhaseResult;
use encbench_core::text::elapsed;
use encbench_load::compare::{CompareView, RowState, RowView, order_note};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Paragraph, Row, Table, Wrap};
use std::future::Future;
use tokio::sync::watch;

fn state(r: &RowView) -> String {
    match &r.state {
        RowState::Waiting => "waiting".into(),
        RowState::CheckingAccuracy => "accuracy check".into(),
        RowState::Running(step, _) => match &r.live {
            Some((s, _)) => format!("{} {}", step.label(), s.label()),
            None => format!("{} starting", step.label()),
        },
        RowState::Done => "done".into(),
    }
}

fn result_at(r: &RowView, kind: PhaseKind, b: usize, c: usize) -> Option<&PhaseResult> {
    r.results
        .iter()
        .find(|p| p.kind == kind && p.batch_size == b && p.concurrency == c)
}

pub fn draw(f: &mut Frame, v: &CompareView, quitting: bool) {
    let area = f.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "terminal too small: {}×{}, encbench-tui needs at least {MIN_WIDTH}×{MIN_HEIGHT} (q quits)",
            area.width, area.height
        );
        f.render_widget(Paragraph::new(msg).wrap(Wrap { trim: true }), area);
        return;
    }
    let [head, table, notes, foot] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Length(v.rows.len() as u16 + 3),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    f.render_widget(heading(v), head);
    f.render_widget(targets(v), table);
    f.render_widget(Paragraph::new(notes_of(v)).wrap(Wrap { trim: true }), notes);
    let footer = if quitting {
        " stopping: the phase in progress ends, results so far are kept…"
    } else if v.finished {
        " finished · q quit (the tables follow)"
    } else {
        " q quit (results so far are kept)"
    };
    f.render_widget(Paragraph::new(footer), foot);
}

/// " · repetition 2 of 3" while a repeated phase runs (`--repeat`).
fn repetition(v: &CompareView) -> String {
    v.rows
        .iter()
        .find_map(|r| match r.state {
            RowState::Running(_, Some((k, of))) => Some(format!(" · repetition {k} of {of}")),
            _ => None,
        })
        .unwrap_or_default()
}

fn heading(v: &CompareView) -> Paragraph<'static> {
    let status = if v.finished { "finished" } else { "running" };
    Paragraph::new(vec![
        Line::from(format!(
            " encbench-tui compare · {} targets · {} order · {status} · {}",
            v.rows.len(),
            v.order.name(),
            elapsed(v.elapsed)
        ))
        .style(Style::default().add_modifier(Modifier::BOLD)),
        Line::from(format!(
            " phase runs {}/{}{} · each target: {}",
            v.done,
            v.total,
            repetition(v),
            v.steps
                .iter()
                .map(encbench_load::compare::CompareStep::label)
                .collect::<Vec<_>>()
                .join(", ")
        )),
    ])
}

/// The finished phases a row shows: batch 1's latency, the largest batch's throughput and
/// the highest concurrency's.
struct Columns {
    /// The batch phases' cap (`--concurrency`).
    bc: usize,
    b1: Option<usize>,
    bmax: Option<usize>,
    cmax: Option<usize>,
}

impl Columns {
    fn of(v: &CompareView) -> Columns {
        let batches = || v.steps.iter().filter(|s| s.kind == PhaseKind::Batch);
        Columns {
            bc: batches().next().map_or(1, |s| s.concurrency),
            b1: batches().next().map(|s| s.batch_size),
            bmax: batches().map(|s| s.batch_size).max(),
            cmax: v
                .steps
                .iter()
                .filter(|s| s.kind == PhaseKind::Concurrency)
                .map(|s| s.concurrency)
                .max(),
        }
    }

    fn header(&self) -> Row<'static> {
        let col =
            |label: &str, x: Option<usize>| x.map_or("-".to_string(), |x| format!("{label}{x}"));
        Row::new(vec![
            "target".to_string(),
            "now".to_string(),
            "n".into(),
            "p50".into(),
            "p99".into(),
            "req/s".into(),
            "err".into(),
            format!("{} p50", col("b=", self.b1)),
            format!("{} smp/s", col("b=", self.bmax)),
            format!("{} req/s", col("c=", self.cmax)),
            "$/1M".into(),
            "acc".into(),
        ])
        .style(Style::default().add_modifier(Modifier::BOLD))
    }

    fn row(&self, r: &RowView) -> Row<'static> {
        let live = r.live.as_ref().map(|(_, s)| s);
        let fig = |x: Option<f64>, f: fn(f64) -> String| x.map_or("-".to_string(), f);
        let at_b1 = self
            .b1
            .and_then(|b| result_at(r, PhaseKind::Batch, b, self.bc));
        let at_bmax = self
            .bmax
            .and_then(|b| result_at(r, PhaseKind::Batch, b, self.bc));
        let at_c = self
            .cmax
            .and_then(|c| result_at(r, PhaseKind::Concurrency, 1, c));
        let acc = r
            .accuracy
            .as_ref()
            .map_or("-".into(), |a| format!("{}/{}", a.passed, a.total));
        let acc_style = match &r.accuracy {
            Some(a) if a.passed < a.total => Style::default().fg(Color::Red),
            _ => Style::default(),
        };
        Row::new(vec![
            Cell::from(r.name.clone()),
            Cell::from(state(r)),
            Cell::from(live.map_or("-".into(), |s| s.n.to_string())),
            // The running phase's percentiles with the margins their intervals have so far.
            Cell::from(live.filter(|s| s.ok > 0).map_or("-".into(), |s| {
                crate::tui::panels::sweep::with_margin(&s.latency, Percentile::P50)
            })),
            Cell::from(live.filter(|s| s.ok > 0).map_or("-".into(), |s| {
                crate::tui::panels::sweep::with_margin(&s.latency, Percentile::P99)
            })),
            Cell::from(fig(live.map(|s| s.req_per_s), |x| format!("{x:.1}"))),
            Cell::from(live.map_or("-".into(), |s| s.error_count().to_string())),
            // A finished phase's median says how sure it is, as the sweep panel's does.
            Cell::from(at_b1.filter(|p| p.ok > 0).map_or("-".into(), |p| {
                crate::tui::panels::sweep::with_margin(&p.latency_ms, Percentile::P50)
            })),
            Cell::from(fig(at_bmax.map(|p| p.samples_per_s), |x| format!("{x:.1}"))),
            Cell::from(fig(at_c.map(|p| p.req_per_s), |x| format!("{x:.1}"))),
            Cell::from(fig(at_bmax.and_then(|p| p.cost_per_1m_usd), |x| {
                format!("{x:.2}")
            })),
            Cell::from(acc).style(acc_style),
        ])
    }
}

/// One row per target: what it is doing now, and its finished phases' key numbers.
fn targets(v: &CompareView) -> Table<'static> {
    let columns = Columns::of(v);
    // 98 columns in all, spaces included: whole inside a 100-column terminal.
    let widths = [
        Constraint::Min(8),
        Constraint::Min(15),
        Constraint::Length(5),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(6),
        Constraint::Length(3),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(5),
        Constraint::Length(3),
    ];
    Table::new(v.rows.iter().map(|r| columns.row(r)), widths)
        .header(columns.header())
        .column_spacing(1)
        .block(block(
            " targets · now = the phase running on that target ".into(),
        ))
}

/// The order's note, and each target whose known answers came back wrong.
fn notes_of(v: &CompareView) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(format!("order: {}", order_note(v.order)))];
    for r in &v.rows {
        if let Some(a) = &r.accuracy
            && a.passed < a.total
        {
            lines.push(
                Line::from(format!(
                    "{}: {} of {} known-answer verdicts wrong — see the verdict diff after the run",
                    r.name,
                    a.total - a.passed,
                    a.total
                ))
                .style(Style::default().fg(Color::Red)),
            );
        }
    }
    lines
}

/// Draws the comparison until it ends and the operator quits (see `views::run`).
pub async fn run(
    view: watch::Receiver<CompareView>,
    stop: watch::Sender<bool>,
    work: impl Future<Output = Export>,
    abort: &dyn Fn(&CompareView),
) -> std::io::Result<Export> {
    super::views::run(view, stop, work, abort, draw).await
}
