//! A Prometheus scrape as one figure per metric family (label sets summed), and two such
//! readings diffed over a phase. Reading the text exposition format into it is the metrics
//! client's (`encbench_wire::client::prometheus`).

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
    /// A counter-like family's value (counter, untyped, or a histogram's or summary's count).
    pub fn total(&self, name: &str) -> Option<f64> {
        match self.families.get(name)? {
            Family::Counter(v) | Family::Untyped(v) | Family::Gauge(v) => Some(*v),
            Family::Histogram { count, .. } | Family::Summary { count, .. } => Some(*count),
        }
    }

    /// Sums `f` into the family of `name`: several label sets (or versions) of one model.
    pub fn add(&mut self, name: String, f: Family) {
        let Some(have) = self.families.get_mut(&name) else {
            self.families.insert(name, f);
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

    #[test]
    fn label_sets_add_up_and_a_second_type_changes_nothing() {
        let h = |buckets: Vec<(f64, f64)>| Family::Histogram {
            buckets,
            sum: 0.0,
            count: 0.0,
        };
        let mut e = Exposition::default();
        e.add("n".into(), Family::Counter(40.0));
        e.add("n".into(), Family::Counter(2.0));
        e.add("n".into(), Family::Gauge(9.0));
        e.add("h".into(), h(vec![(10.0, 1.0), (f64::INFINITY, 2.0)]));
        e.add(
            "h".into(),
            h(vec![(5.0, 1.0), (10.0, 3.0), (f64::INFINITY, 4.0)]),
        );
        assert_eq!(e.total("n"), Some(42.0));
        let summed = h(vec![(5.0, 1.0), (10.0, 4.0), (f64::INFINITY, 6.0)]);
        assert_eq!(e.families["h"], summed);
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
