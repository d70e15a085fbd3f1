//! A run over several hosts (`--shard`, `--start-at`): this host's part of each phase, and
//! the common start. Hosts warm up first, each on its own, then wait for one wall-clock
//! instant so that their parts of the one schedule line up; the measured schedule's origin
//! is that instant on every host.

use super::request::{Requester, Ticket};
use super::{Command, Ctx, RunState};
use crate::arrival::Pace;
use crate::plan::{PhaseSpec, StopAt};
use crate::shard::Shard;
use std::future::Future;
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::mpsc::UnboundedReceiver;

/// How this host takes part in a run over several hosts. The default is a run of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Hosts {
    pub shard: Option<Shard>,
    /// The common start: the first phase's measured schedule begins here on every host.
    pub start_at: Option<SystemTime>,
}

/// A host that reaches the common start later than this (its warmup ran long) starts at
/// once instead, unaligned, and says so: catching up would send the missed part of the
/// schedule as one burst. Within it, the small backlog is sent at once and the hosts stay
/// aligned (it shows as schedule lag).
pub const LATE_LIMIT: Duration = Duration::from_secs(1);

/// This host's part of a phase planned for all of them: its share of the concurrency and of
/// a fixed count (see `Shard::share`). The warmup is every host's own.
pub(super) fn host_part(shard: Option<Shard>, spec: &PhaseSpec) -> PhaseSpec {
    let Some(s) = shard else { return *spec };
    PhaseSpec {
        concurrency: (s.share(spec.concurrency as u64) as usize).max(1),
        stop: match spec.stop {
            StopAt::Count(n) => StopAt::Count(s.share(n)),
            other => other,
        },
        ..*spec
    }
}

/// The pace this host offers: its share of the rate, as its phase results record it (so
/// that `report --merge` adds the hosts' rates back up to the whole).
pub(crate) fn host_pace(shard: Option<Shard>, pace: Pace) -> Pace {
    match shard {
        Some(s) => Pace {
            rate_per_s: pace.rate_per_s.map(|r| r / f64::from(s.count)),
            ..pace
        },
        None => pace,
    }
}

/// Sends the first phase's warmup, then waits for the common start with a countdown in the
/// snapshots. Returns the schedule's origin as this process's clock has it, or `None` when
/// the run was stopped first.
pub(super) async fn warm_up_then_wait(
    ctx: &Ctx,
    first: &PhaseSpec,
    at: SystemTime,
    cmds: &mut UnboundedReceiver<Command>,
) -> Option<Instant> {
    let shared = &ctx.shared;
    let spec = host_part(ctx.hosts.shard, first);
    if spec.warmup > 0 {
        shared.lock().state = RunState::Warming;
        shared.limiter.set_cap(spec.concurrency);
        let requester = Requester::new(ctx, spec.batch_size);
        let generation = shared.lock().generation;
        let sending = async {
            for idx in 0..spec.warmup {
                let permit = shared.limiter.acquire().await;
                let ticket = Ticket {
                    idx,
                    intended: Instant::now(),
                    measured: false,
                    generation,
                };
                ctx.client_threads.spawn(
                    idx,
                    spec.concurrency,
                    requester.clone().send(ticket, permit),
                );
            }
            shared.limiter.idle().await;
        };
        until_stopped(sending, ctx, cmds).await?;
        shared.event(format!("warmup before the start: {} requests", spec.warmup));
    }
    let (now, wall) = (Instant::now(), SystemTime::now());
    let origin = match at.duration_since(wall) {
        Ok(ahead) => now + ahead,
        Err(e) if e.duration() <= LATE_LIMIT => now.checked_sub(e.duration()).unwrap_or(now),
        Err(e) => {
            let note = format!(
                "the common start (--start-at) had passed {:.1} s before this host was ready: it started at once, not aligned with the other hosts",
                e.duration().as_secs_f64()
            );
            let mut live = shared.lock();
            live.timeline.event(now, "started late: not aligned");
            live.notices.push(note);
            now
        }
    };
    {
        let mut live = shared.lock();
        live.state = RunState::Waiting;
        live.start_at = Some(origin);
        live.timeline.event(now, "waiting for the common start");
    }
    let waited = until_stopped(crate::timing::sleep_until(origin), ctx, cmds).await;
    shared.lock().start_at = None;
    waited.map(|()| origin)
}

/// Waits for `fut` unless the run is stopped first; other commands wait for the first phase.
async fn until_stopped<F: Future>(
    fut: F,
    ctx: &Ctx,
    cmds: &mut UnboundedReceiver<Command>,
) -> Option<F::Output> {
    tokio::pin!(fut);
    loop {
        tokio::select! {
            biased;
            c = cmds.recv() => match c {
                None | Some(Command::Stop) => return None,
                Some(c) => ctx.defer(c),
            },
            v = &mut fut => return Some(v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PhaseKind;

    #[test]
    fn a_host_runs_its_share_of_count_and_concurrency_and_its_own_warmup() {
        let spec = PhaseSpec {
            kind: PhaseKind::Batch,
            batch_size: 1,
            concurrency: 10,
            warmup: 3,
            stop: StopAt::Count(1001),
        };
        let parts: Vec<PhaseSpec> = (0..4)
            .map(|i| host_part(Some(Shard { index: i, count: 4 }), &spec))
            .collect();
        let c: Vec<usize> = parts.iter().map(|p| p.concurrency).collect();
        assert_eq!(c, [3, 3, 2, 2]);
        let n: Vec<StopAt> = parts.iter().map(|p| p.stop).collect();
        assert_eq!(
            n,
            [
                StopAt::Count(251),
                StopAt::Count(250),
                StopAt::Count(250),
                StopAt::Count(250)
            ]
        );
        assert!(parts.iter().all(|p| p.warmup == 3));
        assert_eq!(host_part(None, &spec), spec);
        let pace = Pace {
            rate_per_s: Some(400.0),
            burstiness: 0.25,
        };
        assert_eq!(
            host_pace(Some(Shard { index: 1, count: 4 }), pace).rate_per_s,
            Some(100.0)
        );
    }
}
