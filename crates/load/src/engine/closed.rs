//! The closed loop: one slot per unit of concurrency, each sending its next request as soon
//! as its last one is recorded, the slots spread over the client threads.
//!
//! Why not the dispatcher: a closed loop has no schedule to keep, only a count and a cap.
//! Routing every request through the dispatcher cost a task spawn and a wake-up per request,
//! and with client threads beside the engine's two cross-thread wake-ups (the hand-off and the freed
//! slot): at concurrency 16 on loopback two threads were slower than one. A slot keeps a
//! request, its connection and the next request on one thread.
//!
//! The dispatcher still owns the phase. It starts a set of slots; on any command it stops
//! the set (each slot finishes the request it has in flight) and starts a new one if the
//! phase is still closed loop. The count, the warmup and the measured start live in
//! `Progress`, shared with the open-loop path, so changing sets never changes what is
//! measured.

use super::client_threads::ClientThreads;
use super::limiter::Limiter;
use super::request::{Requester, Sent, Ticket};
use super::shared::Shared;
use encbench_core::plan::{PhaseSpec, StopAt};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// A phase's count and measured start, whoever sends its requests.
pub(crate) struct Progress {
    /// Warmup plus measured requests of a counted phase.
    limit: Option<u64>,
    warmup: u64,
    duration: Option<Duration>,
    /// Nanoseconds from `base` to the measured start, plus one; 0 while unset. Atomic
    /// because every slot reads it before every request of a `--duration` phase.
    measure_start: AtomicU64,
    /// When the first slot that had sent a request found nothing more to send, encoded as
    /// `measure_start`: the moment the next measured request would have gone out.
    refused: AtomicU64,
    base: Instant,
}

impl Progress {
    pub fn new(spec: &PhaseSpec) -> Progress {
        Progress {
            limit: match spec.stop {
                StopAt::Count(n) => Some(spec.warmup + n),
                _ => None,
            },
            warmup: spec.warmup,
            duration: match spec.stop {
                StopAt::Duration(d) => Some(d),
                _ => None,
            },
            measure_start: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            base: Instant::now(),
        }
    }

    /// Takes the next request number, unless the phase's count is used up.
    pub fn claim(&self, tickets: &Tickets) -> Option<Claim> {
        tickets.claim(self.limit)
    }

    /// Marks when measuring began, at the first measured request.
    pub fn started(&self, idx: u64, intended: Instant) {
        if idx == self.warmup {
            let at = intended.saturating_duration_since(self.base).as_nanos() as u64 + 1;
            let _ = self
                .measure_start
                .compare_exchange(0, at, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    pub fn measure_start(&self) -> Option<Instant> {
        self.decode(self.measure_start.load(Ordering::Acquire))
    }

    fn decode(&self, at: u64) -> Option<Instant> {
        (at > 0).then(|| self.base + Duration::from_nanos(at - 1))
    }

    /// A slot that has sent found the phase used up (or the phase ending): in a closed loop
    /// this is when the request after the last measured one would have been sent.
    fn refused(&self, at: Instant) {
        let at = at.saturating_duration_since(self.base).as_nanos() as u64 + 1;
        let _ = self
            .refused
            .compare_exchange(0, at, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The end of the closed loop's full pipeline: from the first measured send to here, every
    /// slot was busy, so the measured requests sent in between over this span is the
    /// throughput, unbiased at any count and concurrency (see `PhaseRecorder::req_per_s`).
    pub fn pipeline_end(&self) -> Option<Instant> {
        self.decode(self.refused.load(Ordering::Acquire))
    }

    /// Statistics were reset: measuring begins again at the next request.
    pub fn restart(&self) {
        self.measure_start.store(0, Ordering::Release);
    }

    /// The end of a `--duration` phase, once measuring has begun.
    pub fn end(&self) -> Option<Instant> {
        let duration = self.duration?;
        Some(self.measure_start()? + duration)
    }
}

/// Requests sent in the current phase, warmup included, with the number of statistics resets
/// in the phase packed above the count. A slot takes its number and learns which reset it
/// belongs to in one atomic step, so a request taken just before a reset is not counted
/// afresh, and one taken just after is not dropped as belonging to the old statistics.
pub(crate) struct Tickets(AtomicU64);

const COUNT_BITS: u32 = 40;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// One request's number in its phase, and the resets before it.
pub(crate) struct Claim {
    pub idx: u64,
    pub resets: u64,
}

impl Tickets {
    pub fn new() -> Tickets {
        Tickets(AtomicU64::new(0))
    }

    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Acquire) & COUNT_MASK
    }

    /// A new phase: nothing sent, no resets.
    pub fn clear(&self) {
        self.0.store(0, Ordering::Release);
    }

    fn claim(&self, limit: Option<u64>) -> Option<Claim> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| match limit {
                Some(limit) if v & COUNT_MASK >= limit => None,
                _ => Some(v + 1),
            })
            .ok()
            .map(|v| Claim {
                idx: v & COUNT_MASK,
                resets: v >> COUNT_BITS,
            })
    }

    /// Statistics were reset: the count restarts after the warmup (a warmup under way
    /// carries on).
    pub fn reset(&self, warmup: u64) {
        let _ = self
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| {
                let resets = (v >> COUNT_BITS) + 1;
                Some((resets << COUNT_BITS) | (v & COUNT_MASK).min(warmup))
            });
    }
}

/// One set of slots.
pub(crate) struct Slots {
    stopped: AtomicBool,
    /// Wakes the slots that pause for an endpoint they cannot reach, when the set stops.
    woken: Notify,
    /// The phase ends with this set (a stop or a sweep), rather than a fresh set replacing it.
    last: AtomicBool,
    running: AtomicUsize,
    exited: Notify,
}

/// Starts `concurrency` slots whose requests count in the phase's first `generation` (plus
/// the resets since).
pub(crate) fn start(
    threads: &ClientThreads,
    requester: &Arc<Requester>,
    progress: &Arc<Progress>,
    generation: u64,
    concurrency: usize,
) -> Arc<Slots> {
    let slots = Arc::new(Slots {
        stopped: AtomicBool::new(false),
        woken: Notify::new(),
        last: AtomicBool::new(false),
        running: AtomicUsize::new(concurrency),
        exited: Notify::new(),
    });
    for s in 0..concurrency {
        let run = slot(
            slots.clone(),
            requester.clone(),
            progress.clone(),
            generation,
        );
        threads.spawn(s as u64, concurrency, run);
    }
    slots
}

impl Slots {
    /// Sends nothing more; requests in flight finish and are recorded. `last`: the phase
    /// ends here, so the first slot to come free marks the end of the full pipeline.
    pub fn stop(&self, limiter: &Limiter, last: bool) {
        self.last.store(last, Ordering::Release);
        self.stopped.store(true, Ordering::Release);
        limiter.wake_all();
        self.woken.notify_waiters();
    }

    /// Waits until every slot has left: the count or the duration is used up.
    pub async fn finished(&self) {
        loop {
            let exited = self.exited.notified();
            tokio::pin!(exited);
            exited.as_mut().enable();
            if self.running.load(Ordering::Acquire) == 0 {
                return;
            }
            exited.await;
        }
    }
}

/// Counts a slot out however it leaves, unwinding included, so the dispatcher never waits
/// for a slot that is gone.
struct Leave(Arc<Slots>);

impl Drop for Leave {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.exited.notify_waiters();
        }
    }
}

async fn slot(
    slots: Arc<Slots>,
    requester: Arc<Requester>,
    progress: Arc<Progress>,
    generation: u64,
) {
    let _leave = Leave(slots.clone());
    let shared = requester.shared.clone();
    let limiter = shared.limiter.clone();
    let stopped = || slots.stopped.load(Ordering::Acquire) || shared.gave_up();
    // A slot's first claim comes at the start, not when a slot frees: it marks no pipeline end.
    let mut has_sent = false;
    let refuse = |has_sent: bool| {
        if has_sent {
            progress.refused(Instant::now());
        }
    };
    let mut backoff = Backoff::new();
    loop {
        let Some(mut permit) = limiter.acquire_unless(stopped).await else {
            refuse(has_sent && slots.last.load(Ordering::Acquire));
            return;
        };
        let now = Instant::now();
        if progress.end().is_some_and(|end| now >= end) {
            refuse(has_sent);
            return;
        }
        let Some(claim) = progress.claim(&shared.sent) else {
            refuse(has_sent);
            return;
        };
        has_sent = true;
        progress.started(claim.idx, now);
        if claim.idx == progress.warmup {
            shared.slices_start(now);
        }
        let mut ticket = Ticket {
            idx: claim.idx,
            intended: now,
            measured: claim.idx >= progress.warmup,
            generation: generation + claim.resets,
        };
        // The same request again after each pause, until it connects or the slot must go.
        loop {
            match requester.clone().send_or_hand_back(ticket, permit).await {
                Sent::Recorded => {
                    backoff = Backoff::new();
                    break;
                }
                Sent::Unconnected(t, p) => {
                    // Taken but not sent: a measured request held here is in no count
                    // until it goes, and in none at all if the slot leaves with it.
                    if t.measured {
                        shared.hold(true);
                    }
                    if !pause(backoff.next(), &slots, &progress, &shared).await {
                        let stopped = slots.stopped.load(Ordering::Acquire);
                        refuse(!stopped || slots.last.load(Ordering::Acquire));
                        return;
                    }
                    if t.measured {
                        shared.hold(false);
                    }
                    // A closed loop's request is due when its slot sends it: the pause was
                    // the client's, not the server's time.
                    ticket = Ticket {
                        intended: Instant::now(),
                        ..t
                    };
                    permit = p;
                }
            }
        }
    }
}

/// A slot's pauses while connecting fails: exponential from about 10 ms to 1 s, so a
/// dead server costs a few attempts a second per slot rather than a storm of them (27,000 a
/// second at concurrency 4 on loopback without it), and a server back after a restart is
/// found within a second.
struct Backoff {
    next: Duration,
}

const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

impl Backoff {
    fn new() -> Backoff {
        Backoff { next: FIRST_PAUSE }
    }

    /// The next pause, spread by ±25 % so that slots refused together do not try together.
    fn next(&mut self) -> Duration {
        let pause = self.next;
        self.next = (pause * 2).min(LONGEST_PAUSE);
        pause.mul_f64(0.75 + 0.5 * rand::random::<f64>())
    }
}

/// Waits out a pause; `false` when the slot must leave instead: its set stopped, the
/// phase's time is up, or the endpoint has been gone longer than a request would wait.
async fn pause(wait: Duration, slots: &Slots, progress: &Progress, shared: &Shared) -> bool {
    let mut until = Instant::now() + wait;
    if let Some(end) = progress.end() {
        until = until.min(end);
    }
    let woken = slots.woken.notified();
    tokio::pin!(woken);
    woken.as_mut().enable();
    if slots.stopped.load(Ordering::Acquire) {
        return false;
    }
    tokio::select! {
        () = tokio::time::sleep_until(until.into()) => {}
        () = woken => return false,
    }
    let now = Instant::now();
    !(slots.stopped.load(Ordering::Acquire)
        || progress.end().is_some_and(|end| now >= end)
        || shared.give_up_on_endpoint(now))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_from_10_ms_to_1_s() {
        let mut b = Backoff::new();
        let pauses: Vec<Duration> = (0..10).map(|_| b.next()).collect();
        let nominal = [10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000];
        for (p, ms) in pauses.iter().zip(nominal) {
            let ms = Duration::from_millis(ms);
            assert!(
                *p >= ms.mul_f64(0.75) && *p <= ms.mul_f64(1.25),
                "{p:?} for {ms:?}"
            );
        }
    }

    #[test]
    fn a_reset_restarts_the_count_and_marks_later_claims_in_the_same_step() {
        let t = Tickets::new();
        let taken: Vec<u64> = (0..5).map(|_| t.claim(None).unwrap().idx).collect();
        assert_eq!(taken, [0, 1, 2, 3, 4]);
        t.reset(3);
        assert_eq!(t.count(), 3);
        let c = t.claim(Some(4)).unwrap();
        assert_eq!((c.idx, c.resets), (3, 1));
        assert!(t.claim(Some(4)).is_none(), "the count is used up");
        assert_eq!(t.count(), 4);
        // A reset during the warmup leaves the warmup under way.
        t.clear();
        t.claim(None);
        t.reset(3);
        t.reset(3);
        let c = t.claim(None).unwrap();
        assert_eq!((c.idx, c.resets), (1, 2));
    }
}
