//! Capacity search: for each batch size, the highest offered open-loop rate whose phase meets
//! the SLO. The engine runs the phases; this decides which phase comes next and what the
//! results say.
//!
//! Per batch size: a closed-loop phase at the concurrency cap first. Its throughput is the
//! most the endpoint completes at that cap, so no offered rate above it can be kept up with:
//! the bracket's upper end. Then probes, each run until stable (`plan::ProbeRule`), between
//! the highest rate that met the SLO and the lowest that did not, until the two are within
//! the precision. Each probe goes where the probes so far say the latency reaches the bound
//! (`next`: a line through them against 1/(ceiling − rate), queueing's shape near
//! saturation), a little below it, so that it meets and one probe above closes the bracket;
//! bisection takes over where the probes point nowhere inside the bracket, their latencies
//! do not rise with load, or the bracket did not halve over two probes, so the search never
//! takes more than about twice bisection's probes however noisy they are.
//!
//! Going down from the ceiling, two failed probes at λ and at most λ/2 bound what any lower
//! rate can do: latency grows with load, and ever faster, so the line through the two lies
//! below the latency at every rate under the lower one. If that line is still past the bound
//! at zero load, no rate meets the SLO and the search says so instead of halving for ever.
//!
//! A finished answer carries a 95 % interval on its rate (`uncertainty`): the bracket,
//! widened by the noise of the probes at its ends.

mod judge;
mod next;
#[cfg(test)]
mod sim;
#[cfg(test)]
mod sim_tests;
#[cfg(test)]
mod tests;
mod uncertainty;
mod words;

use crate::results::PhaseResult;
pub use crate::results::capacity::{Capacity, Probe};
use crate::slo::Slo;
use judge::Point;
pub use words::{advice, cheapest, shown};

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
        failed_at_per_s: None,
        max_rate_ci95_per_s: None,
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
    /// The bound probes of the batch size being searched, as points of its latency curve.
    points: Vec<Point>,
    /// The bracket's width after each bound probe since a rate first met.
    widths: Vec<f64>,
    /// Bisection only: the search before it used the probes' latencies (`sim_tests`
    /// compares the two).
    #[cfg(test)]
    bisect_only: bool,
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
            points: Vec::new(),
            widths: Vec::new(),
            #[cfg(test)]
            bisect_only: false,
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
                self.points.clear();
                self.widths.clear();
                Step::Ceiling { batch_size }
            }
            Some(c) => Step::Probe {
                batch_size: c.batch_size,
                rate_per_s: self.next_rate(c),
            },
        };
        self.pending = Some(step);
        Some(step)
    }

    fn next_rate(&self, c: &Capacity) -> f64 {
        let ceiling = c.ceiling_per_s.expect("a ceiling before any probe");
        let bracket = next::Bracket {
            lo: c.max_rate_per_s,
            hi: c.failed_at_per_s.unwrap_or(ceiling),
            ceiling,
            precision: self.plan.precision,
        };
        #[cfg(test)]
        if self.bisect_only {
            return bracket
                .lo
                .map_or(bracket.hi / 2.0, |lo| f64::midpoint(lo, bracket.hi));
        }
        next::rate(&self.points, bracket, self.halving(c))
    }

    /// Bisection's turn: the bracket did not halve over the last two probes, or going down
    /// the probes' latencies have already pointed above the answer twice.
    fn halving(&self, c: &Capacity) -> bool {
        if c.max_rate_per_s.is_none() {
            return self.points.len() >= 3;
        }
        let w = &self.widths;
        w.len() >= 3 && w[w.len() - 1] > w[w.len() - 3] / 2.0
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
                self.points.push(judge::point(&self.slo, rate_per_s, r));
                let c = self.current.as_mut().expect("checked above");
                if c.probes.last().is_some_and(|p| p.meets) {
                    met_at(c, rate_per_s, r);
                } else if self.failed_at(rate_per_s, r) {
                    return;
                }
                self.note_width();
            }
        }
        if self.converged() {
            self.answer();
        }
    }

    fn note_width(&mut self) {
        let Some(c) = &self.current else {
            return;
        };
        if let (Some(lo), Some(hi)) = (c.max_rate_per_s, c.failed_at_per_s.or(c.ceiling_per_s)) {
            self.widths.push(hi - lo);
        }
    }

    /// The converged batch size's answer, with its interval.
    fn answer(&mut self) {
        let c = self.current.as_mut().expect("checked by converged");
        if let (Some(lo), Some(ceiling)) = (c.max_rate_per_s, c.ceiling_per_s) {
            let [a, b] = uncertainty::interval(&self.points, lo, c.failed_at_per_s, ceiling);
            // Outwards to the thousandth, so the rounding never narrows it.
            c.max_rate_ci95_per_s = Some([(a * 1e3).floor() / 1e3, (b * 1e3).ceil() / 1e3]);
        }
        c.verdict = words::answer(c);
        self.finish(true);
    }

    /// The probe's row: one p50 and one p99, those the SLO was judged on, with their
    /// intervals.
    fn probe_of(&self, rate_per_s: f64, r: &PhaseResult) -> Probe {
        let cut_short = r.stop_reason.as_deref() == Some("stopped");
        let [(p50, p50_ci95), (p99, p99_ci95)] = judge::percentiles(r);
        Probe {
            rate_per_s: crate::stats::round3(rate_per_s),
            n: r.n,
            p50,
            p99,
            p50_ci95,
            p99_ci95,
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
        let upper = c
            .failed_at_per_s
            .and_then(|hi| self.points.iter().rev().find(|p| p.rate == hi).copied());
        c.failed_at_per_s = Some(rate_per_s);
        if c.max_rate_per_s.is_some() {
            return false;
        }
        let this = *self.points.last().expect("the probe just recorded");
        let no_better = upper.is_some_and(|u| next::no_rate_meets(&u, &this));
        let ceiling = c.ceiling_per_s.unwrap_or(rate_per_s);
        if !(no_better || rate_per_s <= ceiling * FLOOR_SHARE) {
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
    // Over the requests due, as the probe's row; its intervals too.
    c.latency_ms = Some(judge::over_due(r).unwrap_or(crate::stats::LatencySummary {
        p50: probe.p50,
        p99: probe.p99,
        ..r.latency_ms
    }));
    c.goodput_per_s = r.goodput_share.map(|g| crate::stats::round3(rate * g));
    // Cost is per sample: the measured cost scaled by the measured over these samples/s.
    c.cost_per_1m_usd = r
        .cost_per_1m_usd
        .filter(|_| samples > 0.0)
        .map(|cost| cost * r.samples_per_s / samples);
}
