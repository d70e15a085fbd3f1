//! Figures derived from measured phases: batch efficiency, cost per million, tail ratio.

use serde::Deserialize;
use std::collections::BTreeMap;

/// Batch efficiency(N) = (samples/s at N) / (samples/s at 1) / N: 1.0 means batching is free.
pub fn batch_efficiency(samples_per_s_at_n: f64, samples_per_s_at_1: f64, n: usize) -> Option<f64> {
    (samples_per_s_at_1 > 0.0 && n > 0).then(|| samples_per_s_at_n / samples_per_s_at_1 / n as f64)
}

/// Cost per 1M samples = hourly price / (samples/s × 3600) × 1,000,000.
pub fn cost_per_million(price_per_hour: f64, samples_per_s: f64) -> Option<f64> {
    (samples_per_s > 0.0).then(|| price_per_hour / (samples_per_s * 3600.0) * 1_000_000.0)
}

pub fn tail_ratio(p50: f64, p99: f64) -> Option<f64> {
    (p50 > 0.0).then(|| p99 / p50)
}

#[derive(Debug, Deserialize)]
struct PriceTable {
    usd_per_hour: BTreeMap<String, f64>,
}

/// Hourly price of a SageMaker instance type from the shipped table.
pub fn instance_price(instance_type: &str) -> Option<f64> {
    let table: PriceTable =
        serde_json::from_str(crate::assets::PRICES).expect("shipped price table parses");
    table.usd_per_hour.get(instance_type).copied()
}

pub fn known_instance_types() -> Vec<String> {
    let table: PriceTable =
        serde_json::from_str(crate::assets::PRICES).expect("shipped price table parses");
    table.usd_per_hour.into_keys().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_figures() {
        // Batch scaling at natural length: b=1 55.2/s, b=8 408.6/s (0.93), b=32 1280.8/s (0.73).
        assert!((batch_efficiency(408.6, 55.2, 8).unwrap() - 0.925).abs() < 0.001);
        assert!((batch_efficiency(1280.8, 55.2, 32).unwrap() - 0.725).abs() < 0.001);
        // ml.g5.xlarge at 113 samples/s.
        let c = cost_per_million(instance_price("ml.g5.xlarge").unwrap(), 113.0).unwrap();
        assert!((c - 3.461).abs() < 0.001, "{c}");
        assert_eq!(batch_efficiency(1.0, 0.0, 8), None);
        assert_eq!(instance_price("ml.nope"), None);
    }
}
