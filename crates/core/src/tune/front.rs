//! The Pareto front of capacity against cost: the configurations no other beats on both,
//! more samples per second within the SLO at no more cost per million samples. The one
//! worth running is on it whatever the budget; the others are not, at any.

/// One configuration's answer: samples/s within the SLO, and what a million samples cost
/// there (`None` unpriced).
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub label: String,
    pub samples_per_s: f64,
    pub cost_per_1m_usd: Option<f64>,
}

/// The points on the front, cheapest first. With any point unpriced costs cannot be
/// weighed, and the front is the most samples/s alone.
pub fn pareto_front(points: &[Point]) -> Vec<&Point> {
    let usable: Vec<&Point> = points
        .iter()
        .filter(|p| p.samples_per_s.is_finite() && p.samples_per_s > 0.0)
        .collect();
    if usable.iter().any(|p| p.cost_per_1m_usd.is_none()) {
        return usable
            .iter()
            .copied()
            .max_by(|a, b| a.samples_per_s.total_cmp(&b.samples_per_s))
            .into_iter()
            .collect();
    }
    let cost = |p: &Point| p.cost_per_1m_usd.unwrap_or(f64::INFINITY);
    let beats = |q: &Point, p: &Point| {
        q.samples_per_s >= p.samples_per_s
            && cost(q) <= cost(p)
            && (q.samples_per_s > p.samples_per_s || cost(q) < cost(p))
    };
    let mut front: Vec<&Point> = usable
        .iter()
        .copied()
        .filter(|p| !usable.iter().any(|q| beats(q, p)))
        .collect();
    front.sort_by(|a, b| cost(a).total_cmp(&cost(b)));
    front
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(label: &str, s: f64, c: Option<f64>) -> Point {
        Point {
            label: label.into(),
            samples_per_s: s,
            cost_per_1m_usd: c,
        }
    }

    #[test]
    fn the_front_keeps_what_nothing_beats_on_both_cheapest_first() {
        let pts = [
            p("w1", 28.0, Some(9.9)),
            p("w2", 75.0, Some(4.4)),
            p("w4", 174.0, Some(6.4)),
            p("w4-slow", 150.0, Some(7.0)),
        ];
        let labels: Vec<&str> = pareto_front(&pts)
            .iter()
            .map(|p| p.label.as_str())
            .collect();
        assert_eq!(labels, ["w2", "w4"]);
    }

    #[test]
    fn unpriced_the_front_is_the_most_samples_and_nothing_measured_is_no_front() {
        let pts = [p("w1", 28.0, None), p("w4", 174.0, Some(1.0))];
        let labels: Vec<&str> = pareto_front(&pts)
            .iter()
            .map(|p| p.label.as_str())
            .collect();
        assert_eq!(labels, ["w4"]);
        assert!(pareto_front(&[p("none", 0.0, None)]).is_empty());
    }
}
