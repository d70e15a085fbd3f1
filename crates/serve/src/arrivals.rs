//! The arrival process the endpoint saw: the gaps between requests' arrivals since the first
//! one, summed as they come (Welford), so a test can check what its load hosts offered
//! together rather than what each meant to send.

use serde_json::{Value, json};
use std::sync::Mutex;
use std::time::Instant;

#[derive(Default)]
pub(super) struct ArrivalGaps(Mutex<Gaps>);

#[derive(Default)]
struct Gaps {
    last: Option<Instant>,
    n: u64,
    /// Running mean and sum of squared deviations of the gaps, in seconds.
    mean: f64,
    m2: f64,
}

impl ArrivalGaps {
    pub fn record(&self, at: Instant) {
        let mut g = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(last) = g.last else {
            g.last = Some(at);
            return;
        };
        // Requests handled on different threads can take their arrival times a little out
        // of order: such a pair arrived together, a gap of zero.
        let gap = at.saturating_duration_since(last).as_secs_f64();
        g.last = Some(last.max(at));
        g.n += 1;
        let delta = gap - g.mean;
        g.mean += delta / g.n as f64;
        g.m2 += delta * (gap - g.mean);
    }

    /// `{n, mean_ms, cv}`: the gaps counted, their mean and their coefficient of variation
    /// (1 for Poisson arrivals, 1/√burstiness for Gamma ones); null where undefined.
    pub fn json(&self) -> Value {
        let g = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let sd = (g.n > 1).then(|| (g.m2 / (g.n - 1) as f64).sqrt());
        json!({
            "n": g.n,
            "mean_ms": (g.n > 0).then_some(g.mean * 1000.0),
            "cv": sd.filter(|_| g.mean > 0.0).map(|sd| sd / g.mean),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn mean_and_cv_of_known_gaps() {
        let a = ArrivalGaps::default();
        assert_eq!(a.json(), json!({"n": 0, "mean_ms": null, "cv": null}));
        let t0 = Instant::now();
        // Gaps 1, 3, 1, 3 ms: mean 2 ms, sample sd √(4/3) ms.
        let mut t = t0;
        a.record(t);
        for ms in [1, 3, 1, 3] {
            t += Duration::from_millis(ms);
            a.record(t);
        }
        let j = a.json();
        assert_eq!(j["n"], 4);
        assert!((j["mean_ms"].as_f64().unwrap() - 2.0).abs() < 1e-9, "{j}");
        let want = (4.0f64 / 3.0).sqrt() / 2.0;
        assert!((j["cv"].as_f64().unwrap() - want).abs() < 1e-9, "{j}");
        // An arrival stamped before the last one counts as arriving with it.
        a.record(t.checked_sub(Duration::from_micros(5)).unwrap());
        assert_eq!(a.json()["n"], 5);
        assert!(a.json()["mean_ms"].as_f64().unwrap() < 2.0);
    }
}
