//! Container workers: each serves one request at a time, requests are handed out
//! round-robin (as a front process does), and each worker loads the model on its first
//! request, one worker after another. That sequential loading is what a real endpoint showed
//! (4 workers, warmup 3: p99 1,611 ms; warmup 20: 20.4 ms): with too short a warmup, model
//! loads land inside the measurement.

//!
//! Service is timed by deadlines, not durations: a worker starts its next request at the
//! later of that request's arrival and its previous deadline, so the hand-off between
//! requests costs no simulated time and the known answers hold to about 0.1 ms.

use encbench_wire::timing;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, MutexGuard};

struct Worker {
    /// tokio's Mutex queues waiters in FIFO order, like a worker's request queue. It holds
    /// the deadline of the worker's last request.
    busy: Mutex<Option<Instant>>,
    loaded: AtomicBool,
    /// Set once a load has been started in the background (SageMaker API path).
    load_started: AtomicBool,
}

/// How requests wait for a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Queue {
    /// Each worker has its own queue, requests dealt out round-robin (multi-model-server's
    /// front process): with Poisson arrivals each worker sees Erlang-distributed gaps.
    #[default]
    PerWorker,
    /// One queue for all workers, served by whichever comes free first (a Triton instance
    /// group, a `TorchServe` job queue): with exponential service an M/M/c queue.
    Shared,
}

impl encbench_core::choice::Choice for Queue {
    const ALL: &'static [Queue] = &[Queue::PerWorker, Queue::Shared];

    fn name(self) -> &'static str {
        match self {
            Queue::PerWorker => "per-worker",
            Queue::Shared => "shared",
        }
    }
}

encbench_core::parse_by_name!(Queue);

pub struct Workers {
    each: Vec<Worker>,
    next: AtomicUsize,
    queue: Queue,
    /// One permit per worker: the shared queue, FIFO like tokio's semaphore.
    pool: tokio::sync::Semaphore,
    /// Only one worker loads at a time.
    loading: Mutex<()>,
    load_time: Duration,
}

pub struct Slot<'a> {
    // Dropped before the permit: once another request holds the permit, a worker is free.
    busy: MutexGuard<'a, Option<Instant>>,
    start: Instant,
    _permit: Option<tokio::sync::SemaphorePermit<'a>>,
}

impl Slot<'_> {
    /// When service of this request begins (or began).
    pub fn start(&self) -> Instant {
        self.start
    }

    /// Serves for `service` from the slot's start; returns when done.
    pub async fn serve(&mut self, service: Duration) {
        let deadline = self.start + service;
        timing::sleep_until(deadline).await;
        *self.busy = Some(deadline);
    }

    /// A stall froze the worker before it started: service begins now.
    pub fn restart(mut self) -> Self {
        self.start = Instant::now();
        self
    }

    /// The worker was held up past its deadline (a stall): it is free only from now.
    pub fn held_until_now(&mut self) {
        *self.busy = Some(Instant::now());
    }
}

impl Workers {
    pub fn new(count: usize, load_time: Duration, queue: Queue) -> Workers {
        let loaded = load_time.is_zero();
        Workers {
            queue,
            pool: tokio::sync::Semaphore::new(count.max(1)),
            each: (0..count.max(1))
                .map(|_| Worker {
                    busy: Mutex::new(None),
                    loaded: AtomicBool::new(loaded),
                    load_started: AtomicBool::new(loaded),
                })
                .collect(),
            next: AtomicUsize::new(0),
            loading: Mutex::new(()),
            load_time,
        }
    }

    /// Queues a request that arrived at `arrived` at the next worker in turn; returns once
    /// the worker is free and its model is loaded.
    pub async fn acquire(&self, arrived: Instant) -> Slot<'_> {
        let (w, busy, permit) = match self.queue {
            Queue::PerWorker => {
                let i = self.next.fetch_add(1, Ordering::Relaxed) % self.each.len();
                let w = &self.each[i];
                (w, w.busy.lock().await, None)
            }
            Queue::Shared => {
                let permit = self.pool.acquire().await.expect("the pool is never closed");
                let (w, busy) = self.earliest_free().await;
                (w, busy, Some(permit))
            }
        };
        let mut start = match *busy {
            Some(prev) => prev.max(arrived),
            None => arrived,
        };
        if !w.loaded.load(Ordering::Acquire) {
            w.load_started.store(true, Ordering::Release);
            let _one_at_a_time = self.loading.lock().await;
            // A background load (SageMaker path) may have finished while we queued.
            if !w.loaded.load(Ordering::Acquire) {
                timing::sleep(self.load_time).await;
                w.loaded.store(true, Ordering::Release);
            }
            start = Instant::now();
        }
        Slot {
            busy,
            start,
            _permit: permit,
        }
    }

    /// With a permit in hand some worker is idle: the one free the longest, so a request
    /// starts at the earliest deadline, as in an M/M/c queue. The count can run ahead of the
    /// workers: a request cancelled while its worker loads gives its permit back before its
    /// worker, and the suite once found no worker free under load (M/M/4 ×8 replicas). Then
    /// this waits its turn instead of trusting the count.
    async fn earliest_free(&self) -> (&Worker, MutexGuard<'_, Option<Instant>>) {
        loop {
            let mut best: Option<(&Worker, MutexGuard<'_, Option<Instant>>)> = None;
            for w in &self.each {
                if let Ok(g) = w.busy.try_lock() {
                    let earlier = match &best {
                        None => true,
                        Some((_, b)) => g.unwrap_or(Instant::now()) < b.unwrap_or(Instant::now()),
                    };
                    if earlier {
                        best = Some((w, g));
                    }
                }
            }
            if let Some(found) = best {
                return found;
            }
            tokio::task::yield_now().await;
        }
    }

    /// Like `acquire`, but a worker whose model is not loaded yet starts loading in the
    /// background and the request is refused (SageMaker answers `ModelNotReadyException`).
    pub async fn try_acquire(self: &Arc<Self>, arrived: Instant) -> Option<Slot<'_>> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.each.len();
        let w = &self.each[i];
        if !w.loaded.load(Ordering::Acquire) {
            if !w.load_started.swap(true, Ordering::AcqRel) {
                let me = self.clone();
                tokio::spawn(async move {
                    let w = &me.each[i];
                    let _one_at_a_time = me.loading.lock().await;
                    timing::sleep(me.load_time).await;
                    w.loaded.store(true, Ordering::Release);
                });
            }
            return None;
        }
        let busy = w.busy.lock().await;
        let start = busy.map_or(arrived, |prev| prev.max(arrived));
        Some(Slot {
            busy,
            start,
            _permit: None,
        })
    }

    pub fn loading(&self) -> bool {
        self.each.iter().any(|w| !w.loaded.load(Ordering::Acquire))
    }
}
