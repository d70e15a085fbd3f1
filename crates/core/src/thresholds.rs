//! What a CI job is told when a run ends: the `--fail-on` thresholds (`errors>1%`,
//! `p99>200ms`, `req_per_s<50`, `slo`) judged on the measured phases, which set exit code 3
//! when one is breached (k6's thresholds, `perf_analyzer`'s latency limit), and the warning
//! when most requests failed, so a run of failures never reads as a result.
//!
//! A threshold is judged on every measured phase and breached when any phase breaches it:
//! a sweep is as good as its worst step. Latency is scheduled latency, as in the tables.

use crate::percentile::Percentile;
use crate::results::PhaseResult;
use crate::slo::{error_share, parse_duration_ms};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// A percentile of scheduled latency above this many milliseconds.
    Latency {
        percentile: Percentile,
        above_ms: f64,
    },
    /// The share of measured requests that failed above this.
    Errors { above: f64 },
    /// Throughput below this many requests per second.
    RateBelow { per_s: f64 },
    /// A phase missed the `--slo` objectives.
    Slo,
    /// A configuration of `tune` failed: its server never became ready, or died.
    Failed,
}

const SYNTAX: &str = "write p99>200ms (p50, p90, p95, p99, p999 > a time), errors>1%, req_per_s<50, slo or failed (tune)";

impl std::str::FromStr for Threshold {
    type Err = String;

    fn from_str(s: &str) -> Result<Threshold, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("slo") {
            return Ok(Threshold::Slo);
        }
        if s.eq_ignore_ascii_case("failed") {
            return Ok(Threshold::Failed);
        }
        let Some(at) = s.find(['>', '<']) else {
            return Err(format!("'{s}' has no > or <: {SYNTAX}"));
        };
        let (name, op, value) = (
            s[..at].trim().to_ascii_lowercase(),
            &s[at..=at],
            s[at + 1..].trim(),
        );
        let name = name.replace("p99.9", "p999");
        match (name.as_str(), op) {
            ("errors", ">") => {
                let share = match value.strip_suffix('%') {
                    Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
                    None => value.parse::<f64>(),
                }
                .ok()
                .filter(|x| (0.0..1.0).contains(x))
                .ok_or_else(|| {
                    format!("errors>{value}: a share from 0 to below 1, or a percentage (1%)")
                })?;
                Ok(Threshold::Errors { above: share })
            }
            ("req_per_s" | "rps", "<") => value
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .map(|per_s| Threshold::RateBelow { per_s })
                .ok_or_else(|| format!("req_per_s<{value}: a rate above 0 (req_per_s<50)")),
            (p, ">") if Percentile::named(p).is_some() => {
                let percentile = Percentile::named(p).expect("found above");
                let above_ms = parse_duration_ms(value).ok_or_else(|| {
                    format!("{p}>{value}: a time above 0 and at most an hour (200ms, 1.5s)")
                })?;
                Ok(Threshold::Latency {
                    percentile,
                    above_ms,
                })
            }
            _ => Err(format!("'{s}' is not a threshold: {SYNTAX}")),
        }
    }
}

impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Threshold::Latency {
                percentile,
                above_ms,
            } => write!(f, "{}>{above_ms}ms", percentile.name()),
            Threshold::Errors { above } => {
                write!(f, "errors>{}%", (above * 1e8).round() / 1e6)
            }
            Threshold::RateBelow { per_s } => write!(f, "req_per_s<{per_s}"),
            Threshold::Slo => write!(f, "slo"),
            Threshold::Failed => write!(f, "failed"),
        }
    }
}

/// How the run stands against one threshold, as the export records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub threshold: String,
    pub breached: bool,
    /// The worst value measured over the phases, in the threshold's unit (ms, a share,
    /// req/s; phases that missed for `slo`); `null` when no phase measured anything.
    pub measured: Option<f64>,
    /// The index in `phases` of the phase that measured it.
    pub phase: Option<usize>,
    /// The line that says it (the one stderr shows for a breach).
    pub summary: String,
}

fn phase_name(i: usize, p: &PhaseResult) -> String {
    let target = p
        .target
        .as_ref()
        .map(|t| format!("{t} "))
        .unwrap_or_default();
    format!(
        "phase {} ({target}kind {}, batch {}, conc {})",
        i + 1,
        p.kind.name(),
        p.batch_size,
        p.concurrency
    )
}

impl Threshold {
    /// The value a phase measured for this threshold, and whether it breaks it.
    fn measure(&self, p: &PhaseResult) -> (f64, bool) {
        match *self {
            Threshold::Latency {
                percentile,
                above_ms,
            } => {
                let v = percentile.of(&p.latency_ms);
                (v, v > above_ms)
            }
            Threshold::Errors { above } => {
                let v = error_share(p.error_count(), p.n);
                (v, v > above)
            }
            Threshold::RateBelow { per_s } => (p.req_per_s, p.req_per_s < per_s),
            Threshold::Slo => {
                let missed = p.slo_met == Some(false);
                (f64::from(u8::from(missed)), missed)
            }
            // Judged on a tune's configurations (`judge_tune`), never on a phase.
            Threshold::Failed => (0.0, false),
        }
    }

    /// Higher is worse for every threshold but a rate.
    fn worse(&self, a: f64, b: f64) -> bool {
        match self {
            Threshold::RateBelow { .. } => a < b,
            _ => a > b,
        }
    }

    fn shown(&self, v: f64) -> String {
        match self {
            Threshold::Latency { percentile, .. } => format!("{} {v:.1} ms", percentile.name()),
            Threshold::Errors { .. } => format!("errors {:.2}%", v * 100.0),
            Threshold::RateBelow { .. } => format!("{v:.1} req/s"),
            Threshold::Slo | Threshold::Failed => String::new(),
        }
    }

    /// Whether phase `p` measured what this threshold judges: a request at all, and for a
    /// rate, more requests than its concurrency cap (`n<c` is no rate).
    fn judges(&self, p: &PhaseResult) -> bool {
        p.n > 0 && !(matches!(self, Threshold::RateBelow { .. }) && p.rate_not_meaningful)
    }

    /// This threshold judged on `phases`; a phase that measured nothing it judges says
    /// nothing, and a run where none did breaches it (CI must not pass on no data).
    pub fn judge(&self, phases: &[PhaseResult]) -> Outcome {
        let measured: Vec<(usize, &PhaseResult)> = phases
            .iter()
            .enumerate()
            .filter(|(_, p)| self.judges(p))
            .collect();
        let threshold = self.to_string();
        if measured.is_empty() {
            let what = match self {
                Threshold::RateBelow { .. } => {
                    "no phase measured more requests than its concurrency cap (n<c is no rate)"
                }
                _ => "no phase measured a request",
            };
            return Outcome {
                summary: format!("fail-on {threshold}: breached: {what}"),
                threshold,
                breached: true,
                measured: None,
                phase: None,
            };
        }
        let values: Vec<(usize, &PhaseResult, f64, bool)> = measured
            .iter()
            .map(|&(i, p)| {
                let (v, over) = self.measure(p);
                (i, p, v, over)
            })
            .collect();
        let over = values.iter().filter(|v| v.3).count();
        let breached = over > 0;
        if let Threshold::Slo = self {
            let first = values.iter().find(|v| v.3);
            let judged = measured.iter().filter(|(_, p)| p.slo_met.is_some()).count();
            let summary = match first {
                Some((i, p, _, _)) => format!(
                    "fail-on slo: breached: {over} of {} missed the SLO, first {}: {}",
                    crate::text::count(judged, "phase"),
                    phase_name(*i, p),
                    p.slo_missed.as_deref().unwrap_or("missed")
                ),
                None => format!(
                    "fail-on slo: met by every phase judged ({})",
                    crate::text::count(judged, "phase")
                ),
            };
            return Outcome {
                threshold,
                breached,
                measured: Some(over as f64),
                phase: first.map(|v| v.0),
                summary,
            };
        }
        let worst = values
            .iter()
            .copied()
            .reduce(|a, b| if self.worse(b.2, a.2) { b } else { a })
            .expect("at least one measured phase");
        let (i, p, v, _) = worst;
        let summary = if breached {
            let others = if measured.len() > 1 {
                format!(" ({over} of {} phases over)", measured.len())
            } else {
                String::new()
            };
            format!(
                "fail-on {threshold}: breached: {} in {}{others}",
                self.shown(v),
                phase_name(i, p)
            )
        } else {
            format!(
                "fail-on {threshold}: met: worst {} in {}",
                self.shown(v),
                phase_name(i, p)
            )
        };
        Outcome {
            threshold,
            breached,
            measured: Some(v),
            phase: Some(i),
            summary,
        }
    }
}

/// Every threshold judged on `phases`.
pub fn judge(thresholds: &[Threshold], phases: &[PhaseResult]) -> Vec<Outcome> {
    thresholds.iter().map(|t| t.judge(phases)).collect()
}

/// A tune's thresholds: `failed` on its configurations (the labels of those that failed,
/// of `total`), every other on the phases of them all.
pub fn judge_tune(
    thresholds: &[Threshold],
    phases: &[PhaseResult],
    failed: &[String],
    total: usize,
) -> Vec<Outcome> {
    thresholds
        .iter()
        .map(|t| match t {
            Threshold::Failed => Outcome {
                threshold: t.to_string(),
                breached: !failed.is_empty(),
                measured: Some(failed.len() as f64),
                phase: None,
                summary: if failed.is_empty() {
                    format!(
                        "fail-on failed: met: every one of {} ran",
                        crate::text::count(total, "configuration")
                    )
                } else {
                    format!(
                        "fail-on failed: breached: {} of {} failed: {}",
                        failed.len(),
                        crate::text::count(total, "configuration"),
                        failed.join(", ")
                    )
                },
            },
            _ => t.judge(phases),
        })
        .collect()
}

/// One line when most measured requests of the run failed, saying what the tables above it
/// then describe: the percentiles and rates are of the requests that succeeded, the few
/// there were; with none, the figures describe failures (how fast the endpoint refuses).
pub fn failure_warning(phases: &[PhaseResult]) -> Option<String> {
    let n: u64 = phases.iter().map(|p| p.n).sum();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for p in phases {
        for (k, v) in &p.errors {
            *errors.entry(k.clone()).or_default() += v;
        }
    }
    let failed: u64 = errors.values().sum();
    if n == 0 || failed * 2 <= n {
        return None;
    }
    let counts = crate::text::counts(&errors);
    if failed == n {
        return Some(format!(
            "warning: all {} failed ({counts}): the figures above describe failures, not the model",
            crate::text::count(n, "measured request")
        ));
    }
    let ok = n - failed;
    Some(format!(
        "warning: {failed} of {n} measured requests failed ({counts}): the percentiles and rates above are of the {ok} that succeeded, not of the {n} measured"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_parse_and_print_as_written() {
        for (text, shown) in [
            ("errors>1%", "errors>1%"),
            ("errors > 0.05", "errors>5%"),
            ("p99>200ms", "p99>200ms"),
            ("P999>1.5s", "p999>1500ms"),
            ("p99.9>2s", "p999>2000ms"),
            ("req_per_s<50", "req_per_s<50"),
            ("slo", "slo"),
            ("Failed", "failed"),
        ] {
            let t: Threshold = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(t.to_string(), shown);
        }
        for bad in [
            "p99<200ms",
            "errors>150%",
            "p98>1ms",
            "latency",
            "p99>fast",
            "req_per_s>5",
            "errors>",
        ] {
            assert!(bad.parse::<Threshold>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_worst_phase_is_named_and_nothing_measured_is_a_breach() {
        use crate::fixtures::phase_row;
        use crate::plan::PhaseKind::Batch;
        let phases = vec![
            phase_row(Batch, 1, 1, 100.0, 5.0, 10.0, None),
            phase_row(Batch, 8, 1, 50.0, 20.0, 40.0, None),
        ];
        let judged = |t: &str| t.parse::<Threshold>().unwrap().judge(&phases);
        let o = judged("p99>30ms");
        assert!(
            o.breached && o.phase == Some(1) && o.measured == Some(40.0),
            "{o:?}"
        );
        assert!(o.summary.ends_with("(1 of 2 phases over)"), "{}", o.summary);
        let r = judged("req_per_s<60");
        assert!(r.breached && r.phase == Some(1), "{r:?}");
        assert!(!judged("p50>30ms").breached);
        let mut short = phases.clone();
        for p in &mut short {
            p.rate_not_meaningful = true;
        }
        let r = "req_per_s<60".parse::<Threshold>().unwrap().judge(&short);
        assert!(r.breached && r.measured.is_none(), "{r:?}");
        let none = "errors>1%".parse::<Threshold>().unwrap().judge(&[]);
        assert!(none.breached && none.measured.is_none(), "{none:?}");
        assert_eq!(failure_warning(&phases), None);
    }

    #[test]
    fn the_warning_says_what_the_percentiles_describe() {
        let mut p =
            crate::fixtures::phase_row(crate::plan::PhaseKind::Batch, 1, 4, 100.0, 5.0, 10.0, None);
        (p.n, p.ok) = (1000, 40);
        p.errors = [("ConnectionError".to_string(), 960)].into();
        let w = failure_warning(std::slice::from_ref(&p)).expect("most failed");
        assert!(
            w.ends_with(
                "(ConnectionError 960): the percentiles and rates above are of the 40 that succeeded, not of the 1000 measured"
            ),
            "{w}"
        );
        (p.n, p.ok) = (960, 0);
        let w = failure_warning(&[p]).expect("all failed");
        assert!(
            w.ends_with("the figures above describe failures, not the model"),
            "{w}"
        );
    }
}
