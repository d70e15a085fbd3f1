//! What a command does to the phase under way: relative forms resolved against the engine's
//! own state, paces kept inside the supported ranges, a pause that still serves commands, and
//! which changes end a live segment.
//!
//! A live phase is a run of segments, each with one set of settings: percentiles pooled over
//! two rates describe neither. So a change of rate, burstiness or concurrency that takes
//! effect after measured requests were sent ends the segment (`dispatch` drains it and opens
//! the next one, without warmup). During a sweep or a capacity search a change would make the
//! sweep's rows incomparable; it is kept for the live settings the sweep gives back instead.

use super::command::Command;
use super::ctx::Ctx;
use super::shared::Shared;
use super::snapshot::RunState;
use encbench_core::arrival::Pace;
use encbench_core::plan::{PhaseKind, PhaseSpec, StopAt, SweepKind, default_cap};
use encbench_core::stats::PhaseRecorder;
use encbench_core::text;
use std::time::Instant;
use tokio::sync::mpsc::UnboundedReceiver;

/// How a phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PhaseEnd {
    Completed,
    Stopped,
    /// The live phase gave way to a sweep.
    Sweep(SweepKind),
    /// The live phase gave way to a capacity search.
    Capacity,
    /// A live change ended this segment: the next one runs with the new settings.
    Segment,
}

/// What a command does to the loop.
pub(super) enum Flow {
    Continue,
    /// The pace changed: draw the next send time from the new process.
    Repace,
    /// Back from a pause: restart the schedule from now.
    Resumed,
    /// Statistics were cleared; completions of older generations no longer count.
    Reset(u64),
    End(PhaseEnd),
}

/// What a segment runs with: a change of either opens a new one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Settings {
    pub pace: Pace,
    pub concurrency: usize,
}

/// The settings `command` would leave, if it changes any (a no-op changes nothing and is not
/// logged: holding a key at a floor is not an event). A cap nobody gave follows the rate
/// between closed and open loop (`plan::default_cap`).
pub(super) fn change_of(shared: &Shared, now: Settings, command: &Command) -> Option<Settings> {
    let next = match resolve(shared, &now.pace, command.clone()) {
        Command::SetRate(r) => {
            let pace = Pace {
                rate_per_s: r,
                ..now.pace
            }
            .clamped()
            .0;
            let concurrency = if shared.lock().concurrency_given {
                now.concurrency
            } else {
                default_cap(pace.rate_per_s)
            };
            Settings { pace, concurrency }
        }
        Command::SetBurstiness(b) => Settings {
            pace: Pace {
                burstiness: b,
                ..now.pace
            }
            .clamped()
            .0,
            ..now
        },
        Command::SetConcurrency(c) => Settings {
            concurrency: c.max(1),
            ..now
        },
        _ => return None,
    };
    (next != now).then_some(next)
}

/// Applies one command. Pause blocks here until Resume or Stop, still serving other commands.
pub(super) async fn apply(
    ctx: &Ctx,
    spec: &PhaseSpec,
    command: Option<Command>,
    pace: &mut Pace,
    cmds: &mut UnboundedReceiver<Command>,
) -> Flow {
    let shared = &ctx.shared;
    let Some(command) = command else {
        // Every sender is gone: nobody can stop us any more, so stop now.
        return Flow::End(PhaseEnd::Stopped);
    };
    let command = resolve(shared, pace, command);
    if matches!(
        command,
        Command::SetRate(_) | Command::SetBurstiness(_) | Command::SetConcurrency(_)
    ) {
        return change(ctx, spec, &command, pace);
    }
    match command {
        Command::Reset => {
            let mut live = shared.lock();
            live.generation += 1;
            live.recorder = PhaseRecorder::keeping_samples(matches!(spec.stop, StopAt::Stable(_)))
                .sliced(shared.slice);
            live.run_latency.reset();
            live.run_errors = 0;
            live.timeline.restart_recent();
            live.timeline.event(Instant::now(), "statistics reset");
            Flow::Reset(live.generation)
        }
        Command::StartSweep(kind) if spec.kind == PhaseKind::Live => {
            shared.event(format!("{} sweep requested", kind.name()));
            Flow::End(PhaseEnd::Sweep(kind))
        }
        Command::StartSweep(kind) => {
            shared.event(format!(
                "{} sweep ignored: a sweep is already running",
                kind.name()
            ));
            Flow::Continue
        }
        Command::FindCapacity if shared.slo.is_empty() => {
            shared.event("capacity search needs an SLO: start with --slo p99=100ms");
            Flow::Continue
        }
        Command::FindCapacity if spec.kind == PhaseKind::Live => {
            shared.event("capacity search requested");
            Flow::End(PhaseEnd::Capacity)
        }
        Command::FindCapacity => {
            shared.event("capacity search ignored: a sweep or search is already running");
            Flow::Continue
        }
        Command::CheckAccuracy => {
            ctx.spawn_accuracy_check();
            Flow::Continue
        }
        Command::Stop => Flow::End(PhaseEnd::Stopped),
        Command::Pause | Command::TogglePause => pause(ctx, spec, pace, cmds).await,
        // Resume outside a pause changes nothing; `resolve` turned the relative forms into
        // absolute ones, and `change` took the settings.
        Command::Resume
        | Command::ScaleRate(_)
        | Command::ToggleRateInf
        | Command::ScaleBurstiness(_)
        | Command::AddConcurrency(_)
        | Command::SetRate(_)
        | Command::SetBurstiness(_)
        | Command::SetConcurrency(_) => Flow::Continue,
    }
}

/// A change of rate, burstiness or concurrency: applied now in a live phase, kept for after
/// the sweep in any other.
fn change(ctx: &Ctx, spec: &PhaseSpec, command: &Command, pace: &mut Pace) -> Flow {
    let shared = &ctx.shared;
    let concurrency = shared.lock().concurrency;
    let now = Settings {
        pace: *pace,
        concurrency,
    };
    let Some(next) = change_of(shared, now, command) else {
        return Flow::Continue;
    };
    log_clamp(shared, command, next);
    let what = describe(now, next);
    let mut live = shared.lock();
    // A cap the operator set holds from now on, at every pace.
    live.concurrency_given |= matches!(command, Command::SetConcurrency(_));
    if spec.kind != PhaseKind::Live
        && let Some(after) = live.after_sweep.as_mut()
    {
        *after = kept(*after, now, next);
        live.timeline
            .event(Instant::now(), format!("{what} once the sweep is done"));
        return Flow::Continue;
    }
    if next.pace.rate_per_s != now.pace.rate_per_s && now.pace.rate_per_s.is_some() {
        live.last_finite_rate = now.pace.rate_per_s;
    }
    live.timeline.event(Instant::now(), what);
    *pace = next.pace;
    live.pace = next.pace;
    if next.concurrency != now.concurrency {
        shared.limiter.set_cap(next.concurrency);
        live.concurrency = next.concurrency;
        if let Some(p) = live.phase.as_mut() {
            p.concurrency = next.concurrency;
        }
    }
    if next.pace == now.pace {
        Flow::Continue
    } else {
        Flow::Repace
    }
}

/// The operator's settings to restore after a sweep, with what `next` changed of `now`.
fn kept(after: (usize, usize, Pace), now: Settings, next: Settings) -> (usize, usize, Pace) {
    let (b, mut c, mut p) = after;
    if next.concurrency != now.concurrency {
        c = next.concurrency;
    }
    if next.pace.rate_per_s != now.pace.rate_per_s {
        p.rate_per_s = next.pace.rate_per_s;
    }
    if next.pace.burstiness.to_bits() != now.pace.burstiness.to_bits() {
        p.burstiness = next.pace.burstiness;
    }
    (b, c, p)
}

/// `request_rate 20 -> 25` for the timeline.
fn describe(now: Settings, next: Settings) -> String {
    let mut parts = Vec::new();
    if next.pace.rate_per_s != now.pace.rate_per_s {
        parts.push(format!(
            "request_rate {} -> {}",
            text::rate(now.pace.rate_per_s),
            text::rate(next.pace.rate_per_s)
        ));
    }
    if next.pace.burstiness.to_bits() != now.pace.burstiness.to_bits() {
        parts.push(format!(
            "burstiness {} -> {}",
            text::burstiness(now.pace.burstiness),
            text::burstiness(next.pace.burstiness)
        ));
    }
    if next.concurrency != now.concurrency {
        parts.push(format!(
            "concurrency {} -> {}",
            now.concurrency, next.concurrency
        ));
    }
    parts.join(", ")
}

/// What the clamp changed of what was asked, in the timeline.
fn log_clamp(shared: &Shared, command: &Command, got: Settings) {
    use encbench_core::arrival::{MAX_BURSTINESS, MAX_RATE, MIN_BURSTINESS, MIN_RATE};
    match *command {
        Command::SetRate(asked) if asked != got.pace.rate_per_s => shared.event(format!(
            "request_rate {} clamped to {} (supported: {MIN_RATE} to {MAX_RATE} req/s, or inf)",
            text::rate(asked),
            text::rate(got.pace.rate_per_s),
        )),
        Command::SetBurstiness(asked) if asked.to_bits() != got.pace.burstiness.to_bits() => {
            shared.event(format!(
                "burstiness {} clamped to {} (supported: {MIN_BURSTINESS} to {MAX_BURSTINESS}, or inf)",
                text::burstiness(asked),
                text::burstiness(got.pace.burstiness),
            ));
        }
        _ => {}
    }
}

/// Burstiness beyond which "smoother" means a fixed interval, and where dividing inf lands.
const BURSTINESS_CEILING: f64 = 64.0;
/// The rate an operator gets when leaving closed loop with nothing measured yet.
const FALLBACK_RATE: f64 = 10.0;

/// Turns a relative command into the absolute one it means right now.
pub(super) fn resolve(shared: &Shared, pace: &Pace, command: Command) -> Command {
    let finite_rate = || {
        let live = shared.lock();
        live.last_finite_rate
            .or_else(|| {
                let measured = live.recorder.req_per_s();
                (measured > 0.0).then(|| (measured * 10.0).round() / 10.0)
            })
            .unwrap_or(FALLBACK_RATE)
    };
    match command {
        Command::ScaleRate(k) => Command::SetRate(Some(match pace.rate_per_s {
            Some(r) => r * k,
            None => finite_rate(),
        })),
        Command::ToggleRateInf => match pace.rate_per_s {
            Some(_) => Command::SetRate(None),
            None => Command::SetRate(Some(finite_rate())),
        },
        Command::ScaleBurstiness(k) => {
            let b = pace.burstiness;
            Command::SetBurstiness(if b.is_infinite() {
                if k < 1.0 { BURSTINESS_CEILING } else { b }
            } else if b * k > BURSTINESS_CEILING {
                f64::INFINITY
            } else {
                b * k
            })
        }
        Command::AddConcurrency(d) => {
            let c = shared.lock().concurrency as i64;
            Command::SetConcurrency((c + d).max(1) as usize)
        }
        other => other,
    }
}

/// Holds the phase until Resume or Stop; changes made meanwhile take effect at once (and
/// `dispatch` opens a new segment at resume if they changed the settings).
async fn pause(
    ctx: &Ctx,
    spec: &PhaseSpec,
    pace: &mut Pace,
    cmds: &mut UnboundedReceiver<Command>,
) -> Flow {
    let shared = &ctx.shared;
    let since = Instant::now();
    {
        let mut live = shared.lock();
        live.state = RunState::Paused;
        live.timeline.event(since, "paused");
    }
    let outcome = loop {
        match cmds.recv().await {
            Some(Command::Resume | Command::Pause | Command::TogglePause) => {
                break Flow::Resumed;
            }
            Some(Command::Stop) | None => break Flow::End(PhaseEnd::Stopped),
            // Other changes apply now; the schedule is re-planned at resume anyway.
            Some(other) => {
                if let end @ Flow::End(_) =
                    Box::pin(apply(ctx, spec, Some(other), pace, cmds)).await
                {
                    break end;
                }
            }
        }
    };
    let mut live = shared.lock();
    live.recorder.add_paused(since.elapsed());
    if matches!(outcome, Flow::Resumed) {
        live.state = RunState::Running;
        live.timeline.event(Instant::now(), "resumed");
    }
    outcome
}
