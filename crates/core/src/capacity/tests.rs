//! The search's rules on an exact M/M/1 endpoint (no noise), and on noisy probes.

use super::*;
use crate::fixtures::phase_row;
use crate::plan::PhaseKind;
use crate::slo::Objective;

fn slo(s: &str) -> Slo {
    Slo {
        objectives: vec![s.parse().unwrap()],
    }
}

fn plan(batch_sizes: Vec<usize>) -> SearchPlan {
    SearchPlan {
        batch_sizes,
        concurrency: 8,
        ceiling_concurrency: 8,
        precision: 0.05,
        stability: 0.1,
        probe: crate::plan::ProbeRule {
            min_requests: 200,
            stability: 0.1,
            max: std::time::Duration::from_secs(30),
            throughput_only: false,
            requests: None,
        },
    }
}

/// An M/M/1 endpoint, μ = 100/s: p99 of the sojourn time is ln 100 / (μ − λ).
fn mm1(step: Step, slo: &Slo) -> PhaseResult {
    let mut r = phase_row(PhaseKind::Capacity, 1, 8, 0.0, 1.0, 1.0, None);
    let batch = match step {
        Step::Ceiling { batch_size } | Step::Probe { batch_size, .. } => batch_size,
    };
    let (rate, p99) = match step {
        Step::Ceiling { .. } => (100.0, 500.0),
        Step::Probe { rate_per_s, .. } if rate_per_s < 100.0 => {
            (rate_per_s, 100f64.ln() / (100.0 - rate_per_s) * 1000.0)
        }
        Step::Probe { rate_per_s, .. } => (rate_per_s, 10_000.0),
    };
    r.req_per_s = rate;
    // Batches of 8 take 8 samples a request at the same latency here.
    r.samples_per_s = rate * batch as f64;
    r.latency_ms.p99 = p99;
    // As a probe of a few thousand requests would measure it.
    if let Some(ci) = r.latency_ms.ci95.as_mut() {
        ci.p99 = crate::interval::Interval(p99 * 0.97, Some(p99 * 1.03));
    }
    r.ok = 1000;
    r.n = 1000;
    if let Step::Probe { .. } = step {
        let Objective::Latency { bound_ms, .. } = slo.objectives[0] else {
            unreachable!()
        };
        r.slo_met = Some(p99 <= bound_ms);
        r.stable = Some(true);
        r.stop_reason = Some("stable".into());
    }
    r
}

fn run(search: &mut Search, slo: &Slo) -> usize {
    let mut phases = 0;
    while let Some(step) = search.next_step() {
        phases += 1;
        assert!(phases < 50, "the search does not end");
        search.record(&mm1(step, slo));
    }
    phases
}

/// The exact M/M/1 is the model's own curve: one probe above the answer points to it, and
/// two more close the bracket around it.
#[test]
fn interpolation_lands_within_the_precision_of_the_mm1_answer() {
    let s = slo("p99=100ms");
    let mut search = Search::new(plan(vec![1, 8]), s.clone());
    let phases = run(&mut search, &s);
    let want = 100.0 - 100f64.ln() / 0.1;
    assert_eq!(search.results().len(), 2);
    for c in search.results() {
        let got = c.max_rate_per_s.unwrap();
        let hi = c.failed_at_per_s.unwrap();
        assert!(got <= want && want <= hi, "{got} ≤ {want} ≤ {hi}");
        assert!(hi / got <= 1.05);
        assert!(c.complete);
        assert!(
            c.probes.len() <= 3,
            "{} probes: {:?}",
            c.probes.len(),
            c.probes
        );
        // The bracket, widened where the probes' own intervals reach past it.
        let [lo, top] = c.max_rate_ci95_per_s.unwrap();
        assert!(
            lo <= got && hi <= top && lo <= want && want <= top,
            "{lo} {top}"
        );
        assert!(
            c.verdict.starts_with(&format!(
                "{} req/s {} (",
                crate::text::sig3(got),
                shown([lo, top])
            )),
            "{}",
            c.verdict
        );
    }
    assert_eq!(phases, 2 * (1 + search.results()[0].probes.len()));
    assert!(advice(search.results()).unwrap().starts_with("batch 8:"));
}

/// A probe's ratio to the bound as given, met or not by it; p99 ± 3 %.
fn probe_at(rate: f64, ratio: f64) -> PhaseResult {
    let mut r = phase_row(PhaseKind::Capacity, 1, 8, rate, 1.0, 100.0 * ratio, None);
    if let Some(ci) = r.latency_ms.ci95.as_mut() {
        ci.p99 = crate::interval::Interval(97.0 * ratio, Some(103.0 * ratio));
    }
    r.ok = 1000;
    r.n = 1000;
    r.slo_met = Some(ratio <= 1.0);
    r.stable = Some(true);
    r.stop_reason = Some("stable".into());
    r
}

/// Noise larger than the step between two probes: going down, the probe at the lower rate
/// measured the higher latency, the line through the two falls with load and points
/// nowhere, and bisection takes the next step.
#[test]
fn a_poor_fit_hands_over_to_bisection() {
    let s = slo("p99=100ms");
    let mut search = Search::new(plan(vec![1]), s.clone());
    let mut rates = Vec::new();
    for ratio in [f64::NAN, 1.5, 1.6] {
        let step = search.next_step().unwrap();
        let r = match step {
            Step::Ceiling { .. } => mm1(step, &s),
            Step::Probe { rate_per_s, .. } => {
                rates.push(rate_per_s);
                probe_at(rate_per_s, ratio)
            }
        };
        search.record(&r);
    }
    // 75 missed; the line through it and the ceiling pointed to 62.5, and the probe went
    // half the precision below.
    assert_eq!(rates[0], 75.0);
    assert!((rates[1] - 62.5 * 0.975).abs() < 1e-9, "{rates:?}");
    let Some(Step::Probe { rate_per_s, .. }) = search.next_step() else {
        panic!("a probe next")
    };
    assert_eq!(rate_per_s, rates[1] / 2.0, "{rates:?}");
}

/// The probe under way when the run stopped measured too little to bound anything: it
/// is listed, the bracket stays where the finished probes put it, and the answer says so.
#[test]
fn a_probe_cut_short_by_a_stop_is_not_a_bound() {
    let s = slo("p99=100ms");
    let mut search = Search::new(plan(vec![1]), s.clone());
    // The ceiling, 75 req/s misses, and the rate the latency there points to meets.
    for _ in 0..3 {
        let step = search.next_step().unwrap();
        search.record(&mm1(step, &s));
    }
    let before = search.current().unwrap().clone();
    let met = before.max_rate_per_s.unwrap();
    assert_eq!(before.failed_at_per_s, Some(75.0), "{before:?}");
    let step = search.next_step().unwrap();
    let mut cut = mm1(step, &s);
    cut.n = 184;
    cut.slo_met = Some(false);
    cut.slo_missed = Some("p99 108.3 ms > 100 ms".into());
    cut.stable = Some(false);
    cut.stop_reason = Some("stopped".into());
    search.record(&cut);
    search.stop();
    let c = &search.results()[0];
    assert_eq!(c.failed_at_per_s, Some(75.0), "{c:?}");
    assert_eq!(c.max_rate_per_s, Some(met));
    assert_eq!(c.max_rate_ci95_per_s, None, "not converged: no interval");
    let last = c.probes.last().unwrap();
    assert!(!last.bound && !last.meets, "{last:?}");
    assert!(
        last.missed
            .as_deref()
            .unwrap()
            .contains("cut short at n 184 (minimum 200)"),
        "{last:?}"
    );
    let Step::Probe { rate_per_s, .. } = step else {
        panic!("{step:?}")
    };
    assert!(
        c.verdict
            .contains(&format!("at least {} req/s", crate::text::sig3(met)))
            && c.verdict.contains(&format!(
                "the probe at {} req/s was cut short (n 184)",
                crate::text::sig3(rate_per_s)
            )),
        "{}",
        c.verdict
    );
}

/// A probe that left requests unsent: its row's p99 is the one its verdict quotes, over
/// every request due, not the ok requests' own.
#[test]
fn a_probe_row_has_the_p99_its_verdict_quotes() {
    let s = slo("p99=100ms");
    let mut search = Search::new(plan(vec![1]), s.clone());
    let step = search.next_step().unwrap();
    search.record(&mm1(step, &s));
    let step = search.next_step().unwrap();
    let mut h = crate::stats::phase_histogram();
    for _ in 0..989 {
        h.record(20_000).unwrap();
    }
    for ms in (91..=111).step_by(2) {
        h.record(ms * 1000).unwrap();
    }
    let mut r = mm1(step, &s);
    r.ok = 1000;
    r.n = 1000;
    r.unsent = 5;
    r.latency_ms = crate::stats::LatencySummary::of(&h);
    r.histogram_hdr_b64 = crate::results::encode_histogram(&h);
    r.judge(&s, &h);
    assert!(r.latency_ms.p99 < 100.0, "the ok requests' own p99 meets");
    search.record(&r);
    let p = &search.current().unwrap().probes[0];
    let missed = p.missed.as_deref().unwrap();
    assert!(!p.meets && p.p99 > 100.0, "{p:?}");
    assert_eq!(missed, format!("p99 {:.1} ms > 100 ms", p.p99));
}

/// A Poisson schedule sends a little more than its rate over a probe: the figures at
/// the answer are the rate's, never more requests per second than the rate itself.
#[test]
fn goodput_and_samples_at_capacity_never_exceed_the_rate() {
    let s = slo("p99=100ms");
    let mut search = Search::new(plan(vec![8]), s.clone());
    while let Some(step) = search.next_step() {
        let mut r = mm1(step, &s);
        r.req_per_s *= 1.02;
        r.samples_per_s *= 1.02;
        r.goodput_per_s = Some(r.req_per_s * 0.995);
        r.goodput_share = Some(0.995);
        r.cost_per_1m_usd = Some(1e6 / r.samples_per_s);
        search.record(&r);
    }
    let c = &search.results()[0];
    let rate = c.max_rate_per_s.unwrap();
    assert!(c.goodput_per_s.unwrap() <= rate, "{c:?}");
    assert!((c.goodput_per_s.unwrap() - rate * 0.995).abs() < 1e-3);
    assert!(
        (c.samples_per_s.unwrap() - rate * 8.0).abs() < 1e-3,
        "{c:?}"
    );
    assert!((c.cost_per_1m_usd.unwrap() - 1e6 / (rate * 8.0)).abs() < 1e-6);
}

#[test]
fn a_stopped_search_keeps_what_it_found() {
    let s = slo("p99=100ms");
    let mut search = Search::new(plan(vec![1, 8]), s.clone());
    for _ in 0..3 {
        let step = search.next_step().unwrap();
        search.record(&mm1(step, &s));
    }
    let met = search.current().unwrap().max_rate_per_s.unwrap();
    search.stop();
    assert!(search.next_step().is_none());
    let c = &search.results()[0];
    assert!(!c.complete && c.max_rate_per_s == Some(met), "{c:?}");
    assert!(
        c.verdict
            .contains(&format!("at least {}", crate::text::sig3(met))),
        "{}",
        c.verdict
    );
}

/// The best batch is named alone only where its samples/s are significantly ahead: batch 8
/// at 40 req/s [38, 42] (320 samples/s) against batch 32 at 10.5 req/s [9, 12] (336
/// samples/s): the searches cannot tell them apart, and the advice says so; against batch 1
/// at 60 req/s it is far ahead.
#[test]
fn the_best_batch_is_named_alone_only_where_the_intervals_tell() {
    let answer = |b: usize, rate: f64, lo: f64, hi: f64| -> Capacity {
        serde_json::from_value(serde_json::json!({
            "batch_size": b, "concurrency": 8, "slo": "p99 ≤ 100 ms",
            "ceiling_per_s": rate * 1.2, "max_rate_per_s": rate,
            "max_rate_ci95_per_s": [lo, hi], "failed_at_per_s": rate * 1.05,
            "samples_per_s": rate * b as f64, "latency_ms": null, "goodput_per_s": null,
            "cost_per_1m_usd": null, "probes": [], "verdict": "", "complete": true
        }))
        .unwrap()
    };
    let found = [
        answer(1, 60.0, 57.0, 63.0),
        answer(8, 40.0, 38.0, 42.0),
        answer(32, 10.5, 9.0, 12.0),
    ];
    let said = advice(&found).unwrap();
    assert!(said.starts_with("batch 32: the most samples/s"), "{said}");
    assert!(
        said.contains("but not distinguishable at this n from batch 8 ("),
        "{said}"
    );
    assert!(!said.contains("batch 1 ("), "{said}");
    let told = advice(&found[..2]).unwrap();
    assert!(
        told.starts_with("batch 8:") && !told.contains("not distinguishable"),
        "{told}"
    );
}

/// The answer in words: what it pooled, the probes its time bound cut, and where its
/// interval is wider than the precision asked, what would narrow it.
#[test]
fn the_answer_names_its_probes_and_what_would_narrow_it() {
    let mut c = unanswered(8, &plan(vec![8]), &slo("p99=250ms"));
    c.ceiling_per_s = Some(38.8);
    c.max_rate_per_s = Some(25.9);
    c.samples_per_s = Some(206.9);
    c.max_rate_ci95_per_s = Some([20.2, 33.2]);
    c.pooled_probes = Some(5);
    c.pooled_requests = Some(15_857);
    let probe = |stop: &str| Probe {
        rate_per_s: 25.0,
        n: 3000,
        p50: 104.0,
        p99: 221.0,
        p50_ci95: None,
        p99_ci95: None,
        meets: true,
        stable: false,
        stop_reason: stop.into(),
        bound: true,
        missed: None,
    };
    c.probes = vec![probe("time"), probe("count"), probe("time")];
    assert_eq!(
        words::answer(&c, 0.05),
        "25.9 req/s [20.2, 33.2] (207 samples/s) meets p99 ≤ 250 ms where 5 probes (15,857 \
         requests) put it (2 probes ended at --max-probe-secs before their planned requests); \
         ±25 %, wider than the 5 % asked: about 83,000 requests a probe would narrow it \
         (--min-probe-requests, and --max-probe-secs for their time)"
    );
    // Within the precision, and no probe near it weighed: the bracket's words.
    c.max_rate_ci95_per_s = Some([25.0, 26.5]);
    c.pooled_probes = None;
    c.pooled_requests = None;
    c.failed_at_per_s = Some(26.3);
    c.probes = vec![probe("count")];
    assert_eq!(
        words::answer(&c, 0.05),
        "25.9 req/s [25.0, 26.5] (207 samples/s) meets p99 ≤ 250 ms; 26.3 req/s did not"
    );
}
