//! The run's state as the dispatcher, the request tasks and the snapshot tick share it: the
//! live figures behind one lock (`Live`), and beside it what is read without the lock.

use super::closed;
use super::hosts::Hosts;
use super::limiter::Limiter;
use super::settings::EngineSpec;
use super::snapshot::{LiveStats, PhaseView, RunState, ScheduleStatus, Snapshot};
use crate::accuracy;
use encbench_core::arrival::Pace;
use encbench_core::input::Shape;
use encbench_core::plan::PhaseKind;
use encbench_core::reach::{ConnectFailure, Reach};
use encbench_core::results::PhaseResult;
use encbench_core::results::capacity::Capacity;
use encbench_core::server_metrics::{Reading, ServerMetrics};
use encbench_core::slo::Slo;
use encbench_core::stats::{
    Completion, LatencySummary, PhaseRecorder, Timeline, overloaded, queue_lag, view_histogram,
};
use encbench_core::verdicts::AccuracyReport;
use encbench_wire::client::{ErrorKind, Failure};
use hdrhistogram::Histogram;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The endpoint answered: if it was lost, the timeline says it is back.
fn hear_answer(live: &mut Live, at: Instant) {
    if let Some(span) = live.reach.answered(at)
        && let Some(line) = span.back_line()
    {
        live.timeline.event(at, line);
    }
}

/// Connecting failed: if that makes the endpoint lost, the timeline says since when.
fn hear_unconnected(live: &mut Live, at: Instant, why: ConnectFailure) {
    if let Some(span) = live.reach.unconnected(at, why) {
        live.timeline.event(at, span.lost_line());
    }
}

/// Timeline points kept in snapshots: enough for sparklines across a wide terminal.
const TAIL_POINTS: usize = 300;

/// Mutable run state shared by the dispatcher, request tasks and the snapshot tick.
pub(super) struct Live {
    pub(super) state: RunState,
    pub(super) pace: Pace,
    pub(super) concurrency: usize,
    /// `--concurrency` was given, or the operator set the cap: without, it follows the pace
    /// (`plan::default_cap`).
    pub(super) concurrency_given: bool,
    pub(super) batch_size: usize,
    pub(super) phase: Option<PhaseView>,
    /// Bumped at every phase start and reset; completions of an older generation are only
    /// counted in the timeline.
    pub(super) generation: u64,
    pub(super) recorder: PhaseRecorder,
    pub(super) run_latency: Histogram<u64>,
    /// Measured requests that failed since the start or the last reset (beside
    /// `run_latency`, which holds the successful ones).
    pub(super) run_errors: u64,
    pub(super) timeline: Timeline,
    pub(super) results: Arc<Vec<PhaseResult>>,
    /// `results` as the screen shows them: each repeated phase pooled so far (the same
    /// list without `--repeat`), made once per phase end rather than once per frame.
    pub(super) shown: Arc<Vec<PhaseResult>>,
    pub(super) accuracy_before: Option<AccuracyReport>,
    pub(super) accuracy_latest: Option<AccuracyReport>,
    pub(super) accuracy_running: bool,
    /// Where `i` returns to when leaving closed loop.
    pub(super) last_finite_rate: Option<f64>,
    /// The live phase's batch size, concurrency and pace, restored after a sweep.
    pub(super) after_sweep: Option<(usize, usize, Pace)>,
    /// When the current phase began, for how its schedule lag compares with its length.
    pub(super) phase_started: Instant,
    /// Finished capacity searches, one entry per batch size.
    pub(super) capacity: Vec<Capacity>,
    /// The batch size being searched, as it stands.
    pub(super) searching: Option<Capacity>,
    /// What could not be measured and why, each said once.
    pub(super) notices: Vec<String>,
    /// Error kinds whose server's words are among the notices already.
    pub(super) kinds_said: BTreeSet<String>,
    /// The common start (`--start-at`) while this host waits for it.
    pub(super) start_at: Option<Instant>,
    /// The metrics endpoint as the running phase began, and the phase since (see
    /// `server_side`).
    pub(super) phase_scrape: Option<Reading>,
    pub(super) server_so_far: Option<ServerMetrics>,
    /// Whether the endpoint can be reached, from every request's outcome.
    pub(super) reach: Reach,
}

pub(super) struct Shared {
    pub(super) live: Mutex<Live>,
    pub(super) limiter: Arc<Limiter>,
    pub(super) sent: closed::Tickets,
    /// The open loop's next intended send, as nanoseconds after `started` plus one (0: none,
    /// a closed loop). Written at every send, so an atomic rather than the lock.
    pub(super) due: AtomicU64,
    pub(super) started: Instant,
    pub(super) target_name: String,
    /// The invocation as errors name it (`POST /embed`), for the hint of a 404.
    pub(super) route: Option<String>,
    pub(super) shape: Shape,
    pub(super) slo: Slo,
    /// The hourly price: derived figures of phases pooled over their repetitions.
    pub(super) price_per_hour: Option<f64>,
    /// The accuracy check under way: outside the lock, which a verdict must not wait for.
    pub(super) accuracy_progress: accuracy::Progress,
    pub(super) hosts: Hosts,
    /// `--slice`: each phase's recorder cuts it into slices this long.
    pub(super) slice: Option<Duration>,
    /// A ramp's rate at its latest send, as f64 bits (0: no ramp under way). Written at
    /// every send, so an atomic rather than the lock, like `due`.
    ramp_rate: AtomicU64,
    /// Measured requests of the phase that a closed-loop slot holds, or gave up, because no
    /// connection could be made: taken (in `sent`) but never sent.
    undelivered: AtomicU64,
    /// How long a closed loop waits for a lost endpoint before the run stops.
    endpoint_wait: Duration,
    /// A closed loop waited that long: the run stops.
    gave_up: AtomicBool,
}

/// What a request's outcome says of whether anyone is there (see `reach`).
#[derive(Debug, Clone, Copy)]
pub(super) enum Heard {
    /// A reply with a status, whatever it said.
    Answered,
    /// No connection could be made.
    Unconnected(ConnectFailure),
    /// Neither: cut on the way, timed out, or never sent.
    Nothing,
}

impl Heard {
    pub(super) fn of(failure: Option<&Failure>) -> Heard {
        match failure {
            None => Heard::Answered,
            Some(f) => match f.unconnected {
                Some(why) => Heard::Unconnected(why),
                None if f.answered() => Heard::Answered,
                None => Heard::Nothing,
            },
        }
    }
}

impl Shared {
    pub(super) fn new(setup: &EngineSpec, hosts: Hosts, started: Instant) -> Shared {
        Shared {
            live: Mutex::new(Live {
                state: RunState::Starting,
                pace: setup.pace,
                concurrency: setup.plan.concurrency,
                concurrency_given: setup.plan.concurrency_given,
                batch_size: setup.plan.batch_size,
                phase: None,
                generation: 0,
                recorder: PhaseRecorder::default(),
                run_latency: view_histogram(),
                run_errors: 0,
                timeline: Timeline::new(started, setup.window_s),
                results: Arc::new(Vec::new()),
                shown: Arc::new(Vec::new()),
                accuracy_before: None,
                accuracy_latest: None,
                accuracy_running: false,
                last_finite_rate: setup.pace.rate_per_s,
                after_sweep: None,
                phase_started: started,
                capacity: Vec::new(),
                searching: None,
                notices: Vec::new(),
                kinds_said: BTreeSet::new(),
                start_at: None,
                phase_scrape: None,
                server_so_far: None,
                reach: Reach::new(started),
            }),
            limiter: Limiter::new(setup.plan.concurrency),
            sent: closed::Tickets::new(),
            due: AtomicU64::new(0),
            started,
            target_name: setup.target.describe(),
            route: setup.target.route(),
            shape: setup.shape,
            slo: setup.slo.clone(),
            price_per_hour: setup.price_per_hour,
            accuracy_progress: accuracy::Progress::default(),
            hosts,
            slice: setup.slice,
            ramp_rate: AtomicU64::new(0),
            undelivered: AtomicU64::new(0),
            endpoint_wait: setup.endpoint_wait,
            gave_up: AtomicBool::new(false),
        }
    }
    /// The phases as a report gives them: each repeated phase pooled (`results::repeat`).
    pub(super) fn pooled(&self, phases: &[PhaseResult]) -> Vec<PhaseResult> {
        encbench_core::results::repeat::pool(phases, &self.slo, self.price_per_hour)
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Live> {
        // A panic in a request task must not take the measurements with it.
        self.live
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records `c`, and what it said of the endpoint; a measured request of the current
    /// phase under `--slice` returns its slice.
    pub(super) fn record(&self, c: &Completion, generation: u64, heard: Heard) -> Option<usize> {
        let mut live = self.lock();
        match heard {
            Heard::Answered => hear_answer(&mut live, c.done),
            Heard::Unconnected(why) => hear_unconnected(&mut live, c.sent, why),
            Heard::Nothing => {}
        }
        // Once a run per kind, as it happens: why the server refused is what a user needs
        // first, not at the end of the run. Checked before the words are made.
        if let Some(kind) = &c.error
            && !live.kinds_said.contains(kind)
        {
            let words = c
                .said
                .as_deref()
                .and_then(encbench_core::text::server_words);
            // A route that does not exist is said as such, words or not (TEI's 404 has none).
            let no_route = self
                .route
                .as_deref()
                .filter(|_| encbench_core::text::is_no_route(kind))
                .map(encbench_core::text::no_route);
            if words.is_some() || no_route.is_some() {
                live.kinds_said.insert(kind.clone());
            }
            if let Some(words) = words {
                live.notices
                    .push(format!("{kind}: the server said {words}"));
            }
            if let Some(hint) = no_route {
                live.notices.push(format!("{kind}: {hint}"));
            }
        }
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
        let slices = live
            .recorder
            .slices
            .as_ref()
            .filter(|_| current && c.measured);
        slices.and_then(|s| s.slice_of(c.intended))
    }

    /// A closed loop's attempt to connect failed: not a measured request, but evidence.
    pub(super) fn attempt_failed(&self, at: Instant, why: ConnectFailure) {
        hear_unconnected(&mut self.lock(), at, why);
    }

    /// A slot holds a measured request it could not send (`true`), or sends it after all.
    pub(super) fn hold(&self, held: bool) {
        if held {
            self.undelivered.fetch_add(1, Ordering::AcqRel);
        } else {
            let _ = (self.undelivered)
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        }
    }

    /// Measured requests of the phase taken and never sent: none reached the server.
    pub(super) fn undelivered(&self) -> u64 {
        self.undelivered.load(Ordering::Acquire)
    }

    /// A new phase: nothing taken, nothing held.
    pub(super) fn clear_sent(&self) {
        self.sent.clear();
        self.undelivered.store(0, Ordering::Release);
    }

    /// Whether a closed loop has waited long enough for its lost endpoint: the first slot
    /// to find so says it, and the run stops (see `dispatch`).
    pub(super) fn give_up_on_endpoint(&self, now: Instant) -> bool {
        if self.gave_up() {
            return true;
        }
        let mut live = self.lock();
        let live_phase = live
            .phase
            .as_ref()
            .is_some_and(|p| p.kind == PhaseKind::Live);
        let Some(since) = live.reach.lost_since() else {
            return false;
        };
        // The live screen's operator sees the endpoint lost, and decides.
        if live_phase || now.saturating_duration_since(since) < self.endpoint_wait {
            return false;
        }
        if !self.gave_up.swap(true, Ordering::AcqRel) {
            let text = format!(
                "the endpoint has not answered for {:.0} s (--timeout): the run stops",
                now.saturating_duration_since(since).as_secs_f64()
            );
            live.timeline.event(now, text.clone());
            live.notices.push(text);
        }
        true
    }

    pub(super) fn gave_up(&self) -> bool {
        self.gave_up.load(Ordering::Acquire)
    }

    pub(super) fn set_due(&self, at: Option<Instant>) {
        let v = at.map_or(0, |t| {
            t.saturating_duration_since(self.started).as_nanos() as u64 + 1
        });
        self.due.store(v, Ordering::Release);
    }

    /// Measuring began with a request due `at`: slice 0 starts there.
    pub(super) fn slices_start(&self, at: Instant) {
        if self.slice.is_some()
            && let Some(s) = self.lock().recorder.slices.as_mut()
        {
            s.start(at);
        }
    }

    pub(super) fn set_ramp_rate(&self, rate: Option<f64>) {
        self.ramp_rate
            .store(rate.map_or(0, f64::to_bits), Ordering::Release);
    }

    /// The pace as it stands: under a ramp, its rate now rather than the one it began at.
    pub(super) fn pace_now(&self, live: &Live) -> Pace {
        match self.ramp_rate.load(Ordering::Acquire) {
            0 => live.pace,
            bits => Pace {
                rate_per_s: Some(f64::from_bits(bits)),
                ..live.pace
            },
        }
    }

    pub(super) fn due(&self) -> Option<Instant> {
        match self.due.load(Ordering::Acquire) {
            0 => None,
            v => Some(self.started + Duration::from_nanos(v - 1)),
        }
    }

    /// The server's queue lag now (see `stats::queue_lag`), in an open loop; before anything
    /// completed, every request has been in flight since the phase began, which is its
    /// latency so far. Measured requests that timed out count as still waiting.
    pub(super) fn queue_lag(&self, live: &Live, now: Instant) -> Duration {
        let Some(rate) = self.hosts.pace(self.pace_now(live)).rate_per_s else {
            return Duration::ZERO;
        };
        let scheduled = &live.recorder.scheduled;
        let mean = if scheduled.is_empty() {
            now.saturating_duration_since(live.phase_started)
        } else {
            Duration::from_secs_f64(scheduled.mean() / 1e6)
        };
        // A request that timed out was not completed either: the client stopped waiting for
        // it, and a server that sheds its backlog by timeouts is as far behind.
        let timed_out = live.recorder.errors.get(&ErrorKind::Timeout.key());
        let waiting = self.limiter.in_flight() as u64 + timed_out.copied().unwrap_or(0);
        queue_lag(waiting, rate, mean)
    }

    pub(super) fn event(&self, text: impl Into<String>) {
        self.lock().timeline.event(Instant::now(), text);
    }

    pub(super) fn snapshot(&self) -> Snapshot {
        let now = Instant::now();
        let mut live = self.lock();
        live.timeline.roll(now);
        let rec = &live.recorder;
        let current = LiveStats {
            n: rec.completed(),
            ok: rec.ok,
            errors: rec.errors.clone(),
            said: rec.said.clone(),
            latency: LatencySummary::of(&rec.scheduled),
            service: LatencySummary::of(&rec.service),
            dispatch_delay: LatencySummary::of(&rec.dispatch_delay),
            tokenize: (!rec.tokenize.is_empty()).then(|| LatencySummary::of(&rec.tokenize)),
            req_per_s: rec.req_per_s(),
            samples_per_s: rec.samples_per_s(),
            slo: None,
            server: live.server_so_far.clone(),
            server_time: rec.server_time.as_ref().map(|r| r.summary()),
        };
        let entries = &live.timeline.entries;
        let tail = entries[entries.len().saturating_sub(TAIL_POINTS)..].to_vec();
        let mut phase = live.phase.clone();
        if let Some(p) = phase.as_mut() {
            p.sent = self.sent.count().saturating_sub(self.undelivered());
        }
        let host_pace = self.hosts.pace(self.pace_now(&live));
        let schedule = match (host_pace.rate_per_s, self.due()) {
            (Some(rate), Some(due)) if live.state == RunState::Running => {
                let lag = now.saturating_duration_since(due);
                let queue_lag = self.queue_lag(&live, now);
                Some(ScheduleStatus {
                    offered_per_s: rate,
                    backlog: if lag.is_zero() {
                        0
                    } else {
                        1 + (lag.as_secs_f64() * rate) as u64
                    },
                    lag,
                    queued: (queue_lag.as_secs_f64() * rate).round() as u64,
                    queue_lag,
                    overloaded: overloaded(
                        lag.max(queue_lag),
                        now.saturating_duration_since(live.phase_started),
                    ),
                })
            }
            _ => None,
        };
        let mut current = current;
        if !self.slo.is_empty() && rec.completed() > 0 {
            current.slo = Some(self.slo.judge(&encbench_core::slo::Measured {
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
            pace: self.pace_now(&live),
            concurrency: live.concurrency,
            concurrency_default: !live.concurrency_given,
            batch_size: live.batch_size,
            in_flight: self.limiter.in_flight(),
            schedule,
            phase,
            current,
            recent_latency: live.timeline.recent(),
            run_latency: live.run_latency.clone(),
            run_errors: live.run_errors,
            timeline_tail: tail,
            phases: live.shown.clone(),
            accuracy_before: live.accuracy_before.clone(),
            accuracy_latest: live.accuracy_latest.clone(),
            accuracy_running: live.accuracy_running,
            accuracy_progress: self.accuracy_progress.get(),
            capacity: live.capacity.clone(),
            searching: live.searching.clone(),
            notices: live.notices.clone(),
            starts_in: live.start_at.map(|t| t.saturating_duration_since(now)),
            endpoint_lost: live.reach.spans().to_vec(),
        }
    }
}
