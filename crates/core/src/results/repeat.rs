//! `--repeat K`: a phase measured K times with fresh seeds, the repetitions taking turns with
//! the other phases so that drift of the machine or the network falls on all of them.
//!
//! Two answers come out of it. The pooled phase adds the repetitions' counts and histograms
//! up exactly (as `report --merge` adds hosts), so its percentiles and their order-statistic
//! intervals are those of one phase holding every request. And across the repetitions, the
//! mean of each headline figure with a 95 % interval from their spread: the part of the
//! uncertainty one phase cannot see, because its requests share the machine's mood of the
//! moment.

use super::{ClientCpu, PhaseResult, decode_histogram, encode_histogram, tail_ratio};
use crate::plan::PhaseKind;
use crate::slo::Slo;
use crate::stats::{LatencySummary, phase_histogram, round3};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The mean of one figure over K repetitions, its standard deviation, and the 95 % interval
/// of the mean (Student's t with K − 1 degrees of freedom; none below two repetitions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub mean: f64,
    pub sd: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
}

impl Spread {
    /// `None` without values or where any is not finite.
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let k = values.len() as f64;
        let mean = values.iter().sum::<f64>() / k;
        let sd = if values.len() > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt()
        } else {
            0.0
        };
        let ci95 = (values.len() > 1).then(|| {
            let half = crate::significance::t_quantile(0.975, k - 1.0) * sd / k.sqrt();
            [mean - half, mean + half]
        });
        Some(Spread { mean, sd, ci95 })
    }
}

/// The headline figures of a phase across its repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Across {
    pub repetitions: u32,
    pub p50_ms: Option<Spread>,
    pub p99_ms: Option<Spread>,
    pub req_per_s: Option<Spread>,
    pub samples_per_s: Option<Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_1m_usd: Option<Spread>,
}

impl Across {
    pub fn of(reps: &[PhaseResult]) -> Across {
        let figure = |f: fn(&PhaseResult) -> Option<f64>| {
            let v: Option<Vec<f64>> = reps.iter().map(f).collect();
            v.and_then(|v| Spread::of(&v))
        };
        Across {
            repetitions: reps.len() as u32,
            p50_ms: figure(|p| (p.ok > 0).then_some(p.latency_ms.p50)),
            p99_ms: figure(|p| (p.ok > 0).then_some(p.latency_ms.p99)),
            req_per_s: figure(|p| Some(p.req_per_s)),
            samples_per_s: figure(|p| Some(p.samples_per_s)),
            cost_per_1m_usd: figure(|p| p.cost_per_1m_usd),
        }
    }
}

/// What makes two phases repetitions of one: the same target, kind, batch, cap and pace.
fn same_phase(a: &PhaseResult, b: &PhaseResult) -> bool {
    a.target == b.target
        && a.kind == b.kind
        && a.batch_size == b.batch_size
        && a.concurrency == b.concurrency
        && a.request_rate.map(f64::to_bits) == b.request_rate.map(f64::to_bits)
        && a.burstiness.map(f64::to_bits) == b.burstiness.map(f64::to_bits)
}

/// The phases as the tables read them: each repeated phase pooled, holding its repetitions,
/// in the order their first repetitions ran; phases run once, and a capacity search's
/// probes (each search is a repetition of its own, its probes at rates of their own), as
/// they were. Derived figures (efficiency, cost) are computed again over the result.
pub fn pool(phases: &[PhaseResult], slo: &Slo, price_per_hour: Option<f64>) -> Vec<PhaseResult> {
    if phases.iter().all(|p| p.repetition.is_none()) {
        return phases.to_vec();
    }
    // Each group: the index in `out` of its first repetition, and the repetitions so far.
    let mut out: Vec<PhaseResult> = Vec::new();
    let mut groups: Vec<(usize, Vec<PhaseResult>)> = Vec::new();
    for p in phases {
        let joins = match p.repetition {
            Some(k) if k > 1 && p.kind != PhaseKind::Capacity => {
                groups.iter().rposition(|(_, g)| {
                    let last = g.last().expect("a group holds one at least");
                    same_phase(last, p) && last.repetition == Some(k - 1)
                })
            }
            _ => None,
        };
        match joins {
            Some(g) => groups[g].1.push(p.clone()),
            None if p.repetition.is_some() && p.kind != PhaseKind::Capacity => {
                groups.push((out.len(), vec![p.clone()]));
                out.push(p.clone());
            }
            None => out.push(p.clone()),
        }
    }
    for (at, reps) in groups {
        out[at] = pooled(reps, slo);
    }
    super::derive(&mut out, price_per_hour);
    out
}

/// One phase holding every request of `reps`: counts and histograms added, rates over the
/// time they measured together, the SLO judged again on the whole.
fn pooled(reps: Vec<PhaseResult>, slo: &Slo) -> PhaseResult {
    let mut p = reps[0].clone();
    p.repetition = None;
    let hist = |get: fn(&PhaseResult) -> Option<&String>| {
        let mut h = phase_histogram();
        for r in &reps {
            let part = get(r).and_then(|b64| decode_histogram(b64).ok())?;
            h.add(&part).ok()?;
        }
        Some(h)
    };
    let scheduled = hist(|r| Some(&r.histogram_hdr_b64)).unwrap_or_else(phase_histogram);
    let service = hist(|r| r.service_hdr_b64.as_ref());
    let dispatch = hist(|r| r.dispatch_delay_hdr_b64.as_ref());
    let sum = |f: fn(&PhaseResult) -> u64| reps.iter().map(f).sum::<u64>();
    p.n = sum(|r| r.n);
    p.sent = sum(|r| r.sent);
    p.unsent = sum(|r| r.unsent);
    p.ok = sum(|r| r.ok);
    p.errors = add_counts(reps.iter().map(|r| &r.errors));
    p.variants = add_counts(reps.iter().map(|r| &r.variants));
    for r in &reps[1..] {
        for (kind, said) in &r.error_bodies {
            p.error_bodies
                .entry(kind.clone())
                .or_insert_with(|| said.clone());
        }
    }
    p.latency_ms = LatencySummary::of(&scheduled);
    p.p99_over_p50 = tail_ratio(p.latency_ms.p50, p.latency_ms.p99);
    p.histogram_hdr_b64 = encode_histogram(&scheduled);
    if let Some(h) = &service {
        p.service_ms = LatencySummary::of(h);
    }
    if let Some(h) = &dispatch {
        p.dispatch_delay_ms = LatencySummary::of(h);
    }
    p.service_hdr_b64 = service.as_ref().map(encode_histogram);
    p.dispatch_delay_hdr_b64 = dispatch.as_ref().map(encode_histogram);
    pool_rates(&mut p, &reps);
    p.input_tokens = crate::lengths::InputTokens::pooled(reps.iter().map(|r| &r.input_tokens));
    // Summaries without a histogram in the export cannot be added exactly: each
    // repetition keeps its own.
    p.tokenize_ms = None;
    p.server_time_ms = None;
    // Slices of repetitions run at other times: each repetition keeps its own.
    p.slices = Vec::new();
    p.slo_breaks = Vec::new();
    p.endpoint_lost = crate::reach::pooled(reps.iter().flat_map(|r| &r.endpoint_lost));
    p.client_cpu_ms_per_request = ClientCpu::pooled(
        reps.iter()
            .filter_map(|r| r.client_cpu_ms_per_request.as_ref()),
    );
    p.server_metrics = None;
    p.cloudwatch = None;
    p.server = pool_server(&reps);
    p.stable = None;
    p.stop_reason = None;
    p.wall = reps[0]
        .wall
        .zip(reps[reps.len() - 1].wall)
        .map(|(a, b)| (a.0, b.1));
    p.judge(slo, &scheduled);
    p.across = Some(Across::of(&reps));
    p.repetitions = reps;
    p
}

/// Rates over the repetitions' measured time together; lags the worst of them.
fn pool_rates(p: &mut PhaseResult, reps: &[PhaseResult]) {
    let secs: f64 = reps.iter().map(|r| r.duration_s).sum();
    let over = |f: fn(&PhaseResult) -> f64| {
        if secs > 0.0 {
            reps.iter().map(|r| f(r) * r.duration_s).sum::<f64>() / secs
        } else {
            0.0
        }
    };
    p.duration_s = round3(secs);
    p.req_per_s = over(|r| r.req_per_s);
    p.samples_per_s = over(|r| r.samples_per_s);
    p.offered_per_s = p
        .offered_per_s
        .map(|_| over(|r| r.offered_per_s.unwrap_or(0.0)));
    p.overloaded = reps.iter().any(|r| r.overloaded);
    let worst = |f: fn(&PhaseResult) -> Option<f64>| reps.iter().filter_map(f).reduce(f64::max);
    p.max_lag_ms = worst(|r| r.max_lag_ms);
    p.queue_lag_ms = worst(|r| r.queue_lag_ms);
}

fn add_counts<'a>(maps: impl Iterator<Item = &'a BTreeMap<String, u64>>) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for m in maps {
        for (k, v) in m {
            *out.entry(k.clone()).or_default() += v;
        }
    }
    out
}

/// The server's breakdown per request over every repetition: its times weighted by the
/// requests each repetition's statistics counted.
fn pool_server(reps: &[PhaseResult]) -> Option<super::ServerBreakdown> {
    let parts: Vec<super::ServerBreakdown> = reps.iter().filter_map(|r| r.server).collect();
    if parts.len() != reps.len() {
        return None;
    }
    let inferences: u64 = parts.iter().map(|s| s.inference_count).sum();
    let executions: u64 = parts.iter().map(|s| s.execution_count).sum();
    let weighted = |f: fn(&super::ServerBreakdown) -> f64| {
        if inferences == 0 {
            return 0.0;
        }
        parts
            .iter()
            .map(|s| f(s) * s.inference_count as f64)
            .sum::<f64>()
            / inferences as f64
    };
    Some(super::ServerBreakdown {
        inference_count: inferences,
        execution_count: executions,
        batch_factor: (executions > 0).then(|| inferences as f64 / executions as f64),
        queue_ms: weighted(|s| s.queue_ms),
        compute_input_ms: weighted(|s| s.compute_input_ms),
        compute_infer_ms: weighted(|s| s.compute_infer_ms),
        compute_output_ms: weighted(|s| s.compute_output_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::phase_row;

    fn rep(b: usize, k: u32, latencies_ms: &[u64], secs: f64) -> PhaseResult {
        let mut h = phase_histogram();
        for &ms in latencies_ms {
            h.record(ms * 1000).unwrap();
        }
        let mut p = phase_row(PhaseKind::Batch, b, 1, 0.0, 1.0, 1.0, None);
        p.repetition = Some(k);
        p.n = latencies_ms.len() as u64;
        p.ok = p.n;
        p.sent = p.n;
        p.duration_s = secs;
        p.req_per_s = p.n as f64 / secs;
        p.samples_per_s = p.req_per_s * b as f64;
        p.latency_ms = LatencySummary::of(&h);
        p.histogram_hdr_b64 = encode_histogram(&h);
        p.service_hdr_b64 = Some(encode_histogram(&h));
        p.dispatch_delay_hdr_b64 = Some(encode_histogram(&phase_histogram()));
        p
    }

    /// A batch sweep of 1 and 8, three times over, round robin: two pooled phases in the
    /// sweep's order, each holding its three repetitions, with the counts and the
    /// histogram of all of them and the rate over their time together.
    #[test]
    fn repetitions_pool_exactly_in_the_order_they_first_ran() {
        let mut phases = Vec::new();
        for k in 1..=3 {
            phases.push(rep(1, k, &[10, 10, 10, 10], 0.04 * f64::from(k)));
            phases.push(rep(8, k, &[20 + u64::from(k); 2], 0.04));
        }
        let pooled = pool(&phases, &Slo::default(), Some(3.6));
        assert_eq!(pooled.len(), 2);
        let (one, eight) = (&pooled[0], &pooled[1]);
        assert_eq!((one.batch_size, one.n, one.ok), (1, 12, 12));
        assert_eq!(one.repetitions.len(), 3);
        assert!(
            one.repetitions
                .iter()
                .map(|r| r.repetition)
                .eq([1, 2, 3].map(Some))
        );
        assert_eq!(one.repetition, None);
        // 12 requests over 0.04 + 0.08 + 0.12 s.
        assert!(
            (one.req_per_s - 12.0 / 0.24).abs() < 1e-9,
            "{}",
            one.req_per_s
        );
        assert_eq!(eight.n, 6);
        assert!(
            (eight.latency_ms.min - 21.0).abs() < 0.05
                && (eight.latency_ms.max - 23.0).abs() < 0.05
        );
        let across = eight.across.as_ref().unwrap();
        assert_eq!(across.repetitions, 3);
        let p50 = across.p50_ms.unwrap();
        assert!(
            (p50.mean - 22.0).abs() < 0.05 && (p50.sd - 1.0).abs() < 0.05,
            "{p50:?}"
        );
        // t(0.975, 2) = 4.303: 22 ± 4.303 / √3.
        let [lo, hi] = p50.ci95.unwrap();
        assert!(
            (hi - lo - 2.0 * 4.303 / 3f64.sqrt()).abs() < 0.05,
            "{lo} {hi}"
        );
        // Derived again over the pooled sweep: efficiency against the pooled batch 1.
        let eff = eight.samples_per_s / one.samples_per_s / 8.0;
        assert!((eight.batch_efficiency.unwrap() - eff).abs() < 1e-9);
        assert!(eight.cost_per_1m_usd.is_some());
    }

    #[test]
    fn phases_run_once_stay_as_they_were() {
        let phases = vec![phase_row(PhaseKind::Batch, 1, 1, 10.0, 1.0, 2.0, None)];
        assert_eq!(pool(&phases, &Slo::default(), None), phases);
    }

    #[test]
    fn a_spread_of_one_value_has_no_interval() {
        let s = Spread::of(&[3.0]).unwrap();
        assert_eq!((s.mean, s.sd, s.ci95), (3.0, 0.0, None));
        assert!(Spread::of(&[]).is_none());
        assert!(Spread::of(&[1.0, f64::NAN]).is_none());
    }
}
