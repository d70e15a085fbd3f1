//! A ramp (`--ramp FROM..TO`): the request rate moves from one value to another over a
//! phase's measured duration, linearly or exponentially, so one run crosses the knee.
//!
//! The arrival process keeps its burstiness by a time change: gaps are drawn at rate 1 (in
//! "operational time", where the Gamma process is the same as at any steady rate) and each
//! arrival's operational time τ is mapped to the real time t with Λ(t) = τ, Λ being the
//! integral of the rate. So at every instant the arrivals have the ramp's rate, and their
//! coefficient of variation over any short span is that of the steady process.

use crate::choice::Choice;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RampShape {
    Linear,
    Exp,
}

impl Choice for RampShape {
    const ALL: &'static [RampShape] = &[RampShape::Linear, RampShape::Exp];

    fn name(self) -> &'static str {
        match self {
            RampShape::Linear => "linear",
            RampShape::Exp => "exp",
        }
    }
}

crate::parse_by_name!(RampShape);

/// A rate that moves from `from` to `to` requests per second over a phase.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ramp {
    #[serde(rename = "from_per_s")]
    pub from: f64,
    #[serde(rename = "to_per_s")]
    pub to: f64,
    pub shape: RampShape,
}

impl Ramp {
    /// The exponential shape's growth per second over a ramp of `len_s` (0: flat).
    fn growth(&self, len_s: f64) -> f64 {
        (self.to / self.from).ln() / len_s
    }

    fn flat(&self) -> bool {
        (self.to - self.from).abs() <= 1e-12 * self.from
    }

    /// The rate `t_s` seconds into a ramp of `len_s` (the end's after it).
    pub fn rate_at(&self, t_s: f64, len_s: f64) -> f64 {
        let t = t_s.clamp(0.0, len_s);
        if self.flat() || len_s <= 0.0 {
            return self.from;
        }
        match self.shape {
            RampShape::Linear => self.from + (self.to - self.from) * t / len_s,
            RampShape::Exp => self.from * (self.growth(len_s) * t).exp(),
        }
    }

    /// Λ(t): the requests expected in the first `t_s` seconds.
    pub fn expected(&self, t_s: f64, len_s: f64) -> f64 {
        let t = t_s.clamp(0.0, len_s);
        let after = (t_s - len_s).max(0.0) * self.to;
        let within = if self.flat() || len_s <= 0.0 {
            self.from * t
        } else {
            match self.shape {
                RampShape::Linear => self.from * t + (self.to - self.from) * t * t / (2.0 * len_s),
                RampShape::Exp => {
                    let k = self.growth(len_s);
                    self.from * ((k * t).exp() - 1.0) / k
                }
            }
        };
        within + after
    }

    /// Λ⁻¹(τ): when, in seconds into the ramp, the arrival of operational time `tau` is due.
    pub fn time_of(&self, tau: f64, len_s: f64) -> f64 {
        let whole = self.expected(len_s, len_s);
        if tau >= whole {
            return len_s + (tau - whole) / self.to;
        }
        if self.flat() || len_s <= 0.0 {
            return tau / self.from;
        }
        match self.shape {
            RampShape::Linear => {
                let slope = (self.to - self.from) / len_s;
                // The stable root of from·t + slope·t²/2 = τ (no cancellation near slope 0).
                let disc = (self.from * self.from + 2.0 * slope * tau).max(0.0);
                2.0 * tau / (self.from + disc.sqrt())
            }
            RampShape::Exp => {
                let k = self.growth(len_s);
                (k * tau / self.from).ln_1p() / k
            }
        }
    }

    /// The mean rate over a ramp of `len_s`: what its phase offers in all.
    pub fn mean_rate(&self, len_s: f64) -> f64 {
        if len_s > 0.0 {
            self.expected(len_s, len_s) / len_s
        } else {
            self.from
        }
    }

    /// "ramp 20→400 req/s linear".
    pub fn describe(&self) -> String {
        format!("ramp {}→{} req/s {}", self.from, self.to, self.shape.name())
    }
}

/// Reads `FROM..TO` (requests per second, each in the supported range). The separator is
/// exactly two dots: `20...200` would otherwise read as 20 to .200, and a rate of 0.2
/// runs without a word.
pub fn parse_ramp(s: &str) -> Result<(f64, f64), String> {
    const FORM: &str = "must be FROM..TO in requests per second, such as 20..400";
    let (a, b) = s.split_once("..").ok_or(FORM)?;
    if b.trim_start().starts_with('.') || a.trim_end().ends_with('.') || b.contains("..") {
        return Err(
            "must be FROM..TO with exactly two dots between the rates, such as 20..400".into(),
        );
    }
    // The range is quoted whole: the user wrote one value.
    let read = |v: &str| -> Result<f64, String> {
        let x = v
            .trim()
            .parse::<f64>()
            .map_err(|_| format!("{s}: {v:?} is not a number of requests per second (20..400)"))?;
        if x.is_infinite() {
            return Err(format!(
                "{s}: a ramp runs between two finite rates; for a closed loop use --request-rate inf (20..400)"
            ));
        }
        crate::arrival::check_rate(x).map_err(|e| format!("{s}: {v}: {e}"))
    };
    Ok((read(a)?, read(b)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_of_inverts_expected_for_both_shapes_and_directions() {
        for shape in [RampShape::Linear, RampShape::Exp] {
            for (from, to) in [(20.0, 400.0), (400.0, 20.0), (50.0, 50.0), (1.0, 1e5)] {
                let r = Ramp { from, to, shape };
                for t in [0.0, 0.1, 3.3, 15.0, 29.9, 30.0, 31.0] {
                    let back = r.time_of(r.expected(t, 30.0), 30.0);
                    assert!(
                        (back - t).abs() < 1e-6 * t.max(1.0),
                        "{r:?} t {t} back {back}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_rate_is_the_derivative_of_the_expected_count() {
        for shape in [RampShape::Linear, RampShape::Exp] {
            let r = Ramp {
                from: 20.0,
                to: 400.0,
                shape,
            };
            for t in [1.0, 10.0, 20.0, 29.0] {
                let d = (r.expected(t + 1e-4, 30.0) - r.expected(t - 1e-4, 30.0)) / 2e-4;
                assert!((d / r.rate_at(t, 30.0) - 1.0).abs() < 1e-5, "{shape:?} {t}");
            }
        }
        let lin = Ramp {
            from: 20.0,
            to: 400.0,
            shape: RampShape::Linear,
        };
        assert!((lin.mean_rate(30.0) - 210.0).abs() < 1e-9);
        assert!((lin.rate_at(15.0, 30.0) - 210.0).abs() < 1e-9);
    }

    #[test]
    fn ramps_read_from_the_command_line() {
        assert_eq!(parse_ramp("20..400").unwrap(), (20.0, 400.0));
        assert_eq!(parse_ramp(" 400 .. 20 ").unwrap(), (400.0, 20.0));
        assert_eq!(parse_ramp("0.5..2.5").unwrap(), (0.5, 2.5));
        for bad in [
            "20",
            "20..",
            "..400",
            "a..b",
            "0..10",
            "10..1e9",
            "20-400",
            "20...200",
            "20. ..200",
            "20....200",
            "20..30..40",
            "20.. .5",
        ] {
            assert!(parse_ramp(bad).is_err(), "{bad}");
        }
    }
}
