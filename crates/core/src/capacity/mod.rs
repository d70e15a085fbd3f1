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
mod pool;
#[cfg(test)]
mod sim;
#[cfg(test)]
mod sim_tests;
mod size;
#[cfg(test)]
mod tests;
#[doc(hidden)]
pub mod theory;
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
        pooled_probes: None,
        pooled_requests: None,
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
    Ceiling { batch_size: usize },
    Probe {
        batch_size: usize,
        rate_per_s: f64,
        /// The requests it measures, fixed before it starts (`size`): it ends there, or at
        /// `--max-probe-secs`, never because its figures look settled.
        requests: u64,
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
    /// What the probes so far measured that sizes the next (`size`).
    seen: size::Seen,
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
            seen: size::Seen::default(),
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
                self.seen = size::Seen::default();
                Step::Ceiling { batch_size }
            }
            Some(c) => {
                let rate_per_s = self.next_rate(c);
                let requests = size::requests(
                    &self.slo,
                    self.plan.probe.min_requests,
                    rate_per_s,
                    self.seen,
                );
                Step::Probe {
                    batch_size: c.batch_size,
                    rate_per_s,
                    requests,
                }
            }
        };
        self.pending = Some(step);
        Some(step)
    }

    fn next_rate(&self, c: &Capacity) -> f64 {
        let ceiling = c.ceiling_per_s.expect("a ceiling before any probe");
        // The bracket is closed but the answer not yet sure enough: the next probe goes
        // where the probes so far put it, the rate it tells the most about.
        if self.converged()
            && let Some(p) = self.pooled()
        {
            return p.rate;
        }
        let bracket = next::Bracket {
            lo: c.max_rate_per_s,
            hi: c.failed_at_per_s.unwrap_or(ceiling),
            ceiling,
            precision: self.plan.precision,
        };
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
                let h = judge::histogram(r);
                let probe = self.probe_of(rate_per_s, r, h.as_ref());
                let bound = probe.bound;
                let c = self.current.as_mut().expect("checked above");
                c.probes.push(probe);
                // Cut short: a stop follows and says so; the bracket stays as it was.
                if !bound {
                    return;
                }
                let point = judge::point(&self.slo, rate_per_s, r, h.as_ref());
                self.points.push(point);
                self.seen.latency_s = Some(r.latency_ms.p50 / 1000.0).filter(|l| *l > 0.0);
                if let Some(noise) = point.noise.filter(|x| x.clusters > 0 && point.n > 0) {
                    self.seen.spells_per_request = Some(f64::from(noise.clusters) / point.n as f64);
                }
                let c = self.current.as_mut().expect("checked above");
                let inside = |x: f64| {
                    c.max_rate_per_s.is_none_or(|lo| x > lo)
                        && c.failed_at_per_s.is_none_or(|hi| x < hi)
                };
                // A probe outside the bracket (where the pooled answer sent it) is pooled
                // but moves neither end: latency grows with load, so it contradicts a
                // bound only by noise.
                let moves = inside(rate_per_s);
                if c.probes.last().is_some_and(|p| p.meets) {
                    if moves {
                        met_at(c, rate_per_s, r, h.as_ref());
                    }
                } else if moves && self.failed_at(rate_per_s, r) {
                    return;
                }
                self.note_width();
            }
        }
        if self.settled() {
            self.answer();
        }
    }

    /// The pooled answer as the probes stand (`pool`), from the middle of the bracket.
    fn pooled(&self) -> Option<pool::Pooled> {
        let c = self.current.as_ref()?;
        let (lo, ceiling) = (c.max_rate_per_s?, c.ceiling_per_s?);
        let hi = c.failed_at_per_s.unwrap_or(ceiling);
        pool::pooled(&self.points, ceiling, (lo * hi.max(lo)).sqrt())
    }

    /// Done: the bracket within the precision and the pooled answer's interval too, or a
    /// rate met and the probes bisection would have taken are spent.
    fn settled(&self) -> bool {
        let Some(c) = &self.current else {
            return false;
        };
        let bound = c.probes.iter().filter(|p| p.bound).count();
        if c.max_rate_per_s.is_some() && bound >= size::most_probes(self.plan.precision) {
            return true;
        }
        self.converged()
            && self
                .pooled()
                .is_none_or(|p| p.half_width() <= (1.0 + self.plan.precision).ln())
    }

    fn note_width(&mut self) {
        let Some(c) = &self.current else {
            return;
        };
        if let (Some(lo), Some(hi)) = (c.max_rate_per_s, c.failed_at_per_s.or(c.ceiling_per_s)) {
            self.widths.push(hi - lo);
        }
    }

    /// The settled batch size's answer, with its interval: the pooled one, or where no
    /// probe near the answer could be weighed, the highest rate that met in its bracket.
    fn answer(&mut self) {
        let pooled = self.pooled();
        let c = self.current.as_mut().expect("checked by settled");
        if let (Some(lo), Some(ceiling)) = (c.max_rate_per_s, c.ceiling_per_s) {
            let (rate, [a, b]) = match pooled {
                Some(p) => (p.rate, p.ci),
                None => (
                    lo,
                    uncertainty::interval(&self.points, lo, c.failed_at_per_s, ceiling),
                ),
            };
            at_answer(c, lo, rate);
            // Outwards to the thousandth, so the rounding never narrows it.
            c.max_rate_ci95_per_s = Some([(a * 1e3).floor() / 1e3, (b * 1e3).ceil() / 1e3]);
            c.pooled_probes = pooled.map(|p| p.probes);
            c.pooled_requests = pooled.map(|p| p.requests);
        }
        c.verdict = words::answer(c, self.plan.precision);
        self.finish(true);
    }

    /// The probe's row: one p50 and one p99, those the SLO was judged on, with their
    /// intervals.
    fn probe_of(
        &self,
        rate_per_s: f64,
        r: &PhaseResult,
        h: Option<&hdrhistogram::Histogram<u64>>,
    ) -> Probe {
        let cut_short = r.stop_reason.as_deref() == Some("stopped");
        let [(p50, p50_ci95), (p99, p99_ci95)] = judge::percentiles(r, h);
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

/// The answer at `rate`, where the highest probe that met was at `lo`: the figures scale
/// with the rate (samples/s and goodput by the probe's shares, cost per sample inversely);
/// latency stays that probe's, the nearest measured.
fn at_answer(c: &mut Capacity, lo: f64, rate: f64) {
    if rate == lo {
        return;
    }
    let k = rate / lo;
    c.max_rate_per_s = Some(rate);
    c.samples_per_s = c.samples_per_s.map(|s| crate::stats::round3(s * k));
    c.goodput_per_s = c.goodput_per_s.map(|g| crate::stats::round3(g * k));
    c.cost_per_1m_usd = c.cost_per_1m_usd.map(|x| x / k);
}

/// A probe that met the SLO at `rate`: the bracket's new lower end, and the figures at it.
/// Samples/s and goodput are the rate's, times the probe's shares of the requests due: a
/// Poisson schedule sends a few more or fewer than its rate over a probe, and the achieved
/// figures beside the offered rate would read as more than the rate (185 req/s with a
/// goodput of 188/s).
fn met_at(c: &mut Capacity, rate: f64, r: &PhaseResult, h: Option<&hdrhistogram::Histogram<u64>>) {
    let due = r.ok + r.error_count() + r.unsent;
    let share = |k: u64| if due == 0 { 0.0 } else { k as f64 / due as f64 };
    let samples = rate * c.batch_size as f64 * share(r.ok);
    let probe = c.probes.last().expect("the probe just recorded");
    c.max_rate_per_s = Some(rate);
    c.samples_per_s = Some(crate::stats::round3(samples));
    // Over the requests due, as the probe's row; its intervals too.
    c.latency_ms = Some(
        judge::over_due(r, h).unwrap_or(crate::stats::LatencySummary {
            p50: probe.p50,
            p99: probe.p99,
            ..r.latency_ms
        }),
    );
    c.goodput_per_s = r.goodput_share.map(|g| crate::stats::round3(rate * g));
    // Cost is per sample: the measured cost scaled by the measured over these samples/s.
    c.cost_per_1m_usd = r
        .cost_per_1m_usd
        .filter(|_| samples > 0.0)
        .map(|cost| cost * r.samples_per_s / samples);
}
