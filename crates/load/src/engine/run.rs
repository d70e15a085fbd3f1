//! A run from start to end: the accuracy check before the load, the phases one after another
//! as the plan, the operator and a capacity search call for them, the check after the load,
//! and what it all amounts to.

use super::command::Command;
use super::common_start;
use super::ctx::Ctx;
use super::dispatch;
use super::search::{end_search, probe_phase, start_search};
use super::settings::{EngineSpec, SearchSpec};
use super::shared::Shared;
use super::snapshot::RunState;
use super::steer::PhaseEnd;
use encbench_core::capacity::Search;
use encbench_core::plan::{CLOSED_LOOP_CAP, PhaseKind, PhaseSpec, RunPlan, SweepKind};
use encbench_core::results::RunReport;
use encbench_core::slo::Slo;
use encbench_core::verdicts::AccuracyReport;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::mpsc::UnboundedReceiver;

/// How long a stopped run gives the accuracy check after the load.
const AFTER_STOP_CHECK: Duration = Duration::from_secs(10);

pub(super) async fn run(
    setup: EngineSpec,
    shared: Arc<Shared>,
    mut cmds: UnboundedReceiver<Command>,
    started_at: SystemTime,
) -> RunReport {
    let mut phases = Phases::new(&shared, &setup);
    let stop_without_route = setup.stop_without_route;
    let ctx = Ctx::new(setup, shared.clone());
    let (accuracy_before, mut stopped_before) = match &ctx.accuracy {
        Some(_) => accuracy_before(&ctx, &mut cmds).await,
        None => (None, false),
    };
    if stop_without_route && accuracy_before.as_ref().is_some_and(|a| a.no_route) {
        ctx.shared
            .event("accuracy before load: the route is none of the server's: no load ran");
        stopped_before = true;
    }
    let started = match shared.hosts.start_at {
        _ if stopped_before => false,
        Some(at) => phases.wait_for_common_start(&ctx, at, &mut cmds).await,
        None => true,
    };
    let stopped = !started || phases.run_all(&ctx, &mut cmds).await;
    let accuracy_after = accuracy_after(&ctx, stopped).await;

    let mut live = shared.lock();
    live.state = RunState::Finished;
    live.timeline.roll(Instant::now());
    live.timeline
        .event(Instant::now(), if stopped { "stopped" } else { "finished" });
    RunReport {
        started_at,
        ended_at: SystemTime::now(),
        phases: shared.pooled(&live.results),
        capacity: live.capacity.clone(),
        accuracy_before,
        accuracy_after,
        timeline: live.timeline.complete_entries(),
        stopped_early: stopped,
        error: None,
        notices: live.notices.clone(),
    }
}

/// The run's phases as they unfold: those planned, a capacity search under way, and in a
/// live run the live phase after them.
struct Phases {
    shared: Arc<Shared>,
    plan: RunPlan,
    slo: Slo,
    search_setup: Option<SearchSpec>,
    search: Option<Search>,
    /// `--repeat`: which of the searches the one under way is (k of K).
    search_rep: Option<(u32, u32)>,
    /// Each with its place in the sweep it belongs to (see `numbered`).
    queue: VecDeque<(PhaseSpec, Option<(usize, usize)>)>,
    /// Phases run so far.
    index: usize,
    /// The next live phase continues the last one under new settings: no warmup again.
    segment_follows: bool,
}

impl Phases {
    fn new(shared: &Arc<Shared>, setup: &EngineSpec) -> Phases {
        let mut phases = Phases {
            shared: shared.clone(),
            plan: setup.plan.clone(),
            slo: setup.slo.clone(),
            search_setup: setup.search,
            search: None,
            search_rep: None,
            queue: VecDeque::new(),
            index: 0,
            segment_follows: shared.hosts.start_at.is_some(),
        };
        match setup.search {
            Some(s) if s.at_start => phases.begin_search(s),
            _ => phases.queue = numbered(&phases.plan.initial()),
        }
        // The live screen after the command line's sweeps starts from the command line's
        // batch and cap, as it comes back to its own after a sweep of `b` or `s`: not from
        // the sweep's last phase.
        let plan = &phases.plan;
        if plan.live && (plan.sweep_batch || plan.sweep_concurrency) && !phases.queue.is_empty() {
            let mut live = shared.lock();
            live.after_sweep = Some((plan.batch_size, plan.concurrency, live.pace));
        }
        phases
    }

    /// Warms up before the common start (`--start-at`); the first phase then measures from
    /// it at once. `false` when the run was stopped meanwhile.
    async fn wait_for_common_start(
        &mut self,
        ctx: &Ctx,
        at: SystemTime,
        cmds: &mut UnboundedReceiver<Command>,
    ) -> bool {
        let plan = &self.plan;
        let first = self.queue.front().map_or_else(
            || plan.live_phase(plan.batch_size.max(1), plan.concurrency),
            |q| q.0,
        );
        let Some(origin) = common_start::warm_up_then_wait(ctx, &first, at, cmds).await else {
            return false;
        };
        *ctx.origin
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(origin);
        if let Some(q) = self.queue.front_mut() {
            q.0.warmup = 0;
        }
        true
    }

    /// Runs phase after phase until the plan is done (`false`) or the run is stopped (`true`).
    async fn run_all(&mut self, ctx: &Ctx, cmds: &mut UnboundedReceiver<Command>) -> bool {
        while let Some((spec, step)) = self.next() {
            self.index += 1;
            let end = dispatch::run_phase(ctx, spec, self.index, step, cmds).await;
            ctx.say_learned();
            if self.ended(end) {
                return true;
            }
        }
        false
    }

    /// The first of `--repeat` searches (one without it).
    fn begin_search(&mut self, setup: SearchSpec) {
        self.search_rep = (self.plan.repeat > 1).then_some((1, self.plan.repeat));
        self.search = Some(start_search(&self.shared, &self.plan, &self.slo, setup));
    }

    /// The next phase: the search's next step, the next planned phase, or the live phase.
    fn next(&mut self) -> Option<(PhaseSpec, Option<(usize, usize)>)> {
        while let Some(s) = self.search.as_mut() {
            if let Some(step) = s.next_step() {
                let spec = probe_phase(&self.shared, &self.plan, s, step, self.search_rep);
                return Some((spec, None));
            }
            end_search(&self.shared, self.search.take(), self.search_rep);
            // `--repeat`: the next search, from its own ceiling, as the first began.
            if let (Some((k, of)), Some(setup)) = (self.search_rep, self.search_setup)
                && k < of
            {
                self.search_rep = Some((k + 1, of));
                self.search = Some(start_search(&self.shared, &self.plan, &self.slo, setup));
            }
        }
        if let Some(queued) = self.queue.pop_front() {
            return Some(queued);
        }
        self.plan.live.then(|| (self.live_phase(), None))
    }

    /// The live phase, with the operator's settings back when a sweep gave way to it.
    fn live_phase(&self) -> PhaseSpec {
        let mut live = self.shared.lock();
        if let Some((b, c, pace)) = live.after_sweep.take() {
            live.batch_size = b;
            live.concurrency = c;
            live.pace = pace;
            live.timeline
                .event(Instant::now(), "sweep done: live settings restored");
        }
        let mut spec = self
            .plan
            .live_phase(live.batch_size.max(1), live.concurrency);
        if self.segment_follows {
            spec.warmup = 0;
        }
        spec
    }

    /// What follows a phase's end: `true` when the run stops.
    fn ended(&mut self, end: PhaseEnd) -> bool {
        let shared = &self.shared;
        if let Some(s) = self.search.as_mut() {
            let last = shared.lock().results.last().cloned();
            if let Some(r) = last.filter(|r| r.kind == PhaseKind::Capacity) {
                s.record(&r);
            }
            if matches!(end, PhaseEnd::Stopped) {
                s.stop();
            }
            shared.lock().searching = s.current().cloned();
        }
        self.segment_follows = matches!(end, PhaseEnd::Segment);
        match end {
            PhaseEnd::Completed | PhaseEnd::Segment => {}
            PhaseEnd::Stopped => {
                end_search(shared, self.search.take(), self.search_rep);
                return true;
            }
            PhaseEnd::Sweep(kind) => self.start_sweep(kind),
            PhaseEnd::Capacity => match self.search_setup {
                Some(s) => self.begin_search(s),
                None => shared.event("capacity search needs an SLO: start with --slo p99=100ms"),
            },
        }
        false
    }

    fn start_sweep(&mut self, kind: SweepKind) {
        let fixed = {
            let mut live = self.shared.lock();
            // The operator's live settings come back when the sweep is done. A sweep
            // measures capacity, so it runs closed loop: at a fixed offered rate every
            // batch size would show the same throughput and efficiency would be noise.
            live.after_sweep = Some((live.batch_size, live.concurrency, live.pace));
            live.pace.rate_per_s = None;
            live.timeline
                .event(Instant::now(), "sweep runs closed loop");
            match kind {
                // A cap nobody gave is the closed loop's, not the open loop's 1024 slots.
                SweepKind::Batch if !live.concurrency_given => CLOSED_LOOP_CAP,
                SweepKind::Batch => live.concurrency,
                SweepKind::Concurrency => live.batch_size,
            }
        };
        self.queue = numbered(&self.plan.repeated(&self.plan.sweep(kind, fixed)));
    }
}

/// The accuracy check before the load, and whether a stop came first: then the check ends
/// at once (its requests dropped) and no load follows, so no check after it either. Other
/// commands meanwhile wait for the load, as they did while the check held the loop.
async fn accuracy_before(
    ctx: &Ctx,
    cmds: &mut UnboundedReceiver<Command>,
) -> (Option<AccuracyReport>, bool) {
    let mut held = Vec::new();
    let outcome = {
        let check = ctx.check_accuracy_in_line("before load");
        tokio::pin!(check);
        loop {
            tokio::select! {
                r = &mut check => break (Some(r), false),
                c = cmds.recv() => match c {
                    Some(Command::Stop) | None => break (None, true),
                    Some(c) => held.push(c),
                },
            }
        }
    };
    if outcome.1 {
        let (answered, total) = ctx.shared.accuracy_progress.get();
        ctx.shared.event(format!(
            "accuracy before load stopped at {answered}/{total} answered: no load ran"
        ));
    }
    if !held.is_empty() {
        *cmds = requeue(
            std::mem::replace(cmds, tokio::sync::mpsc::unbounded_channel().1),
            held,
        );
    }
    outcome
}

/// `held` first, then whatever `cmds` brings; closed when `cmds` is.
fn requeue(mut cmds: UnboundedReceiver<Command>, held: Vec<Command>) -> UnboundedReceiver<Command> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    for c in held {
        let _ = tx.send(c);
    }
    tokio::spawn(async move {
        while let Some(c) = cmds.recv().await {
            if tx.send(c).is_err() {
                break;
            }
        }
    });
    rx
}

/// Planned phases, each with its place among the phases of its sweep (1-based, and how many):
/// a batch sweep's 2nd of 3 batch sizes is (2, 3) whatever ran before it, which is what the
/// user asked for, in each of its repetitions. A phase of its own (a plain run) has none.
fn numbered(specs: &[PhaseSpec]) -> VecDeque<(PhaseSpec, Option<(usize, usize)>)> {
    let mut out = VecDeque::with_capacity(specs.len());
    for group in specs.chunk_by(|a, b| a.kind == b.kind && a.repetition == b.repetition) {
        let n = group.len();
        out.extend((group.iter().enumerate()).map(|(i, s)| (*s, (n > 1).then_some((i + 1, n)))));
    }
    out
}

/// The accuracy check after the load, if there was a load to check after.
async fn accuracy_after(ctx: &Ctx, stopped: bool) -> Option<AccuracyReport> {
    ctx.accuracy.as_ref()?;
    if !stopped {
        return Some(ctx.check_accuracy_in_line("after load").await);
    }
    // Stopped before any load was measured: there is nothing to compare.
    if ctx.shared.lock().results.is_empty() {
        return None;
    }
    // Quitting is how every live session ends, and the verdicts after the load are the
    // point of the check; but the operator asked to leave, so it is bounded, and a check
    // cut short is said, not silently absent.
    let check = ctx.check_accuracy_in_line("after load");
    if let Ok(r) = tokio::time::timeout(AFTER_STOP_CHECK, check).await {
        return Some(r);
    }
    let mut live = ctx.shared.lock();
    live.notices.push(format!(
        "accuracy after load skipped: the check had not finished {} s after the stop",
        AFTER_STOP_CHECK.as_secs()
    ));
    live.timeline
        .event(Instant::now(), "accuracy after load skipped");
    None
}
