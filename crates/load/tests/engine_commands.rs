//! The engine driven through its command channel, as the TUI will drive it: every live change
//! takes effect at once and lands in the timeline. Real HTTP against the in-process endpoint.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads top to bottom as the session it drives; the limit holds for the code"
)]

mod common;

use encbench_core::arrival::Pace;
use encbench_core::input::Shape;
use encbench_core::input::shipped_samples;
use encbench_core::plan::{PhaseKind, RunPlan, StopAt, SweepKind};
use encbench_core::stats::TimelineEntry;
use encbench_load::accuracy::AccuracySpec;
use encbench_load::engine::{Command, Engine, EngineSpec, RunState, Snapshot};
use encbench_serve::{RunningServer, ServeSettings, model::ServiceModel};
use encbench_wire::client::url::UrlTarget;
use encbench_wire::payload::{HfFormat, LabelMap};
use encbench_wire::tokenize::TokenCounter;
use std::sync::Arc;
use std::time::{Duration, Instant};

async fn wait_for(engine: &Engine, what: &str, cond: impl Fn(&Snapshot) -> bool) -> Snapshot {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let s = engine.snapshot_now();
        if cond(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; state {:?}",
            s.state
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn events(s: &Snapshot) -> Vec<String> {
    s.timeline_tail
        .iter()
        .filter_map(|e| match e {
            TimelineEntry::Event { event, .. } => Some(event.clone()),
            TimelineEntry::Point { .. } => None,
        })
        .collect()
}

/// The reference endpoint with 4 workers, each request taking `base_ms`.
async fn four_workers(base_ms: f64) -> RunningServer {
    encbench_serve::start(
        ServeSettings {
            workers: 4,
            service: ServiceModel {
                base_ms,
                per_token_ms: 0.0,
                saturation_tokens: 0,
            },
            ..ServeSettings::default()
        },
        TokenCounter::shipped(),
    )
    .await
    .unwrap()
}

/// A live run at `pace` against `url`, accuracy samples and a price included.
fn live_setup(url: &str, pace: Pace) -> EngineSpec {
    let shape = Shape {
        pad_to_max: false,
        max_len: 512,
    };
    EngineSpec {
        tokenizer: None,
        target: Arc::new(UrlTarget::new(
            url,
            &HfFormat::new(shape),
            8,
            Duration::from_secs(5),
        )),
        texts: shipped_samples()
            .iter()
            .map(encbench_core::input::NliSample::input)
            .collect(),
        format: Arc::new(HfFormat::new(shape)),
        warmup_timeout: Duration::from_secs(5),
        endpoint_wait: Duration::from_secs(5),
        shape: Shape {
            pad_to_max: false,
            max_len: 512,
        },
        pace,
        plan: RunPlan {
            batch_size: 1,
            concurrency: 2,
            concurrency_given: true,
            warmup: 2,
            stop: StopAt::Never,
            sweep_batch: false,
            sweep_concurrency: false,
            batch_sizes: vec![1, 2],
            concurrency_levels: vec![1, 2],
            live: true,
            until_stable: None,
            repeat: 1,
            ramp: false,
        },
        seed: 1,
        accuracy: Some(AccuracySpec {
            samples: shipped_samples(),
            labels: LabelMap::default(),
            retrieval: vec![],
            rerank: vec![],
            load_input: None,
        }),
        rankings: None,
        price_per_hour: Some(1.408),
        window_s: 10,
        tick: Duration::from_millis(50),
        client_threads: 2,
        slo: encbench_core::slo::Slo::default(),
        search: None,
        metrics: None,
        ramp: None,
        slice: None,
        replay: None,
        stop_without_route: false,
        records: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_commands_take_effect_and_are_logged() {
    let _turn = crate::common::load();
    let server = four_workers(2.0).await;
    let engine = Engine::start(live_setup(
        &server.url(),
        Pace {
            rate_per_s: Some(50.0),
            burstiness: 1.0,
        },
    ));

    let s = wait_for(&engine, "live traffic", |s| s.current.ok >= 10).await;
    assert_eq!(
        s.accuracy_before.as_ref().map(|a| (a.passed, a.total)),
        Some((4, 4))
    );
    assert_eq!(s.phase.as_ref().unwrap().kind, PhaseKind::Live);

    // Each change of settings after measured requests closes a live segment: its row keeps
    // the settings it ran with, and the next one starts counting afresh, without warmup.
    engine.send(Command::SetRate(Some(200.0)));
    let s = wait_for(&engine, "rate change", |s| {
        s.pace.rate_per_s == Some(200.0) && s.phases.len() == 1
    })
    .await;
    assert!(
        events(&s).iter().any(|e| e == "request_rate 50.0 -> 200.0"),
        "{:?}",
        events(&s)
    );
    let first = &s.phases[0];
    assert_eq!(
        (
            first.kind,
            first.request_rate,
            first.concurrency,
            first.warmup
        ),
        (PhaseKind::Live, Some(50.0), 2, 2)
    );
    assert!(first.n >= 10 && first.n == first.sent);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let now = engine.snapshot_now();
    let gained = now.current.ok;
    assert!(
        gained >= 60,
        "at 200/s half a second should complete ~100 requests, got {gained}"
    );
    assert_eq!(
        now.phase.as_ref().unwrap().warmup,
        0,
        "a segment has no warmup"
    );
    let before = gained;

    engine.send(Command::SetBurstiness(f64::INFINITY));
    engine.send(Command::SetConcurrency(4));
    let s = wait_for(&engine, "concurrency change", |s| {
        s.concurrency == 4 && s.current.ok >= 5
    })
    .await;
    assert!(
        events(&s).iter().any(|e| e == "burstiness 1 -> inf"),
        "{:?}",
        events(&s)
    );
    assert!(events(&s).iter().any(|e| e == "concurrency 2 -> 4"));
    let second = &s.phases[1];
    assert_eq!(
        (second.request_rate, second.burstiness, second.concurrency),
        (Some(200.0), Some(1.0), 2),
        "the 200/s segment keeps its own settings"
    );
    // Asking for what is already set changes nothing and is not an event.
    let changes = events(&s).len();
    engine.send(Command::SetConcurrency(4));
    engine.send(Command::ScaleBurstiness(2.0));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let s = engine.snapshot_now();
    assert!(
        !events(&s)[changes..].iter().any(|e| e.contains("->")),
        "{:?}",
        &events(&s)[changes..]
    );

    engine.send(Command::Pause);
    let s = wait_for(&engine, "pause", |s| s.state == RunState::Paused).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let sent = engine.snapshot_now().phase.unwrap().sent;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        engine.snapshot_now().phase.unwrap().sent,
        sent,
        "nothing is sent while paused"
    );
    assert!(events(&s).iter().any(|e| e == "paused"));
    engine.send(Command::Resume);
    wait_for(&engine, "resume", |s| {
        s.phase.as_ref().unwrap().sent > sent + 10
    })
    .await;

    engine.send(Command::Reset);
    let s = wait_for(&engine, "reset", |s| {
        events(s).iter().any(|e| e == "statistics reset")
    })
    .await;
    assert!(
        s.current.ok < before,
        "reset clears the phase: {} vs {before}",
        s.current.ok
    );

    engine.send(Command::CheckAccuracy);
    wait_for(&engine, "accuracy now", |s| {
        events(s).iter().any(|e| e == "accuracy 4/4")
    })
    .await;

    engine.send(Command::StartSweep(SweepKind::Batch));
    // The sweep counts its own phases, 2 of 2, after the live segments before it.
    let second = wait_for(&engine, "the sweep's second batch size", |s| {
        s.phase
            .as_ref()
            .is_some_and(|p| p.kind == PhaseKind::Batch && p.batch_size == 2)
    })
    .await;
    let p = second.phase.unwrap();
    assert_eq!(p.step, Some((2, 2)), "{p:?}");
    assert!(p.index > 3, "live segments ran before: {p:?}");
    let s = wait_for(&engine, "batch sweep done", |s| {
        s.phases
            .iter()
            .filter(|p| p.kind == PhaseKind::Batch)
            .count()
            == 2
            && s.phase.as_ref().is_some_and(|p| p.kind == PhaseKind::Live)
    })
    .await;
    let kinds: Vec<_> = s.phases.iter().map(|p| (p.kind, p.batch_size)).collect();
    let live_segments = s.phases.len() - 2;
    assert!(
        live_segments >= 3
            && kinds[..live_segments]
                .iter()
                .all(|k| k.0 == PhaseKind::Live),
        "{kinds:?}"
    );
    assert_eq!(
        kinds[live_segments..],
        [(PhaseKind::Batch, 1), (PhaseKind::Batch, 2)]
    );
    let batch = &s.phases[live_segments..];
    assert!(batch[1].batch_efficiency.is_some() && batch[1].cost_per_1m_usd.is_some());
    assert!(batch.iter().all(|p| p.n == 100 && p.warmup == 2));

    wait_for(&engine, "live traffic again", |s| s.current.ok >= 3).await;
    engine.send(Command::Stop);
    let report = engine.finish().await;
    assert!(report.stopped_early);
    assert_eq!(
        report.phases.len(),
        live_segments + 3,
        "the resumed live phase is kept too"
    );
    assert_eq!(
        report.accuracy_after.as_ref().map(|a| (a.passed, a.total)),
        Some((4, 4)),
        "a stopped run still checks the verdicts after the load"
    );
}

/// Holding a key multiplies the rate (or divides the burstiness) without bound; the engine
/// keeps both inside the supported ranges and says so in the timeline, instead of reaching a
/// number no schedule can keep (1e300 req/s) or a panic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_keys_held_down_are_clamped_to_the_supported_ranges() {
    let _turn = crate::common::load();
    let server = four_workers(1.0).await;
    let mut setup = live_setup(
        &server.url(),
        Pace {
            rate_per_s: Some(20.0),
            burstiness: 1.0,
        },
    );
    setup.accuracy = None;
    let engine = Engine::start(setup);
    wait_for(&engine, "live traffic", |s| s.current.ok >= 3).await;
    for _ in 0..2000 {
        engine.send(Command::ScaleRate(0.5));
        engine.send(Command::ScaleBurstiness(0.5));
    }
    let s = wait_for(&engine, "rate at its floor", |s| {
        s.pace.rate_per_s == Some(encbench_core::arrival::MIN_RATE)
            && s.pace.burstiness == encbench_core::arrival::MIN_BURSTINESS
    })
    .await;
    let ev = events(&s);
    assert!(ev.iter().any(|e| e.contains("clamped to 0.0010")), "{ev:?}");
    assert!(
        ev.iter()
            .any(|e| e.starts_with("burstiness") && e.contains("clamped to 0.01")),
        "{ev:?}"
    );
    for _ in 0..2000 {
        engine.send(Command::ScaleRate(2.0));
    }
    wait_for(&engine, "rate at its ceiling", |s| {
        s.pace.rate_per_s == Some(encbench_core::arrival::MAX_RATE)
    })
    .await;
    engine.send(Command::Stop);
    let report = engine.finish().await;
    assert!(report.error.is_none(), "{:?}", report.error);
    assert!(report.phases.iter().all(|p| p.request_rate.unwrap() <= 1e6));
}

/// A sweep asked for while a sweep runs is ignored, and the phase's closed-loop throughput
/// is still read over its whole pipeline: 4 workers × 10 ms at concurrency 8 complete 400
/// requests a second. (The ignored command had marked the pipeline's end where it came, and
/// the rest of the phase's requests were divided by that shorter span.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ignored_sweep_does_not_cut_the_throughput_interval() {
    let _t = crate::common::paired();
    let server = four_workers(10.0).await;
    let mut setup = live_setup(
        &server.url(),
        Pace {
            rate_per_s: None,
            burstiness: 1.0,
        },
    );
    setup.accuracy = None;
    setup.plan.live = false;
    // Twice the workers, so a busy host's round trip does not leave a worker idle.
    setup.plan.concurrency = 8;
    setup.plan.stop = StopAt::Count(400);
    setup.plan.sweep_batch = true;
    setup.plan.batch_sizes = vec![1];
    let engine = Engine::start(setup);
    wait_for(&engine, "the sweep phase under way", |s| s.current.ok >= 40).await;
    engine.send(Command::StartSweep(SweepKind::Concurrency));
    let report = engine.finish().await;
    assert_eq!(report.phases.len(), 1);
    let p = &report.phases[0];
    // The cut span read 3144 req/s; a loaded host reads a little under 400, never over.
    assert!(
        (0.85..=1.03).contains(&(p.req_per_s / 400.0)),
        "{} req/s from 4 workers of 10 ms",
        p.req_per_s
    );
}

/// Without a cap given, the cap follows the pace: the rate key leaving closed loop opens the
/// loop at 1024 (a cap of 1 under a rate measured one connection), coming back closes it at
/// 1, and a capacity search started with `f` probes at 1024 after a ceiling closed loop at
/// 32 (one connection would measure one connection, not the server). A cap
/// the operator sets holds from then on, at every pace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cap_nobody_gave_follows_the_pace_and_one_set_holds() {
    use encbench_core::plan::{OPEN_LOOP_CAP, ProbeRule, SEARCH_CEILING_CAP};
    use encbench_load::engine::SearchSpec;
    let _turn = crate::common::load();
    let server = four_workers(2.0).await;
    let mut setup = live_setup(
        &server.url(),
        Pace {
            rate_per_s: None,
            burstiness: 1.0,
        },
    );
    (setup.plan.concurrency, setup.plan.concurrency_given) = (1, false);
    setup.accuracy = None;
    setup.slo = encbench_core::slo::Slo {
        objectives: vec!["p99=1s".parse().unwrap()],
    };
    setup.search = Some(SearchSpec {
        precision: 0.5,
        probe: ProbeRule {
            min_requests: 30,
            stability: 0.5,
            max: Duration::from_secs(2),
            throughput_only: false,
            requests: None,
        },
        at_start: false,
    });
    let engine = Engine::start(setup);
    let s = wait_for(&engine, "closed loop", |s| s.current.ok >= 5).await;
    assert_eq!((s.concurrency, s.concurrency_default), (1, true));

    engine.send(Command::ToggleRateInf);
    let s = wait_for(&engine, "open loop", |s| s.pace.rate_per_s.is_some()).await;
    assert_eq!(s.concurrency, OPEN_LOOP_CAP);
    assert!(
        events(&s)
            .iter()
            .any(|e| e.ends_with("concurrency 1 -> 1024")),
        "{:?}",
        events(&s)
    );
    engine.send(Command::ToggleRateInf);
    let s = wait_for(&engine, "closed again", |s| s.pace.rate_per_s.is_none()).await;
    assert_eq!(s.concurrency, 1);

    engine.send(Command::FindCapacity);
    let s = wait_for(&engine, "a probe", |s| {
        s.phase
            .as_ref()
            .is_some_and(|p| p.kind == PhaseKind::Capacity)
            && s.pace.rate_per_s.is_some()
    })
    .await;
    assert_eq!(s.phase.as_ref().unwrap().concurrency, OPEN_LOOP_CAP);
    let ceiling = s.phases.iter().find(|p| p.kind == PhaseKind::Capacity);
    assert_eq!(
        ceiling.map(|p| (p.request_rate, p.concurrency)),
        Some((None, SEARCH_CEILING_CAP))
    );
    engine.send(Command::Stop);
    let report = engine.finish().await;
    assert_eq!(
        report.capacity.first().map(|c| c.concurrency),
        Some(OPEN_LOOP_CAP)
    );

    // Set once, the cap holds when the loop opens.
    let mut setup = live_setup(
        &server.url(),
        Pace {
            rate_per_s: None,
            burstiness: 1.0,
        },
    );
    (setup.plan.concurrency, setup.plan.concurrency_given) = (1, false);
    setup.accuracy = None;
    let engine = Engine::start(setup);
    wait_for(&engine, "closed loop", |s| s.current.ok >= 5).await;
    engine.send(Command::SetConcurrency(3));
    engine.send(Command::ToggleRateInf);
    let s = wait_for(&engine, "open loop", |s| s.pace.rate_per_s.is_some()).await;
    assert_eq!((s.concurrency, s.concurrency_default), (3, false));
    engine.send(Command::Stop);
    engine.finish().await;
}
