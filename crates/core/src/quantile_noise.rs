//! How noisy a percentile measured from a queue's latencies is: the standard error of its
//! logarithm, by batch means.
//!
//! The order statistics' interval (`interval`) assumes independent samples. A queue's are
//! not: a busy period makes a run of late requests, so the requests past a p99 come in
//! clusters and a probe holds fewer independent tail events than its count says (simulated
//! M/M/1 at ρ 0.54: the variance of the empirical p99 is about 13 times the independent
//! samples'). Batch means measure that from the probe itself, with no model of the
//! endpoint: cut the samples, in the order they completed, into `BATCHES` runs; the share
//! of each run past the probe's percentile varies from run to run as much as the clusters
//! make it; the share's variance over the whole is that spread over the number of runs, and
//! the percentile's follows through the density of the latencies there (Bahadur's
//! representation of a sample quantile).

/// Runs the samples are cut into. Each must outlast the queue's memory of its state for the
/// runs' shares to be near independent (a run of a 10,000-request probe holds 1,000
/// requests, about five relaxation times of an M/M/4 at ρ 0.875), and there must be enough
/// of them for their spread to be a figure (9 degrees of freedom).
pub const BATCHES: usize = 10;

/// Fewest samples past the percentile for its noise to be measured at all.
pub const TAIL_MIN: f64 = 20.0;

/// The noise of the `q` quantile of `latencies`, the latencies in the order they completed;
/// `None` where too few samples lie past it or the latencies around it are all alike (no
/// density to carry the share's noise to the percentile).
pub fn noise(latencies: &[u32], q: f64) -> Option<Noise> {
    let mut sorted = latencies.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    // Nearest rank, as `hdrhistogram` and the SLO's verdict take a percentile.
    noise_at(latencies, q, |p| {
        f64::from(sorted[((p * n as f64).ceil() as usize).clamp(1, n) - 1])
    })
}

/// `noise` with the quantiles read from elsewhere (`at`: the latency at a quantile, in the
/// latencies' unit): the phase's own histogram of the same samples, which spares a sort.
pub fn noise_at(latencies: &[u32], q: f64, at: impl Fn(f64) -> f64) -> Option<Noise> {
    let n = latencies.len();
    if n < BATCHES * 10 || (1.0 - q) * (n as f64) < TAIL_MIN {
        return None;
    }
    let x = at(q);
    // The density at the percentile, from the quantiles half the tail's share either side
    // (p98.5 and p99.5 for p99), no wider than 5 points for a median.
    let d = ((1.0 - q) / 2.0).min(0.05);
    let (below, above) = (at(q - d), at(q + d));
    if above <= below || x <= 0.0 {
        return None;
    }
    let density = 2.0 * d / (above - below);
    let size = n / BATCHES;
    let shares: Vec<f64> = (0..BATCHES)
        .map(|b| {
            let run = &latencies[b * size..(b + 1) * size];
            run.iter().filter(|&&v| f64::from(v) > x).count() as f64 / size as f64
        })
        .collect();
    let mean = shares.iter().sum::<f64>() / BATCHES as f64;
    let var = shares.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / (BATCHES - 1) as f64;
    // Never below what independent samples would give: ten runs can happen to agree.
    let independent = q * (1.0 - q) / n as f64;
    let share_var = (var / BATCHES as f64).max(independent);
    Some(Noise {
        log_se: share_var.sqrt() / (density * x),
        clusters: clusters(latencies, x),
    })
}

/// A percentile's noise, and how many separate spells the samples past it came in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// The standard error of ln(the percentile).
    pub log_se: f64,
    /// Runs of samples past the percentile with fewer than `CLUSTER_GAP` samples between
    /// them count as one: the independent tail events the probe saw (an M/M/1 at ρ 0.54
    /// past its p99 about 19 in 10,000 requests, an M/D/1 at ρ 0.77 about 10).
    pub clusters: u32,
}

/// Samples below a percentile that separate two spells past it.
pub const CLUSTER_GAP: usize = 100;

fn clusters(latencies: &[u32], x: f64) -> u32 {
    let (mut k, mut since) = (0, usize::MAX);
    for &v in latencies {
        if f64::from(v) > x {
            if since > CLUSTER_GAP {
                k += 1;
            }
            since = 0;
        } else {
            since = since.saturating_add(1);
        }
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::{Distribution, Exp};

    /// Independent exponential samples: the batch-means error of ln p99 is the spread of
    /// p99 over many seeds, or a little over it (never under what independent samples
    /// give, and the density's own noise inflates its inverse), never under.
    #[test]
    fn independent_samples_give_the_order_statistics_noise() {
        let e = Exp::new(1.0).unwrap();
        let mut logs = Vec::new();
        let mut ses = Vec::new();
        for seed in 0..200 {
            let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(seed);
            let v: Vec<u32> = (0..20_000)
                .map(|_| (e.sample(&mut rng) * 1e5) as u32 + 1)
                .collect();
            let mut s = v.clone();
            s.sort_unstable();
            logs.push(f64::from(s[19_799]).ln());
            ses.push(noise(&v, 0.99).unwrap().log_se);
        }
        let mean = logs.iter().sum::<f64>() / 200.0;
        let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 199.0).sqrt();
        let se = ses.iter().sum::<f64>() / 200.0;
        // Theory: sqrt(q / ((1 − q) n)) / ln 100 = 0.0153.
        assert!((sd / 0.0153 - 1.0).abs() < 0.15, "{sd}");
        assert!((0.95..1.4).contains(&(se / sd)), "{se} against {sd}");
    }

    #[test]
    fn too_few_past_the_percentile_or_all_alike_say_nothing() {
        assert_eq!(noise(&[5; 1000], 0.99), None);
        assert_eq!(noise(&(1..=1500).collect::<Vec<u32>>(), 0.99), None);
        // One spell past the p99: the last 30 of 3,000.
        let n = noise(&(1..=3000).collect::<Vec<u32>>(), 0.99).unwrap();
        assert_eq!(n.clusters, 1);
    }
}
