//! The one dispatch loop. Every mode runs through it: open or closed loop, fixed count,
//! duration or live, sweep phase or not. Modes differ only in the phase spec and the pace.
//! In an open loop it sends each request itself; in a closed loop it starts and stops the
//! slots that do (`closed`), and handles commands and the phase's end either way.
//!
//! Each request gets an intended send time from the arrival process *before* it waits for a
//! concurrency slot, so a slow endpoint shows up as dispatch delay and scheduled latency
//! instead of silently lowering the offered rate (coordinated omission).

use super::closed::{self, Progress};
use super::request::{Requester, Ticket};
use super::steer::{self, Flow, Settings};
use super::{Command, Ctx, PhaseView, RunState};
use crate::arrival::{Arrivals, Pace, phase_seed};
use crate::plan::{PhaseKind, PhaseSpec, StopAt, SweepKind};
use crate::results::{self, PhaseResult, ServerBreakdown};
use crate::server_metrics::stats::ServerStats;
use crate::stats::{PhaseRecorder, ScheduleOutcome};
use crate::text;
use crate::timing;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedReceiver;

pub(crate) enum PhaseEnd {
    Completed,
    Stopped,
    /// The live phase gave way to a sweep.
    Sweep(SweepKind),
    /// The live phase gave way to a capacity search.
    Capacity,
    /// A live change ended this segment: the next one runs with the new settings.
    Segment,
}

enum Woke<T> {
    Ready(T),
    Command(Option<Command>),
    Deadline,
}

/// The phase's end (or a stop's grace) as one timer, moved only when the end moves. A fresh
/// timer at every dispatch cost a timer-wheel insert and removal per request, about 3 % of a
/// closed loop's throughput.
struct Deadline {
    at: Option<Instant>,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl Deadline {
    fn new() -> Deadline {
        Deadline {
            at: None,
            timer: Box::pin(tokio::time::sleep_until(tokio::time::Instant::now())),
        }
    }

    fn set(&mut self, at: Option<Instant>) {
        if at != self.at {
            self.at = at;
            if let Some(t) = at {
                self.timer.as_mut().reset(t.into());
            }
        }
    }
}

/// Waits for `fut` while staying responsive to commands and to the phase's end.
async fn wait<F: Future>(
    fut: F,
    cmds: &mut UnboundedReceiver<Command>,
    deadline: &mut Deadline,
) -> Woke<F::Output> {
    let armed = deadline.at.is_some();
    tokio::select! {
        biased;
        c = cmds.recv() => Woke::Command(c),
        () = deadline.timer.as_mut(), if armed => Woke::Deadline,
        v = fut => Woke::Ready(v),
    }
}

/// Gaps rescaled to hit the rate exactly are drawn twice up front; past this many the plain
/// draws' relative miss (1/√n) is already under 0.03 %.
const RESCALE_MAX: u64 = 10_000_000;

/// The arrivals this host sends: the whole schedule of every host (`spec` is the phase as
/// planned for all of them), every `count`-th one when sharded.
fn arrivals_for(
    ctx: &Ctx,
    pace: Pace,
    spec: &PhaseSpec,
    seed: u64,
    fresh: bool,
) -> Option<Arrivals> {
    let shared = &ctx.shared;
    let shard = ctx.hosts.shard;
    let rate = pace.rate_per_s?;
    // Fixed-count and fixed-duration phases offer exactly their rate; a live change falls
    // back to plain draws.
    let exact = match spec.stop {
        StopAt::Count(n) => Some(n),
        StopAt::Duration(d) => Some((d.as_secs_f64() * rate).ceil() as u64),
        StopAt::Never | StopAt::Stable(_) => None,
    }
    // Every host's warmup comes first in the whole schedule.
    .map(|n| {
        let hosts = u64::from(shard.map_or(1, |s| s.count));
        spec.warmup.saturating_mul(hosts).saturating_add(n)
    })
    .filter(|&n| fresh && n <= RESCALE_MAX);
    let made = match exact {
        Some(n) => Arrivals::rescaled(rate, pace.burstiness, seed, n),
        None => Arrivals::new(rate, pace.burstiness, seed),
    };
    match made {
        Ok(a) => Some(match shard {
            Some(s) => a.sharded(s),
            None => a,
        }),
        // Paces are clamped before they get here, so this is a bug; it is logged, not fatal.
        Err(e) => {
            shared.event(format!("pace refused ({e}): closed loop"));
            None
        }
    }
}

/// Measured requests due before `until` that were never sent, the first of them due at
/// `next`; at most `limit` (what is left of a fixed count).
fn count_due(next: Instant, arrivals: &mut Arrivals, until: Instant, limit: u64) -> u64 {
    const DRAWN_MAX: u64 = 10_000_000;
    let (mut at, mut n) = (next, 0u64);
    while at <= until && n < limit {
        n += 1;
        if n == DRAWN_MAX {
            // Past ten million (a day's backlog at 100/s), the rest at the mean rate.
            let left = until.saturating_duration_since(at).as_secs_f64();
            let mean_gap = (0..1000)
                .map(|_| arrivals.next_gap().as_secs_f64())
                .sum::<f64>()
                / 1000.0;
            let more = if mean_gap > 0.0 {
                (left / mean_gap) as u64
            } else {
                limit
            };
            return n.saturating_add(more).min(limit);
        }
        at += arrivals.next_gap();
    }
    n
}

/// An open-loop phase's schedule as it is kept: where it stands and how far behind it fell.
struct Schedule {
    max_lag: std::time::Duration,
    last_lag: std::time::Duration,
}

impl Schedule {
    fn sent(&mut self, intended: Instant, now: Instant) {
        let lag = now.saturating_duration_since(intended);
        self.last_lag = lag;
        self.max_lag = self.max_lag.max(lag);
    }
}

/// Overloaded: the lag at the end is over 100 ms and over 5 % of the measured schedule. A
/// queue that keeps up has a lag that stays bounded however long the phase; one that does
/// not has a lag that grows with it.
pub(crate) fn overloaded(lag: std::time::Duration, span: std::time::Duration) -> bool {
    lag > std::time::Duration::from_millis(100) && lag.as_secs_f64() > 0.05 * span.as_secs_f64()
}

/// The server's counters now; a statistics API that refuses is said once, not shown as "-".
async fn server_stats(ctx: &Ctx) -> Option<crate::server_metrics::stats::ServerStats> {
    match ctx.target.server_stats().await {
        Ok(s) => s,
        Err(why) => {
            let note = format!(
                "server statistics refused ({why}): the server breakdown is absent; give the header the API asks for with --header"
            );
            let mut live = ctx.shared.lock();
            if !live.notices.contains(&note) {
                live.timeline
                    .event(Instant::now(), "server statistics refused");
                live.notices.push(note);
            }
            None
        }
    }
}

pub(crate) async fn run_phase(
    ctx: &Ctx,
    spec: PhaseSpec,
    index: usize,
    planned: Option<usize>,
    cmds: &mut UnboundedReceiver<Command>,
) -> PhaseEnd {
    let shared = &ctx.shared;
    // The phase as planned for every host, and this host's part of it.
    let whole = spec;
    let spec = super::start::host_part(ctx.hosts.shard, &whole);
    let requester = Requester::new(ctx, spec.batch_size);
    let progress = Arc::new(Progress::new(&spec));
    let wall_start = std::time::SystemTime::now();
    let stats_before = server_stats(ctx).await;
    let metrics_before = super::server_side::reading(ctx).await;
    super::server_side::phase_started(shared, metrics_before.as_ref());
    let mut generation;
    // Resets during the phase count up from here (see `closed::Tickets`).
    let first_generation;
    let mut pace;
    {
        let mut live = shared.lock();
        live.generation += 1;
        generation = live.generation;
        first_generation = generation;
        live.recorder = PhaseRecorder::keeping_samples(matches!(spec.stop, StopAt::Stable(_)));
        live.phase_started = Instant::now();
        live.batch_size = spec.batch_size;
        live.concurrency = spec.concurrency;
        live.state = RunState::Running;
        live.phase = Some(PhaseView {
            kind: spec.kind,
            index,
            planned,
            batch_size: spec.batch_size,
            concurrency: spec.concurrency,
            warmup: spec.warmup,
            stop: spec.stop,
            sent: 0,
        });
        pace = live.pace;
        live.timeline.restart_recent();
        live.timeline.event(
            Instant::now(),
            format!(
                "phase {index} {} start: batch {} concurrency {}, {}",
                spec.kind.name(),
                spec.batch_size,
                spec.concurrency,
                text::pace(&pace)
            ),
        );
    }
    // What this phase (or live segment) runs with, as its result records it.
    let mut settings = Settings {
        pace,
        concurrency: spec.concurrency,
    };
    shared.sent.clear();
    shared.limiter.set_cap(spec.concurrency);

    let seed_for = |salt: u64| phase_seed(ctx.seed, index, salt);
    let mut repaces = 0u64;
    let mut arrivals = arrivals_for(ctx, pace, &whole, seed_for(0), true);
    let mut last_intended = ctx.take_origin().unwrap_or_else(Instant::now);
    let mut next_intended = last_intended
        + arrivals
            .as_ref()
            .map_or(std::time::Duration::ZERO, Arrivals::first_offset);
    let mut deadline = Deadline::new();
    // The closed loop's current set of slots (see `closed`).
    let mut slots: Option<Arc<closed::Slots>> = None;
    let mut schedule = Schedule {
        max_lag: std::time::Duration::ZERO,
        last_lag: std::time::Duration::ZERO,
    };
    // The pipeline-end rule holds only for a phase that was a closed loop throughout.
    let mut ever_open = arrivals.is_some();
    shared.set_due(arrivals.as_ref().map(|_| next_intended));
    let mut watch = match spec.stop {
        StopAt::Stable(rule) => Some(ProbeWatch::new(rule)),
        _ => None,
    };
    let mut stop_reason: Option<&'static str> = None;

    let end = 'phase: loop {
        let phase_end = match spec.stop {
            StopAt::Count(n) if shared.sent.count() >= spec.warmup + n => {
                break PhaseEnd::Completed;
            }
            StopAt::Duration(_) => match progress.end() {
                Some(end) if Instant::now() >= end => break PhaseEnd::Completed,
                end => end,
            },
            StopAt::Stable(_) => {
                let w = watch
                    .as_mut()
                    .expect("a watch for a phase that runs until stable");
                match w.check(shared, &progress) {
                    Ok(next) => Some(next),
                    Err(reason) => {
                        stop_reason = Some(reason);
                        break PhaseEnd::Completed;
                    }
                }
            }
            _ => None,
        };
        deadline.set(phase_end);

        // Commands are handled at any wait; after one, the loop re-plans from the top. Those
        // that came while the last phase drained come first.
        let deferred = ctx.take_deferred();
        let command = if let Some(c) = deferred {
            Some(Some(c))
        } else {
            match arrivals {
                // Closed loop: the slots send; this waits for them to use up the phase.
                None => {
                    let set = slots.get_or_insert_with(|| {
                        let c = shared.limiter.cap();
                        closed::start(
                            &ctx.client_threads,
                            &requester,
                            &progress,
                            first_generation,
                            c,
                        )
                    });
                    match wait(set.finished(), cmds, &mut deadline).await {
                        // Only the dispatcher knows when a phase is stable: the set keeps
                        // sending until the check at the top ends the phase and stops it.
                        Woke::Deadline if watch.is_some() => continue,
                        Woke::Ready(()) | Woke::Deadline => {
                            slots = None;
                            continue;
                        }
                        Woke::Command(c) => Some(c),
                    }
                }
                Some(_) => {
                    match wait(timing::sleep_until(next_intended), cmds, &mut deadline).await {
                        Woke::Ready(()) => None,
                        Woke::Command(c) => Some(c),
                        Woke::Deadline => continue,
                    }
                }
            }
        };
        let (permit, command) = match command {
            Some(c) => (None, Some(c)),
            None => match wait(shared.limiter.acquire(), cmds, &mut deadline).await {
                Woke::Ready(p) => (Some(p), None),
                Woke::Command(c) => (None, Some(c)),
                Woke::Deadline => continue,
            },
        };
        if let Some(c) = command {
            let live = spec.kind == PhaseKind::Live;
            let measured = shared.sent.count() > spec.warmup;
            // Any command can change what slots would do: the set stops (requests in flight
            // finish) and a fresh one starts at the top if the phase is still closed loop.
            if let Some(set) = slots.take() {
                // Only a command that ends the phase ends its pipeline: a sweep or search
                // asked for during a sweep is ignored, and the phase goes on.
                let last = match &c {
                    None | Some(Command::Stop) => true,
                    Some(Command::StartSweep(_)) => live,
                    Some(Command::FindCapacity) => live && !shared.slo.is_empty(),
                    Some(other) => {
                        live && measured && steer::change_of(shared, settings, other).is_some()
                    }
                };
                set.stop(&shared.limiter, last);
            }
            let now = Instant::now();
            let flow = steer::apply(ctx, &spec, c, &mut pace, cmds).await;
            if !matches!(flow, Flow::End(_)) {
                let current = Settings {
                    pace,
                    concurrency: shared.lock().concurrency,
                };
                if current != settings {
                    if live && shared.sent.count() > spec.warmup {
                        break 'phase PhaseEnd::Segment;
                    }
                    // Nothing measured yet (warmup, or a segment just opened): the segment
                    // simply runs with the new settings.
                    settings = current;
                }
            }
            match flow {
                Flow::Continue => {}
                Flow::Repace => {
                    repaces += 1;
                    if arrivals.is_none() {
                        last_intended = now;
                    }
                    arrivals = arrivals_for(ctx, pace, &whole, seed_for(repaces), false);
                    // The schedule keeps its place: the next send is one new gap after the
                    // last one, at once if that is already past.
                    if let Some(a) = arrivals.as_mut() {
                        next_intended = last_intended + a.next_gap();
                    }
                    ever_open |= arrivals.is_some();
                    shared.set_due(arrivals.as_ref().map(|_| next_intended));
                }
                Flow::Resumed => {
                    // Time spent paused is not a backlog: the schedule restarts now. Nor is
                    // it part of a probe's time bound.
                    if let Some(w) = watch.as_mut() {
                        w.paused += now.elapsed();
                    }
                    repaces += 1;
                    arrivals = arrivals_for(ctx, pace, &whole, seed_for(repaces), false);
                    last_intended = Instant::now();
                    next_intended = last_intended;
                    shared.set_due(arrivals.as_ref().map(|_| next_intended));
                }
                Flow::Reset(g) => {
                    generation = g;
                    // Measurement restarts at once (a warmup under way carries on); a fixed
                    // count counts afresh.
                    progress.restart();
                    shared.sent.reset(spec.warmup);
                }
                Flow::End(e) => break 'phase e,
            }
            continue;
        }
        let permit = permit.expect("a permit when no command arrived");
        assert!(
            !(crate::failure::injected("engine-panic") && shared.sent.count() == spec.warmup + 5),
            "injected fault: the engine panics after 5 measured requests"
        );
        let Some(claim) = progress.claim(&shared.sent) else {
            continue;
        };
        let intended = next_intended;
        progress.started(claim.idx, intended);
        let ticket = Ticket {
            idx: claim.idx,
            intended,
            measured: claim.idx >= spec.warmup,
            generation: first_generation + claim.resets,
        };
        let cap = shared.limiter.cap();
        ctx.client_threads
            .spawn(claim.idx, cap, requester.clone().send(ticket, permit));
        if let Some(a) = arrivals.as_mut() {
            schedule.sent(intended, Instant::now());
            last_intended = next_intended;
            next_intended += a.next_gap();
            shared.set_due(Some(next_intended));
        }
    };
    if let Some(set) = slots.take() {
        set.stop(&shared.limiter, true);
    }
    shared.set_due(None);
    // What the schedule asked for and did not get (open loop only).
    let outcome = arrivals.as_mut().map(|a| {
        let ended = match (&end, spec.stop) {
            (PhaseEnd::Completed, StopAt::Duration(_)) => progress.end(),
            _ => None,
        }
        .unwrap_or_else(Instant::now);
        let left = match spec.stop {
            StopAt::Count(n) => (spec.warmup + n).saturating_sub(shared.sent.count()),
            _ => u64::MAX,
        };
        let sent = shared.sent.count();
        let due = count_due(next_intended, a, ended, left);
        // Warmup requests never sent are not measured ones.
        let unsent = (sent + due).saturating_sub(spec.warmup.max(sent));
        let lag = if due > 0 {
            ended.saturating_duration_since(next_intended)
        } else {
            schedule.last_lag
        };
        let start = progress.measure_start();
        let span_end = match spec.stop {
            StopAt::Count(_) => next_intended,
            _ => ended,
        };
        let span = start.map_or(std::time::Duration::ZERO, |s| {
            span_end.saturating_duration_since(s)
        });
        let offered = sent.saturating_sub(spec.warmup) + unsent;
        let outcome = ScheduleOutcome {
            unsent,
            offered_per_s: if span.is_zero() {
                0.0
            } else {
                offered as f64 / span.as_secs_f64()
            },
            max_lag: schedule.max_lag.max(lag),
            overloaded: overloaded(lag, span),
        };
        (outcome, span_end)
    });
    let pipeline_end = (!ever_open).then(|| progress.pipeline_end()).flatten();
    if watch.is_some() && matches!(end, PhaseEnd::Stopped) {
        stop_reason = Some("stopped");
    }

    drain(ctx, &end, cmds).await;
    let stats = match (stats_before, server_stats(ctx).await) {
        (Some(before), Some(after)) => Some(after.since(&before)),
        _ => None,
    };
    let metrics_after = super::server_side::reading(ctx).await;
    let server = ServerSide {
        wall_start,
        stats,
        metrics: super::server_side::phase_ended(ctx, metrics_before, metrics_after),
    };
    let sent = shared.sent.count();
    finish(
        ctx,
        &spec,
        settings,
        generation,
        server,
        sent.saturating_sub(spec.warmup),
        PhaseEndings {
            pipeline_end,
            schedule_end: outcome.map(|o| o.1),
            schedule: outcome.map(|o| o.0),
            stop_reason,
        },
    );
    end
}

/// How often a phase that runs until stable is checked: often enough that it ends within a
/// fraction of a second of being stable, rarely enough that the check costs nothing.
const STABLE_CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// Decides when a phase that runs until stable ends, and why.
struct ProbeWatch {
    rule: crate::plan::ProbeRule,
    next_check: Instant,
    /// Time spent paused, which the time bound does not count.
    paused: std::time::Duration,
}

impl ProbeWatch {
    fn new(rule: crate::plan::ProbeRule) -> ProbeWatch {
        ProbeWatch {
            rule,
            next_check: Instant::now(),
            paused: std::time::Duration::ZERO,
        }
    }

    /// `Ok(when to look again)`, or `Err(why the phase ends now)`.
    fn check(
        &mut self,
        shared: &super::Shared,
        progress: &Progress,
    ) -> Result<Instant, &'static str> {
        let now = Instant::now();
        let Some(start) = progress.measure_start() else {
            return Ok(now + STABLE_CHECK_EVERY);
        };
        let bound = start + self.rule.max + self.paused;
        if now >= bound {
            return Err("time");
        }
        if now >= self.next_check {
            self.next_check = now + STABLE_CHECK_EVERY;
            // A schedule falling ever further behind will not become stable: it fails now.
            if let Some(due) = shared.due()
                && overloaded(
                    now.saturating_duration_since(due),
                    now.saturating_duration_since(start),
                )
            {
                return Err("overloaded");
            }
            let live = shared.lock();
            if let Some(p) = live.recorder.probe.as_ref() {
                if p.full() {
                    return Err("max_requests");
                }
                if p.stable(
                    self.rule.min_requests,
                    self.rule.stability,
                    self.rule.throughput_only,
                ) {
                    return Err("stable");
                }
            }
        }
        Ok(self.next_check.min(bound))
    }
}

/// Lets in-flight requests finish: all of them after a completed phase (each is bounded by
/// the request timeout), a short grace period after a stop.
async fn drain(ctx: &Ctx, end: &PhaseEnd, cmds: &mut UnboundedReceiver<Command>) {
    let shared = &ctx.shared;
    if shared.limiter.in_flight() == 0 {
        return;
    }
    shared.lock().state = RunState::Draining;
    let mut grace = match end {
        PhaseEnd::Stopped => Some(Instant::now() + super::STOP_GRACE),
        _ => None,
    };
    let mut deadline = Deadline::new();
    loop {
        deadline.set(grace);
        match wait(shared.limiter.idle(), cmds, &mut deadline).await {
            Woke::Ready(()) | Woke::Deadline => return,
            Woke::Command(Some(Command::Stop) | None) => {
                grace.get_or_insert(Instant::now() + super::STOP_GRACE);
            }
            // Changes asked for while the phase drains apply to the next one.
            Woke::Command(Some(c)) => ctx.defer(c),
        }
    }
}

/// What the server said of a phase: its statistics API and its metrics endpoint.
struct ServerSide {
    wall_start: std::time::SystemTime,
    stats: Option<ServerStats>,
    metrics: Option<crate::server_metrics::ServerMetrics>,
}

/// Where a phase's throughput interval ends, and how its schedule was kept (see
/// `PhaseRecorder::req_per_s`).
#[derive(Clone, Copy)]
struct PhaseEndings {
    pipeline_end: Option<Instant>,
    schedule_end: Option<Instant>,
    schedule: Option<ScheduleOutcome>,
    /// Phases that run until stable: why this one ended.
    stop_reason: Option<&'static str>,
}

fn finish(
    ctx: &Ctx,
    spec: &PhaseSpec,
    settings: Settings,
    generation: u64,
    server: ServerSide,
    sent: u64,
    endings: PhaseEndings,
) {
    let mut live = ctx.shared.lock();
    // Later completions of this phase (after a stop's grace) no longer count anywhere.
    live.generation = generation + 1;
    let mut rec = std::mem::take(&mut live.recorder);
    // The phase's requests now live in its result; an interim report must not count them twice.
    ctx.shared.sent.clear();
    if spec.kind == PhaseKind::Live && sent == 0 && rec.completed() == 0 {
        return;
    }
    rec.sent = sent;
    rec.count_abandoned();
    rec.pipeline_end = endings.pipeline_end;
    rec.slots = endings
        .pipeline_end
        .is_some()
        .then_some(settings.concurrency as u64);
    // The slots' first `concurrency` requests went out together; those past the warmup were
    // measured (see `PhaseRecorder::measured_interval`).
    rec.fill_measured = (settings.concurrency as u64)
        .min(spec.warmup + sent)
        .saturating_sub(spec.warmup);
    rec.schedule_end = endings.schedule_end;
    rec.schedule = endings.schedule;
    let spec = PhaseSpec {
        concurrency: settings.concurrency,
        ..*spec
    };
    let pace = super::start::host_pace(ctx.hosts.shard, settings.pace);
    let mut result = PhaseResult::new(&spec, pace, ctx.shape, &rec);
    result.shard = ctx.hosts.shard;
    result.server = server.stats.map(|s| ServerBreakdown::from_stats(&s));
    result.server_metrics = server.metrics;
    result.wall = Some((server.wall_start, std::time::SystemTime::now()));
    result.judge(&ctx.shared.slo, &rec.scheduled);
    if let Some(reason) = endings.stop_reason {
        result.stable = Some(reason == "stable");
        result.stop_reason = Some(reason.to_string());
    }
    let index = live.phase.as_ref().map_or(0, |p| p.index);
    let phases = Arc::make_mut(&mut live.results);
    phases.push(result);
    results::derive(phases, ctx.price_per_hour);
    let row = phases.last().expect("just pushed");
    let summary = format!(
        "phase {index} end: n {} p50 {:.1} ms p99 {:.1} ms {:.1} req/s",
        row.n, row.latency_ms.p50, row.latency_ms.p99, row.req_per_s
    );
    live.timeline.event(Instant::now(), summary);
}
