//! The common start of a run over several hosts (`--start-at`): hosts warm up first, each on
//! its own, then wait for one wall-clock instant so that their parts of the one schedule
//! line up; the measured schedule's origin is that instant on every host.

use super::command::Command;
use super::ctx::Ctx;
use super::hosts::LATE_LIMIT;
use super::request::{Requester, Ticket};
use super::snapshot::RunState;
use encbench_core::plan::PhaseSpec;
use std::future::Future;
use std::time::{Instant, SystemTime};
use tokio::sync::mpsc::UnboundedReceiver;

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
    let spec = ctx.hosts.part(first);
    if spec.warmup > 0 {
        shared.lock().state = RunState::Warming;
        shared.limiter.set_cap(spec.concurrency);
        let requester = Requester::new(ctx, &spec, 1);
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
        shared.event(format!(
            "warmup before the start: {}",
            encbench_core::text::count(spec.warmup, "request")
        ));
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
    let waited = until_stopped(encbench_wire::timing::sleep_until(origin), ctx, cmds).await;
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
