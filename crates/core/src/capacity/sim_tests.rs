//! The search against simulated M/M/1 and M/M/4 endpoints (`sim`): how many probes it takes,
//! how near theory its answer lands, and how often the answer's interval covers theory.

use super::sim::Endpoint;
use super::*;

/// The widening factors whose coverage the side-by-side reports, to calibrate
/// `uncertainty::AUTOCORRELATION`.
const FACTORS: [(f64, f64); 8] = [
    (1.5, 1.0),
    (2.0, 1.0),
    (2.5, 1.0),
    (3.0, 1.0),
    (0.5, 2.0),
    (0.75, 2.0),
    (1.0, 2.0),
    (1.25, 2.0),
];

/// What `runs` seeded searches of one endpoint came to.
#[derive(Debug, Default)]
struct Tally {
    runs: usize,
    probes: Vec<usize>,
    secs: Vec<f64>,
    /// Answer over theory, less one.
    errors: Vec<f64>,
    covered: usize,
    /// Runs whose interval, widened by each of `FACTORS` instead, covered theory.
    covered_with: [usize; FACTORS.len()],
    /// And the widths of those intervals over theory, summed.
    width_with: [f64; FACTORS.len()],
    /// The interval's width over theory.
    widths: Vec<f64>,
}

impl Tally {
    fn coverage(&self) -> f64 {
        self.covered as f64 / self.runs as f64
    }

    fn line(&self, name: &str) -> String {
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let sd = |v: &[f64]| {
            let m = mean(v);
            (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
        };
        let p: Vec<f64> = self.probes.iter().map(|&n| n as f64).collect();
        let mut sorted = self.probes.clone();
        sorted.sort_unstable();
        format!(
            "{name:<26} probes mean {:.2} median {} max {} · probe time {:.1} s · error {:+.2} % sd {:.2} % · interval covers {:.1} %, width {:.1} %",
            mean(&p),
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1],
            mean(&self.secs),
            mean(&self.errors) * 100.0,
            sd(&self.errors) * 100.0,
            self.coverage() * 100.0,
            mean(&self.widths) * 100.0,
        ) + &format!(
            " · with (k0, power) = {FACTORS:?}: {:?} %",
            self.covered_with.map(|n| n * 100 / self.runs)
        ) + &format!(
            ", widths {:?} %",
            self.width_with
                .map(|w| (w * 100.0 / self.runs as f64).round())
        )
    }
}

fn plan(precision: f64) -> SearchPlan {
    SearchPlan {
        batch_sizes: vec![1],
        concurrency: 256,
        ceiling_concurrency: 256,
        precision,
        stability: 0.1,
        probe: crate::plan::ProbeRule {
            min_requests: 30_000,
            stability: 0.1,
            max: std::time::Duration::from_secs(10),
            throughput_only: false,
        },
    }
}

/// `runs` searches of `e` against p99 ≤ 100 ms, seeded from `seed`.
fn tally(e: &Endpoint, precision: f64, bisect_only: bool, runs: usize, seed: u64) -> Tally {
    let slo = Slo {
        objectives: vec!["p99=100ms".parse().unwrap()],
    };
    let want = e.theory(0.99, 0.1);
    let mut t = Tally {
        runs,
        ..Tally::default()
    };
    for i in 0..runs {
        let mut s = Search::new(plan(precision), slo.clone());
        s.bisect_only = bisect_only;
        t.secs.push(e.search(&mut s, &slo, seed + i as u64));
        let c = &s.results()[0];
        let got = c.max_rate_per_s.expect("a rate meets");
        let [lo, hi] = c.max_rate_ci95_per_s.expect("an interval");
        assert!(lo <= got && hi >= c.failed_at_per_s.unwrap_or(got), "{c:?}");
        t.probes.push(c.probes.len());
        t.errors.push(got / want - 1.0);
        t.widths.push((hi - lo) / want);
        if lo <= want && want <= hi {
            t.covered += 1;
        }
        for ((k, n), w) in FACTORS
            .iter()
            .zip(&mut t.covered_with)
            .zip(&mut t.width_with)
        {
            let ceiling = c.ceiling_per_s.unwrap();
            let [lo, hi] = uncertainty::widened(&s.points, got, c.failed_at_per_s, ceiling, *k);
            if lo <= want && want <= hi {
                *n += 1;
            }
            *w += (hi - lo) / want;
        }
    }
    t
}

/// The endpoints of `tests/it/capacity.rs`: M/M/1 on 64 replicas and M/M/4 on 12, 10 ms
/// mean service, 30,000 requests a probe, the ceilings this machine measured.
fn known_answer_setups() -> [(&'static str, Endpoint); 2] {
    [
        (
            "M/M/1 × 64",
            Endpoint {
                mu: 100.0,
                workers: 1,
                replicas: 64,
                ceiling: 4_800.0,
                warmup: 400,
                requests: 30_000,
            },
        ),
        (
            "M/M/4 × 12",
            Endpoint {
                mu: 100.0,
                workers: 4,
                replicas: 12,
                ceiling: 4_470.0,
                warmup: 600,
                requests: 30_000,
            },
        ),
    ]
}

/// Both methods side by side on the known-answer setups (BENCHMARKS.md):
/// `cargo test --release -p encbench-core capacity::sim_tests::side_by_side -- --ignored --nocapture`.
#[test]
#[ignore = "minutes: 2 × 2 × 1,000 simulated searches"]
fn side_by_side() {
    let runs = std::env::var("ENCBENCH_SIM_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    for (name, e) in known_answer_setups() {
        for (method, bisect) in [("bisection", true), ("interpolation", false)] {
            let t = tally(&e, 0.03, bisect, runs, 1);
            eprintln!("{}", t.line(&format!("{name} {method}")));
        }
    }
}

/// On a smaller simulated M/M/1 (8 replicas, 16,000 requests a probe, a ceiling below the
/// replicas' own as on a busy machine), 120 seeded searches: fewer probes than bisection,
/// the answer as near theory, and its interval covering theory about 95 % of the time
/// without being so wide as to say nothing.
#[test]
fn the_answers_interval_covers_theory() {
    let e = Endpoint {
        mu: 100.0,
        workers: 1,
        replicas: 8,
        ceiling: 700.0,
        warmup: 50,
        requests: 16_000,
    };
    let new = tally(&e, 0.05, false, 120, 7);
    let old = tally(&e, 0.05, true, 120, 7);
    eprintln!("{}\n{}", new.line("interpolation"), old.line("bisection"));
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len() as f64;
    assert!(
        mean(&new.probes) < 0.9 * mean(&old.probes),
        "{:?} {:?}",
        new.probes,
        old.probes
    );
    let rms = |v: &[f64]| (v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64).sqrt();
    assert!(rms(&new.errors) < 1.2 * rms(&old.errors) + 0.005);
    assert!((0.9..=1.0).contains(&new.coverage()), "{}", new.coverage());
    let width = new.widths.iter().sum::<f64>() / new.widths.len() as f64;
    assert!(width < 0.4, "{width}");
}
