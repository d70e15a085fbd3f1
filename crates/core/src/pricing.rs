//! What an instance costs: the shipped SageMaker price table, and a million samples at a
//! measured throughput.

use serde::Deserialize;
use std::collections::BTreeMap;

/// Cost per 1M samples = hourly price / (samples/s × 3600) × 1,000,000.
pub fn cost_per_million(price_per_hour: f64, samples_per_s: f64) -> Option<f64> {
    (samples_per_s > 0.0).then(|| price_per_hour / (samples_per_s * 3600.0) * 1_000_000.0)
}

/// `assets/prices.json`: hourly prices and where and when they were read.
#[derive(Debug, Deserialize)]
struct PriceTable {
    usd_per_hour: BTreeMap<String, f64>,
    region: String,
    offer: String,
    date: String,
}

fn price_table() -> PriceTable {
    serde_json::from_str(crate::assets::PRICES).expect("shipped price table parses")
}

/// Hourly price of a SageMaker instance type from the shipped table.
pub fn instance_price(instance_type: &str) -> Option<f64> {
    price_table().usd_per_hour.get(instance_type).copied()
}

pub fn known_instance_types() -> Vec<String> {
    price_table().usd_per_hour.into_keys().collect()
}

/// `ml.g5` of `ml.g5.xlarge`.
fn family(instance_type: &str) -> &str {
    instance_type
        .rfind('.')
        .map_or(instance_type, |i| &instance_type[..i])
}

/// Why `instance_type` has no shipped price and what to do, short enough for one line
/// whatever the table holds: the priced sizes of its family, smallest first, or the priced
/// families when the family is not there.
pub fn unpriced(instance_type: &str) -> String {
    let t = price_table();
    let mut sizes: Vec<(&String, f64)> = t
        .usd_per_hour
        .iter()
        .filter(|(k, _)| family(k) == family(instance_type))
        .map(|(k, v)| (k, *v))
        .collect();
    sizes.sort_by(|a, b| a.1.total_cmp(&b.1));
    let known = if sizes.is_empty() {
        let mut families: Vec<&str> = t.usd_per_hour.keys().map(|k| family(k)).collect();
        families.dedup();
        format!("families priced: {}", families.join(", "))
    } else {
        let names: Vec<&str> = sizes.iter().map(|(k, _)| k.as_str()).collect();
        format!(
            "{} sizes priced: {}",
            family(instance_type),
            names.join(", ")
        )
    };
    format!(
        "no shipped price for '{instance_type}' ({known}); give --price-per-hour USD (shipped: {} {}, {})",
        t.region, t.offer, t.date
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_figures() {
        // ml.g5.xlarge at 113 samples/s.
        let c = cost_per_million(instance_price("ml.g5.xlarge").unwrap(), 113.0).unwrap();
        assert!((c - 3.461).abs() < 0.001, "{c}");
        assert_eq!(instance_price("ml.nope"), None);
    }

    #[test]
    fn every_shipped_price_parses_is_positive_and_says_where_it_is_from() {
        let raw: serde_json::Value = serde_json::from_str(crate::assets::PRICES).unwrap();
        for field in ["source_url", "region", "offer", "date"] {
            assert!(
                raw[field].as_str().is_some_and(|v| !v.is_empty()),
                "prices.json has no {field}"
            );
        }
        assert!(
            raw["source_url"]
                .as_str()
                .unwrap()
                .starts_with("https://aws.amazon.com/")
        );
        let date = raw["date"].as_str().unwrap();
        assert!(
            time::Date::parse(date, &time::format_description::well_known::Iso8601::DATE).is_ok(),
            "{date}"
        );
        let prices = raw["usd_per_hour"].as_object().unwrap();
        assert!(prices.len() > 50, "{}", prices.len());
        for (name, price) in prices {
            assert!(
                name.starts_with("ml.") && name.split('.').count() == 3,
                "{name}"
            );
            let p = price.as_f64().unwrap_or_else(|| panic!("{name}: {price}"));
            assert!(p > 0.0 && p < 200.0, "{name}: {p}");
            assert_eq!(instance_price(name), Some(p));
        }
        // The families people serve encoders on.
        for t in [
            "ml.c7i.xlarge",
            "ml.m6i.2xlarge",
            "ml.g4dn.xlarge",
            "ml.g6e.xlarge",
            "ml.inf2.xlarge",
            "ml.p4d.24xlarge",
        ] {
            assert!(instance_price(t).is_some(), "{t}");
        }
    }

    #[test]
    fn an_unpriced_type_names_its_family_or_the_families_and_the_flag() {
        let near = unpriced("ml.g5.16xlarge");
        assert!(
            near.contains("ml.g5 sizes priced: ml.g5.xlarge, ml.g5.2xlarge"),
            "{near}"
        );
        assert!(
            near.contains("--price-per-hour") && !near.contains("ml.c5"),
            "{near}"
        );
        let far = unpriced("ml.nope.large");
        assert!(far.contains("families priced: ml.c5, ml.c6i"), "{far}");
        assert!(far.len() < 300, "{far}");
    }
}
