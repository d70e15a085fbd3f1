//! Prometheus text exposition, read with the `prometheus-parse` crate into the figures
//! `server_metrics` diffs over a phase.
//!
//! Lines the crate cannot read are skipped, never fatal: one garbage line must not cost the
//! rest of the scrape. The crate splits label pairs on `,` and `=` without honouring quotes
//! or escapes, so a label value holding those is read loosely; only `model` is ever matched.

use encbench_core::server_metrics::prometheus::{Exposition, Family};
use prometheus_parse::Value as V;
use std::collections::BTreeMap;

/// Reads `text`; series whose `model` label is not `model` (when both are there) are left
/// out, so one model's figures are not mixed with another's on a shared server.
pub fn parse(text: &str, model: Option<&str>) -> Exposition {
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let Ok(scrape) = prometheus_parse::Scrape::parse(lines) else {
        return Exposition::default();
    };
    let mut e = Exposition::default();
    let mut parts: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for s in &scrape.samples {
        if let (Some(want), Some(have)) = (model, s.labels.get("model"))
            && want != have
        {
            continue;
        }
        let name = s.metric.clone();
        match &s.value {
            V::Counter(v) => e.add(name, Family::Counter(*v)),
            V::Gauge(v) => e.add(name, Family::Gauge(*v)),
            V::Untyped(v) => {
                // The `_sum` and `_count` lines of histograms and summaries come untyped.
                if let Some(base) = name.strip_suffix("_sum") {
                    parts.entry(base.to_string()).or_default().0 += v;
                } else if let Some(base) = name.strip_suffix("_count") {
                    parts.entry(base.to_string()).or_default().1 += v;
                }
                e.add(name, Family::Untyped(*v));
            }
            V::Histogram(h) => {
                let mut buckets: Vec<(f64, f64)> =
                    h.iter().map(|b| (b.less_than, b.count)).collect();
                buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
                let f = Family::Histogram {
                    buckets,
                    sum: 0.0,
                    count: 0.0,
                };
                e.add(name, f);
            }
            V::Summary(_) => e.add(
                name,
                Family::Summary {
                    sum: 0.0,
                    count: 0.0,
                },
            ),
        }
    }
    for (base, (s, c)) in parts {
        if let Some(Family::Histogram { sum, count, .. } | Family::Summary { sum, count }) =
            e.families.get_mut(&base)
        {
            *sum = s;
            *count = c;
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"# HELP nv_inference_count Number of inferences performed
# TYPE nv_inference_count counter
nv_inference_count{model="encoder",version="1"} 40
nv_inference_count{model="encoder",version="2"} 2
nv_inference_count{model="other",version="1"} 1000
# TYPE lat histogram
lat_bucket{le="10"} 5
lat_bucket{le="20"} 15
lat_bucket{le="+Inf"} 20
lat_sum 300
lat_count 20
# TYPE rpc summary
rpc{quantile="0.5"} 4
rpc_sum 17
rpc_count 3
this is not a metric at all
"#;

    #[test]
    fn families_are_summed_over_label_sets_of_the_model() {
        let e = parse(TEXT, Some("encoder"));
        assert_eq!(e.total("nv_inference_count"), Some(42.0));
        assert_eq!(parse(TEXT, None).total("nv_inference_count"), Some(1042.0));
        assert_eq!(e.total("lat"), Some(20.0));
        assert_eq!(
            e.families["rpc"],
            Family::Summary {
                sum: 17.0,
                count: 3.0
            }
        );
    }
}
