//! When the endpoint could not be reached: each span a phase overlapped, so that a run whose
//! server went away says when, for how long, and what its figures then count.

use super::table::Table;
use encbench_core::reach::EndpointLost;
use encbench_core::results::PhaseResult;
use encbench_core::text::num;

/// A row per span per phase; none when the endpoint was always there.
pub(crate) fn table(phases: &[PhaseResult]) -> Option<Table> {
    let rows: Vec<(&PhaseResult, &EndpointLost)> = phases
        .iter()
        .flat_map(|p| p.endpoint_lost.iter().map(move |s| (p, s)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Endpoint lost (connecting kept failing; times from the run's start)",
        &[
            "kind",
            "batch",
            "conc",
            "lost at s",
            "why",
            "back at s",
            "attempts",
        ],
    );
    for (p, s) in &rows {
        t.row(vec![
            p.kind.name().to_string(),
            p.batch_size.to_string(),
            p.concurrency.to_string(),
            num(Some(s.at_s), 1),
            s.kind.words().to_string(),
            s.back_at_s
                .map_or_else(|| "not back".into(), |b| num(Some(b), 1)),
            s.attempts.to_string(),
        ]);
    }
    t.notes.push(
        "req/s is over each phase's whole measured time, the time lost included: the rate while the endpoint answered was higher"
            .into(),
    );
    if rows.iter().any(|(p, _)| p.closed_loop) {
        t.notes.push(
            "closed loop: its slots paused between attempts (10 ms to 1 s), which are not among its measured requests"
                .into(),
        );
    }
    if rows.iter().any(|(p, _)| !p.closed_loop) {
        t.notes.push(
            "open loop: each attempt was a request due on its schedule, counted in n as failed by kind"
                .into(),
        );
    }
    Some(t)
}
