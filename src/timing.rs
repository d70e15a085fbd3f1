//! Sleeping to a deadline with sub-millisecond accuracy.
//!
//! tokio's timer wheel has 1 ms granularity, so a 10 ms sleep often takes 11 ms. Both the
//! dispatcher (intended send times) and the reference endpoint (known service times) need
//! about 0.1 ms, or the known-answer tests drift by several percent. We sleep coarsely on
//! tokio until shortly before the deadline, then finish on a blocking thread whose
//! `nanosleep` lands within tens of microseconds. Nothing spins, so the load generator and
//! the simulated endpoint do not steal each other's cores.

use std::time::{Duration, Instant};

/// Slack left for the precise phase; larger than tokio's tick so the coarse sleep never
/// overshoots the deadline.
const COARSE_SLACK: Duration = Duration::from_micros(2_000);
/// Below this the cost of handing off to a blocking thread exceeds the error we would fix.
const NOT_WORTH_IT: Duration = Duration::from_micros(40);

pub async fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline <= now {
        return;
    }
    if deadline - now > COARSE_SLACK {
        tokio::time::sleep_until((deadline - COARSE_SLACK).into()).await;
    }
    if deadline.saturating_duration_since(Instant::now()) > NOT_WORTH_IT {
        // Computed inside the closure: the hand-off itself takes a few microseconds.
        let _ = tokio::task::spawn_blocking(move || {
            std::thread::sleep(deadline.saturating_duration_since(Instant::now()))
        })
        .await;
    }
}

/// Linux lets each thread's timed waits end up to 50 µs late by default (timer slack, to
/// batch wake-ups for power saving). A load generator wants its wake-ups on time; call this
/// on every runtime thread (`on_thread_start`).
pub fn tighten_timer_slack() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and only affects the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

pub async fn sleep(d: Duration) {
    sleep_until(Instant::now() + d).await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn median_overshoot(precise: bool) -> Duration {
        let mut over = Vec::new();
        for _ in 0..15 {
            let start = Instant::now();
            if precise {
                sleep(Duration::from_millis(5)).await;
            } else {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            assert!(start.elapsed() >= Duration::from_millis(5), "woke early");
            over.push(start.elapsed() - Duration::from_millis(5));
        }
        over.sort();
        over[over.len() / 2]
    }

    // Side by side in one run, so a busy machine slows both alike.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lands_closer_to_the_deadline_than_tokio_alone() {
        let ours = median_overshoot(true).await;
        let tokio_alone = median_overshoot(false).await;
        assert!(ours < tokio_alone, "ours {ours:?} vs tokio {tokio_alone:?}");
        assert!(ours < Duration::from_millis(1), "ours {ours:?}");
    }
}
