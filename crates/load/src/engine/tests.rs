//! The engine with a target that misbehaves in ways no server can make it: a client that
//! panics mid-request must not lose the request or hang the phase.

use super::*;
use encbench_core::arrival::Pace;
use encbench_core::input::{Input, Shape};
use encbench_core::plan::{RunPlan, StopAt};
use encbench_wire::client::{BoxFuture, Failure, OnWaiting, Target, TargetError};
use encbench_wire::payload::{HfFormat, Prepared, Reply};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Answers one verdict, except every third request, where it panics.
struct PanicsEveryThird(AtomicUsize);

impl Target for PanicsEveryThird {
    fn describe(&self) -> String {
        "panics".into()
    }

    fn check_ready<'a>(&'a self, _: &'a OnWaiting) -> BoxFuture<'a, Result<String, TargetError>> {
        Box::pin(async { Ok(String::new()) })
    }

    fn invoke<'a>(&'a self, _: &'a Prepared) -> BoxFuture<'a, Result<Reply, Failure>> {
        Box::pin(async move {
            tokio::task::yield_now().await;
            assert!(
                self.0.fetch_add(1, Ordering::Relaxed) % 3 != 2,
                "simulated client bug"
            );
            Ok(Reply::new(&br#"[{"label": "x", "score": 1.0}]"#[..], None))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_request_is_counted_and_the_phase_completes() {
    let shape = Shape {
        pad_to_max: false,
        max_len: 512,
    };
    let engine = Engine::start(EngineSpec {
        target: Arc::new(PanicsEveryThird(AtomicUsize::new(0))),
        texts: vec![Input::Text("x".into())],
        tokenizer: None,
        format: Arc::new(HfFormat::new(shape)),
        shape,
        warmup_timeout: Duration::from_secs(5),
        endpoint_wait: Duration::from_secs(5),
        pace: Pace {
            rate_per_s: None,
            burstiness: 1.0,
        },
        plan: RunPlan {
            batch_size: 1,
            concurrency: 2,
            concurrency_given: true,
            warmup: 0,
            stop: StopAt::Count(30),
            sweep_batch: false,
            sweep_concurrency: false,
            batch_sizes: vec![],
            concurrency_levels: vec![],
            live: false,
            until_stable: None,
            repeat: 1,
            ramp: false,
        },
        seed: 1,
        accuracy: None,
        rankings: None,
        price_per_hour: None,
        window_s: 10,
        tick: Duration::from_millis(100),
        client_threads: 2,
        slo: encbench_core::slo::Slo::default(),
        search: None,
        metrics: None,
        ramp: None,
        slice: None,
        replay: None,
        stop_without_route: false,
        records: None,
    });
    let report = engine.finish().await;
    let p = &report.phases[0];
    assert_eq!((p.sent, p.n), (30, 30), "{p:?}");
    assert_eq!(
        p.errors.get(encbench_core::stats::CLIENT_PANIC),
        Some(&10),
        "{p:?}"
    );
    assert_eq!(p.ok, 20);
}
