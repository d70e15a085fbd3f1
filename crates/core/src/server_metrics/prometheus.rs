//! Prometheus text exposition, read with the `prometheus-parse` crate into one figure per
//! metric family (label sets summed), and two such readings diffed over a phase.
//!
//! Lines the crate cannot read are skipped, never fatal: one garbage line must not cost the
//! rest of the scrape. The crate splits label pairs on `,` and `=` without honouring quotes
//! or escapes, so a label value holding those is read loosely; only `model` is ever matched.

use prometheus_parse::Value as V;
use std::collections::BTreeMap;

/// A family's reading, its label sets summed.
#[derive(Debug, Clone, PartialEq)]
pub enum Family {
    Counter(f64),
    Gauge(f64),
    /// No `# TYPE`: a counter when its name says so (`_total`, `_count`, `_sum`).
    Untyped(f64),
    /// Cumulative bucket counts by upper bound, ascending, with `_sum` and `_count`.
    Histogram {
        buckets: Vec<(f64, f64)>,
        sum: f64,
        count: f64,
    },
    /// The server's own quantiles are over its own window and cannot be diffed: only
    /// `_sum` and `_count` are kept.
    Summary {
        sum: f64,
        count: f64,
    },
}

/// One scrape: every family by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Exposition {
    pub families: BTreeMap<String, Family>,
}

impl Exposition {
    /// Reads `text`; series whose `model` label is not `model` (when both are there) are
    /// left out, so one model's figures are not mixed with another's on a shared server.
    pub fn parse(text: &str, model: Option<&str>) -> Exposition {
        let lines = text.lines().map(|l| Ok(l.to_string()));
        let Ok(scrape) = prometheus_parse::Scrape::parse(lines) else {
            return Exposition::default();
        };
        let mut families: BTreeMap<String, Family> = BTreeMap::new();
        let mut parts: BTreeMap<String, (f64, f64)> = BTreeMap::new();
        for s in &scrape.samples {
            if let (Some(want), Some(have)) = (model, s.labels.get("model"))
                && want != have
            {
                continue;
            }
            let name = s.metric.clone();
            match &s.value {
                V::Counter(v) => add(&mut families, name, Family::Counter(*v)),
                V::Gauge(v) => add(&mut families, name, Family::Gauge(*v)),
                V::Untyped(v) => {
                    // The `_sum` and `_count` lines of histograms and summaries come untyped.
                    if let Some(base) = name.strip_suffix("_sum") {
                        parts.entry(base.to_string()).or_default().0 += v;
                    } else if let Some(base) = name.strip_suffix("_count") {
                        parts.entry(base.to_string()).or_default().1 += v;
                    }
                    add(&mut families, name, Family::Untyped(*v));
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
                    add(&mut families, name, f);
                }
                V::Summary(_) => add(
                    &mut families,
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
                families.get_mut(&base)
            {
                *sum = s;
                *count = c;
            }
        }
        Exposition { families }
    }

    /// A counter-like family's value (counter, untyped, or a histogram's or summary's count).
    pub fn total(&self, name: &str) -> Option<f64> {
        match self.families.get(name)? {
            Family::Counter(v) | Family::Untyped(v) | Family::Gauge(v) => Some(*v),
            Family::Histogram { count, .. } | Family::Summary { count, .. } => Some(*count),
        }
    }
}

/// Sums `f` into the family of `name`: several label sets (or versions) of one model.
fn add(families: &mut BTreeMap<String, Family>, name: String, f: Family) {
    let Some(have) = families.get_mut(&name) else {
        families.insert(name, f);
        return;
    };
    match (have, f) {
        (Family::Counter(a), Family::Counter(b))
        | (Family::Gauge(a), Family::Gauge(b))
        | (Family::Untyped(a), Family::Untyped(b)) => *a += b,
        (Family::Histogram { buckets: a, .. }, Family::Histogram { buckets: b, .. }) => {
            // Label sets of one family share their bounds; a bound only one has is kept.
            for (le, n) in b {
                match a.iter_mut().find(|(x, _)| x.total_cmp(&le).is_eq()) {
                    Some(slot) => slot.1 += n,
                    None => a.push((le, n)),
                }
            }
            a.sort_by(|x, y| x.0.total_cmp(&y.0));
        }
        // One name with two types is a broken exposition: the first reading stands.
        _ => {}
    }
}

/// A counter's increase from `before` to `after`; a counter that went down was reset (the
/// server restarted) and counted up from zero, as Prometheus's `rate` takes it.
pub fn increase(before: f64, after: f64) -> f64 {
    if after >= before {
        after - before
    } else {
        after
    }
}

/// The quantile `q` of the observations between two readings of a histogram, interpolated
/// inside its bucket as Prometheus's `histogram_quantile` does; `None` without observations
/// or when it falls in the `+Inf` bucket past the last finite bound.
pub fn bucket_quantile(before: &[(f64, f64)], after: &[(f64, f64)], q: f64) -> Option<f64> {
    let at = |bs: &[(f64, f64)], le: f64| {
        bs.iter()
            .find(|(x, _)| x.total_cmp(&le).is_eq())
            .map_or(0.0, |b| b.1)
    };
    let deltas: Vec<(f64, f64)> = after
        .iter()
        .map(|&(le, n)| (le, increase(at(before, le), n)))
        .collect();
    let total = deltas.last()?.1;
    if total.is_nan() || total <= 0.0 || !q.is_finite() {
        return None;
    }
    let rank = q.clamp(0.0, 1.0) * total;
    let (mut lower, mut below) = (0.0, 0.0);
    for (le, n) in deltas {
        if n >= rank {
            if le.is_infinite() {
                return None;
            }
            let inside = n - below;
            let share = if inside > 0.0 {
                (rank - below) / inside
            } else {
                1.0
            };
            return Some(lower + (le - lower) * share);
        }
        (lower, below) = (le, n);
    }
    None
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
        let e = Exposition::parse(TEXT, Some("encoder"));
        assert_eq!(e.total("nv_inference_count"), Some(42.0));
        assert_eq!(
            Exposition::parse(TEXT, None).total("nv_inference_count"),
            Some(1042.0)
        );
        assert_eq!(e.total("lat"), Some(20.0));
        assert_eq!(
            e.families["rpc"],
            Family::Summary {
                sum: 17.0,
                count: 3.0
            }
        );
    }

    #[test]
    fn histogram_quantiles_are_of_the_phase_only() {
        let before = [(10.0, 5.0), (20.0, 5.0), (f64::INFINITY, 5.0)];
        let after = [(10.0, 5.0), (20.0, 15.0), (f64::INFINITY, 15.0)];
        // The phase's ten observations all fell in (10, 20]: the median is its middle.
        assert_eq!(bucket_quantile(&before, &after, 0.5), Some(15.0));
        assert_eq!(bucket_quantile(&after, &after, 0.5), None);
        assert_eq!(increase(10.0, 4.0), 4.0);
    }
}
