//! When a phase that runs until stable ends (capacity probes, `--until-stable`), and why:
//! stable, its time bound, its most requests, or a schedule or a queue falling ever further
//! behind.

use super::closed::Progress;
use super::shared::Shared;
use encbench_core::plan::ProbeRule;
use encbench_core::stats::overloaded;
use std::time::{Duration, Instant};

/// How often a phase that runs until stable is checked: often enough that it ends within a
/// fraction of a second of being stable, rarely enough that the check costs nothing.
const STABLE_CHECK_EVERY: Duration = Duration::from_millis(250);

/// Decides when a phase that runs until stable ends, and why.
pub(super) struct ProbeWatch {
    rule: ProbeRule,
    next_check: Instant,
    /// Time spent paused, which the time bound does not count.
    pub(super) paused: Duration,
}

impl ProbeWatch {
    pub(super) fn new(rule: ProbeRule) -> ProbeWatch {
        ProbeWatch {
            rule,
            next_check: Instant::now(),
            paused: Duration::ZERO,
        }
    }

    /// `Ok(when to look again)`, or `Err(why the phase ends now)`.
    pub(super) fn check(
        &mut self,
        shared: &Shared,
        progress: &Progress,
    ) -> Result<Instant, &'static str> {
        let now = Instant::now();
        let Some(start) = progress.measure_start() else {
            return Ok(now + STABLE_CHECK_EVERY);
        };
        let bound = start + self.rule.max + self.paused;
        if now >= bound {
            return Err("time");
        }
        if now >= self.next_check {
            self.next_check = now + STABLE_CHECK_EVERY;
            // A schedule (or the server's queue) falling ever further behind will not become
            // stable: it fails now. A capacity probe is judged so only past a quarter of its
            // requests: early on, one busy spell of a queue that keeps up reads as a lag over
            // 5 % of a short span (an M/M/1 at 58 req/s, its answer 54, failed as overloaded
            // after 45 and 178 of its 10,000 requests), and an early end on what the figures
            // look like is the bias a fixed size avoids, on the side of "missed".
            let live = shared.lock();
            let judged = self
                .rule
                .requests
                .is_none_or(|n| live.recorder.completed() >= n / 4);
            if let Some(due) = shared.due().filter(|_| judged) {
                let lag = now.saturating_duration_since(due);
                if overloaded(
                    lag.max(shared.queue_lag(&live, now)),
                    now.saturating_duration_since(start),
                ) {
                    return Err("overloaded");
                }
            }
            if let Some(p) = live.recorder.probe.as_ref() {
                if p.full() {
                    return Err("max_requests");
                }
                // A capacity probe's size is fixed before it starts: it ends at its count
                // (the dispatcher's) or its time bound, never because it looks settled.
                if self.rule.requests.is_none()
                    && p.stable(
                        self.rule.min_requests,
                        self.rule.stability,
                        self.rule.throughput_only,
                    )
                {
                    return Err("stable");
                }
            }
        }
        Ok(self.next_check.min(bound))
    }
}
