//! A phase's time slices (`--slice`) as a table, with where each SLO objective first broke:
//! a ramp's knee, or the slices of a replay where the deployment fell behind.

use super::table::{Cell, Estimate, Table};
use encbench_core::percentile::Percentile;
use encbench_core::results::PhaseResult;
use encbench_core::slo::Slo;
use encbench_core::text::num;

/// The heading's lines for a ramp and slices.
pub fn heading(config: &serde_json::Value) -> Vec<String> {
    let mut lines = Vec::new();
    if let Ok(r) = serde_json::from_value::<encbench_core::ramp::Ramp>(config["ramp"].clone()) {
        lines.push(format!(
            "{} over each phase's measured duration: the pace shown is the ramp's mean",
            r.describe()
        ));
    }
    if let Some(s) = config["slice_s"].as_f64() {
        lines.push(format!(
            "every phase cut into {} s slices (--slice): their tables follow the phases'",
            encbench_core::text::sig3(s)
        ));
    }
    lines
}

/// One table per phase that has slices, numbered as the phases are.
pub fn tables(phases: &[PhaseResult], config: &serde_json::Value) -> Vec<Table> {
    let slo = Slo {
        objectives: (config["slo"].as_array().into_iter().flatten())
            .filter_map(|o| o.as_str()?.parse().ok())
            .collect(),
    };
    let width = config["slice_s"].as_f64();
    phases
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.slices.is_empty())
        .map(|(i, p)| table(i + 1, p, &slo, width))
        .collect()
}

fn table(index: usize, p: &PhaseResult, slo: &Slo, width: Option<f64>) -> Table {
    let ramp = p
        .ramp
        .map(|r| format!(", {}", r.describe()))
        .unwrap_or_default();
    let mut t = Table::new(
        format!(
            "Slices of phase {index} ({} b={} c={}{ramp}; requests by their intended send time)",
            p.kind.name(),
            p.batch_size,
            p.concurrency
        ),
        &[
            "slice",
            "from s",
            "offered/s",
            "achieved/s",
            "ok",
            "errors",
            "unsent",
            "p50 ms",
            "p99 ms",
            "SLO",
        ],
    );
    for (k, s) in p.slices.iter().enumerate() {
        let judged = p.slo_met.is_some();
        t.row(vec![
            Cell::from((k + 1).to_string()),
            num(Some(s.start_s), 1).into(),
            num(Some(s.offered_per_s), 1).into(),
            num(Some(s.achieved_per_s), 1).into(),
            s.ok.to_string().into(),
            s.errors.to_string().into(),
            s.unsent.to_string().into(),
            figure(&s.latency_ms, s.ok, Percentile::P50),
            figure(&s.latency_ms, s.ok, Percentile::P99),
            match (&s.slo_missed, judged) {
                (Some(m), _) => format!("missed: {m}"),
                (None, true) => "met".into(),
                (None, false) => "-".into(),
            }
            .into(),
        ]);
    }
    // Why a slice's miss may not be called a break, and how it was found anyway.
    if let Some(w) = width
        && p.slo_met.is_some()
    {
        t.notes
            .extend(encbench_core::slices::too_small(&p.slices, slo, w));
    }
    t.notes.extend(
        p.slo_breaks
            .iter()
            .map(encbench_core::slices::SloBreak::describe),
    );
    t.notes.push(
        "offered: requests due in the slice per second; achieved: ok completions that ended in it"
            .into(),
    );
    t
}

fn figure(l: &encbench_core::stats::LatencySummary, ok: u64, at: Percentile) -> Cell {
    if ok == 0 {
        Estimate::MISSING.into()
    } else {
        Estimate::of(l, at, 1).into()
    }
}
