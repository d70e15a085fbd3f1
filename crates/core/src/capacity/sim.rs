//! A seeded M/M/c endpoint for the search's tests, as `serve --service-dist exp --replicas K`
//! plays it: K independent copies of an M/M/c queue, each request routed to one at random,
//! every probe starting from empty queues. Its latencies have a queue's autocorrelation
//! (a busy period makes a run of late requests), which independent draws would not.

use super::{Search, Step};
use crate::plan::PhaseKind;
use crate::results::PhaseResult;
use crate::slo::Slo;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp};

#[derive(Debug, Clone, Copy)]
pub(super) struct Endpoint {
    /// Each worker's service rate, per second.
    pub mu: f64,
    pub workers: usize,
    pub replicas: usize,
    /// What the closed-loop ceiling measures (on a real machine, below the replicas' own).
    pub ceiling: f64,
    pub warmup: u64,
    pub requests: u64,
}

impl Endpoint {
    /// The rate at which P(sojourn > t) = 1 − q: queueing theory's answer to `pq=t`.
    pub fn theory(&self, q: f64, t_s: f64) -> f64 {
        let c = self.workers;
        let (mut lo, mut hi) = (0.0, c as f64 * self.mu * (1.0 - 1e-9));
        for _ in 0..200 {
            let mid = f64::midpoint(lo, hi);
            if mmc_tail(mid, self.mu, c, t_s) <= 1.0 - q {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo * self.replicas as f64
    }

    /// One probe at `rate` (all replicas), judged against `slo`; with its length in
    /// seconds of simulated time.
    pub fn probe(
        &self,
        rate: f64,
        slo: &Slo,
        rng: &mut rand::rngs::Xoshiro256PlusPlus,
    ) -> (PhaseResult, f64) {
        let mut free = vec![vec![0.0f64; self.workers]; self.replicas];
        let (gap, service) = (Exp::new(rate).unwrap(), Exp::new(self.mu).unwrap());
        let mut h = crate::stats::phase_histogram();
        let mut t = 0.0;
        for i in 0..self.warmup + self.requests {
            t += gap.sample(rng);
            let replica = &mut free[rng.random_range(0..self.replicas)];
            let (w, &at) = replica
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .unwrap();
            let done = at.max(t) + service.sample(rng);
            replica[w] = done;
            if i >= self.warmup {
                h.record(((done - t) * 1e6).max(1.0) as u64).unwrap();
            }
        }
        let mut r = crate::fixtures::phase_row(PhaseKind::Capacity, 1, 256, rate, 0.0, 0.0, None);
        r.n = self.requests;
        r.sent = self.requests;
        r.ok = self.requests;
        r.latency_ms = crate::stats::LatencySummary::of(&h);
        r.histogram_hdr_b64 = crate::results::encode_histogram(&h);
        r.judge(slo, &h);
        r.stable = Some(true);
        r.stop_reason = Some("stable".into());
        (r, t)
    }

    /// A whole search, seeded: the answer, and the probes' simulated seconds.
    pub fn search(&self, search: &mut Search, slo: &Slo, seed: u64) -> f64 {
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut secs = 0.0;
        let mut steps = 0;
        while let Some(step) = search.next_step() {
            steps += 1;
            assert!(steps < 40, "the search does not end");
            let r = match step {
                Step::Ceiling { .. } => {
                    let mut r = crate::fixtures::phase_row(
                        PhaseKind::Capacity,
                        1,
                        256,
                        self.ceiling,
                        1.0,
                        1.0,
                        None,
                    );
                    r.n = 1000;
                    r.ok = 1000;
                    r
                }
                Step::Probe { rate_per_s, .. } => {
                    let (r, s) = self.probe(rate_per_s, slo, &mut rng);
                    secs += s;
                    r
                }
            };
            search.record(&r);
        }
        secs
    }
}

/// P(sojourn > t) in an M/M/c queue (Erlang C for the wait, plus the exponential service).
fn mmc_tail(lambda: f64, mu: f64, c: usize, t: f64) -> f64 {
    let a = lambda / mu;
    let cf = c as f64;
    let rho = a / cf;
    let (mut term, mut sum) = (1.0, 0.0);
    for k in 0..c {
        if k > 0 {
            term *= a / k as f64;
        }
        sum += term;
    }
    let last = term * a / cf / (1.0 - rho);
    let erlang_c = last / (sum + last);
    let g = cf * mu - lambda;
    if (g - mu).abs() < 1e-9 {
        return (-mu * t).exp() * (1.0 + erlang_c * mu * t);
    }
    (-mu * t).exp() + erlang_c * mu / (g - mu) * ((-mu * t).exp() - (-g * t).exp())
}
