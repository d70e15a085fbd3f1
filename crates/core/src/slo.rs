//! Service-level objectives (`--slo p99=100ms`, `--slo errors=0.1%`): whether a phase meets
//! them, and its goodput.
//!
//! Latency objectives are judged on scheduled latency (from the intended send time), and over
//! every request that was due: an error or a request never sent counts as a miss. So
//! `p99=100ms` reads "99 % of the requests due completed ok within 100 ms", the way an SLO is
//! counted in production (good events over valid events), and neither a backlog nor a server
//! that fails fast can pass one. A phase that fell behind its schedule fails too.

use crate::percentile::Percentile;
use hdrhistogram::Histogram;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    /// At least `percentile`'s share of the requests due complete ok within `bound_ms`.
    Latency {
        percentile: Percentile,
        bound_ms: f64,
    },
    /// At most this share of the completed requests fail.
    Errors { share: f64 },
}

/// "100ms", "1.5s", "250us", or a bare number of milliseconds.
pub fn parse_duration_ms(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, scale) = if let Some(v) = s.strip_suffix("ms") {
        (v, 1.0)
    } else if let Some(v) = s.strip_suffix("us") {
        (v, 1e-3)
    } else if let Some(v) = s.strip_suffix('s') {
        (v, 1000.0)
    } else {
        (s, 1.0)
    };
    let v = num.trim().parse::<f64>().ok()? * scale;
    (v.is_finite() && v > 0.0 && v <= 3.6e6).then_some(v)
}

impl std::str::FromStr for Objective {
    type Err = String;

    fn from_str(s: &str) -> Result<Objective, String> {
        let (name, value) = s
            .split_once('=')
            .ok_or("must be NAME=VALUE: p50, p90, p95, p99 or p999 = a time (100ms, 1.5s), or errors = a share (0.1%)")?;
        let name = name.trim().to_ascii_lowercase();
        if name == "errors" {
            let v = value.trim();
            let share = match v.strip_suffix('%') {
                Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
                None => v.parse::<f64>(),
            }
            .ok()
            .filter(|x| (0.0..=1.0).contains(x))
            .ok_or("errors= must be a share from 0 to 1, or a percentage (0.1%)")?;
            return Ok(Objective::Errors { share });
        }
        let percentile = Percentile::named(&name).ok_or_else(|| {
            format!("unknown objective {name:?}: use p50, p90, p95, p99, p999 or errors")
        })?;
        let bound_ms = parse_duration_ms(value).ok_or(
            "a latency objective must be a time > 0 and at most an hour: 100ms, 1.5s, 250us",
        )?;
        Ok(Objective::Latency {
            percentile,
            bound_ms,
        })
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Objective::Latency {
                percentile,
                bound_ms,
            } => {
                write!(f, "{}={}ms", percentile.name(), bound_ms)
            }
            Objective::Errors { share } => write!(f, "errors={}%", share * 100.0),
        }
    }
}

/// Every objective a phase must meet.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Slo {
    pub objectives: Vec<Objective>,
}

/// How one phase stands against the SLO.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub met: bool,
    /// Ok requests within the goodput bound, per second of the phase's throughput interval.
    pub goodput_per_s: f64,
    /// The same requests as a share of the requests due (completed plus unsent).
    pub goodput_share: f64,
    /// The first objective missed, with what was measured ("p99 132.1 ms > 100 ms").
    pub missed: Option<String>,
}

/// What of a phase the SLO is judged on.
pub struct Measured<'a> {
    /// Scheduled latency of the ok requests, in microseconds.
    pub scheduled: &'a Histogram<u64>,
    pub ok: u64,
    pub errors: u64,
    pub unsent: u64,
    pub overloaded: bool,
    pub req_per_s: f64,
}

impl Slo {
    pub fn is_empty(&self) -> bool {
        self.objectives.is_empty()
    }

    /// The bound goodput counts against: that of the highest percentile given.
    pub fn goodput_bound_ms(&self) -> Option<f64> {
        self.objectives
            .iter()
            .filter_map(|o| match *o {
                Objective::Latency {
                    percentile,
                    bound_ms,
                } => Some((percentile.quantile(), bound_ms)),
                Objective::Errors { .. } => None,
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, b)| b)
    }

    /// "p99 ≤ 100 ms, errors ≤ 0.1 %".
    pub fn describe(&self) -> String {
        self.objectives
            .iter()
            .map(|o| match *o {
                Objective::Latency {
                    percentile,
                    bound_ms,
                } => {
                    format!("{} ≤ {} ms", percentile.name(), bound_ms)
                }
                Objective::Errors { share } => format!("errors ≤ {}%", share * 100.0),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn judge(&self, m: &Measured<'_>) -> Judgement {
        let due = m.ok + m.errors + m.unsent;
        let within = |bound_ms: f64| -> u64 {
            if m.scheduled.is_empty() {
                0
            } else {
                m.scheduled
                    .count_between(0, (bound_ms * 1000.0).round().max(1.0) as u64)
            }
        };
        let mut missed = m
            .overloaded
            .then(|| "fell behind its schedule (overloaded)".to_string());
        for o in &self.objectives {
            let why = match *o {
                Objective::Latency {
                    percentile,
                    bound_ms,
                } => {
                    let quantile = percentile.quantile();
                    let needed = (quantile * due as f64 - 1e-9).ceil() as u64;
                    let ok = due > 0 && within(bound_ms) >= needed;
                    (!ok).then(|| {
                        let name = percentile.name();
                        let effective = effective_quantile_ms(m, quantile, due);
                        if effective.is_finite() {
                            format!("{name} {effective:.1} ms > {bound_ms} ms")
                        } else {
                            format!(
                                "{name}: fewer than {:.1}% of the requests due completed ok",
                                quantile * 100.0
                            )
                        }
                    })
                }
                Objective::Errors { share } => {
                    let got = error_share(m.errors, m.ok + m.errors);
                    (got > share + 1e-12)
                        .then(|| format!("errors {:.2}% > {}%", got * 100.0, share * 100.0))
                }
            };
            if missed.is_none() {
                missed = why;
            }
        }
        let good = self.goodput_bound_ms().map_or(m.ok, within);
        Judgement {
            met: missed.is_none() && due > 0,
            goodput_per_s: if m.ok == 0 {
                0.0
            } else {
                m.req_per_s * good as f64 / m.ok as f64
            },
            goodput_share: if due == 0 {
                0.0
            } else {
                good as f64 / due as f64
            },
            missed: missed.or_else(|| (due == 0).then(|| "nothing was measured".to_string())),
        }
    }
}

/// Errors over completed requests (0 when none completed).
pub fn error_share(errors: u64, completed: u64) -> f64 {
    if completed == 0 {
        0.0
    } else {
        errors as f64 / completed as f64
    }
}

/// How far an error share is from an `errors=` objective: measured over allowed (> 1:
/// missed; infinite for any error against `errors=0`).
pub fn error_ratio(got: f64, allowed: f64) -> f64 {
    if allowed > 0.0 {
        got / allowed
    } else if got > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// The `quantile` of scheduled latency over every request due, errors and unsent requests
/// counted as infinitely late: infinite when fewer than that share completed ok. This is
/// the figure an objective is judged on, so what a table shows beside a verdict is this one.
pub fn quantile_over_due_ms(m: &Measured<'_>, quantile: f64) -> f64 {
    effective_quantile_ms(m, quantile, m.ok + m.errors + m.unsent)
}

fn effective_quantile_ms(m: &Measured<'_>, quantile: f64, due: u64) -> f64 {
    let needed = (quantile * due as f64 - 1e-9).ceil().max(1.0) as u64;
    if due == 0 || needed > m.ok {
        return f64::INFINITY;
    }
    m.scheduled.value_at_quantile(needed as f64 / m.ok as f64) as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values_ms: &[f64]) -> Histogram<u64> {
        let mut h = crate::stats::phase_histogram();
        for v in values_ms {
            h.record((v * 1000.0) as u64).unwrap();
        }
        h
    }

    fn slo(specs: &[&str]) -> Slo {
        Slo {
            objectives: specs.iter().map(|s| s.parse().unwrap()).collect(),
        }
    }

    #[test]
    fn objectives_parse_with_units_and_refuse_nonsense() {
        assert_eq!(
            "p99=100ms".parse::<Objective>().unwrap(),
            Objective::Latency {
                percentile: Percentile::P99,
                bound_ms: 100.0
            }
        );
        assert_eq!(
            "p999=1.5s".parse::<Objective>().unwrap(),
            Objective::Latency {
                percentile: Percentile::P999,
                bound_ms: 1500.0
            }
        );
        assert_eq!(
            "errors=0.1%".parse::<Objective>().unwrap(),
            Objective::Errors { share: 0.001 }
        );
        for bad in [
            "p98=1ms",
            "p99",
            "p99=-1ms",
            "p99=0",
            "errors=120%",
            "p99=1e300s",
            "p99=nan",
        ] {
            assert!(bad.parse::<Objective>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_latency_objective_counts_errors_and_unsent_requests_as_misses() {
        // 100 ok, 98 of them under 50 ms.
        let mut v = vec![10.0; 98];
        v.extend([200.0, 300.0]);
        let h = hist(&v);
        let s = slo(&["p99=100ms"]);
        let m = |errors, unsent| Measured {
            scheduled: &h,
            ok: 100,
            errors,
            unsent,
            overloaded: false,
            req_per_s: 50.0,
        };
        // 98 of 100 within: p99 missed.
        let j = s.judge(&m(0, 0));
        assert!(!j.met, "{j:?}");
        let s95 = slo(&["p95=100ms"]);
        let j = s95.judge(&m(0, 0));
        assert!(j.met);
        assert!((j.goodput_share - 0.98).abs() < 1e-12);
        assert!((j.goodput_per_s - 49.0).abs() < 1e-9);
        // Six errors more: 98 of 106 is under 95 %.
        let j = s95.judge(&m(6, 0));
        assert!(!j.met && j.missed.unwrap().starts_with("p95"));
        // Unsent requests are misses too.
        assert!(!s95.judge(&m(0, 4)).met);
    }

    #[test]
    fn errors_and_overload_fail_and_goodput_uses_the_highest_percentile() {
        let h = hist(&[10.0, 20.0, 30.0, 40.0]);
        let m = Measured {
            scheduled: &h,
            ok: 4,
            errors: 1,
            unsent: 0,
            overloaded: false,
            req_per_s: 4.0,
        };
        let j = slo(&["errors=10%"]).judge(&m);
        assert!(!j.met && j.missed.unwrap().starts_with("errors 20.00%"));
        assert!(slo(&["errors=25%"]).judge(&m).met);
        // Goodput against the p99 bound (25 ms), not the p50 one.
        let j = slo(&["p50=100ms", "p99=25ms"]).judge(&m);
        assert!((j.goodput_share - 2.0 / 5.0).abs() < 1e-12, "{j:?}");
        let over = Measured {
            overloaded: true,
            ..m
        };
        assert!(!slo(&["p50=1s"]).judge(&over).met);
    }
}
