//! A phase's close: requests in flight given time to finish, and what the phase amounts to
//! recorded as its result.

use super::command::Command;
use super::ctx::Ctx;
use super::server_side::ServerSide;
use super::snapshot::RunState;
use super::steer::{PhaseEnd, Settings};
use super::wake::{Deadline, Woke, wait};
use encbench_core::plan::{PhaseKind, PhaseSpec, StopAt};
use encbench_core::results::{self, ClientCpu, PhaseResult, ServerBreakdown};
use encbench_core::stats::ScheduleOutcome;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedReceiver;

/// How long a stopped run waits for requests already in flight.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Lets in-flight requests finish: all of them after a completed phase (each is bounded by
/// the request timeout), a short grace period after a stop.
pub(super) async fn drain(ctx: &Ctx, end: &PhaseEnd, cmds: &mut UnboundedReceiver<Command>) {
    let shared = &ctx.shared;
    if shared.limiter.in_flight() == 0 {
        return;
    }
    shared.lock().state = RunState::Draining;
    let mut grace = match end {
        PhaseEnd::Stopped => Some(Instant::now() + STOP_GRACE),
        _ => None,
    };
    let mut deadline = Deadline::new();
    loop {
        deadline.set(grace);
        match wait(shared.limiter.idle(), cmds, &mut deadline).await {
            Woke::Ready(()) | Woke::Deadline => return,
            Woke::Command(Some(Command::Stop) | None) => {
                grace.get_or_insert(Instant::now() + STOP_GRACE);
            }
            // Changes asked for while the phase drains apply to the next one.
            Woke::Command(Some(c)) => ctx.defer(c),
        }
    }
}

/// Where a phase's throughput interval ends, and how its schedule was kept (see
/// `PhaseRecorder::req_per_s`).
#[derive(Clone, Copy)]
pub(super) struct PhaseEndings {
    pub(super) pipeline_end: Option<Instant>,
    pub(super) schedule_end: Option<Instant>,
    pub(super) schedule: Option<ScheduleOutcome>,
    /// Phases that run until stable: why this one ended.
    pub(super) stop_reason: Option<&'static str>,
    /// The phase's rate followed the ramp to its end (no live change cut it short).
    pub(super) ramped: bool,
}

pub(super) fn finish(
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
    // Every request of the phase cost the client, the warmup's too.
    let sent_in_phase = ctx.shared.sent.count();
    // The phase's requests now live in its result; an interim report must not count them twice.
    ctx.shared.clear_sent();
    let (endpoint_lost, declared) = live.reach.phase_so_far(Instant::now());
    if let Some(span) = declared {
        live.timeline.event(Instant::now(), span.lost_line());
    }
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
    let mut pace = settings.pace;
    let ramp = ctx.ramp.filter(|_| endings.ramped);
    if let (Some(r), StopAt::Duration(d)) = (ramp, spec.stop) {
        pace.rate_per_s = Some(r.mean_rate(d.as_secs_f64()));
    }
    let pace = ctx.hosts.pace(pace);
    let mut result = PhaseResult::new(&spec, pace, ctx.shape, &rec);
    result.ramp = ramp;
    result.endpoint_lost = endpoint_lost;
    if let Some(s) = rec.slices.as_ref() {
        result.slices = s.results(rec.measured_interval(), &ctx.shared.slo);
    }
    result.shard = ctx.hosts.shard;
    result.server = server.stats.map(|s| ServerBreakdown::from_stats(&s));
    result.client_cpu_ms_per_request = server
        .client_cpu
        .and_then(|(user, system)| ClientCpu::of(user, system, sent_in_phase));
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
    live.shown = if phases.iter().any(|p| p.repetition.is_some()) {
        Arc::new(ctx.shared.pooled(phases))
    } else {
        live.results.clone()
    };
    let row = live.results.last().expect("just pushed");
    let summary = format!(
        "phase {index} end: n {} p50 {:.1} ms p99 {:.1} ms {:.1} req/s",
        row.n, row.latency_ms.p50, row.latency_ms.p99, row.req_per_s
    );
    live.timeline.event(Instant::now(), summary);
}
