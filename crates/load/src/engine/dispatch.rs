//! The one dispatch loop. Every mode runs through it: open or closed loop, fixed count,
//! duration or live, sweep phase or not. Modes differ only in the phase spec and the pace.
//! In an open loop it sends each request itself; in a closed loop it starts and stops the
//! slots that do (`closed`), and handles commands and the phase's end either way.
//!
//! Each request gets an intended send time from the arrival process *before* it waits for a
//! concurrency slot, so a slow endpoint shows up as dispatch delay and scheduled latency
//! instead of silently lowering the offered rate (coordinated omission).

use super::closed::{self, Progress};
use super::command::Command;
use super::ctx::Ctx;
use super::limiter::Permit;
use super::phase_close::{PhaseEndings, drain, finish};
use super::probe_watch::ProbeWatch;
use super::request::{Requester, Ticket};
use super::schedule::Schedule;
use super::server_side::ServerBefore;
use super::shared::Shared;
use super::snapshot::{PhaseView, RunState};
use super::steer::{self, Flow, PhaseEnd, Settings};
use super::wake::{Deadline, Woke, wait};
use encbench_core::arrival::Pace;
use encbench_core::plan::{PhaseKind, PhaseSpec, StopAt};
use encbench_core::stats::PhaseRecorder;
use encbench_core::text;
use encbench_wire::timing;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;

/// Runs one phase (or one segment of the live phase) to its end.
pub(super) async fn run_phase(
    ctx: &Ctx,
    spec: PhaseSpec,
    index: usize,
    step: Option<(usize, usize)>,
    cmds: &mut UnboundedReceiver<Command>,
) -> PhaseEnd {
    let mut phase = PhaseRun::open(ctx, spec, index, step).await;
    let end = loop {
        match phase.next_wake(cmds).await {
            Wake::Again => {}
            Wake::Send(permit) => phase.send_one(permit),
            Wake::Command(c) => {
                if let Some(end) = phase.command(c, cmds).await {
                    break end;
                }
            }
            Wake::End(end) => break end,
        }
    };
    phase.close(end, cmds).await
}

/// What the loop does next.
enum Wake {
    /// Plan again from the top: the phase's end moved, or the slots finished.
    Again,
    /// A request is due and has a concurrency slot.
    Send(Permit),
    /// A command, or `None` when every sender is gone.
    Command(Option<Command>),
    End(PhaseEnd),
}

/// One phase as it runs.
struct PhaseRun<'a> {
    ctx: &'a Ctx,
    /// The phase as planned for every host, and this host's part of it.
    whole: PhaseSpec,
    spec: PhaseSpec,
    index: usize,
    requester: Arc<Requester>,
    progress: Arc<Progress>,
    /// The generation the phase began in; resets count up from here (see `closed::Tickets`).
    first_generation: u64,
    generation: u64,
    pace: Pace,
    /// What this phase (or live segment) runs with, as its result records it.
    settings: Settings,
    schedule: Schedule,
    deadline: Deadline,
    /// The closed loop's current set of slots (see `closed`).
    slots: Option<Arc<closed::Slots>>,
    watch: Option<ProbeWatch>,
    stop_reason: Option<&'static str>,
    server_before: ServerBefore,
}

impl<'a> PhaseRun<'a> {
    async fn open(
        ctx: &'a Ctx,
        whole: PhaseSpec,
        index: usize,
        step: Option<(usize, usize)>,
    ) -> PhaseRun<'a> {
        let shared = &ctx.shared;
        let spec = ctx.hosts.part(&whole);
        let requester = match ctx.replay_in(index) {
            Some(plan) => Requester::replaying(ctx, &spec, index, plan),
            None => Requester::new(ctx, &spec, index),
        };
        let progress = Arc::new(Progress::new(&spec));
        let server_before = ServerBefore::read(ctx).await;
        let (generation, pace) = mark_started(shared, &spec, index, step);
        shared.clear_sent();
        shared.limiter.set_cap(spec.concurrency);
        let schedule = Schedule::new(ctx, pace, &whole, index);
        PhaseRun {
            ctx,
            whole,
            spec,
            index,
            requester,
            progress,
            first_generation: generation,
            generation,
            pace,
            settings: Settings {
                pace,
                concurrency: spec.concurrency,
            },
            schedule,
            deadline: Deadline::new(),
            slots: None,
            watch: match spec.stop {
                StopAt::Stable(rule) => Some(ProbeWatch::new(rule)),
                _ => None,
            },
            stop_reason: None,
            server_before,
        }
    }

    /// Waits for whatever comes first: the phase's end, a command (those that came while the
    /// last phase drained first), or the next request's turn.
    async fn next_wake(&mut self, cmds: &mut UnboundedReceiver<Command>) -> Wake {
        let end = match self.phase_end() {
            Ok(at) => {
                self.deadline.set(at);
                at
            }
            Err(end) => {
                return match self.overdue_with_a_slot() {
                    Some(permit) => Wake::Send(permit),
                    None => Wake::End(end),
                };
            }
        };
        if let Some(c) = self.ctx.take_deferred() {
            return Wake::Command(Some(c));
        }
        if !self.schedule.is_open() {
            return self.wait_for_slots(cmds).await;
        }
        // A timed phase sends what its schedule holds before its end, rate × duration, then
        // waits for the end: a send due at the end itself belongs to no phase.
        let past_end = end.is_some_and(|e| self.schedule.next_intended >= e);
        if matches!(self.spec.stop, StopAt::Duration(_)) && (self.schedule.used_up() || past_end) {
            return match wait(std::future::pending::<()>(), cmds, &mut self.deadline).await {
                Woke::Command(c) => Wake::Command(c),
                _ => Wake::Again,
            };
        }
        let due = timing::sleep_until(self.schedule.next_intended);
        match wait(due, cmds, &mut self.deadline).await {
            Woke::Ready(()) => {}
            Woke::Command(c) => return Wake::Command(c),
            Woke::Deadline => return Wake::Again,
        }
        match wait(self.ctx.shared.limiter.acquire(), cmds, &mut self.deadline).await {
            Woke::Ready(permit) => Wake::Send(permit),
            Woke::Command(c) => Wake::Command(c),
            Woke::Deadline => Wake::Again,
        }
    }

    /// When the phase ends (`Ok(None)`: not by time), or `Err` when it has ended.
    fn phase_end(&mut self) -> Result<Option<Instant>, PhaseEnd> {
        let shared = &self.ctx.shared;
        // The slots waited as long as a request would for an endpoint that is gone.
        if shared.gave_up() {
            return Err(PhaseEnd::Stopped);
        }
        match self.spec.stop {
            StopAt::Count(n) if shared.sent.count() >= self.spec.warmup + n => {
                Err(PhaseEnd::Completed)
            }
            StopAt::Duration(_) => match self.progress.end() {
                Some(end) if Instant::now() >= end => Err(PhaseEnd::Completed),
                end => Ok(end),
            },
            StopAt::Stable(rule)
                if rule
                    .requests
                    .is_some_and(|n| shared.sent.count() >= self.spec.warmup + n) =>
            {
                self.stop_reason = Some("count");
                Err(PhaseEnd::Completed)
            }
            StopAt::Stable(_) => {
                let w = self
                    .watch
                    .as_mut()
                    .expect("a watch for a phase that runs until stable");
                w.check(shared, &self.progress).map(Some).map_err(|reason| {
                    self.stop_reason = Some(reason);
                    PhaseEnd::Completed
                })
            }
            _ => Ok(None),
        }
    }

    /// A slot for a request due before a timed phase's end that the dispatcher had not
    /// reached by then: it was busy sending the ones before it (a replay at 10000× has
    /// hundreds due in a millisecond), not held back by the cap, so it goes out late, its lag
    /// counted, instead of being called unsent. Only a request that finds the cap full is
    /// unsent. A client that cannot keep up at all stops catching up after as long again as
    /// the phase (at least a second): the rest are unsent.
    fn overdue_with_a_slot(&self) -> Option<Permit> {
        let StopAt::Duration(length) = self.spec.stop else {
            return None;
        };
        let end = self.progress.end()?;
        let catching_up = self.schedule.is_open()
            && !self.schedule.used_up()
            && self.schedule.next_intended < end
            && Instant::now() < end + length.max(Duration::from_secs(1));
        if !catching_up {
            return None;
        }
        self.ctx.shared.limiter.try_acquire()
    }

    /// Closed loop: the slots send; this waits for them to use up the phase.
    async fn wait_for_slots(&mut self, cmds: &mut UnboundedReceiver<Command>) -> Wake {
        let set = self
            .slots
            .get_or_insert_with(|| {
                let c = self.ctx.shared.limiter.cap();
                closed::start(
                    &self.ctx.client_threads,
                    &self.requester,
                    &self.progress,
                    self.first_generation,
                    c,
                )
            })
            .clone();
        match wait(set.finished(), cmds, &mut self.deadline).await {
            // Only the dispatcher knows when a phase is stable: the set keeps sending until
            // the check at the top ends the phase and stops it.
            Woke::Deadline if self.watch.is_some() => Wake::Again,
            Woke::Ready(()) | Woke::Deadline => {
                self.slots = None;
                Wake::Again
            }
            Woke::Command(c) => Wake::Command(c),
        }
    }

    /// Applies a command; `Some` when it ends the phase. Any command can change what slots
    /// would do: the set stops (requests in flight finish) and a fresh one starts at the top
    /// if the phase is still closed loop.
    async fn command(
        &mut self,
        c: Option<Command>,
        cmds: &mut UnboundedReceiver<Command>,
    ) -> Option<PhaseEnd> {
        let shared = &self.ctx.shared;
        let live = self.spec.kind == PhaseKind::Live;
        if let Some(set) = self.slots.take() {
            set.stop(&shared.limiter, self.ends_pipeline(c.as_ref()));
        }
        let now = Instant::now();
        // A key that scales the rate scales a ramp's rate as it stands.
        if let (Some(Command::ScaleRate(_)), Some(rate)) = (&c, self.schedule.ramp_rate()) {
            self.pace.rate_per_s = Some(rate);
        }
        let flow = steer::apply(self.ctx, &self.spec, c, &mut self.pace, cmds).await;
        if !matches!(flow, Flow::End(_)) {
            let current = Settings {
                pace: self.pace,
                concurrency: shared.lock().concurrency,
            };
            if current != self.settings {
                if live && shared.sent.count() > self.spec.warmup {
                    return Some(PhaseEnd::Segment);
                }
                // Nothing measured yet (warmup, or a segment just opened): the segment
                // simply runs with the new settings.
                self.settings = current;
            }
        }
        match flow {
            Flow::Continue => {}
            Flow::Repace => {
                let (ctx, pace, index) = (self.ctx, self.pace, self.index);
                self.schedule.repace(ctx, pace, &self.whole, index, now);
            }
            Flow::Resumed => {
                // Nor is time spent paused part of a probe's time bound.
                if let Some(w) = self.watch.as_mut() {
                    w.paused += now.elapsed();
                }
                let (ctx, pace, index) = (self.ctx, self.pace, self.index);
                self.schedule.resume(ctx, pace, &self.whole, index);
            }
            Flow::Reset(g) => {
                self.generation = g;
                // Measurement restarts at once (a warmup under way carries on); a fixed
                // count counts afresh.
                self.progress.restart();
                shared.sent.reset(self.spec.warmup);
            }
            Flow::End(e) => return Some(e),
        }
        None
    }

    /// Whether `c` ends the slots' pipeline. Only a command that ends the phase does: a sweep
    /// or search asked for during a sweep is ignored, and the phase goes on.
    fn ends_pipeline(&self, c: Option<&Command>) -> bool {
        let shared = &self.ctx.shared;
        let live = self.spec.kind == PhaseKind::Live;
        let measured = shared.sent.count() > self.spec.warmup;
        match c {
            None | Some(Command::Stop) => true,
            Some(Command::StartSweep(_)) => live,
            Some(Command::FindCapacity) => live && !shared.slo.is_empty(),
            Some(other) => {
                live && measured && steer::change_of(shared, self.settings, other).is_some()
            }
        }
    }

    /// Sends the request that is due, on the slot it was given.
    fn send_one(&mut self, permit: Permit) {
        let shared = &self.ctx.shared;
        assert!(
            !(encbench_core::failure::injected("engine-panic")
                && shared.sent.count() == self.spec.warmup + 5),
            "injected fault: the engine panics after 5 measured requests"
        );
        let Some(claim) = self.progress.claim(&shared.sent) else {
            return;
        };
        let intended = self.schedule.next_intended;
        self.progress.started(claim.idx, intended);
        if claim.idx == self.spec.warmup {
            shared.slices_start(intended);
        }
        let ticket = Ticket {
            idx: claim.idx,
            intended,
            measured: claim.idx >= self.spec.warmup,
            generation: self.first_generation + claim.resets,
        };
        let cap = shared.limiter.cap();
        let request = self.requester.clone().send(ticket, permit);
        self.ctx.client_threads.spawn(claim.idx, cap, request);
        self.schedule.sent(self.ctx, Instant::now());
    }

    /// Ends the phase: the schedule closed, requests in flight drained, the server's side
    /// read again, and the result recorded.
    async fn close(mut self, end: PhaseEnd, cmds: &mut UnboundedReceiver<Command>) -> PhaseEnd {
        let (ctx, spec) = (self.ctx, self.spec);
        let shared = &ctx.shared;
        if let Some(set) = self.slots.take() {
            set.stop(&shared.limiter, true);
        }
        shared.set_due(None);
        shared.set_ramp_rate(None);
        let ended = match (&end, spec.stop) {
            (PhaseEnd::Completed, StopAt::Duration(_)) => self.progress.end(),
            _ => None,
        }
        .unwrap_or_else(Instant::now);
        let measure_start = self.progress.measure_start();
        // Before the drain: what is still in flight at the end is the server's backlog.
        let queue_lag = shared.queue_lag(&shared.lock(), Instant::now());
        let sent = shared.sent.count();
        let ramped = self.schedule.ramp_rate().is_some();
        let outcome = {
            let mut live = shared.lock();
            let mut unsent_at = |at| {
                if let Some(s) = live.recorder.slices.as_mut() {
                    s.unsent(at);
                }
            };
            let s = &mut self.schedule;
            s.close(&spec, sent, ended, measure_start, queue_lag, &mut unsent_at)
        };
        let pipeline_end = (!self.schedule.ever_open)
            .then(|| self.progress.pipeline_end())
            .flatten();
        if self.watch.is_some() && matches!(end, PhaseEnd::Stopped) {
            self.stop_reason = Some("stopped");
        }

        drain(ctx, &end, cmds).await;
        let server = self.server_before.since(ctx).await;
        // Requests a slot could not send were never sent (see `closed`).
        let sent = shared.sent.count().saturating_sub(shared.undelivered());
        finish(
            ctx,
            &spec,
            self.settings,
            self.generation,
            server,
            sent.saturating_sub(spec.warmup),
            PhaseEndings {
                pipeline_end,
                schedule_end: outcome.map(|o| o.1),
                schedule: outcome.map(|o| o.0),
                stop_reason: self.stop_reason,
                ramped,
            },
        );
        end
    }
}

/// The phase begins: a new generation, a fresh recorder, and the phase in the snapshots.
/// Returns the generation and the pace it starts at.
fn mark_started(
    shared: &Shared,
    spec: &PhaseSpec,
    index: usize,
    step: Option<(usize, usize)>,
) -> (u64, Pace) {
    let mut live = shared.lock();
    live.generation += 1;
    live.recorder =
        PhaseRecorder::keeping_samples(matches!(spec.stop, StopAt::Stable(_))).sliced(shared.slice);
    live.phase_started = Instant::now();
    live.reach.phase_start();
    live.batch_size = spec.batch_size;
    live.concurrency = spec.concurrency;
    live.state = RunState::Running;
    live.phase = Some(PhaseView {
        kind: spec.kind,
        index,
        step,
        batch_size: spec.batch_size,
        concurrency: spec.concurrency,
        warmup: spec.warmup,
        stop: spec.stop,
        repetition: spec.repetition,
        sent: 0,
    });
    let pace = live.pace;
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
    (live.generation, pace)
}
