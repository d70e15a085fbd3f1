//! The figures a phase gets from the phases around it and the price: batch efficiency against
//! the batch-1 row of its sweep, cost per million samples, and the tail ratio.

use super::PhaseResult;
use crate::plan::PhaseKind;
use crate::pricing::cost_per_million;

/// Batch efficiency(N) = (samples/s at N) / (samples/s at 1) / N: 1.0 means batching is free.
pub fn batch_efficiency(samples_per_s_at_n: f64, samples_per_s_at_1: f64, n: usize) -> Option<f64> {
    (samples_per_s_at_1 > 0.0 && n > 0).then(|| samples_per_s_at_n / samples_per_s_at_1 / n as f64)
}

/// p99 over p50: how far the tail reaches past the median.
pub fn tail_ratio(p50: f64, p99: f64) -> Option<f64> {
    (p50 > 0.0).then(|| p99 / p50)
}

/// Fills efficiency (against the batch-1 phase of the same sweep and concurrency), cost,
/// and whether the phase measured enough requests for a rate.
pub fn derive(phases: &mut [PhaseResult], price_per_hour: Option<f64>) {
    for i in 0..phases.len() {
        let p = &phases[i];
        let eff = (p.kind == PhaseKind::Batch)
            .then(|| batch_one_of_sweep(phases, i))
            .flatten()
            .and_then(|b| batch_efficiency(p.samples_per_s, b, p.batch_size));
        let cost = price_per_hour.and_then(|price| cost_per_million(price, p.samples_per_s));
        phases[i].batch_efficiency = eff;
        phases[i].cost_per_1m_usd = cost;
        phases[i].rate_not_meaningful = phases[i].n < most_in_flight(&phases[i]);
    }
}

/// The most requests a phase can have had in flight at once: its cap, and in an open loop
/// no more than its schedule puts in flight over a latency (Little's law), which under the
/// open loop's default cap of 1024 is far fewer. A phase with fewer measured requests may
/// have had them all in flight at once: its rate is one latency's worth.
fn most_in_flight(p: &PhaseResult) -> u64 {
    let cap = p.concurrency as u64;
    match p.offered_per_s {
        Some(offered) => cap.min((offered * p.latency_ms.mean / 1000.0).ceil() as u64),
        None => cap,
    }
}

/// samples/s of the batch-1 row in the same sweep (the run of consecutive batch phases
/// around row `i`) at the same concurrency and in the same repetition (`--repeat` takes
/// the sweep's batch sizes in turns).
fn batch_one_of_sweep(phases: &[PhaseResult], i: usize) -> Option<f64> {
    let is_batch = |p: &PhaseResult| p.kind == PhaseKind::Batch;
    let start = phases[..i]
        .iter()
        .rposition(|p| !is_batch(p))
        .map_or(0, |k| k + 1);
    let end = phases[i..]
        .iter()
        .position(|p| !is_batch(p))
        .map_or(phases.len(), |k| i + k);
    phases[start..end]
        .iter()
        .find(|q| {
            q.batch_size == 1
                && q.concurrency == phases[i].concurrency
                && q.repetition == phases[i].repetition
        })
        .map(|q| q.samples_per_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_figures() {
        // Batch scaling at natural length: b=1 55.2/s, b=8 408.6/s (0.93), b=32 1280.8/s (0.73).
        assert!((batch_efficiency(408.6, 55.2, 8).unwrap() - 0.925).abs() < 0.001);
        assert!((batch_efficiency(1280.8, 55.2, 32).unwrap() - 0.725).abs() < 0.001);
        assert_eq!(batch_efficiency(1.0, 0.0, 8), None);
    }

    #[test]
    fn an_open_loop_under_the_default_cap_has_a_rate_once_it_outlasts_a_latency() {
        use crate::fixtures::phase_row;
        // 100 requests at 50/s of 20 ms: one in flight at a time, whatever the cap.
        let mut open = phase_row(PhaseKind::Batch, 1, 1024, 50.0, 20.0, 25.0, None);
        open.offered_per_s = Some(50.0);
        open.latency_ms.mean = 20.0;
        let mut closed = open.clone();
        closed.offered_per_s = None;
        // 100 requests at 1000/s of 200 ms: 200 in flight, all of them at once.
        let mut burst = open.clone();
        burst.offered_per_s = Some(1000.0);
        burst.latency_ms.mean = 200.0;
        let mut phases = vec![open, closed, burst];
        derive(&mut phases, None);
        let flags: Vec<bool> = phases.iter().map(|p| p.rate_not_meaningful).collect();
        assert_eq!(flags, [false, true, true]);
    }
}
