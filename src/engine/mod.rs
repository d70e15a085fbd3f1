//! The load engine: one dispatch loop driven by commands, publishing aggregated snapshots.
//! No UI code lives here; the TUI and the headless front-end both drive this.

pub mod client_threads;
mod closed;
pub mod command;
mod dispatch;
pub mod limiter;
mod request;
mod server_side;
pub mod snapshot;
pub mod start;
mod steer;
#[cfg(test)]
mod tests;
mod tokenizer_pool;

pub use command::Command;
pub use snapshot::{LiveStats, PhaseView, RunState, ScheduleStatus, Snapshot};
pub use start::Hosts;

use crate::accuracy::{self, AccuracySetup};
use crate::arrival::Pace;
use crate::capacity::{Capacity, Search, SearchPlan, Step};
use crate::client::Target;
use crate::input::Input;
use crate::input::Shape;
use crate::payload::Format;
use crate::plan::{PhaseKind, PhaseSpec, ProbeRule, RunPlan, StopAt};
use crate::results::{PhaseResult, RunReport};
use crate::slo::Slo;
use crate::stats::{Completion, LatencySummary, PhaseRecorder, Timeline, view_histogram};
use crate::verdicts::AccuracyReport;
use hdrhistogram::Histogram;
use limiter::Limiter;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

pub struct EngineSetup {
    pub target: Arc<dyn Target>,
    pub texts: Vec<Input>,
    pub format: Arc<dyn Format>,
    pub shape: Shape,
    /// Per-request timeout of warmup requests.
    pub warmup_timeout: Duration,
    pub pace: Pace,
    pub plan: RunPlan,
    pub seed: u64,
    pub accuracy: Option<AccuracySetup>,
    pub price_per_hour: Option<f64>,
    /// Seconds of history in the "recent" latency view.
    pub window_s: usize,
    /// How often snapshots are published.
    pub tick: Duration,
    /// Threads that run requests (see `client_threads`); 1 keeps everything on the engine's
    /// thread.
    pub client_threads: usize,
    /// `--slo`: every phase is judged against it (empty: none).
    pub slo: Slo,
    /// How capacity searches run; `None` without an SLO (the `f` key then says so).
    pub search: Option<SearchSetup>,
    /// `--metrics-url`: the server's metrics, read around every phase.
    pub metrics: Option<Arc<crate::client::metrics::Scraper>>,
}

/// How a capacity search runs (see `capacity`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchSetup {
    pub precision: f64,
    pub probe: ProbeRule,
    /// `--find-capacity`: search before anything else.
    pub at_start: bool,
}

/// Timeline points kept in snapshots: enough for sparklines across a wide terminal.
const TAIL_POINTS: usize = 300;
/// How long a stopped run waits for requests already in flight.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How long a stopped run gives the accuracy check after the load.
const AFTER_STOP_CHECK: Duration = Duration::from_secs(10);

/// Mutable run state shared by the dispatcher, request tasks and the snapshot tick.
pub(crate) struct Live {
    state: RunState,
    pace: Pace,
    concurrency: usize,
    batch_size: usize,
    phase: Option<PhaseView>,
    /// Bumped at every phase start and reset; completions of an older generation are only
    /// counted in the timeline.
    generation: u64,
    recorder: PhaseRecorder,
    run_latency: Histogram<u64>,
    /// Measured requests that failed since the start or the last reset (beside
    /// `run_latency`, which holds the successful ones).
    run_errors: u64,
    timeline: Timeline,
    results: Arc<Vec<PhaseResult>>,
    accuracy_before: Option<AccuracyReport>,
    accuracy_latest: Option<AccuracyReport>,
    accuracy_running: bool,
    /// Where `i` returns to when leaving closed loop.
    last_finite_rate: Option<f64>,
    /// The live phase's batch size, concurrency and pace, restored after a sweep.
    after_sweep: Option<(usize, usize, Pace)>,
    /// When the current phase began, for how its schedule lag compares with its length.
    phase_started: Instant,
    /// Finished capacity searches, one entry per batch size.
    capacity: Vec<Capacity>,
    /// The batch size being searched, as it stands.
    searching: Option<Capacity>,
    /// What could not be measured and why, each said once.
    notices: Vec<String>,
    /// The common start (`--start-at`) while this host waits for it.
    start_at: Option<Instant>,
    /// The metrics endpoint as the running phase began, and the phase since (see
    /// `server_side`).
    phase_scrape: Option<crate::server_metrics::Reading>,
    server_so_far: Option<crate::server_metrics::ServerMetrics>,
}

pub(crate) struct Shared {
    live: Mutex<Live>,
    limiter: Arc<Limiter>,
    sent: closed::Tickets,
    /// The open loop's next intended send, as nanoseconds after `started` plus one (0: none,
    /// a closed loop). Written at every send, so an atomic rather than the lock.
    due: AtomicU64,
    started: Instant,
    target_name: String,
    shape: Shape,
    slo: Slo,
    /// The accuracy check under way: outside the lock, which a verdict must not wait for.
    accuracy_progress: accuracy::Progress,
    hosts: Hosts,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Live> {
        // A panic in a request task must not take the measurements with it.
        self.live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn record(&self, c: &Completion, generation: u64) {
        let mut live = self.lock();
        let current = generation == live.generation;
        live.timeline.record(c, current);
        if current {
            live.recorder.record(c);
            if c.measured && c.error.is_none() {
                live.run_latency
                    .saturating_record((c.done - c.intended).as_micros().max(1) as u64);
            } else if c.measured {
                live.run_errors += 1;
            }
        }
    }

    fn set_due(&self, at: Option<Instant>) {
        let v = at.map_or(0, |t| {
            t.saturating_duration_since(self.started).as_nanos() as u64 + 1
        });
        self.due.store(v, Ordering::Release);
    }

    fn due(&self) -> Option<Instant> {
        match self.due.load(Ordering::Acquire) {
            0 => None,
            v => Some(self.started + Duration::from_nanos(v - 1)),
        }
    }

    fn event(&self, text: impl Into<String>) {
        self.lock().timeline.event(Instant::now(), text);
    }

    fn snapshot(&self) -> Snapshot {
        let now = Instant::now();
        let mut live = self.lock();
        live.timeline.roll(now);
        let rec = &live.recorder;
        let current = LiveStats {
            n: rec.completed(),
            ok: rec.ok,
            errors: rec.errors.clone(),
            latency: LatencySummary::of(&rec.scheduled),
            service: LatencySummary::of(&rec.service),
            dispatch_delay: LatencySummary::of(&rec.dispatch_delay),
            tokenize: (!rec.tokenize.is_empty()).then(|| LatencySummary::of(&rec.tokenize)),
            req_per_s: rec.req_per_s(),
            samples_per_s: rec.samples_per_s(),
            slo: None,
            server: live.server_so_far.clone(),
        };
        let entries = &live.timeline.entries;
        let tail = entries[entries.len().saturating_sub(TAIL_POINTS)..].to_vec();
        let mut phase = live.phase.clone();
        if let Some(p) = phase.as_mut() {
            p.sent = self.sent.count();
        }
        let host_pace = start::host_pace(self.hosts.shard, live.pace);
        let schedule = match (host_pace.rate_per_s, self.due()) {
            (Some(rate), Some(due)) if live.state == RunState::Running => {
                let lag = now.saturating_duration_since(due);
                Some(ScheduleStatus {
                    offered_per_s: rate,
                    backlog: if lag.is_zero() {
                        0
                    } else {
                        1 + (lag.as_secs_f64() * rate) as u64
                    },
                    lag,
                    overloaded: dispatch::overloaded(
                        lag,
                        now.saturating_duration_since(live.phase_started),
                    ),
                })
            }
            _ => None,
        };
        let mut current = current;
        if !self.slo.is_empty() && rec.completed() > 0 {
            current.slo = Some(self.slo.judge(&crate::slo::Measured {
                scheduled: &rec.scheduled,
                ok: rec.ok,
                errors: current.error_count(),
                unsent: 0,
                overloaded: schedule.is_some_and(|q| q.overloaded),
                req_per_s: current.req_per_s,
            }));
        }
        let state = match (live.state, &phase) {
            (RunState::Running, Some(p)) if p.sent <= p.warmup => RunState::Warming,
            (s, _) => s,
        };
        Snapshot {
            elapsed: now - self.started,
            state,
            target: self.target_name.clone(),
            pace: live.pace,
            concurrency: live.concurrency,
            batch_size: live.batch_size,
            in_flight: self.limiter.in_flight(),
            schedule,
            phase,
            current,
            recent_latency: live.timeline.recent(),
            run_latency: live.run_latency.clone(),
            run_errors: live.run_errors,
            timeline_tail: tail,
            phases: live.results.clone(),
            accuracy_before: live.accuracy_before.clone(),
            accuracy_latest: live.accuracy_latest.clone(),
            accuracy_running: live.accuracy_running,
            accuracy_progress: self.accuracy_progress.get(),
            capacity: live.capacity.clone(),
            searching: live.searching.clone(),
            notices: live.notices.clone(),
            starts_in: live.start_at.map(|t| t.saturating_duration_since(now)),
        }
    }
}

/// Everything a phase's dispatch loop needs besides the command channel.
pub(crate) struct Ctx {
    target: Arc<dyn Target>,
    texts: Arc<Vec<Input>>,
    format: Arc<dyn Format>,
    shape: Shape,
    warmup_timeout: Duration,
    seed: u64,
    shared: Arc<Shared>,
    accuracy: Option<Arc<AccuracySetup>>,
    price_per_hour: Option<f64>,
    client_threads: client_threads::ClientThreads,
    /// Commands that came while a phase drained, for the next one (see `steer`).
    deferred: Mutex<VecDeque<Command>>,
    hosts: Hosts,
    /// The common start, for the first phase's schedule to begin at (see `start`).
    origin: Mutex<Option<Instant>>,
    metrics: Option<Arc<crate::client::metrics::Scraper>>,
}

impl Ctx {
    fn defer(&self, c: Command) {
        self.deferred
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push_back(c);
    }

    fn take_origin(&self) -> Option<Instant> {
        self.origin
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    fn take_deferred(&self) -> Option<Command> {
        self.deferred
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop_front()
    }

    /// Runs the accuracy samples while nothing else is sent (before and after the load).
    async fn check_accuracy_in_line(&self, when: &str) -> AccuracyReport {
        let a = self
            .accuracy
            .as_ref()
            .expect("called only with accuracy samples");
        self.shared.lock().state = RunState::CheckingAccuracy;
        let r = accuracy::check_counted(
            self.target.as_ref(),
            self.format.as_ref(),
            a,
            &self.shared.accuracy_progress,
        )
        .await;
        let mut live = self.shared.lock();
        live.timeline.event(
            Instant::now(),
            format!("accuracy {when} {}/{}", r.passed, r.total),
        );
        if when == "before load" {
            live.accuracy_before = Some(r.clone());
        }
        live.accuracy_latest = Some(r.clone());
        r
    }

    /// Runs the accuracy samples beside the load, reporting into the snapshot.
    fn spawn_accuracy_check(&self) {
        let Some(setup) = self.accuracy.clone() else {
            return;
        };
        {
            let mut live = self.shared.lock();
            if live.accuracy_running {
                return;
            }
            live.accuracy_running = true;
            live.timeline
                .event(Instant::now(), "accuracy check started");
        }
        let (target, shared, format) = (
            self.target.clone(),
            self.shared.clone(),
            self.format.clone(),
        );
        tokio::spawn(async move {
            // However the check ends, unwinding included, it is no longer running: otherwise
            // the screen would say "running" forever and `a` would never start another.
            struct Done(Arc<Shared>);
            impl Drop for Done {
                fn drop(&mut self) {
                    self.0.lock().accuracy_running = false;
                }
            }
            let done = Done(shared);
            let report = accuracy::check_counted(
                target.as_ref(),
                format.as_ref(),
                &setup,
                &done.0.accuracy_progress,
            )
            .await;
            let mut live = done.0.lock();
            live.timeline.event(
                Instant::now(),
                format!("accuracy {}/{}", report.passed, report.total),
            );
            live.accuracy_latest = Some(report);
        });
    }
}

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
    pub fn start(setup: EngineSetup) -> Engine {
        Engine::start_among(Hosts::default(), setup)
    }

    /// `start` for one of several hosts loading one endpoint together (see `start`).
    pub fn start_among(hosts: Hosts, setup: EngineSetup) -> Engine {
        let started = Instant::now();
        let shared = Arc::new(Shared {
            live: Mutex::new(Live {
                state: RunState::Starting,
                pace: setup.pace,
                concurrency: setup.plan.concurrency,
                batch_size: setup.plan.batch_size,
                phase: None,
                generation: 0,
                recorder: PhaseRecorder::default(),
                run_latency: view_histogram(),
                run_errors: 0,
                timeline: Timeline::new(started, setup.window_s),
                results: Arc::new(Vec::new()),
                accuracy_before: None,
                accuracy_latest: None,
                accuracy_running: false,
                last_finite_rate: setup.pace.rate_per_s,
                after_sweep: None,
                phase_started: started,
                capacity: Vec::new(),
                searching: None,
                notices: Vec::new(),
                start_at: None,
                phase_scrape: None,
                server_so_far: None,
            }),
            limiter: Limiter::new(setup.plan.concurrency),
            sent: closed::Tickets::new(),
            due: AtomicU64::new(0),
            started,
            target_name: setup.target.describe(),
            shape: setup.shape,
            slo: setup.slo.clone(),
            accuracy_progress: accuracy::Progress::default(),
            hosts,
        });
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
                crate::timing::tighten_timer_slack();
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a current-thread runtime with static settings");
                // Spawned rather than run as block_on's own future: waking that one goes
                // through the I/O driver (an eventfd write per completed request), while a
                // task woken by a task on the same thread is only queued.
                let task = runtime.spawn(run(setup, run_shared, cmd_rx, started_at));
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
            r.error = Some(match crate::failure::first() {
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
        let live = self.shared.lock();
        let mut phases: Vec<PhaseResult> = live.results.as_ref().clone();
        let sent = self.shared.sent.count();
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
            };
            let pace = start::host_pace(self.shared.hosts.shard, live.pace);
            let mut r = PhaseResult::new(&spec, pace, self.shared.shape, &rec);
            r.shard = self.shared.hosts.shard;
            r.judge(&self.shared.slo, &rec.scheduled);
            phases.push(r);
        }
        let mut capacity = live.capacity.clone();
        capacity.extend(live.searching.clone());
        RunReport {
            started_at: self.started_at,
            ended_at: SystemTime::now(),
            phases,
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

async fn run(
    setup: EngineSetup,
    shared: Arc<Shared>,
    mut cmds: mpsc::UnboundedReceiver<Command>,
    started_at: SystemTime,
) -> RunReport {
    let ctx = Ctx {
        target: setup.target,
        texts: Arc::new(setup.texts),
        format: setup.format,
        shape: setup.shape,
        warmup_timeout: setup.warmup_timeout,
        seed: setup.seed,
        shared: shared.clone(),
        accuracy: setup.accuracy.map(Arc::new),
        price_per_hour: setup.price_per_hour,
        client_threads: client_threads::ClientThreads::start(setup.client_threads),
        deferred: Mutex::new(VecDeque::new()),
        hosts: shared.hosts,
        origin: Mutex::new(None),
        metrics: setup.metrics,
    };
    let plan = setup.plan;

    let accuracy_before = match &ctx.accuracy {
        Some(_) => Some(ctx.check_accuracy_in_line("before load").await),
        None => None,
    };

    let search_setup = setup.search;
    let mut search: Option<Search> = None;
    let mut queue: VecDeque<PhaseSpec> = VecDeque::new();
    match search_setup {
        Some(s) if s.at_start => {
            search = Some(start_search(&shared, &plan, &setup.slo, s));
        }
        _ => queue = plan.initial().into(),
    }
    let mut stopped = false;
    if let Some(at) = shared.hosts.start_at {
        // Warmup before the common start; the first phase then measures from it at once.
        let first = queue
            .front()
            .copied()
            .unwrap_or_else(|| plan.live_phase(plan.batch_size.max(1), plan.concurrency));
        match start::warm_up_then_wait(&ctx, &first, at, &mut cmds).await {
            Some(origin) => {
                *ctx.origin
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(origin);
                if let Some(q) = queue.front_mut() {
                    q.warmup = 0;
                }
            }
            None => stopped = true,
        }
    }
    let mut index = 0usize;
    // The next live phase continues the last one under new settings: no warmup again.
    let mut segment_follows = shared.hosts.start_at.is_some();
    while !stopped {
        let spec = if let Some(s) = search.as_mut() {
            match s.next_step() {
                Some(step) => probe_phase(&shared, &plan, s, step),
                None => {
                    end_search(&shared, search.take());
                    continue;
                }
            }
        } else {
            match queue.pop_front() {
                Some(s) => s,
                None if plan.live => {
                    let mut live = shared.lock();
                    if let Some((b, c, pace)) = live.after_sweep.take() {
                        live.batch_size = b;
                        live.concurrency = c;
                        live.pace = pace;
                        live.timeline
                            .event(Instant::now(), "sweep done: live settings restored");
                    }
                    let mut spec = plan.live_phase(live.batch_size.max(1), live.concurrency);
                    if segment_follows {
                        spec.warmup = 0;
                    }
                    spec
                }
                None => break,
            }
        };
        index += 1;
        let planned =
            (search.is_none() && (!plan.live || !queue.is_empty())).then_some(index + queue.len());
        let end = dispatch::run_phase(&ctx, spec, index, planned, &mut cmds).await;
        if let Some(s) = search.as_mut() {
            let last = shared.lock().results.last().cloned();
            if let Some(r) = last.filter(|r| r.kind == PhaseKind::Capacity) {
                s.record(&r);
            }
            if matches!(end, dispatch::PhaseEnd::Stopped) {
                s.stop();
            }
            shared.lock().searching = s.current().cloned();
        }
        segment_follows = matches!(end, dispatch::PhaseEnd::Segment);
        match end {
            dispatch::PhaseEnd::Completed | dispatch::PhaseEnd::Segment => {}
            dispatch::PhaseEnd::Stopped => {
                end_search(&shared, search.take());
                stopped = true;
                break;
            }
            dispatch::PhaseEnd::Sweep(kind) => {
                let fixed = {
                    let mut live = shared.lock();
                    // The operator's live settings come back when the sweep is done. A sweep
                    // measures capacity, so it runs closed loop: at a fixed offered rate every
                    // batch size would show the same throughput and efficiency would be noise.
                    live.after_sweep = Some((live.batch_size, live.concurrency, live.pace));
                    live.pace.rate_per_s = None;
                    live.timeline
                        .event(Instant::now(), "sweep runs closed loop");
                    match kind {
                        crate::plan::SweepKind::Batch => live.concurrency,
                        crate::plan::SweepKind::Concurrency => live.batch_size,
                    }
                };
                queue = plan.sweep(kind, fixed).into();
            }
            dispatch::PhaseEnd::Capacity => match search_setup {
                Some(s) => search = Some(start_search(&shared, &plan, &setup.slo, s)),
                None => shared.event("capacity search needs an SLO: start with --slo p99=100ms"),
            },
        }
    }

    let accuracy_after = match (&ctx.accuracy, stopped) {
        (Some(_), false) => Some(ctx.check_accuracy_in_line("after load").await),
        // Quitting is how every live session ends, and the verdicts after the load are the
        // point of the check; but the operator asked to leave, so it is bounded, and a check
        // cut short is said, not silently absent.
        // Stopped before any load was measured: there is nothing to compare.
        (Some(_), true) if shared.lock().results.is_empty() => None,
        (Some(_), true) => {
            let check = ctx.check_accuracy_in_line("after load");
            match tokio::time::timeout(AFTER_STOP_CHECK, check).await {
                Ok(r) => Some(r),
                Err(_) => {
                    let mut live = shared.lock();
                    live.notices.push(format!(
                        "accuracy after load skipped: the check had not finished {} s after the stop",
                        AFTER_STOP_CHECK.as_secs()
                    ));
                    live.timeline
                        .event(Instant::now(), "accuracy after load skipped");
                    None
                }
            }
        }
        _ => None,
    };

    let mut live = shared.lock();
    live.state = RunState::Finished;
    live.timeline.roll(Instant::now());
    live.timeline
        .event(Instant::now(), if stopped { "stopped" } else { "finished" });
    RunReport {
        started_at,
        ended_at: SystemTime::now(),
        phases: live.results.as_ref().clone(),
        capacity: live.capacity.clone(),
        accuracy_before,
        accuracy_after,
        timeline: live.timeline.complete_entries(),
        stopped_early: stopped,
        error: None,
        notices: live.notices.clone(),
    }
}

/// A capacity search at the live concurrency and burstiness, over the plan's batch sizes
/// (`--batch-sizes` with `--sweep-batch`, else the current one). The live settings come back
/// when it is done.
fn start_search(shared: &Shared, plan: &RunPlan, slo: &Slo, setup: SearchSetup) -> Search {
    let mut live = shared.lock();
    live.after_sweep = Some((live.batch_size, live.concurrency, live.pace));
    let batch_sizes = if plan.sweep_batch {
        plan.batch_sizes.clone()
    } else {
        vec![live.batch_size.max(1)]
    };
    let concurrency = live.concurrency;
    live.timeline.event(
        Instant::now(),
        format!(
            "capacity search: {} at concurrency {concurrency}, batch {batch_sizes:?}",
            slo.describe(),
        ),
    );
    Search::new(
        SearchPlan {
            batch_sizes,
            concurrency,
            precision: setup.precision,
            stability: setup.probe.stability,
            probe: setup.probe,
        },
        slo.clone(),
    )
}

/// The phase for the search's next step: closed loop for the ceiling, open loop at the
/// probe's rate with the operator's burstiness.
fn probe_phase(shared: &Shared, plan: &RunPlan, search: &Search, step: Step) -> PhaseSpec {
    let mut live = shared.lock();
    let (batch_size, rate) = match step {
        Step::Ceiling { batch_size } => (batch_size, None),
        Step::Probe {
            batch_size,
            rate_per_s,
        } => (batch_size, Some(rate_per_s)),
    };
    live.pace.rate_per_s = rate;
    live.timeline.event(
        Instant::now(),
        match rate {
            None => format!("capacity b={batch_size}: closed-loop ceiling"),
            Some(r) => format!(
                "capacity b={batch_size}: probe at {} req/s",
                crate::text::sig3(r)
            ),
        },
    );
    live.searching = search.current().cloned();
    PhaseSpec {
        kind: PhaseKind::Capacity,
        batch_size,
        concurrency: search.plan().concurrency,
        warmup: plan.warmup,
        stop: StopAt::Stable(ProbeRule {
            throughput_only: rate.is_none(),
            ..search.plan().probe
        }),
    }
}

/// Keeps a finished (or stopped) search's answers and gives the live settings back.
fn end_search(shared: &Shared, search: Option<Search>) {
    let Some(search) = search else {
        return;
    };
    let mut live = shared.lock();
    for c in search.results() {
        live.timeline.event(
            Instant::now(),
            format!("capacity b={}: {}", c.batch_size, c.verdict),
        );
    }
    live.capacity.extend(search.results().iter().cloned());
    live.searching = None;
    if let Some((b, c, pace)) = live.after_sweep.take() {
        live.batch_size = b;
        live.concurrency = c;
        live.pace = pace;
    }
}
