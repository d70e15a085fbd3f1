//! A capacity search as the engine runs it: started at the live settings, one phase per
//! step of the search (`capacity`), and the live settings given back at its end.

use super::settings::SearchSpec;
use super::shared::Shared;
use encbench_core::capacity::{Capacity, Search, SearchPlan, Step};
use encbench_core::plan::{
    OPEN_LOOP_CAP, PhaseKind, PhaseSpec, ProbeRule, RunPlan, SEARCH_CEILING_CAP, StopAt,
};
use encbench_core::slo::Slo;
use encbench_core::text;
use std::time::Instant;

/// A capacity search at the live concurrency and burstiness, over the plan's batch sizes
/// (`--batch-sizes` with `--sweep-batch`, else the current one). The live settings come back
/// when it is done.
pub(super) fn start_search(
    shared: &Shared,
    plan: &RunPlan,
    slo: &Slo,
    setup: SearchSpec,
) -> Search {
    let mut live = shared.lock();
    live.after_sweep = Some((live.batch_size, live.concurrency, live.pace));
    let batch_sizes = if plan.sweep_batch {
        plan.batch_sizes.clone()
    } else {
        vec![live.batch_size.max(1)]
    };
    // Without a cap given, the probes are open loops at the open loop's default, and the
    // ceiling a closed loop that fills the server (`plan::SEARCH_CEILING_CAP`).
    let (concurrency, ceiling_concurrency) = if live.concurrency_given {
        (live.concurrency, live.concurrency)
    } else {
        (OPEN_LOOP_CAP, SEARCH_CEILING_CAP)
    };
    let ceiling = if ceiling_concurrency == concurrency {
        String::new()
    } else {
        format!(" (ceiling closed loop at {ceiling_concurrency})")
    };
    live.timeline.event(
        Instant::now(),
        format!(
            "capacity search: {} at concurrency {concurrency}{ceiling}, batch {batch_sizes:?}",
            slo.describe(),
        ),
    );
    Search::new(
        SearchPlan {
            batch_sizes,
            concurrency,
            ceiling_concurrency,
            precision: setup.precision,
            stability: setup.probe.stability,
            probe: setup.probe,
        },
        slo.clone(),
    )
}

/// The phase for the search's next step: closed loop for the ceiling, open loop at the
/// probe's rate with the operator's burstiness.
pub(super) fn probe_phase(
    shared: &Shared,
    plan: &RunPlan,
    search: &Search,
    step: Step,
    repetition: Option<(u32, u32)>,
) -> PhaseSpec {
    let mut live = shared.lock();
    let (batch_size, rate, concurrency, requests) = match step {
        Step::Ceiling { batch_size } => (batch_size, None, search.plan().ceiling_concurrency, None),
        Step::Probe {
            batch_size,
            rate_per_s,
            requests,
        } => (
            batch_size,
            Some(rate_per_s),
            search.plan().concurrency,
            Some(requests),
        ),
    };
    live.pace.rate_per_s = rate;
    live.timeline.event(
        Instant::now(),
        match rate {
            None => format!("capacity b={batch_size}: closed-loop ceiling"),
            Some(r) => format!(
                "capacity b={batch_size}: probe at {} req/s, {} requests",
                text::sig3(r),
                text::thousands(requests.unwrap_or(0))
            ),
        },
    );
    live.searching = search.current().cloned();
    PhaseSpec {
        kind: PhaseKind::Capacity,
        batch_size,
        concurrency,
        warmup: plan.warmup,
        stop: StopAt::Stable(ProbeRule {
            throughput_only: rate.is_none(),
            requests,
            ..search.plan().probe
        }),
        repetition,
    }
}

/// Keeps a finished (or stopped) search's answers, marked with its repetition, and gives the
/// live settings back.
pub(super) fn end_search(shared: &Shared, search: Option<Search>, repetition: Option<(u32, u32)>) {
    let Some(search) = search else {
        return;
    };
    let mut live = shared.lock();
    let rep = repetition
        .map(|(k, of)| format!(" (search {k} of {of})"))
        .unwrap_or_default();
    for c in search.results() {
        live.timeline.event(
            Instant::now(),
            format!("capacity b={}{rep}: {}", c.batch_size, c.verdict),
        );
    }
    live.capacity
        .extend(search.results().iter().cloned().map(|c| Capacity {
            repetition: repetition.map(|r| r.0),
            ..c
        }));
    live.searching = None;
    if let Some((b, c, pace)) = live.after_sweep.take() {
        live.batch_size = b;
        live.concurrency = c;
        live.pace = pace;
    }
}
