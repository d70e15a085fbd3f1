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

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

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

/// Puts the calling thread under `SCHED_IDLE`, or at nice 19 where that is refused.
#[cfg(target_os = "linux")]
#[allow(
    unsafe_code,
    reason = "no safe wrapper offers SCHED_IDLE; the call only reads `param`"
)]
fn lowest_priority() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param for the duration of the call; pid 0 is the
    // calling thread.
    let idle = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &raw const param) } == 0;
    if !idle {
        // The nice value, too, belongs to the calling thread on Linux.
        let _ = rustix::process::setpriority_process(None, 19);
    }
}

#[cfg(not(target_os = "linux"))]
fn lowest_priority() {}

fn work(jobs: &Mutex<Receiver<Job>>) {
    lowest_priority();
    loop {
        let job = jobs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recv();
        let Ok(job) = job else { return };
        // A panicking job drops its reply sender, which its request counts as a client
        // panic; the worker goes on.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
    }
}

/// Runs `f` on a tokenizer thread; `None` if it panicked.
pub(crate) async fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    pool().send(job).ok()?;
    rx.await.ok()
}

#[cfg(test)]
mod tests {
    #[tokio::test(flavor = "current_thread")]
    async fn jobs_run_on_low_priority_workers_and_a_panic_is_none() {
        let (name, policy) = super::run(|| {
            (
                std::thread::current().name().map(str::to_owned),
                std::fs::read_to_string("/proc/thread-self/sched").unwrap(),
            )
        })
        .await
        .unwrap();
        assert!(name.unwrap().starts_with("encbench-tokenize-"));
        let policy: Vec<&str> = policy
            .lines()
            .filter(|l| l.starts_with("policy"))
            .filter_map(|l| l.split(':').nth(1))
            .map(str::trim)
            .collect();
        assert_eq!(policy, ["5"], "SCHED_IDLE is policy 5");
        assert_eq!(super::run(|| -> u32 { panic!("boom") }).await, None);
        assert_eq!(super::run(|| 7).await, Some(7), "the pool survives a panic");
    }
}
