//! The load engine: one dispatch loop driven by commands, publishing aggregated snapshots.
//! No UI code lives here; the TUI and the headless front-end both drive this.
//!
//! Inside, from the top: `run` (the phases of a run one after another, and a capacity
//! search's steps through `search`), `dispatch` (one phase: its `schedule`, `closed`-loop
//! slots, the `steer`ing commands, `probe_watch` and `phase_close`), `request` (one request,
//! a replay's from `replay`,
//! on the `client_threads`, tokenized on the `tokenizer_pool`), and under them all `ctx`
//! and `shared` (what every part reads and writes), `snapshot`, `command`, `settings`,
//! `limiter`, `wake`, `hosts`, `common_start` and `cpu` (what a phase cost the client).

pub mod client_threads;
mod closed;
pub mod command;
mod common_start;
mod cpu;
mod ctx;
mod dispatch;
pub mod hosts;
pub mod limiter;
mod phase_close;
mod probe_watch;
mod replay;
mod request;
mod run;
mod schedule;
mod search;
mod server_side;
mod settings;
mod shared;
pub mod snapshot;
mod steer;
#[cfg(test)]
mod tests;
mod tokenizer_pool;
mod wake;

pub use command::Command;
pub use hosts::Hosts;
pub use settings::{EngineSpec, SearchSpec};
pub use snapshot::{LiveStats, PhaseView, RunState, ScheduleStatus, Snapshot};

use encbench_core::plan::PhaseSpec;
use encbench_core::results::{PhaseResult, RunReport};
use shared::Shared;
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

/// Handle to a running engine.
pub struct Engine {
    commands: mpsc::UnboundedSender<Command>,
    snapshots: watch::Receiver<Arc<Snapshot>>,
    shared: Arc<Shared>,
    report: oneshot::Receiver<RunReport>,
    ticker: JoinHandle<()>,
    poller: Option<JoinHandle<()>>,
    started_at: SystemTime,
}

impl Engine {
    /// Starts the engine on a thread of its own; snapshots are published from the calling
    /// tokio runtime.
    ///
    /// The dispatch loop runs on a single-threaded runtime of its own, and requests on it and
    /// on the other client threads (`client_threads`), each a single-threaded runtime too. On
    /// one multi-threaded runtime each request crossed threads several times (dispatch,
    /// request, connection, completion), and every crossing woke a parked worker: at
    /// concurrency 1 that cost about 15 µs a round trip on loopback, a third of the time. The
    /// screen's drawing never delays a send.
    pub fn start(setup: EngineSpec) -> Engine {
        Engine::start_among(Hosts::default(), setup)
    }

    /// `start` for one of several hosts loading one endpoint together (see `start`).
    pub fn start_among(hosts: Hosts, setup: EngineSpec) -> Engine {
        let started = Instant::now();
        let shared = Arc::new(Shared::new(&setup, hosts, started));
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let (snap_tx, snap_rx) = watch::channel(Arc::new(shared.snapshot()));
        let tick = setup.tick;
        let ticker_shared = shared.clone();
        let ticker = tokio::spawn(async move {
            let mut iv = tokio::time::interval(tick);
            iv.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                iv.tick().await;
                if snap_tx.send(Arc::new(ticker_shared.snapshot())).is_err() {
                    break;
                }
            }
        });
        let poller =
            (setup.metrics.as_deref()).and_then(|m| server_side::spawn_poller(m, shared.clone()));
        let run_shared = shared.clone();
        let thread_shared = shared.clone();
        let started_at = SystemTime::now();
        let (report_tx, report) = oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("encbench-engine".into())
            .spawn(move || {
                encbench_wire::timing::tighten_timer_slack();
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime with static settings");
                // Spawned rather than run as block_on's own future: waking that one goes
                // through the I/O driver (an eventfd write per completed request), while a
                // task woken by a task on the same thread is only queued.
                let task = runtime.spawn(run::run(setup, run_shared, cmd_rx, started_at));
                match runtime.block_on(task) {
                    Ok(report) => {
                        let _ = report_tx.send(report);
                    }
                    // The front-end sees the state and ends; `finish` reports what was
                    // measured, with the failure.
                    Err(_) => thread_shared.lock().state = RunState::Failed,
                }
            });
        // Without the thread `report` reports a failed engine (its sender is gone).
        drop(spawned);
        Engine {
            commands: cmd_tx,
            snapshots: snap_rx,
            shared,
            report,
            ticker,
            poller,
            started_at,
        }
    }

    pub fn send(&self, command: Command) {
        // After the run ended nobody listens; a late key press is harmless.
        let _ = self.commands.send(command);
    }

    pub fn commands(&self) -> mpsc::UnboundedSender<Command> {
        self.commands.clone()
    }

    pub fn snapshots(&self) -> watch::Receiver<Arc<Snapshot>> {
        self.snapshots.clone()
    }

    /// A fresh snapshot, not waiting for the tick.
    pub fn snapshot_now(&self) -> Snapshot {
        self.shared.snapshot()
    }

    /// What has been measured so far, for "export now" and exports on abnormal exits:
    /// finished phases plus the current one as it stands.
    pub fn interim_report(&self) -> RunReport {
        self.interim().report()
    }

    /// A handle that can still report after `finish` has taken the engine (a second Ctrl-C
    /// while the run winds down).
    pub fn interim(&self) -> Interim {
        Interim {
            shared: self.shared.clone(),
            started_at: self.started_at,
        }
    }

    /// Waits for the run to end (its plan done, or `Command::Stop`).
    pub async fn finish(mut self) -> RunReport {
        if let Ok(report) = (&mut self.report).await {
            report
        } else {
            let mut r = self.interim_report();
            r.error = Some(match encbench_core::failure::first() {
                Some(p) => format!("internal failure in the engine: {p}"),
                None => "internal failure: the engine ended without a report".into(),
            });
            r
        }
    }
}

/// See `Engine::interim`.
#[derive(Clone)]
pub struct Interim {
    shared: Arc<Shared>,
    started_at: SystemTime,
}

impl Interim {
    /// Finished phases plus the current one as it stands.
    pub fn report(&self) -> RunReport {
        let mut live = self.shared.lock();
        let mut phases: Vec<PhaseResult> = live.results.as_ref().clone();
        let sent = (self.shared.sent.count()).saturating_sub(self.shared.undelivered());
        let endpoint_lost = live.reach.phase_so_far(Instant::now()).0;
        if let Some(p) = &live.phase
            && (live.recorder.completed() > 0 || sent > p.warmup)
        {
            // Requests still in flight are the difference between sent and n.
            let mut rec = live.recorder.clone();
            rec.sent = sent.saturating_sub(p.warmup);
            let spec = PhaseSpec {
                kind: p.kind,
                batch_size: p.batch_size,
                concurrency: p.concurrency,
                warmup: p.warmup,
                stop: p.stop,
                repetition: p.repetition,
            };
            let pace = self.shared.hosts.pace(live.pace);
            let mut r = PhaseResult::new(&spec, pace, self.shared.shape, &rec);
            r.shard = self.shared.hosts.shard;
            r.judge(&self.shared.slo, &rec.scheduled);
            r.endpoint_lost = endpoint_lost;
            phases.push(r);
        }
        let mut capacity = live.capacity.clone();
        capacity.extend(live.searching.clone());
        RunReport {
            started_at: self.started_at,
            ended_at: SystemTime::now(),
            phases: self.shared.pooled(&phases),
            capacity,
            accuracy_before: live.accuracy_before.clone(),
            accuracy_after: None,
            timeline: live.timeline.complete_entries(),
            stopped_early: true,
            error: None,
            notices: live.notices.clone(),
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.ticker.abort();
        if let Some(p) = &self.poller {
            p.abort();
        }
    }
}
