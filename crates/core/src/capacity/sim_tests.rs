//! The search at default flags against simulated M/M/1, M/M/4 and M/D/1 endpoints (`sim`):
//! how many probes and how long it takes, how near theory its answer lands, and how often
//! the answer's interval covers theory.

use super::sim::{Endpoint, Service, Stop};
use super::*;
use rand::SeedableRng;

/// What `runs` seeded searches of one endpoint came to.
#[derive(Debug, Default)]
struct Tally {
    runs: usize,
    probes: Vec<usize>,
    /// The probes' simulated seconds, each search's.
    secs: Vec<f64>,
    /// Answer over theory, less one.
    errors: Vec<f64>,
    covered: usize,
    /// The interval's width over theory.
    widths: Vec<f64>,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

impl Tally {
    fn coverage(&self) -> f64 {
        self.covered as f64 / self.runs as f64
    }

    /// The share of answers within `tol` of theory.
    fn within(&self, tol: f64) -> f64 {
        self.errors.iter().filter(|e| e.abs() <= tol).count() as f64 / self.runs as f64
    }

    fn sd(&self) -> f64 {
        let m = mean(&self.errors);
        (self.errors.iter().map(|x| (x - m).powi(2)).sum::<f64>() / self.runs as f64).sqrt()
    }

    fn line(&self, name: &str) -> String {
        let p: Vec<f64> = self.probes.iter().map(|&n| n as f64).collect();
        format!(
            "{name:<6} probes mean {:.2} max {} · probe time {:.0} s · error {:+.2} % sd {:.2} % · within 5 % {:.1} % · interval covers {:.1} %, width {:.1} %",
            mean(&p),
            self.probes.iter().max().unwrap_or(&0),
            mean(&self.secs),
            mean(&self.errors) * 100.0,
            self.sd() * 100.0,
            self.within(0.05) * 100.0,
            self.coverage() * 100.0,
            mean(&self.widths) * 100.0,
        )
    }
}

/// The search's plan at default flags with `--concurrency 64`: precision 5 %,
/// `--min-probe-requests` 200, `--max-probe-secs` `max_s`.
fn default_plan(max_s: f64) -> SearchPlan {
    SearchPlan {
        batch_sizes: vec![1],
        concurrency: 64,
        ceiling_concurrency: 64,
        precision: 0.05,
        stability: 0.1,
        probe: crate::plan::ProbeRule {
            min_requests: 200,
            stability: 0.1,
            max: std::time::Duration::from_secs_f64(max_s),
            throughput_only: false,
            requests: None,
        },
    }
}

/// `runs` searches of `e` against p99 ≤ 100 ms under `plan`, seeded from `seed`.
fn tally(e: &Endpoint, plan: &SearchPlan, runs: usize, seed: u64) -> Tally {
    let slo = Slo {
        objectives: vec!["p99=100ms".parse().unwrap()],
    };
    let want = e.theory(0.99, 0.1);
    let max_s = plan.probe.max.as_secs_f64();
    let mut t = Tally {
        runs,
        ..Tally::default()
    };
    for i in 0..runs {
        let mut s = Search::new(plan.clone(), slo.clone());
        t.secs
            .push(e.search(&mut s, &slo, seed + i as u64, |n| Stop::Requests {
                n,
                max_s,
            }));
        let c = &s.results()[0];
        let got = c.max_rate_per_s.expect("a rate meets");
        let [lo, hi] = c.max_rate_ci95_per_s.expect("an interval");
        assert!(lo <= got && got <= hi, "{c:?}");
        t.probes.push(c.probes.len());
        t.errors.push(got / want - 1.0);
        t.widths.push((hi - lo) / want);
        if lo <= want && want <= hi {
            t.covered += 1;
        }
    }
    t
}

/// The known answers at default flags: one worker (M/M/1), four on one queue
/// (M/M/4) and one of fixed time (M/D/1), 10 ms service, one copy each, the ceilings a
/// closed loop at 64 measures of them on this machine (3 % under the workers' own).
fn default_setups() -> [(&'static str, Endpoint); 3] {
    let k: f64 = std::env::var("ENCBENCH_SIM_CEILING")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    let ceiling = |c: f64| c * k;
    let e = |workers, service, ceiling| Endpoint {
        mu: 100.0,
        workers,
        replicas: 1,
        service,
        ceiling,
        warmup: 20,
    };
    [
        ("M/M/1", e(1, Service::Exp, ceiling(97.0))),
        ("M/M/4", e(4, Service::Exp, ceiling(388.0))),
        ("M/D/1", e(1, Service::Fixed, ceiling(97.0))),
    ]
}

/// At default flags, 1,000 seeded searches of each known-answer endpoint: the mean error
/// within ±2 % of theory, the interval covering theory in at least 95 % of them, never
/// more probes than bisection's 6. The simulation is seeded: the figures are the same on
/// every machine, whatever its load. Measured: M/M/1 −0.4 % (sd 4.2 %), M/M/4 +0.2 %
/// (1.7 %), M/D/1 +0.1 % (1.5 %); covered 98.7, 96.5 and 99.1 %.
#[test]
fn at_default_flags_the_interval_covers_theory() {
    let plan = default_plan(crate::plan::DEFAULT_MAX_PROBE_SECS);
    for (name, e) in default_setups() {
        let t = tally(&e, &plan, 1000, 11);
        eprintln!("{}", t.line(name));
        assert!(mean(&t.errors).abs() <= 0.02, "{name}");
        assert!(t.coverage() >= 0.95, "{name}");
        assert!(t.probes.iter().all(|&p| p <= 6), "{name}");
    }
}

/// The same at another `--max-probe-secs` (BENCHMARKS.md):
/// `ENCBENCH_SIM_MAX_S=60 cargo test --release -p encbench-core capacity::sim_tests::at_max_probe_secs -- --ignored --nocapture`.
#[test]
#[ignore = "minutes: 3 × 1,000 simulated searches at a time bound of the caller's"]
fn at_max_probe_secs() {
    let env = |k: &str, d: f64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let plan = default_plan(env("ENCBENCH_SIM_MAX_S", 120.0));
    for (name, e) in default_setups() {
        let t = tally(&e, &plan, env("ENCBENCH_SIM_RUNS", 1000.0) as usize, 11);
        eprintln!("{}", t.line(name));
    }
}

/// Batch means against the spread over seeds: a probe's own noise figure (`quantile_noise`)
/// of ln p99, at theory's rate, against how much ln p99 varies over 300 seeded probes.
/// `cargo test --release -p encbench-core capacity::sim_tests::noise_against_spread -- --ignored --nocapture`.
#[test]
#[ignore = "a minute: 3 × 3 × 300 simulated probes"]
fn noise_against_spread() {
    let slo = Slo {
        objectives: vec!["p99=100ms".parse().unwrap()],
    };
    for (name, e) in default_setups() {
        let want = e.theory(0.99, 0.1);
        for n in [3_000u64, 10_000, 30_000] {
            let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(3);
            let (mut logs, mut ses, mut spells) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..300 {
                let stop = Stop::Requests { n, max_s: 1e9 };
                let (r, _) = e.probe(want, stop, &slo, &mut rng);
                let noise = r.quantile_noise.unwrap().0[3];
                logs.push(r.latency_ms.p99.ln());
                ses.push(noise.map_or(f64::NAN, |x| x.log_se));
                spells.push(noise.map_or(0.0, |x| f64::from(x.clusters)));
            }
            let m = mean(&logs);
            let sd = (logs.iter().map(|l| (l - m).powi(2)).sum::<f64>() / 299.0).sqrt();
            let rms = mean(&ses.iter().map(|s| s * s).collect::<Vec<_>>()).sqrt();
            eprintln!(
                "{name} n={n}: sd of ln p99 {sd:.4}, batch means {rms:.4} ({:.2}×), p99 {:.1} ms, {:.1} spells",
                rms / sd,
                m.exp(),
                mean(&spells)
            );
        }
    }
}
