//! A seeded endpoint for the search's tests, as `serve --service-dist exp|fixed --workers c
//! --queue shared --replicas K` plays it: K independent copies of an M/M/c or M/D/c queue
//! (first come first served, the earliest free worker), each request routed to one at
//! random, every probe starting from empty queues. Its latencies have a queue's
//! autocorrelation (a busy period makes a run of late requests), which independent draws
//! would not. A probe ends as the engine ends it: at its requests, or at its time bound in
//! simulated seconds.

use super::{Search, Step};
use crate::plan::PhaseKind;
use crate::results::PhaseResult;
use crate::slo::Slo;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Exp};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Service {
    /// Exponential, mean 1/μ.
    Exp,
    /// Every request 1/μ.
    Fixed,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Endpoint {
    /// Each worker's service rate, per second.
    pub mu: f64,
    pub workers: usize,
    pub replicas: usize,
    pub service: Service,
    /// What the closed-loop ceiling measures (on a real machine, below the replicas' own).
    pub ceiling: f64,
    pub warmup: u64,
}

/// How a simulated probe ends: at this many measured requests, or `max_s` after measuring
/// began.
#[derive(Debug, Clone, Copy)]
pub(super) enum Stop {
    Requests { n: u64, max_s: f64 },
}

impl Endpoint {
    /// The rate at which P(sojourn > t) = 1 − q: queueing theory's answer to `pq=t`.
    pub fn theory(&self, q: f64, t_s: f64) -> f64 {
        let one = match self.service {
            Service::Exp => super::theory::mmc_capacity(self.mu, self.workers, q, t_s),
            Service::Fixed => {
                assert_eq!(self.workers, 1, "M/D/1 only");
                super::theory::md1_capacity(1.0 / self.mu, q, t_s)
            }
        };
        one * self.replicas as f64
    }

    /// One probe at `rate` (all replicas), judged against `slo`; with its measured span in
    /// seconds of simulated time.
    pub fn probe(
        &self,
        rate: f64,
        stop: Stop,
        slo: &Slo,
        rng: &mut rand::rngs::Xoshiro256PlusPlus,
    ) -> (PhaseResult, f64) {
        let mut free = vec![vec![0.0f64; self.workers]; self.replicas];
        let (gap, service) = (Exp::new(rate).unwrap(), Exp::new(self.mu).unwrap());
        let Stop::Requests { n: n_max, max_s } = stop;
        // (intended send, latency in µs) of the measured requests.
        let mut samples: Vec<(f64, u32)> = Vec::new();
        let mut t = 0.0;
        let mut start = None;
        let mut reason = "count";
        for i in 0.. {
            t += gap.sample(rng);
            let replica = &mut free[rng.random_range(0..self.replicas)];
            let (w, &at) = replica
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .unwrap();
            let s = match self.service {
                Service::Exp => service.sample(rng),
                Service::Fixed => 1.0 / self.mu,
            };
            let done = at.max(t) + s;
            replica[w] = done;
            if i < self.warmup {
                continue;
            }
            let begun = *start.get_or_insert(t);
            if t - begun > max_s {
                reason = "time";
                break;
            }
            samples.push((t, ((done - t) * 1e6).max(1.0) as u32));
            if samples.len() as u64 >= n_max {
                break;
            }
        }
        let begun = start.unwrap_or(0.0);
        let span = samples.last().map_or(0.0, |s| s.0 - begun);
        let mut h = crate::stats::phase_histogram();
        for s in &samples {
            h.record(u64::from(s.1)).unwrap();
        }
        let n = samples.len() as u64;
        let mut r = crate::fixtures::phase_row(PhaseKind::Capacity, 1, 256, rate, 0.0, 0.0, None);
        r.n = n;
        r.sent = n;
        r.ok = n;
        r.latency_ms = crate::stats::LatencySummary::of(&h);
        r.histogram_hdr_b64 = crate::results::encode_histogram(&h);
        r.judge(slo, &h);
        let latencies: Vec<u32> = samples.iter().map(|s| s.1).collect();
        r.quantile_noise = Some(crate::stats::QuantileNoise::of_samples(&latencies, &h));
        r.stable = Some(false);
        r.stop_reason = Some(reason.into());
        (r, span)
    }

    /// A whole search, seeded, its probes ended by `stop` (given the probe's planned
    /// requests, where the search plans them): the probes' simulated seconds.
    pub fn search(
        &self,
        search: &mut Search,
        slo: &Slo,
        seed: u64,
        stop: impl Fn(u64) -> Stop,
    ) -> f64 {
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
                Step::Probe {
                    rate_per_s,
                    requests,
                    ..
                } => {
                    let (r, s) = self.probe(rate_per_s, stop(requests), slo, &mut rng);
                    secs += s;
                    r
                }
            };
            search.record(&r);
        }
        secs
    }
}

/// M/D/1's closed form against a long simulation of its queue.
#[test]
fn md1_closed_form_is_its_own_simulation() {
    // The p99 crossing of a long simulation at the answer.
    let e = Endpoint {
        mu: 100.0,
        workers: 1,
        replicas: 1,
        service: Service::Fixed,
        ceiling: 100.0,
        warmup: 1000,
    };
    let want = e.theory(0.99, 0.1);
    let slo = Slo {
        objectives: vec!["p99=100ms".parse().unwrap()],
    };
    let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(5);
    let stop = Stop::Requests {
        n: 2_000_000,
        max_s: 1e9,
    };
    let (r, _) = e.probe(want, stop, &slo, &mut rng);
    assert!(
        (r.latency_ms.p99 / 100.0 - 1.0).abs() < 0.03,
        "{want} {r:?}"
    );
}
