//! An open-loop phase's schedule: the arrivals this host sends (its share of every host's),
//! each request's intended send time drawn before it waits for a slot, how far behind the
//! sends fell, and at the phase's end what was due and never sent.

use super::ctx::Ctx;
use encbench_core::arrival::{Arrivals, Pace, phase_seed};
use encbench_core::plan::{PhaseSpec, StopAt};
use encbench_core::stats::{ScheduleOutcome, overloaded};
use std::time::{Duration, Instant};

/// An open-loop phase's schedule as it is kept: where it stands and how far behind it fell.
/// Without arrivals (a closed loop) it only remembers where it would start from.
pub(super) struct Schedule {
    arrivals: Option<Arrivals>,
    /// Fresh draws of the arrival process so far: each re-plan takes a seed of its own.
    repaces: u64,
    last_intended: Instant,
    /// When the next request is due.
    pub(super) next_intended: Instant,
    max_lag: Duration,
    last_lag: Duration,
    /// The pipeline-end rule holds only for a phase that was a closed loop throughout.
    pub(super) ever_open: bool,
    /// A replay's times are the recording's: no pace change draws them anew.
    replay: bool,
}

impl Schedule {
    /// The phase's schedule from its start (the common start, or now). `whole` is the phase
    /// as planned for every host.
    pub(super) fn new(ctx: &Ctx, pace: Pace, whole: &PhaseSpec, index: usize) -> Schedule {
        let replay = ctx.replay_in(index);
        let arrivals = match &replay {
            Some(plan) => {
                let listed = Arrivals::listed(plan.at.clone());
                Some(match ctx.hosts.shard {
                    Some(s) => listed.sharded(s),
                    None => listed,
                })
            }
            None => arrivals_for(ctx, pace, whole, phase_seed(ctx.seed, index, 0), true),
        };
        let last_intended = ctx.take_origin().unwrap_or_else(Instant::now);
        let next_intended = last_intended
            + arrivals
                .as_ref()
                .map_or(Duration::ZERO, Arrivals::first_offset);
        let schedule = Schedule {
            ever_open: arrivals.is_some(),
            arrivals,
            repaces: 0,
            last_intended,
            next_intended,
            max_lag: Duration::ZERO,
            last_lag: Duration::ZERO,
            replay: replay.is_some(),
        };
        ctx.shared.set_due(schedule.due());
        schedule
    }

    pub(super) fn is_open(&self) -> bool {
        self.arrivals.is_some()
    }

    /// Whether a rescaled schedule has no arrival left before its end: a `--duration` phase
    /// then sends nothing more (see `Arrivals::rescaled_after`).
    pub(super) fn used_up(&self) -> bool {
        self.arrivals
            .as_ref()
            .is_some_and(|a| a.planned_left() == Some(0))
    }

    /// The next intended send, in an open loop.
    fn due(&self) -> Option<Instant> {
        self.arrivals.as_ref().map(|_| self.next_intended)
    }

    /// A new pace: the schedule keeps its place, the next send is one new gap after the last
    /// one (at once if that is already past).
    pub(super) fn repace(
        &mut self,
        ctx: &Ctx,
        pace: Pace,
        whole: &PhaseSpec,
        index: usize,
        now: Instant,
    ) {
        if self.replay {
            return;
        }
        if self.arrivals.is_none() {
            self.last_intended = now;
        }
        self.redraw(ctx, pace, whole, index);
        if let Some(a) = self.arrivals.as_mut() {
            self.next_intended = self.last_intended + a.next_gap();
        }
        self.ever_open |= self.arrivals.is_some();
        ctx.shared.set_due(self.due());
    }

    /// Back from a pause: time spent paused is not a backlog, the schedule restarts now.
    pub(super) fn resume(&mut self, ctx: &Ctx, pace: Pace, whole: &PhaseSpec, index: usize) {
        if !self.replay {
            self.redraw(ctx, pace, whole, index);
        }
        self.last_intended = Instant::now();
        self.next_intended = self.last_intended;
        ctx.shared.set_due(self.due());
    }

    /// A fresh draw of the arrival process at `pace`, with a seed of its own.
    fn redraw(&mut self, ctx: &Ctx, pace: Pace, whole: &PhaseSpec, index: usize) {
        self.repaces += 1;
        let seed = phase_seed(ctx.seed, index, self.repaces);
        self.arrivals = arrivals_for(ctx, pace, whole, seed, false);
        ctx.shared.set_ramp_rate(None);
    }

    /// The request due at `next_intended` went out `now`: the lag it had, and the next one.
    pub(super) fn sent(&mut self, ctx: &Ctx, now: Instant) {
        let Some(a) = self.arrivals.as_mut() else {
            return;
        };
        let lag = now.saturating_duration_since(self.next_intended);
        self.last_lag = lag;
        self.max_lag = self.max_lag.max(lag);
        self.last_intended = self.next_intended;
        self.next_intended += a.next_gap();
        ctx.shared.set_due(Some(self.next_intended));
        if let Some(rate) = a.ramp_rate() {
            ctx.shared.set_ramp_rate(Some(rate));
        }
    }

    /// Under a ramp, its rate now (a live key scales this, and ends the ramp).
    pub(super) fn ramp_rate(&self) -> Option<f64> {
        self.arrivals.as_ref().and_then(Arrivals::ramp_rate)
    }

    /// What the schedule asked for and did not get, at the phase's end (`ended`), and where
    /// its measured span ends; `None` in a closed loop. `queue_lag` is the server's at the
    /// end (see `Shared::queue_lag`). Each unsent request's due time goes to `unsent_at`.
    pub(super) fn close(
        &mut self,
        spec: &PhaseSpec,
        sent: u64,
        ended: Instant,
        measure_start: Option<Instant>,
        queue_lag: Duration,
        unsent_at: &mut dyn FnMut(Instant),
    ) -> Option<(ScheduleOutcome, Instant)> {
        let a = self.arrivals.as_mut()?;
        let left = match spec.stop.count() {
            Some(n) => (spec.warmup + n).saturating_sub(sent),
            None => a.planned_left().unwrap_or(u64::MAX),
        };
        let due = count_due(self.next_intended, a, ended, left, unsent_at);
        // Warmup requests never sent are not measured ones.
        let unsent = (sent + due).saturating_sub(spec.warmup.max(sent));
        let lag = if due > 0 {
            ended.saturating_duration_since(self.next_intended)
        } else {
            self.last_lag
        };
        // A fixed count that sent it all ends its span at its last intended send; cut
        // short (a probe at its time bound), at the end.
        let span_end = match spec.stop.count() {
            Some(n) if sent >= spec.warmup + n => self.next_intended,
            Some(_) if matches!(spec.stop, StopAt::Stable(_)) => ended,
            Some(_) => self.next_intended,
            None => ended,
        };
        let span = measure_start.map_or(Duration::ZERO, |s| span_end.saturating_duration_since(s));
        let offered = sent.saturating_sub(spec.warmup) + unsent;
        let outcome = ScheduleOutcome {
            unsent,
            offered_per_s: if span.is_zero() {
                0.0
            } else {
                offered as f64 / span.as_secs_f64()
            },
            max_lag: self.max_lag.max(lag),
            queue_lag,
            overloaded: overloaded(lag.max(queue_lag), span),
        };
        Some((outcome, span_end))
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
    // Every host's warmup comes first in the whole schedule.
    let warmup = spec
        .warmup
        .saturating_mul(u64::from(shard.map_or(1, |s| s.count)));
    // A fixed count's gaps, warmup included, are rescaled together; a fixed duration's
    // measured gaps alone, so that the arrival after its last falls on the phase's end (the
    // measured window starts at the first measured arrival).
    let exact = match spec.stop {
        StopAt::Duration(d) => Some((warmup, (d.as_secs_f64() * rate).ceil() as u64)),
        stop => stop.count().map(|n| (0, warmup.saturating_add(n))),
    }
    .filter(|&(skip, n)| fresh && skip.saturating_add(n) <= RESCALE_MAX);
    // A ramp moves the rate over a fresh `--duration` phase; a live change ends it.
    let ramp = ctx.ramp.filter(|_| fresh).and_then(|r| match spec.stop {
        StopAt::Duration(d) => Some((r, d)),
        _ => None,
    });
    let made = match (ramp, exact) {
        (Some((r, d)), _) => Arrivals::ramped(r, d, pace.burstiness, seed, warmup),
        (None, Some((skip, n))) => Arrivals::rescaled_after(rate, pace.burstiness, seed, skip, n),
        (None, None) => Arrivals::new(rate, pace.burstiness, seed),
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

/// Measured requests due before `until` (strictly: one due at the end belongs to no phase)
/// that were never sent, the first of them due at `next`; at most `limit` (what is left of
/// the schedule).
fn count_due(
    next: Instant,
    arrivals: &mut Arrivals,
    until: Instant,
    limit: u64,
    unsent_at: &mut dyn FnMut(Instant),
) -> u64 {
    const DRAWN_MAX: u64 = 10_000_000;
    let (mut at, mut n) = (next, 0u64);
    while at < until && n < limit {
        n += 1;
        unsent_at(at);
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
