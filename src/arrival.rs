//! The arrival process: when each request is meant to leave.
//!
//! Gaps are Gamma(shape = burstiness, scale = 1 / (rate · burstiness)): mean 1/rate and
//! coefficient of variation 1/√burstiness, so 1.0 is Poisson, larger is smoother and
//! `inf` is a fixed interval. An infinite rate is no arrival process at all: the run is
//! closed-loop and only the concurrency cap paces it.

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, Gamma};
use std::time::Duration;

/// How requests are paced. `rate_per_s == None` means closed loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    pub rate_per_s: Option<f64>,
    pub burstiness: f64,
}

impl Pace {
    pub fn is_closed_loop(&self) -> bool {
        self.rate_per_s.is_none()
    }
}

/// The seed of phase `index` (1-based) of a run seeded `run_seed`; `salt` counts the live
/// pace changes within the phase. Public so tests can rebuild a run's exact schedule.
pub fn phase_seed(run_seed: u64, index: usize, salt: u64) -> u64 {
    run_seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt
}

#[derive(Debug, Clone)]
enum Gap {
    Fixed(f64),
    Gamma(Gamma<f64>),
}

impl Gap {
    fn new(rate_per_s: f64, burstiness: f64) -> Gap {
        if burstiness.is_infinite() {
            Gap::Fixed(1.0 / rate_per_s)
        } else {
            // Both parameters are validated positive at the CLI, so this cannot fail.
            Gap::Gamma(Gamma::new(burstiness, 1.0 / (rate_per_s * burstiness)).expect("gamma"))
        }
    }

    fn draw(&self, rng: &mut Xoshiro256PlusPlus) -> f64 {
        match self {
            Gap::Fixed(g) => *g,
            Gap::Gamma(d) => d.sample(rng),
        }
    }
}

/// An endless (or, for fixed-count runs, rescaled) stream of gaps between intended sends.
#[derive(Debug, Clone)]
pub struct Arrivals {
    gap: Gap,
    rng: Xoshiro256PlusPlus,
    /// Multiplier that makes the next `rescaled_left` gaps sum to exactly n / rate.
    scale: f64,
    rescaled_left: u64,
}

impl Arrivals {
    /// Unscaled gaps, as live and `--duration` runs draw them.
    pub fn new(rate_per_s: f64, burstiness: f64, seed: u64) -> Arrivals {
        Arrivals {
            gap: Gap::new(rate_per_s, burstiness),
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            scale: 1.0,
            rescaled_left: 0,
        }
    }

    /// The first `n` gaps are rescaled so they sum to exactly n / rate (vLLM's bench does
    /// the same: a plain sum of random gaps misses the target rate by 1–2 %). The sum is
    /// found by drawing the same stream twice from a cloned generator, so memory stays
    /// constant whatever `n` is.
    pub fn rescaled(rate_per_s: f64, burstiness: f64, seed: u64, n: u64) -> Arrivals {
        let mut a = Arrivals::new(rate_per_s, burstiness, seed);
        if n > 0 {
            let mut probe = a.rng.clone();
            let sum: f64 = (0..n).map(|_| a.gap.draw(&mut probe)).sum();
            if sum > 0.0 {
                a.scale = (n as f64 / rate_per_s) / sum;
                a.rescaled_left = n;
            }
        }
        a
    }

    pub fn next_gap(&mut self) -> Duration {
        let mut g = self.gap.draw(&mut self.rng);
        if self.rescaled_left > 0 {
            g *= self.scale;
            self.rescaled_left -= 1;
        }
        Duration::from_secs_f64(g.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(gaps: &[f64]) -> (f64, f64) {
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt() / mean)
    }

    #[test]
    fn gamma_gaps_have_mean_one_over_rate_and_cv_one_over_sqrt_burstiness() {
        for (rate, b) in [(100.0, 1.0), (50.0, 0.25), (200.0, 4.0), (10.0, 0.5)] {
            let mut a = Arrivals::new(rate, b, 42);
            let gaps: Vec<f64> = (0..200_000).map(|_| a.next_gap().as_secs_f64()).collect();
            let (mean, cv) = stats(&gaps);
            let want_cv = 1.0 / f64::sqrt(b);
            assert!(
                (mean * rate - 1.0).abs() < 0.01,
                "rate {rate} b {b}: mean {mean}"
            );
            assert!(
                (cv / want_cv - 1.0).abs() < 0.02,
                "rate {rate} b {b}: cv {cv} want {want_cv}"
            );
        }
    }

    #[test]
    fn infinite_burstiness_is_a_fixed_interval() {
        let mut a = Arrivals::new(50.0, f64::INFINITY, 1);
        for _ in 0..100 {
            assert_eq!(a.next_gap(), Duration::from_millis(20));
        }
    }

    #[test]
    fn fixed_count_runs_hit_the_rate_exactly() {
        let mut a = Arrivals::rescaled(100.0, 1.0, 7, 500);
        let total: f64 = (0..500).map(|_| a.next_gap().as_secs_f64()).sum();
        assert!((total - 5.0).abs() < 1e-6, "sum of gaps {total}");
        // After the rescaled stretch the stream carries on unscaled.
        let mut plain = Arrivals::new(100.0, 1.0, 7);
        let unscaled: f64 = (0..500).map(|_| plain.next_gap().as_secs_f64()).sum();
        assert!(
            (unscaled - 5.0).abs() > 1e-6,
            "the unscaled sum should miss a little"
        );
    }

    #[test]
    fn same_seed_same_schedule() {
        let mut a = Arrivals::new(100.0, 0.5, 3);
        let mut b = Arrivals::new(100.0, 0.5, 3);
        for _ in 0..1000 {
            assert_eq!(a.next_gap(), b.next_gap());
        }
    }
}
