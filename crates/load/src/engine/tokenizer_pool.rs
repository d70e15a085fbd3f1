//! Client-side tokenizing (`--engine triton`) on threads of its own, below the request
//! path's priority.
//!
//! Tokenizing a batch of 8 takes about a millisecond of CPU. On tokio's blocking pool every
//! request in flight got a thread of the same priority as the dispatcher's, so the dispatcher
//! woke to find both cores taken and sent late: the client distorting its own clock. Here a
//! fixed set of workers, one per core, run under `SCHED_IDLE`, which Linux preempts the moment
//! any ordinary thread wakes (a nice value is not enough: the EEVDF scheduler lets a running
//! thread finish its slice, about 1.5 ms on two cores, whatever its nice value). What
//! tokenizing cannot keep up with waits in the queue; that wait is the client's own, so it
//! stays inside the request's scheduled latency, and `tokenize_ms` stays the encoding itself.
//!
//! `SCHED_IDLE` also yields to every other process: beside a busy server or a build it got
//! almost no CPU (at 100 req/s, half the requests tokenized, the rest waited a second). So a
//! job that waited `STARVED` for a worker runs at ordinary priority, sharing the cores
//! fairly; the worker goes back under `SCHED_IDLE` at the next job that did not wait. Our
//! own saturation (1,300 req/s of batch 8 on two cores) kept waits well under it.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// A job queued this long was starved by other processes, not held back by our own load.
const STARVED: Duration = Duration::from_millis(100);

struct Job {
    queued: Instant,
    run: Box<dyn FnOnce() + Send>,
}

/// The process-wide workers: targets and formats outlive one engine in `compare`.
static POOL: OnceLock<Sender<Job>> = OnceLock::new();

fn pool() -> &'static Sender<Job> {
    POOL.get_or_init(|| {
        let (tx, rx) = channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let workers = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        for i in 0..workers {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("encbench-tokenize-{i}"))
                .spawn(move || work(&rx))
                .expect("a tokenizer thread");
        }
        tx
    })
}

/// Puts the calling thread under `SCHED_IDLE` (`idle`) or back under the ordinary policy;
/// where `SCHED_IDLE` is refused, nice 19 stands in for it.
#[cfg(target_os = "linux")]
#[allow(
    unsafe_code,
    reason = "no safe wrapper offers SCHED_IDLE; the call only reads `param`"
)]
fn set_idle(idle: bool) {
    let param = libc::sched_param { sched_priority: 0 };
    let policy = if idle {
        libc::SCHED_IDLE
    } else {
        libc::SCHED_OTHER
    };
    // SAFETY: `param` is a valid sched_param for the duration of the call; pid 0 is the
    // calling thread.
    let set = unsafe { libc::sched_setscheduler(0, policy, &raw const param) } == 0;
    // The nice value, too, belongs to the calling thread on Linux.
    let _ = rustix::process::setpriority_process(None, if idle && !set { 19 } else { 0 });
}

#[cfg(not(target_os = "linux"))]
fn set_idle(_idle: bool) {}

fn work(jobs: &Mutex<Receiver<Job>>) {
    let mut idle = true;
    set_idle(idle);
    loop {
        let job = jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recv();
        let Ok(job) = job else { return };
        let starved = job.queued.elapsed() >= STARVED;
        if starved == idle {
            idle = !starved;
            set_idle(idle);
        }
        // A panicking job drops its reply sender, which its request counts as a client
        // panic; the worker goes on.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(job.run));
    }
}

/// Runs `f` on a tokenizer thread; `None` if it panicked.
pub(crate) async fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job = Job {
        queued: Instant::now(),
        run: Box::new(move || {
            let _ = tx.send(f());
        }),
    };
    pool().send(job).ok()?;
    rx.await.ok()
}

#[cfg(test)]
mod tests {
    /// The calling thread's scheduling policy: 0 ordinary, 5 `SCHED_IDLE`.
    fn policy() -> String {
        let sched = std::fs::read_to_string("/proc/thread-self/sched").unwrap();
        sched
            .lines()
            .find(|l| l.starts_with("policy"))
            .and_then(|l| l.split(':').nth(1))
            .map(|p| p.trim().to_owned())
            .unwrap()
    }

    // One test, not several: the workers are process-wide, and a test that keeps them busy
    // would starve another's jobs.
    #[tokio::test(flavor = "current_thread")]
    async fn jobs_run_idle_unless_starved_and_a_panic_is_none() {
        let (name, idle) =
            super::run(|| (std::thread::current().name().map(str::to_owned), policy()))
                .await
                .unwrap();
        assert!(name.unwrap().starts_with("encbench-tokenize-"));
        assert_eq!(idle, "5", "SCHED_IDLE");
        assert_eq!(super::run(|| -> u32 { panic!("boom") }).await, None);
        assert_eq!(super::run(|| 7).await, Some(7), "the pool survives a panic");

        // Every worker busy for longer than STARVED: the job behind them waited that long.
        let workers = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let busy: Vec<_> = (0..workers)
            .map(|_| {
                tokio::spawn(super::run(|| {
                    std::thread::sleep(super::STARVED + super::STARVED / 2);
                }))
            })
            .collect();
        // The busy jobs are queued first: a spawned task sends its job when first polled.
        tokio::task::yield_now().await;
        let starved = super::run(policy).await;
        for b in busy {
            b.await.unwrap().unwrap();
        }
        assert_eq!(
            starved.unwrap(),
            "0",
            "a starved job runs at ordinary priority"
        );
        assert_eq!(
            super::run(policy).await.unwrap(),
            "5",
            "and the next one idle again"
        );
    }
}
