//! The arrival process: when each request is meant to leave.
//!
//! Gaps are Gamma(shape = burstiness, scale = 1 / (rate · burstiness)): mean 1/rate and
//! coefficient of variation 1/√burstiness, so 1.0 is Poisson, larger is smoother and
//! `inf` is a fixed interval. An infinite rate is no arrival process at all: the run is
//! closed-loop and only the concurrency cap paces it.

use crate::ramp::Ramp;
use crate::shard::Shard;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, Gamma};
use std::sync::Arc;
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

    /// The nearest pace inside the supported ranges, and whether that changed anything: live
    /// keys multiply without bound, and a rate of 1e300 is no schedule a clock can keep.
    pub fn clamped(self) -> (Pace, bool) {
        let rate = self.rate_per_s.map(|r| {
            if r.is_nan() {
                MIN_RATE
            } else {
                r.clamp(MIN_RATE, MAX_RATE)
            }
        });
        let burstiness = if self.burstiness.is_infinite() && self.burstiness > 0.0 {
            self.burstiness
        } else if self.burstiness.is_nan() {
            1.0
        } else {
            self.burstiness.clamp(MIN_BURSTINESS, MAX_BURSTINESS)
        };
        let out = Pace {
            rate_per_s: rate,
            burstiness,
        };
        (out, out != self)
    }
}

/// Supported request rates, per second. Below one request in about 17 minutes a run is a
/// `cold-start` measurement; above a million a second no client thread can keep the schedule.
pub const MIN_RATE: f64 = 1e-3;
pub const MAX_RATE: f64 = 1e6;
/// Supported finite burstiness (Gamma shape). Below 0.01 nearly every gap is zero and a rare
/// one spans the whole run; above 1000 the gaps are a fixed interval to within 3 %, which
/// `inf` says exactly.
pub const MIN_BURSTINESS: f64 = 0.01;
pub const MAX_BURSTINESS: f64 = 1000.0;

/// Checks a rate against the supported range; the error names the range.
pub fn check_rate(r: f64) -> Result<f64, String> {
    if (MIN_RATE..=MAX_RATE).contains(&r) {
        Ok(r)
    } else {
        Err(format!(
            "must be between {MIN_RATE} and {MAX_RATE} requests per second, or inf"
        ))
    }
}

/// Checks a burstiness against the supported range (infinity is a fixed interval).
pub fn check_burstiness(b: f64) -> Result<f64, String> {
    if (MIN_BURSTINESS..=MAX_BURSTINESS).contains(&b) || b == f64::INFINITY {
        Ok(b)
    } else {
        Err(format!(
            "must be between {MIN_BURSTINESS} and {MAX_BURSTINESS}, or inf (1.0 is Poisson)"
        ))
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
    fn new(rate_per_s: f64, burstiness: f64) -> Result<Gap, String> {
        check_rate(rate_per_s).map_err(|e| format!("request rate {rate_per_s}: {e}"))?;
        check_burstiness(burstiness).map_err(|e| format!("burstiness {burstiness}: {e}"))?;
        if burstiness.is_infinite() {
            Ok(Gap::Fixed(1.0 / rate_per_s))
        } else {
            Gamma::new(burstiness, 1.0 / (rate_per_s * burstiness))
                .map(Gap::Gamma)
                .map_err(|e| format!("rate {rate_per_s}, burstiness {burstiness}: {e}"))
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
    /// Multiplier that makes the `rescaled_left` gaps after the next `skip_left` sum to
    /// exactly n / rate.
    scale: f64,
    skip_left: u64,
    rescaled_left: u64,
    /// Whether the gaps were rescaled: the schedule then ends after its last rescaled gap.
    planned: bool,
    /// Sharded (see `shard`): arrivals of the whole schedule per send of this host, and how
    /// far after the schedule's origin this host's first arrival is.
    stride: u32,
    lead: Duration,
    /// A ramp's time change (see `ramp`): gaps are then drawn at rate 1 and mapped.
    clock: Option<RampClock>,
    /// A replay's send times instead of drawn gaps (see `listed`).
    listed: Option<Listed>,
}

/// Send times given (a replay's), and which of them is the next one.
#[derive(Debug, Clone)]
struct Listed {
    at: Arc<[Duration]>,
    next: usize,
}

/// Where a ramped schedule stands: operational time (arrivals expected so far) and real time,
/// both from the first measured arrival.
#[derive(Debug, Clone)]
struct RampClock {
    ramp: Ramp,
    len_s: f64,
    tau: f64,
    t: f64,
}

impl RampClock {
    /// A drawn unit-rate gap as a real one: warmup gaps at the ramp's first rate, measured
    /// ones through Λ⁻¹.
    fn real_gap(&mut self, g: f64, warmup: bool) -> f64 {
        if warmup {
            return g / self.ramp.from;
        }
        self.tau += g;
        let t = self.ramp.time_of(self.tau, self.len_s);
        let gap = t - self.t;
        self.t = t;
        gap
    }
}

impl Arrivals {
    /// Unscaled gaps, as live and `--duration` runs draw them. A rate or burstiness outside
    /// the supported ranges is an error, never a panic.
    pub fn new(rate_per_s: f64, burstiness: f64, seed: u64) -> Result<Arrivals, String> {
        Ok(Arrivals {
            gap: Gap::new(rate_per_s, burstiness)?,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            scale: 1.0,
            skip_left: 0,
            rescaled_left: 0,
            planned: false,
            stride: 1,
            lead: Duration::ZERO,
            clock: None,
            listed: None,
        })
    }

    /// A ramp over `len` after `skip` warmup arrivals (at the ramp's first rate): its
    /// measured gaps sum to exactly the ramp's expected count in operational time, so the
    /// arrival after its last falls on its end, as a steady `--duration` phase's does.
    pub fn ramped(
        ramp: Ramp,
        len: Duration,
        burstiness: f64,
        seed: u64,
        skip: u64,
    ) -> Result<Arrivals, String> {
        check_rate(ramp.from).map_err(|e| format!("ramp from {}: {e}", ramp.from))?;
        check_rate(ramp.to).map_err(|e| format!("ramp to {}: {e}", ramp.to))?;
        let len_s = len.as_secs_f64();
        let whole = ramp.expected(len_s, len_s);
        let n = (whole.round() as u64).clamp(1, RAMP_MAX);
        let mut a = Arrivals::rescaled_after(1.0, burstiness, seed, skip, n)?;
        if a.planned {
            a.scale *= whole / n as f64;
        }
        a.clock = Some(RampClock {
            ramp,
            len_s,
            tau: 0.0,
            t: 0.0,
        });
        Ok(a)
    }

    /// Arrivals at the times given from the schedule's origin, in order: a replay's. Its
    /// gaps are exact (no float sums), and after the last the next gap is `MAX_GAP`, past
    /// any phase's end.
    pub fn listed(at: Arc<[Duration]>) -> Arrivals {
        Arrivals {
            gap: Gap::Fixed(0.0),
            rng: Xoshiro256PlusPlus::seed_from_u64(0),
            scale: 1.0,
            skip_left: 0,
            rescaled_left: 0,
            planned: true,
            stride: 1,
            // The schedule's origin is the replay's zero (the start of a recorded second),
            // not its first send.
            lead: at.first().copied().unwrap_or(MAX_GAP),
            clock: None,
            listed: Some(Listed { at, next: 0 }),
        }
    }

    /// The first `n` gaps are rescaled so they sum to exactly n / rate (vLLM's bench does
    /// the same: a plain sum of random gaps misses the target rate by 1–2 %). The sum is
    /// found by drawing the same stream twice from a cloned generator, so memory stays
    /// constant whatever `n` is.
    pub fn rescaled(
        rate_per_s: f64,
        burstiness: f64,
        seed: u64,
        n: u64,
    ) -> Result<Arrivals, String> {
        Arrivals::rescaled_after(rate_per_s, burstiness, seed, 0, n)
    }

    /// The first `skip` gaps as drawn, then `n` rescaled to sum to exactly n / rate: a
    /// `--duration` phase's measured gaps after its warmup's, so that the arrival after its
    /// last measured one falls on its end and it offers exactly rate × duration.
    pub fn rescaled_after(
        rate_per_s: f64,
        burstiness: f64,
        seed: u64,
        skip: u64,
        n: u64,
    ) -> Result<Arrivals, String> {
        let mut a = Arrivals::new(rate_per_s, burstiness, seed)?;
        if n > 0 {
            let mut probe = a.rng.clone();
            for _ in 0..skip {
                a.gap.draw(&mut probe);
            }
            let sum: f64 = (0..n).map(|_| a.gap.draw(&mut probe)).sum();
            if sum > 0.0 && sum.is_finite() {
                a.scale = (n as f64 / rate_per_s) / sum;
                (a.skip_left, a.rescaled_left, a.planned) = (skip, n, true);
            }
        }
        Ok(a)
    }

    /// Of a rescaled schedule, the arrivals of this host still to come, the next one
    /// included (0: the next one is past the schedule's end); `None` for plain draws.
    pub fn planned_left(&self) -> Option<u64> {
        if let Some(l) = &self.listed {
            let left = l.at.len().saturating_sub(l.next) as u64;
            return Some(left.div_ceil(u64::from(self.stride.max(1))));
        }
        let whole = self.skip_left + self.rescaled_left;
        self.planned
            .then(|| whole.div_ceil(u64::from(self.stride.max(1))))
    }

    fn draw(&mut self) -> f64 {
        let mut g = self.gap.draw(&mut self.rng);
        let warmup = self.skip_left > 0;
        if warmup {
            self.skip_left -= 1;
        } else if self.rescaled_left > 0 {
            g *= self.scale;
            self.rescaled_left -= 1;
        }
        match self.clock.as_mut() {
            Some(c) => c.real_gap(g, warmup),
            None => g,
        }
    }

    /// This host's part of the schedule: arrivals `shard.index`, `+ shard.count`, … The
    /// whole schedule is still drawn (every host draws the same one), so the hosts' sends
    /// together are exactly its arrivals.
    #[must_use]
    pub fn sharded(mut self, shard: Shard) -> Arrivals {
        if let Some(l) = self.listed.as_mut() {
            let i = shard.index as usize;
            l.next = i.min(l.at.len());
            self.lead = l.at.get(i).copied().unwrap_or(MAX_GAP);
            self.stride = shard.count.max(1);
            return self;
        }
        let lead: f64 = (0..shard.index).map(|_| self.draw()).sum();
        self.lead = to_gap(lead);
        self.stride = shard.count.max(1);
        self
    }

    /// A ramp's rate at its latest arrival (`None` without a ramp).
    pub fn ramp_rate(&self) -> Option<f64> {
        self.clock.as_ref().map(|c| c.ramp.rate_at(c.t, c.len_s))
    }

    /// How long after the schedule's origin this host sends its first request (zero
    /// unsharded: the first arrival is the origin).
    pub fn first_offset(&self) -> Duration {
        self.lead
    }

    pub fn next_gap(&mut self) -> Duration {
        if let Some(l) = self.listed.as_mut() {
            let from = l.next;
            l.next = (from + self.stride.max(1) as usize).min(l.at.len());
            return match (l.at.get(from), l.at.get(l.next)) {
                (Some(a), Some(b)) if l.next > from => b.saturating_sub(*a),
                _ => MAX_GAP,
            };
        }
        let mut g = 0.0;
        for _ in 0..self.stride {
            g += self.draw();
        }
        to_gap(g)
    }
}

/// A ramp's measured arrivals are drawn twice up front, as a rescaled schedule's are.
const RAMP_MAX: u64 = 100_000_000;

/// A Gamma draw at a small shape can be huge; no schedule waits longer than `MAX_GAP`.
fn to_gap(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs.max(0.0)).map_or(MAX_GAP, |d| d.min(MAX_GAP))
}

/// The longest gap between two sends: a year, far past any run, and still a valid deadline.
pub const MAX_GAP: Duration = Duration::from_hours(365 * 24);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_schedule_rescales_its_measured_gaps_alone() {
        // 3 warmup gaps as drawn, then 100 that sum to exactly 100 / 50 s.
        let mut a = Arrivals::rescaled_after(50.0, 1.0, 7, 3, 100).unwrap();
        assert_eq!(a.planned_left(), Some(103));
        let warmup: f64 = (0..3).map(|_| a.next_gap().as_secs_f64()).sum();
        let plain = Arrivals::new(50.0, 1.0, 7).unwrap();
        let drawn: f64 = {
            let mut p = plain;
            (0..3).map(|_| p.next_gap().as_secs_f64()).sum()
        };
        assert!((warmup - drawn).abs() < 1e-9, "{warmup} {drawn}");
        let measured: f64 = (0..100).map(|_| a.next_gap().as_secs_f64()).sum();
        assert!((measured - 2.0).abs() < 1e-6, "{measured}");
        assert_eq!(a.planned_left(), Some(0));
        assert_eq!(Arrivals::new(50.0, 1.0, 7).unwrap().planned_left(), None);
    }

    fn stats(gaps: &[f64]) -> (f64, f64) {
        let n = gaps.len() as f64;
        let mean = gaps.iter().sum::<f64>() / n;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt() / mean)
    }

    #[test]
    fn gamma_gaps_have_mean_one_over_rate_and_cv_one_over_sqrt_burstiness() {
        for (rate, b) in [(100.0, 1.0), (50.0, 0.25), (200.0, 4.0), (10.0, 0.5)] {
            let mut a = Arrivals::new(rate, b, 42).unwrap();
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
    fn a_ramp_sends_its_expected_count_at_the_rate_of_each_instant() {
        use crate::ramp::RampShape;
        for shape in [RampShape::Linear, RampShape::Exp] {
            let ramp = Ramp {
                from: 20.0,
                to: 400.0,
                shape,
            };
            let len = Duration::from_secs(30);
            let mut a = Arrivals::ramped(ramp, len, 1.0, 11, 3).unwrap();
            let warm: f64 = (0..3).map(|_| a.next_gap().as_secs_f64()).sum();
            assert!(warm < 1.0, "3 warmup gaps at 20/s: {warm}");
            let n = a.planned_left().unwrap();
            let mut t = 0.0;
            let mut at = vec![0.0];
            for _ in 0..n {
                t += a.next_gap().as_secs_f64();
                at.push(t);
            }
            let end = at.pop().unwrap();
            assert!(
                (end - 30.0).abs() < 1e-6,
                "{shape:?}: the arrival after the last at {end}"
            );
            let want = ramp.expected(30.0, 30.0);
            assert!(
                (at.len() as f64 - want).abs() <= 1.0,
                "{shape:?}: {} of {want}",
                at.len()
            );
            // Each 5 s span holds what the ramp expects in it, within Poisson noise.
            for k in 0..6 {
                let (lo, hi) = (f64::from(k) * 5.0, f64::from(k) * 5.0 + 5.0);
                let got = at.iter().filter(|&&x| x >= lo && x < hi).count() as f64;
                let exp = ramp.expected(hi, 30.0) - ramp.expected(lo, 30.0);
                assert!(
                    (got - exp).abs() < 4.0 * exp.sqrt() + 2.0,
                    "{shape:?} [{lo},{hi}): {got} vs {exp}"
                );
            }
        }
    }

    #[test]
    fn listed_arrivals_keep_the_times_given_and_end_after_the_last() {
        let ms = |v: &[u64]| -> Arc<[Duration]> {
            v.iter().map(|&m| Duration::from_millis(m)).collect()
        };
        let mut a = Arrivals::listed(ms(&[0, 5, 5, 20]));
        assert_eq!(
            (a.first_offset(), a.planned_left()),
            (Duration::ZERO, Some(4))
        );
        let gaps: Vec<Duration> = (0..3).map(|_| a.next_gap()).collect();
        assert_eq!(gaps, [5, 0, 15].map(Duration::from_millis));
        assert_eq!(a.planned_left(), Some(1));
        assert_eq!(a.next_gap(), MAX_GAP);
        assert_eq!(a.planned_left(), Some(0));
        // Host 1 of 2 sends the second and the fourth.
        let mut b = Arrivals::listed(ms(&[0, 5, 5, 20])).sharded(Shard { index: 1, count: 2 });
        assert_eq!(
            (b.first_offset(), b.planned_left()),
            (Duration::from_millis(5), Some(2))
        );
        assert_eq!(b.next_gap(), Duration::from_millis(15));
        assert_eq!(b.next_gap(), MAX_GAP);
        // The first send need not be at the origin.
        assert_eq!(
            Arrivals::listed(ms(&[7, 9])).first_offset(),
            Duration::from_millis(7)
        );
    }

    #[test]
    fn infinite_burstiness_is_a_fixed_interval() {
        let mut a = Arrivals::new(50.0, f64::INFINITY, 1).unwrap();
        for _ in 0..100 {
            assert_eq!(a.next_gap(), Duration::from_millis(20));
        }
    }

    #[test]
    fn fixed_count_runs_hit_the_rate_exactly() {
        let mut a = Arrivals::rescaled(100.0, 1.0, 7, 500).unwrap();
        let total: f64 = (0..500).map(|_| a.next_gap().as_secs_f64()).sum();
        assert!((total - 5.0).abs() < 1e-6, "sum of gaps {total}");
        // After the rescaled stretch the stream carries on unscaled.
        let mut plain = Arrivals::new(100.0, 1.0, 7).unwrap();
        let unscaled: f64 = (0..500).map(|_| plain.next_gap().as_secs_f64()).sum();
        assert!(
            (unscaled - 5.0).abs() > 1e-6,
            "the unscaled sum should miss a little"
        );
    }

    #[test]
    fn same_seed_same_schedule() {
        let mut a = Arrivals::new(100.0, 0.5, 3).unwrap();
        let mut b = Arrivals::new(100.0, 0.5, 3).unwrap();
        for _ in 0..1000 {
            assert_eq!(a.next_gap(), b.next_gap());
        }
    }

    #[test]
    fn shards_of_one_schedule_interleave_into_it_exactly() {
        let whole: Vec<Duration> = {
            let mut a = Arrivals::rescaled(400.0, 0.25, 9, 1000).unwrap();
            let mut t = Duration::ZERO;
            let mut at = vec![t];
            for _ in 1..1000 {
                t += a.next_gap();
                at.push(t);
            }
            at
        };
        let mut sent = 0;
        for index in 0..4 {
            let shard = Shard { index, count: 4 };
            let mut a = Arrivals::rescaled(400.0, 0.25, 9, 1000)
                .unwrap()
                .sharded(shard);
            let mut t = a.first_offset();
            for k in 0..shard.share(1000) {
                if k > 0 {
                    t += a.next_gap();
                }
                // Host `index`'s k-th send is arrival index + 4k of the whole schedule.
                let want = whole[(u64::from(index) + 4 * k) as usize];
                assert!(
                    t.abs_diff(want) < Duration::from_micros(1),
                    "host {index} send {k}: {t:?} vs {want:?}"
                );
                sent += 1;
            }
        }
        assert_eq!(sent, whole.len());
    }

    fn any_f64() -> impl proptest::strategy::Strategy<Value = f64> {
        use proptest::prelude::*;
        prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(0.0),
            Just(-0.0),
            Just(f64::MIN_POSITIVE),
            Just(f64::MAX),
            any::<f64>(),
            (-30.0f64..30.0).prop_map(|e| 10f64.powf(e)),
        ]
    }

    proptest::proptest! {
        /// Whatever numbers reach it, the arrival process refuses them or yields gaps: it never
        /// panics, and what it yields is a usable deadline.
        #[test]
        fn any_rate_and_burstiness_is_an_error_or_a_schedule(
            rate in any_f64(), b in any_f64(), seed in 0u64..1000, n in 0u64..50,
        ) {
            for a in [Arrivals::new(rate, b, seed), Arrivals::rescaled(rate, b, seed, n)] {
                match a {
                    Ok(mut a) => {
                        proptest::prop_assert!(check_rate(rate).is_ok() && check_burstiness(b).is_ok());
                        for _ in 0..n + 3 {
                            proptest::prop_assert!(a.next_gap() <= MAX_GAP);
                        }
                    }
                    Err(e) => proptest::prop_assert!(!e.is_empty()),
                }
            }
            // And the clamp always lands on a pace the process accepts.
            let (p, _) = Pace { rate_per_s: Some(rate), burstiness: b }.clamped();
            proptest::prop_assert!(Arrivals::new(p.rate_per_s.unwrap(), p.burstiness, seed).is_ok());
        }
    }
}
