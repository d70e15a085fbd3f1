//! Capacity search: for each batch size, the highest offered open-loop rate whose phase meets
//! the SLO. The engine runs the phases; this decides which phase comes next and what the
//! results say.
//!
//! Per batch size: a closed-loop phase at the concurrency cap first. Its throughput is the
//! most the endpoint completes at that cap, so no offered rate above it can be kept up with:
//! the bracket's upper end. Then bisection between the highest rate that met the SLO and the
//! lowest that did not, each probe run until stable (`plan::ProbeRule`), until the bracket
//! is within the precision. Bisection needs no model of the endpoint and halves the bracket
//! with every probe whatever the noise; a probe misjudged near the answer moves it by less
//! than the bracket it was probing.
//!
//! Going down from the ceiling, two failed probes at λ and λ/2 bound what any lower rate can
//! do: latency grows with load, and ever faster, so the line through the two lies below the
//! latency at every rate under λ/2. If that line is still past the bound at zero load, no
//! rate meets the SLO and the search says so instead of halving for ever.

use crate::results::PhaseResult;
pub use crate::results::capacity::{Capacity, Probe};
use crate::slo::{Objective, Slo};

/// What a search is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchPlan {
    pub batch_sizes: Vec<usize>,
    /// The probes' cap.
    pub concurrency: usize,
    /// The ceiling's cap: the probes' when `--concurrency` was given, else
    /// `plan::SEARCH_CEILING_CAP`: the probes' default of 1024 slots would put a thousand
    /// requests in the server's queue at once, each waiting for all before it, and one slot
    /// would measure one connection rather than the server.
    pub ceiling_concurrency: usize,
    /// Stop when the highest rate that met and the lowest that did not are within this
    /// share of each other (0.05: 5 %).
    pub precision: f64,
    pub stability: f64,
    /// How each phase of the search runs until stable.
    pub probe: crate::plan::ProbeRule,
}

/// A batch size's answer before any phase of it ran.
fn unanswered(batch_size: usize, plan: &SearchPlan, slo: &Slo) -> Capacity {
    Capacity {
        target: None,
        repetition: None,
        batch_size,
        concurrency: plan.concurrency,
        slo: slo.describe(),
        ceiling_per_s: None,
        max_rate_per_s: None,
        max_rate_ci95_per_s: None,
        failed_at_per_s: None,
        samples_per_s: None,
        latency_ms: None,
        goodput_per_s: None,
        cost_per_1m_usd: None,
        probes: Vec::new(),
        verdict: "searching".into(),
        complete: false,
    }
}

/// The phase the search wants next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Closed loop at the cap.
    Ceiling {
        batch_size: usize,
    },
    Probe {
        batch_size: usize,
        rate_per_s: f64,
    },
}

/// Below this share of the ceiling the search stops going down: a rate a thousandth of what
/// the endpoint can do is not a capacity anyone provisions for.
const FLOOR_SHARE: f64 = 1.0 / 1024.0;

pub struct Search {
    plan: SearchPlan,
    slo: Slo,
    /// Index into the batch sizes of the one being searched.
    at: usize,
    current: Option<Capacity>,
    /// The worst objective's ratio (measured / allowed) of the last failed probe, while no
    /// rate has met the SLO yet.
    last_fail_ratio: Option<f64>,
    pending: Option<Step>,
    done: Vec<Capacity>,
}

impl Search {
    pub fn new(plan: SearchPlan, slo: Slo) -> Search {
        Search {
            plan,
            slo,
            at: 0,
            current: None,
            last_fail_ratio: None,
            pending: None,
            done: Vec::new(),
        }
    }

    pub fn plan(&self) -> &SearchPlan {
        &self.plan
    }

    /// The finished answers, one per batch size searched.
    pub fn results(&self) -> &[Capacity] {
        &self.done
    }

    /// The batch size being searched, as it stands.
    pub fn current(&self) -> Option<&Capacity> {
        self.current.as_ref()
    }

    /// The next phase to run; `None` when every batch size has its answer.
    pub fn next_step(&mut self) -> Option<Step> {
        if let Some(step) = self.pending {
            return Some(step);
        }
        let step = match &self.current {
            None => {
                let &batch_size = self.plan.batch_sizes.get(self.at)?;
                self.current = Some(unanswered(batch_size, &self.plan, &self.slo));
                self.last_fail_ratio = None;
                Step::Ceiling { batch_size }
            }
            Some(c) => Step::Probe {
                batch_size: c.batch_size,
                rate_per_s: Self::next_rate(c),
            },
        };
        self.pending = Some(step);
        Some(step)
    }

    /// Bisection inside the bracket; from the ceiling down by halves until a rate meets.
    fn next_rate(c: &Capacity) -> f64 {
        let hi = c
            .failed_at_per_s
            .or(c.ceiling_per_s)
            .expect("a ceiling before any probe");
        match c.max_rate_per_s {
            Some(lo) => f64::midpoint(lo, hi),
            None => hi / 2.0,
        }
    }

    /// The result of the phase `next_step` asked for.
    pub fn record(&mut self, r: &PhaseResult) {
        let Some(step) = self.pending.take() else {
            return;
        };
        let c = self
            .current
            .as_mut()
            .expect("a step belongs to a batch size");
        match step {
            Step::Ceiling { .. } => {
                if r.ok == 0 || r.req_per_s <= 0.0 {
                    c.verdict = format!(
                        "no capacity: the closed loop at concurrency {} completed nothing ok",
                        self.plan.ceiling_concurrency
                    );
                    self.finish(true);
                    return;
                }
                c.ceiling_per_s = Some(r.req_per_s);
            }
            Step::Probe { rate_per_s, .. } => {
                let probe = self.probe_of(rate_per_s, r);
                let bound = probe.bound;
                let c = self.current.as_mut().expect("checked above");
                c.probes.push(probe);
                // Cut short: a stop follows and says so; the bracket stays as it was.
                if !bound {
                    return;
                }
                if c.probes.last().is_some_and(|p| p.meets) {
                    met_at(c, rate_per_s, r);
                } else if self.failed_at(rate_per_s, r) {
                    return;
                }
            }
        }
        if self.converged() {
            let c = self.current.as_mut().expect("checked above");
            c.verdict = answer(c);
            self.finish(true);
        }
    }

    /// The probe's row: one p50 and one p99, those the SLO was judged on.
    fn probe_of(&self, rate_per_s: f64, r: &PhaseResult) -> Probe {
        let cut_short = r.stop_reason.as_deref() == Some("stopped");
        let (p50, p99) = judged_percentiles(r);
        Probe {
            rate_per_s: crate::stats::round3(rate_per_s),
            n: r.n,
            p50,
            p99,
            meets: !cut_short && r.slo_met == Some(true),
            stable: r.stable.unwrap_or(false),
            stop_reason: r.stop_reason.clone().unwrap_or_else(|| "count".into()),
            bound: !cut_short,
            missed: if cut_short {
                Some(format!(
                    "cut short at n {} (minimum {}): not a bound",
                    r.n, self.plan.probe.min_requests
                ))
            } else {
                r.slo_missed.clone()
            },
        }
    }

    /// A failed probe: the bracket's new upper end. `true` when it ends the batch size's
    /// search with "no rate meets".
    fn failed_at(&mut self, rate_per_s: f64, r: &PhaseResult) -> bool {
        let c = self
            .current
            .as_mut()
            .expect("a probe belongs to a batch size");
        c.failed_at_per_s = Some(rate_per_s);
        let ratio = worst_ratio(&self.slo, r);
        // Going down, this probe is at half the rate of the last one that failed. Latency
        // grows with load and ever faster (convex), so the line through the two lies below
        // it towards zero load: if even that line is past the bound at zero load, no rate
        // meets the SLO.
        let no_better = self
            .last_fail_ratio
            .is_some_and(|last| 2.0 * ratio - last > 1.0);
        self.last_fail_ratio = Some(ratio);
        let ceiling = c.ceiling_per_s.unwrap_or(rate_per_s);
        if c.max_rate_per_s.is_some() || !(no_better || rate_per_s <= ceiling * FLOOR_SHARE) {
            return false;
        }
        c.verdict = format!(
            "no rate meets {}: at {} req/s still {}{}",
            c.slo,
            crate::text::sig3(rate_per_s),
            r.slo_missed.as_deref().unwrap_or("missed"),
            if no_better {
                " (and at twice the rate: less load would not bring it within)"
            } else {
                ""
            }
        );
        self.finish(true);
        true
    }

    fn converged(&self) -> bool {
        let Some(c) = &self.current else {
            return false;
        };
        let (Some(lo), Some(hi)) = (c.max_rate_per_s, c.failed_at_per_s.or(c.ceiling_per_s)) else {
            return false;
        };
        hi <= lo * (1.0 + self.plan.precision)
    }

    fn finish(&mut self, complete: bool) {
        if let Some(mut c) = self.current.take() {
            c.complete = complete;
            self.done.push(c);
        }
        self.pending = None;
        self.at += 1;
    }

    /// The operator stopped the run: the batch size under way keeps what it found, marked
    /// incomplete, and the rest are not searched.
    pub fn stop(&mut self) {
        if let Some(c) = self.current.as_mut() {
            let found = match c.max_rate_per_s {
                Some(lo) => format!(
                    "stopped before converging: at least {} req/s meets {}",
                    crate::text::sig3(lo),
                    c.slo
                ),
                None => "stopped before any rate met the SLO".into(),
            };
            let cut = c
                .probes
                .last()
                .filter(|p| !p.bound)
                .map(|p| {
                    format!(
                        "; the probe at {} req/s was cut short (n {}) and is not a bound",
                        crate::text::sig3(p.rate_per_s),
                        p.n
                    )
                })
                .unwrap_or_default();
            c.verdict = format!("{found}{cut}");
        }
        self.finish(false);
        self.at = self.plan.batch_sizes.len();
    }
}

/// A probe that met the SLO at `rate`: the bracket's new lower end, and the figures at it.
/// Samples/s and goodput are the rate's, times the probe's shares of the requests due: a
/// Poisson schedule sends a few more or fewer than its rate over a probe, and the achieved
/// figures beside the offered rate would read as more than the rate (185 req/s with a
/// goodput of 188/s).
fn met_at(c: &mut Capacity, rate: f64, r: &PhaseResult) {
    let due = r.ok + r.error_count() + r.unsent;
    let share = |k: u64| if due == 0 { 0.0 } else { k as f64 / due as f64 };
    let samples = rate * c.batch_size as f64 * share(r.ok);
    let probe = c.probes.last().expect("the probe just recorded");
    c.max_rate_per_s = Some(rate);
    c.samples_per_s = Some(crate::stats::round3(samples));
    c.latency_ms = Some(crate::stats::LatencySummary {
        p50: probe.p50,
        p99: probe.p99,
        // Over the requests due, not the ok ones the phase's intervals are of.
        ci95: None,
        ..r.latency_ms
    });
    c.goodput_per_s = r.goodput_share.map(|g| crate::stats::round3(rate * g));
    // Cost is per sample: the measured cost scaled by the measured over these samples/s.
    c.cost_per_1m_usd = r
        .cost_per_1m_usd
        .filter(|_| samples > 0.0)
        .map(|cost| cost * r.samples_per_s / samples);
}

/// p50 and p99 of scheduled latency over every request due, as the SLO judges them; the ok
/// requests' own where fewer than that share completed ok (an infinite figure has no row),
/// or where the record's histogram does not hold its ok samples (one not from a run).
fn judged_percentiles(r: &PhaseResult) -> (f64, f64) {
    let l = &r.latency_ms;
    let Ok(h) = crate::results::decode_histogram(&r.histogram_hdr_b64) else {
        return (l.p50, l.p99);
    };
    if h.len() != r.ok || r.ok == 0 {
        return (l.p50, l.p99);
    }
    let m = crate::slo::Measured {
        scheduled: &h,
        ok: r.ok,
        errors: r.error_count(),
        unsent: r.unsent,
        overloaded: r.overloaded,
        req_per_s: r.req_per_s,
    };
    let at = |q: f64, own: f64| {
        let v = crate::slo::quantile_over_due_ms(&m, q);
        if v.is_finite() { v } else { own }
    };
    (at(0.5, l.p50), at(0.99, l.p99))
}

/// "53.1 req/s (425 samples/s) meets p99 ≤ 100 ms; 56.3 req/s did not".
fn answer(c: &Capacity) -> String {
    let lo = c.max_rate_per_s.unwrap_or(0.0);
    let above = match c.failed_at_per_s {
        Some(hi) => format!("; {} req/s did not", crate::text::sig3(hi)),
        None => format!(
            "; the closed-loop ceiling is {} req/s",
            crate::text::sig3(c.ceiling_per_s.unwrap_or(0.0))
        ),
    };
    // The bounds the answer rests on that ran out their time before they were stable.
    let unstable: Vec<String> = [Some(lo), c.failed_at_per_s]
        .into_iter()
        .flatten()
        .filter(|&rate| {
            c.probes
                .iter()
                .rev()
                .find(|p| p.bound && p.rate_per_s == crate::stats::round3(rate))
                .is_some_and(|p| p.stop_reason == "time")
        })
        .map(crate::text::sig3)
        .collect();
    let caveat = if unstable.is_empty() {
        String::new()
    } else {
        format!(
            " (not stable within the time bound at {} req/s)",
            unstable.join(" and ")
        )
    };
    format!(
        "{} req/s ({} samples/s) meets {}{above}{caveat}",
        crate::text::sig3(lo),
        crate::text::sig3(c.samples_per_s.unwrap_or(0.0)),
        c.slo
    )
}

/// How far a phase's worst objective is from its bound (> 1: missed), from its summary.
fn worst_ratio(slo: &Slo, r: &PhaseResult) -> f64 {
    let l = &r.latency_ms;
    let completed = r.ok + r.error_count();
    slo.objectives
        .iter()
        .map(|o| match *o {
            Objective::Latency {
                percentile,
                bound_ms,
            } => {
                let v = percentile.of(l);
                if r.ok == 0 {
                    f64::INFINITY
                } else {
                    v / bound_ms
                }
            }
            Objective::Errors { share } => {
                crate::slo::error_ratio(crate::slo::error_share(r.error_count(), completed), share)
            }
        })
        .fold(0.0, f64::max)
}

/// The batch size with the most samples per second within the SLO, and its cost.
pub fn advice(results: &[Capacity]) -> Option<String> {
    let best = results
        .iter()
        .filter(|c| c.max_rate_per_s.is_some())
        .max_by(|a, b| {
            a.samples_per_s
                .unwrap_or(0.0)
                .total_cmp(&b.samples_per_s.unwrap_or(0.0))
        })?;
    let cost = best
        .cost_per_1m_usd
        .map(|c| format!(", ${c:.4} per 1M samples"))
        .unwrap_or_default();
    Some(format!(
        "batch {}: the most samples/s within {}: {} samples/s at {} req/s{cost}",
        best.batch_size,
        best.slo,
        crate::text::sig3(best.samples_per_s.unwrap_or(0.0)),
        crate::text::sig3(best.max_rate_per_s.unwrap_or(0.0)),
    ))
}

/// `compare --slo`: the target whose best batch size meets the SLO at the lowest cost per
/// million samples (or, without prices, with the most samples/s), in one line.
pub fn cheapest(results: &[Capacity]) -> Option<String> {
    let met: Vec<&Capacity> = results
        .iter()
        .filter(|c| c.max_rate_per_s.is_some() && c.target.is_some())
        .collect();
    let priced = met.iter().all(|c| c.cost_per_1m_usd.is_some());
    let best = if priced {
        met.iter().min_by(|a, b| {
            a.cost_per_1m_usd
                .unwrap_or(f64::INFINITY)
                .total_cmp(&b.cost_per_1m_usd.unwrap_or(f64::INFINITY))
        })
    } else {
        met.iter().max_by(|a, b| {
            a.samples_per_s
                .unwrap_or(0.0)
                .total_cmp(&b.samples_per_s.unwrap_or(0.0))
        })
    }?;
    let name = best.target.as_deref().unwrap_or("?");
    Some(if priced {
        format!(
            "cheapest within {}: {name} at batch {}, ${:.4} per 1M samples ({} samples/s at {} req/s)",
            best.slo,
            best.batch_size,
            best.cost_per_1m_usd.unwrap_or(0.0),
            crate::text::sig3(best.samples_per_s.unwrap_or(0.0)),
            crate::text::sig3(best.max_rate_per_s.unwrap_or(0.0)),
        )
    } else {
        format!(
            "most capacity within {} (no prices to compare costs): {name} at batch {}, {} samples/s",
            best.slo,
            best.batch_size,
            crate::text::sig3(best.samples_per_s.unwrap_or(0.0)),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::phase_row;
    use crate::plan::PhaseKind;

    fn slo(s: &str) -> Slo {
        Slo {
            objectives: vec![s.parse().unwrap()],
        }
    }

    fn plan(batch_sizes: Vec<usize>) -> SearchPlan {
        SearchPlan {
            batch_sizes,
            concurrency: 8,
            ceiling_concurrency: 8,
            precision: 0.05,
            stability: 0.1,
            probe: crate::plan::ProbeRule {
                min_requests: 200,
                stability: 0.1,
                max: std::time::Duration::from_secs(30),
                throughput_only: false,
            },
        }
    }

    /// An M/M/1 endpoint, μ = 100/s: p99 of the sojourn time is ln 100 / (μ − λ).
    fn mm1(step: Step, slo: &Slo) -> PhaseResult {
        let mut r = phase_row(PhaseKind::Capacity, 1, 8, 0.0, 1.0, 1.0, None);
        let batch = match step {
            Step::Ceiling { batch_size } | Step::Probe { batch_size, .. } => batch_size,
        };
        let (rate, p99) = match step {
            Step::Ceiling { .. } => (100.0, 500.0),
            Step::Probe { rate_per_s, .. } if rate_per_s < 100.0 => {
                (rate_per_s, 100f64.ln() / (100.0 - rate_per_s) * 1000.0)
            }
            Step::Probe { rate_per_s, .. } => (rate_per_s, 10_000.0),
        };
        r.req_per_s = rate;
        // Batches of 8 take 8 samples a request at the same latency here.
        r.samples_per_s = rate * batch as f64;
        r.latency_ms.p99 = p99;
        r.ok = 1000;
        r.n = 1000;
        if let Step::Probe { .. } = step {
            let Objective::Latency { bound_ms, .. } = slo.objectives[0] else {
                unreachable!()
            };
            r.slo_met = Some(p99 <= bound_ms);
            r.stable = Some(true);
            r.stop_reason = Some("stable".into());
        }
        r
    }

    fn run(search: &mut Search, slo: &Slo) -> usize {
        let mut phases = 0;
        while let Some(step) = search.next_step() {
            phases += 1;
            assert!(phases < 50, "the search does not end");
            search.record(&mm1(step, slo));
        }
        phases
    }

    #[test]
    fn bisection_lands_within_the_precision_of_the_mm1_answer() {
        let s = slo("p99=100ms");
        let mut search = Search::new(plan(vec![1, 8]), s.clone());
        let phases = run(&mut search, &s);
        let want = 100.0 - 100f64.ln() / 0.1;
        assert_eq!(search.results().len(), 2);
        for c in search.results() {
            let got = c.max_rate_per_s.unwrap();
            let hi = c.failed_at_per_s.unwrap();
            assert!(got <= want && want <= hi, "{got} ≤ {want} ≤ {hi}");
            assert!(hi / got <= 1.05);
            assert!(c.complete);
            assert!(c.probes.len() <= 6, "{} probes", c.probes.len());
        }
        assert_eq!(phases, 2 * (1 + search.results()[0].probes.len()));
        assert!(advice(search.results()).unwrap().starts_with("batch 8:"));
    }

    #[test]
    fn an_slo_below_what_any_rate_gives_ends_with_no_rate() {
        // p99 ≥ 46 ms at any rate on this endpoint.
        let s = slo("p99=20ms");
        let mut search = Search::new(plan(vec![1]), s.clone());
        run(&mut search, &s);
        let c = &search.results()[0];
        assert_eq!(c.max_rate_per_s, None);
        assert!(
            c.verdict.starts_with("no rate meets p99 ≤ 20 ms"),
            "{}",
            c.verdict
        );
        assert!(c.probes.len() <= 4, "{:?}", c.probes);
        assert!(advice(search.results()).is_none());
    }

    /// The probe under way when the run stopped measured too little to bound anything: it
    /// is listed, the bracket stays where the finished probes put it, and the answer says so.
    #[test]
    fn a_probe_cut_short_by_a_stop_is_not_a_bound() {
        let s = slo("p99=100ms");
        let mut search = Search::new(plan(vec![1]), s.clone());
        // The ceiling, then 50 req/s meets.
        for _ in 0..2 {
            let step = search.next_step().unwrap();
            search.record(&mm1(step, &s));
        }
        let step = search.next_step().unwrap();
        let mut cut = mm1(step, &s);
        cut.n = 184;
        cut.slo_met = Some(false);
        cut.slo_missed = Some("p99 108.3 ms > 100 ms".into());
        cut.stable = Some(false);
        cut.stop_reason = Some("stopped".into());
        search.record(&cut);
        search.stop();
        let c = &search.results()[0];
        assert_eq!(c.failed_at_per_s, None, "{c:?}");
        assert_eq!(c.max_rate_per_s, Some(50.0));
        let last = c.probes.last().unwrap();
        assert!(!last.bound && !last.meets, "{last:?}");
        assert!(
            last.missed
                .as_deref()
                .unwrap()
                .contains("cut short at n 184 (minimum 200)"),
            "{last:?}"
        );
        assert!(
            c.verdict.contains("at least 50.0 req/s")
                && c.verdict
                    .contains("the probe at 75.0 req/s was cut short (n 184)"),
            "{}",
            c.verdict
        );
    }

    /// A probe that left requests unsent: its row's p99 is the one its verdict quotes, over
    /// every request due, not the ok requests' own.
    #[test]
    fn a_probe_row_has_the_p99_its_verdict_quotes() {
        let s = slo("p99=100ms");
        let mut search = Search::new(plan(vec![1]), s.clone());
        let step = search.next_step().unwrap();
        search.record(&mm1(step, &s));
        let step = search.next_step().unwrap();
        let mut h = crate::stats::phase_histogram();
        for _ in 0..989 {
            h.record(20_000).unwrap();
        }
        for ms in (91..=111).step_by(2) {
            h.record(ms * 1000).unwrap();
        }
        let mut r = mm1(step, &s);
        r.ok = 1000;
        r.n = 1000;
        r.unsent = 5;
        r.latency_ms = crate::stats::LatencySummary::of(&h);
        r.histogram_hdr_b64 = crate::results::encode_histogram(&h);
        r.judge(&s, &h);
        assert!(r.latency_ms.p99 < 100.0, "the ok requests' own p99 meets");
        search.record(&r);
        let p = &search.current().unwrap().probes[0];
        let missed = p.missed.as_deref().unwrap();
        assert!(!p.meets && p.p99 > 100.0, "{p:?}");
        assert_eq!(missed, format!("p99 {:.1} ms > 100 ms", p.p99));
    }

    /// A Poisson schedule sends a little more than its rate over a probe: the figures at
    /// the answer are the rate's, never more requests per second than the rate itself.
    #[test]
    fn goodput_and_samples_at_capacity_never_exceed_the_rate() {
        let s = slo("p99=100ms");
        let mut search = Search::new(plan(vec![8]), s.clone());
        while let Some(step) = search.next_step() {
            let mut r = mm1(step, &s);
            r.req_per_s *= 1.02;
            r.samples_per_s *= 1.02;
            r.goodput_per_s = Some(r.req_per_s * 0.995);
            r.goodput_share = Some(0.995);
            r.cost_per_1m_usd = Some(1e6 / r.samples_per_s);
            search.record(&r);
        }
        let c = &search.results()[0];
        let rate = c.max_rate_per_s.unwrap();
        assert!(c.goodput_per_s.unwrap() <= rate, "{c:?}");
        assert!((c.goodput_per_s.unwrap() - rate * 0.995).abs() < 1e-3);
        assert!(
            (c.samples_per_s.unwrap() - rate * 8.0).abs() < 1e-3,
            "{c:?}"
        );
        assert!((c.cost_per_1m_usd.unwrap() - 1e6 / (rate * 8.0)).abs() < 1e-6);
    }

    #[test]
    fn a_stopped_search_keeps_what_it_found() {
        let s = slo("p99=100ms");
        let mut search = Search::new(plan(vec![1, 8]), s.clone());
        for _ in 0..3 {
            let step = search.next_step().unwrap();
            search.record(&mm1(step, &s));
        }
        search.stop();
        assert!(search.next_step().is_none());
        let c = &search.results()[0];
        assert!(!c.complete && c.max_rate_per_s == Some(50.0), "{c:?}");
        assert!(c.verdict.contains("at least 50"), "{}", c.verdict);
    }
}
