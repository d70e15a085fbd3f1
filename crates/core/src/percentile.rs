//! The percentiles the tool names: p50, p90, p95, p99 and p999, as the tables, the SLO's
//! objectives (`--slo p99=100ms`) and the `--fail-on` thresholds (`p99>200ms`) all spell them.

use crate::stats::LatencySummary;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Percentile {
    P50,
    P90,
    P95,
    P99,
    P999,
}

impl Percentile {
    pub const ALL: [Percentile; 5] = [
        Percentile::P50,
        Percentile::P90,
        Percentile::P95,
        Percentile::P99,
        Percentile::P999,
    ];

    /// The name the tables give it.
    pub fn name(self) -> &'static str {
        match self {
            Percentile::P50 => "p50",
            Percentile::P90 => "p90",
            Percentile::P95 => "p95",
            Percentile::P99 => "p99",
            Percentile::P999 => "p999",
        }
    }

    /// `p99` is 0.99.
    pub fn quantile(self) -> f64 {
        match self {
            Percentile::P50 => 0.50,
            Percentile::P90 => 0.90,
            Percentile::P95 => 0.95,
            Percentile::P99 => 0.99,
            Percentile::P999 => 0.999,
        }
    }

    /// The percentile of this name (`p99`), in any case.
    pub fn named(name: &str) -> Option<Percentile> {
        Percentile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// This percentile of a phase's latency summary.
    pub fn of(self, l: &LatencySummary) -> f64 {
        match self {
            Percentile::P50 => l.p50,
            Percentile::P90 => l.p90,
            Percentile::P95 => l.p95,
            Percentile::P99 => l.p99,
            Percentile::P999 => l.p999,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_quantiles_go_both_ways() {
        for p in Percentile::ALL {
            assert_eq!(Percentile::named(p.name()), Some(p));
        }
        assert_eq!(Percentile::named("P99"), Some(Percentile::P99));
        assert_eq!(Percentile::named("p98"), None);
        assert_eq!(Percentile::P999.quantile(), 0.999);
    }
}
