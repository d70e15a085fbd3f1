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
        phases[i].rate_not_meaningful = phases[i].n < phases[i].concurrency as u64;
    }
}

/// samples/s of the batch-1 row in the same sweep (the run of consecutive batch phases
/// around row `i`) at the same concurrency.
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
        .find(|q| q.batch_size == 1 && q.concurrency == phases[i].concurrency)
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
}
