//! The server's side of a phase: its metrics endpoint read before and after (beside the
//! statistics API, at the same moments, so the two can be checked against each other), and
//! about once a second while the phase runs, for the live screen.
//!
//! A metrics endpoint that fails never stops the run: it is said once, as a notice, and the
//! figures are absent.

use super::cpu::CpuTime;
use super::ctx::Ctx;
use super::shared::Shared;
use encbench_core::server_metrics::stats::ServerStats;
use encbench_core::server_metrics::{self, Reading, ServerMetrics};
use encbench_wire::client::metrics::Scraper;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// What the server said of a phase: its statistics API and its metrics endpoint; and,
/// read between them and the phase, the client's CPU time over it.
pub(super) struct ServerSide {
    pub(super) wall_start: SystemTime,
    pub(super) stats: Option<ServerStats>,
    pub(super) metrics: Option<ServerMetrics>,
    /// User and system time the process spent between the phase's two server readings.
    pub(super) client_cpu: Option<(Duration, Duration)>,
}

/// The server's counters now; a statistics API that refuses is said once, not shown as "-".
async fn server_stats(ctx: &Ctx) -> Option<ServerStats> {
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

/// The server's side as a phase begins: its counters and its metrics, and the wall clock.
pub(super) struct ServerBefore {
    wall_start: SystemTime,
    stats: Option<ServerStats>,
    metrics: Option<Reading>,
    cpu: Option<CpuTime>,
}

impl ServerBefore {
    pub(super) async fn read(ctx: &Ctx) -> ServerBefore {
        let wall_start = SystemTime::now();
        let stats = server_stats(ctx).await;
        let metrics = reading(ctx).await;
        phase_started(&ctx.shared, metrics.as_ref());
        ServerBefore {
            wall_start,
            stats,
            metrics,
            // After the readings: their requests are not the phase's.
            cpu: CpuTime::now(),
        }
    }

    /// The phase's figures, read again at its end and set against these.
    pub(super) async fn since(self, ctx: &Ctx) -> ServerSide {
        let client_cpu = self.cpu.and_then(CpuTime::spent);
        let stats = match (self.stats, server_stats(ctx).await) {
            (Some(before), Some(after)) => Some(after.since(&before)),
            _ => None,
        };
        let metrics_after = reading(ctx).await;
        ServerSide {
            wall_start: self.wall_start,
            stats,
            metrics: phase_ended(ctx, self.metrics, metrics_after),
            client_cpu,
        }
    }
}

/// How often the live screen's server figures are refreshed.
const POLL_EVERY: Duration = Duration::from_secs(1);

fn notice(shared: &Shared, note: String) {
    let mut live = shared.lock();
    if !live.notices.contains(&note) {
        live.timeline
            .event(Instant::now(), "metrics endpoint failed");
        live.notices.push(note);
    }
}

/// One scrape for a phase boundary; a failure is said once.
async fn reading(ctx: &Ctx) -> Option<Reading> {
    let scraper = ctx.metrics.as_ref()?;
    match scraper.scrape().await {
        Ok(r) => Some(r),
        Err(why) => {
            notice(
                &ctx.shared,
                format!(
                    "--metrics-url: scrape failed ({why}): the server's metrics are absent where it failed"
                ),
            );
            None
        }
    }
}

/// The phase has begun: the live figures count from `before`.
fn phase_started(shared: &Shared, before: Option<&Reading>) {
    let mut live = shared.lock();
    live.phase_scrape = before.cloned();
    live.server_so_far = None;
}

/// The phase's figures from its two readings; metrics named but never in the scrape are
/// said once.
fn phase_ended(
    ctx: &Ctx,
    before: Option<Reading>,
    after: Option<Reading>,
) -> Option<ServerMetrics> {
    {
        let mut live = ctx.shared.lock();
        live.phase_scrape = None;
        live.server_so_far = None;
    }
    let scraper = ctx.metrics.as_ref()?;
    let (before, after) = (before?, after?);
    for name in &scraper.names {
        if !after.exposition.families.contains_key(name) {
            notice(
                &ctx.shared,
                format!("--metric {name}: not among the metrics the endpoint exposes"),
            );
        }
    }
    Some(server_metrics::diff(&before, &after, &scraper.names))
}

/// Refreshes the running phase's figures about once a second, on a client of its own (it
/// runs on the front-end's runtime, not the engine's).
pub(super) fn spawn_poller(
    scraper: &Scraper,
    shared: Arc<Shared>,
) -> Option<tokio::task::JoinHandle<()>> {
    let scraper = scraper.fresh().ok()?;
    Some(tokio::spawn(async move {
        let mut every = tokio::time::interval(POLL_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let Some(before) = shared.lock().phase_scrape.clone() else {
                continue;
            };
            // Failures are the boundary scrapes' to report; the screen keeps what it had.
            let Ok(now) = scraper.scrape().await else {
                continue;
            };
            let figures = server_metrics::diff(&before, &now, &scraper.names);
            let mut live = shared.lock();
            // Only if the phase it was measured against is still the one running.
            if live
                .phase_scrape
                .as_ref()
                .is_some_and(|b| b.at == before.at)
            {
                live.server_so_far = Some(figures);
            }
        }
    }))
}
