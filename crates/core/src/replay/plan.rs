//! A replay's schedule: each record's send time relative to the first record's, divided by
//! the speed, each record sent `scale` times. Data Capture's whole-second times say only
//! which second a request came in: that second's requests are spread within it by the
//! seeded arrival process (Poisson), so each second keeps its exact count.

use super::read::Trace;
use super::{Body, MAX_REPLAY_REQUESTS, TraceFormat};
use crate::arrival::{Arrivals, MAX_RATE};
use std::sync::Arc;
use std::time::Duration;

/// `--replay-speed` and `--replay-scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Speed {
    /// 2 plays the recording in half its time.
    pub speed: f64,
    /// Sends per record: a capture sampled at 20 % replays at 5.
    pub scale: u32,
}

/// A trace's phase ends one mean gap between its records after its last (as a timed
/// phase's schedule has its next arrival on its end): a send due at a phase's end belongs to
/// none, and a client a moment late with the last one must not count it unsent. At least
/// this, in the recording's seconds; a single record's phase lasts a second.
const MIN_AFTER_LAST_S: f64 = 0.001;

/// A replay planned: what each record sends, and when each request is due.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayPlan {
    pub format: TraceFormat,
    /// A body per record, in file order.
    pub bodies: Vec<Body>,
    /// Each request's intended send time from the phase's start, in order; the first is 0.
    pub at: Arc<[Duration]>,
    /// The record each request sends (an index into `bodies`).
    pub record_of: Vec<u32>,
    /// The phase's length: to the end of the last recorded second, or one mean gap past
    /// the last send of a trace.
    pub span: Duration,
    /// The recording's span, in its own seconds: from the first record to the last (to the
    /// end of the last second, where the times were whole seconds).
    pub recorded_s: f64,
    /// The times were whole seconds, spread within each second.
    pub spread: bool,
}

impl ReplayPlan {
    pub fn new(trace: Trace, speed: Speed, seed: u64) -> Result<ReplayPlan, String> {
        if !(speed.speed.is_finite() && speed.speed > 0.0) {
            return Err(format!("speed {} must be above 0", speed.speed));
        }
        if speed.scale == 0 {
            return Err("scale must be 1 or more".into());
        }
        let requests = trace.records.len() as u64 * u64::from(speed.scale);
        if requests > MAX_REPLAY_REQUESTS {
            return Err(format!(
                "{} records × scale {} is {requests} requests, over the {MAX_REPLAY_REQUESTS} a replay plans",
                trace.records.len(),
                speed.scale
            ));
        }
        let first = trace.records.iter().map(|r| r.at_ns).min().unwrap_or(0);
        // (recorded time from the first, in seconds of the recording; record)
        let mut sends: Vec<(f64, u32)> = Vec::with_capacity(requests as usize);
        let recorded_span = if trace.whole_seconds {
            let second = |at_ns: i128| ((at_ns - first) / 1_000_000_000) as u64;
            let mut by_second: Vec<(u64, u32)> = (trace.records.iter().enumerate())
                .map(|(i, r)| (second(r.at_ns), i as u32))
                .collect();
            by_second.sort_by_key(|&(s, _)| s);
            for group in by_second.chunk_by(|a, b| a.0 == b.0) {
                let s = group[0].0;
                let copies = group
                    .iter()
                    .flat_map(|&(_, r)| std::iter::repeat_n(r, speed.scale as usize));
                let within = spread_in_a_second(group.len() * speed.scale as usize, seed, s);
                sends.extend(
                    within
                        .into_iter()
                        .zip(copies)
                        .map(|(p, r)| (s as f64 + p, r)),
                );
            }
            by_second.last().map_or(0, |l| l.0) as f64 + 1.0
        } else {
            for (i, r) in trace.records.iter().enumerate() {
                let at = (r.at_ns - first) as f64 / 1e9;
                sends.extend(std::iter::repeat_n((at, i as u32), speed.scale as usize));
            }
            sends.sort_by(|a, b| a.0.total_cmp(&b.0));
            sends.last().map_or(0.0, |l| l.0)
        };
        let real = |recorded: f64| Duration::from_secs_f64(recorded / speed.speed);
        let at: Arc<[Duration]> = sends.iter().map(|s| real(s.0)).collect();
        let records = trace.records.len();
        let span = if trace.whole_seconds {
            real(recorded_span)
        } else if records > 1 {
            real(recorded_span + (recorded_span / (records - 1) as f64).max(MIN_AFTER_LAST_S))
        } else {
            real(1.0)
        };
        Ok(ReplayPlan {
            format: trace.format,
            bodies: trace.records.into_iter().map(|r| r.body).collect(),
            at,
            record_of: sends.into_iter().map(|s| s.1).collect(),
            span,
            recorded_s: recorded_span,
            spread: trace.whole_seconds,
        })
    }

    pub fn records(&self) -> usize {
        self.bodies.len()
    }

    pub fn requests(&self) -> u64 {
        self.at.len() as u64
    }

    /// The mean rate the replay offers, per second: what its phase records as its pace.
    pub fn mean_rate(&self) -> f64 {
        let span = self.span.as_secs_f64();
        if span > 0.0 {
            self.requests() as f64 / span
        } else {
            MAX_RATE
        }
    }

    /// Inputs a request carries, over the requests planned: (fewest, most, mean).
    pub fn batch_sizes(&self) -> (usize, usize, f64) {
        let each = || {
            self.record_of
                .iter()
                .map(|&r| self.bodies[r as usize].inputs())
        };
        let (least, most) = each().fold((usize::MAX, 0), |(l, m), b| (l.min(b), m.max(b)));
        let mean = each().sum::<usize>() as f64 / self.record_of.len().max(1) as f64;
        (least.min(most), most, mean)
    }

    /// The batch size a replay's phase is reported at: the trace's own where every record
    /// has one, else its mean rounded (samples/s stays the inputs actually sent).
    pub fn batch_size(&self) -> usize {
        (self.batch_sizes().2.round() as usize).max(1)
    }

    /// What request `idx` of the phase sends.
    pub fn body_of(&self, idx: u64) -> Option<&Body> {
        let r = *self.record_of.get(usize::try_from(idx).ok()?)?;
        self.bodies.get(r as usize)
    }
}

/// `n` times within one second, in order, each in (0, 1): the first n arrivals of a Poisson
/// process rescaled so that its (n+1)-th falls on the second's end, seeded by the second
/// (`second`) so a replay is the same every time with the same seed.
fn spread_in_a_second(n: usize, seed: u64, second: u64) -> Vec<f64> {
    let gaps = n as u64 + 1;
    let rate = gaps as f64;
    let seed = seed ^ second.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    match Arrivals::rescaled(rate, 1.0, seed, gaps)
        .ok()
        .filter(|_| rate <= MAX_RATE)
    {
        Some(mut a) => {
            let mut t = 0.0;
            (0..n)
                .map(|_| {
                    t += a.next_gap().as_secs_f64();
                    t.min(1.0 - 1e-9)
                })
                .collect()
        }
        // Past a million a second a clock cannot tell them apart: evenly.
        None => (1..=n).map(|k| k as f64 / rate).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::read::Record;

    fn trace(times_ns: &[i128], whole: bool) -> Trace {
        Trace {
            format: if whole {
                TraceFormat::DataCapture
            } else {
                TraceFormat::Trace
            },
            records: (times_ns.iter().enumerate())
                .map(|(i, &at_ns)| Record {
                    at_ns,
                    line: i + 1,
                    body: Body::Tokens {
                        tokens: i + 1,
                        batch_size: 1,
                    },
                })
                .collect(),
            whole_seconds: whole,
        }
    }

    const S: i128 = 1_000_000_000;

    #[test]
    fn a_trace_keeps_its_times_over_the_speed_and_sends_each_record_scale_times() {
        let t = trace(&[10_000_000, 30_000_000, 20_000_000], false);
        let p = ReplayPlan::new(
            t,
            Speed {
                speed: 2.0,
                scale: 2,
            },
            1,
        )
        .unwrap();
        let ms: Vec<u128> = p.at.iter().map(Duration::as_micros).collect();
        assert_eq!(ms, [0, 0, 5000, 5000, 10000, 10000]);
        // In time order, not file order: the record at 20 ms (the third line) comes second.
        assert_eq!(p.record_of, [0, 0, 2, 2, 1, 1]);
        // 20 ms recorded, and one mean gap of 10 ms after the last, at speed 2.
        assert_eq!(p.span, Duration::from_millis(15));
        assert_eq!((p.records(), p.requests()), (3, 6));
        assert_eq!(p.body_of(2), Some(&p.bodies[2]));
        assert_eq!(p.body_of(6), None);
    }

    #[test]
    fn the_batch_reported_is_the_requests_mean_and_its_range_is_kept() {
        let mut t = trace(&[0, 10_000_000, 20_000_000, 30_000_000], false);
        for (r, b) in t.records.iter_mut().zip([1, 1, 3, 4]) {
            r.body = Body::Tokens {
                tokens: 10,
                batch_size: b,
            };
        }
        let p = ReplayPlan::new(
            t,
            Speed {
                speed: 1.0,
                scale: 3,
            },
            1,
        )
        .unwrap();
        assert_eq!(p.batch_sizes(), (1, 4, 2.25));
        assert_eq!(p.batch_size(), 2);
    }

    #[test]
    fn whole_seconds_keep_each_seconds_count_exactly_spread_within_it() {
        // 3 in the first second, none in the second, 5 in the third; 1000 s since 1970.
        let base = 1000 * S;
        let t = trace(
            &[
                base,
                base,
                base,
                base + 2 * S,
                base + 2 * S,
                base + 2 * S,
                base + 2 * S,
                base + 2 * S,
            ],
            true,
        );
        let p = ReplayPlan::new(
            t.clone(),
            Speed {
                speed: 1.0,
                scale: 3,
            },
            7,
        )
        .unwrap();
        let count = |s: u64| p.at.iter().filter(|a| a.as_secs() == s).count();
        assert_eq!((count(0), count(1), count(2)), (9, 0, 15));
        assert_eq!(p.span, Duration::from_secs(3));
        assert!(p.at.windows(2).all(|w| w[0] <= w[1]), "in order");
        assert!(
            p.at.iter().all(|a| a.subsec_nanos() > 0),
            "inside their second"
        );
        // Seeded: the same plan again; another seed spreads otherwise.
        assert_eq!(
            ReplayPlan::new(
                t.clone(),
                Speed {
                    speed: 1.0,
                    scale: 3
                },
                7
            )
            .unwrap(),
            p
        );
        assert_ne!(
            ReplayPlan::new(
                t.clone(),
                Speed {
                    speed: 1.0,
                    scale: 3
                },
                8
            )
            .unwrap()
            .at,
            p.at
        );
        // At speed 2 the seconds are half seconds, with the same counts.
        let fast = ReplayPlan::new(
            t,
            Speed {
                speed: 2.0,
                scale: 1,
            },
            7,
        )
        .unwrap();
        let in_half = |k: u32| {
            fast.at
                .iter()
                .filter(|a| (a.as_millis() / 500) as u32 == k)
                .count()
        };
        assert_eq!((in_half(0), in_half(1), in_half(2)), (3, 0, 5));
        assert_eq!(fast.span, Duration::from_millis(1500));
        assert!((fast.mean_rate() - 8.0 / 1.5).abs() < 1e-9);
    }

    #[test]
    fn a_speed_or_scale_out_of_range_is_refused() {
        for (speed, scale) in [(0.0, 1), (-1.0, 1), (f64::NAN, 1), (1.0, 0)] {
            assert!(ReplayPlan::new(trace(&[0], false), Speed { speed, scale }, 1).is_err());
        }
    }
}
