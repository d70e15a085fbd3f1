//! Screen snapshots from a fixed engine snapshot (ratatui `TestBackend` + insta).

mod small_terminal;

use super::state::App;
use super::{panels, screen};
use crate::fixtures;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::sync::Arc;

fn app() -> App {
    App::new(fixtures::info(), Arc::new(fixtures::snapshot()))
}

fn render<R>(
    w: u16,
    h: u16,
    app: &App,
    mut draw: impl FnMut(&mut ratatui::Frame, Rect, &App) -> R,
) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| {
        draw(f, f.area(), app);
    })
    .unwrap();
    t
}

#[test]
fn whole_screen_80x24() {
    let t = render(80, 24, &app(), |f, _, a| screen::draw(f, a));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn whole_screen_160x48() {
    let t = render(160, 48, &app(), |f, _, a| screen::draw(f, a));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn help_overlay_80x24() {
    let mut a = app();
    a.show_help = true;
    let t = render(80, 24, &a, |f, _, a| screen::draw(f, a));
    insta::assert_snapshot!(t.backend());
}

#[test]
fn too_small_terminal_gets_a_message() {
    let t = render(60, 20, &app(), |f, _, a| screen::draw(f, a));
    let text = format!("{}", t.backend());
    assert!(text.contains("terminal too small: 60×20"), "{text}");
}

#[test]
fn tiny_and_odd_sizes_do_not_panic() {
    for (w, h) in [
        (1, 1),
        (0, 0),
        (80, 24),
        (81, 25),
        (200, 24),
        (80, 100),
        (300, 80),
    ] {
        let _ = render(w, h, &app(), |f, _, a| screen::draw(f, a));
    }
}

/// `--metrics-url` against Triton: the server's time per request beside the client's, both
/// of its lines whole at 80×24.
#[test]
fn whole_screen_with_server_metrics_80x24() {
    let mut a = app();
    let mut snap = fixtures::snapshot();
    snap.current.server = Some(encbench_core::server_metrics::ServerMetrics {
        requests: Some(1003),
        executions: Some(480),
        queue_ms_per_request: Some(0.412),
        compute_ms_per_request: Some(20.31),
        request_ms_per_request: Some(21.04),
        batch_factor: Some(2.09),
        ..Default::default()
    });
    a.snap = Arc::new(snap);
    let t = render(80, 24, &a, |f, _, a| screen::draw(f, a));
    let text = format!("{}", t.backend());
    for whole in [
        "│server 21.0 · queue 0.41 ms",
        "│  compute 20.3 · batch ×2.1",
    ] {
        assert!(text.contains(whole), "{whole} not whole in\n{text}");
    }
    insta::assert_snapshot!(t.backend());
}

#[test]
fn panel_header() {
    insta::assert_snapshot!(render(100, 2, &app(), panels::header::render).backend());
}

#[test]
fn panel_histogram_recent_and_whole_run() {
    insta::assert_snapshot!(
        "histogram_recent",
        render(60, 8, &app(), panels::histogram::render).backend()
    );
    let mut a = app();
    a.whole_run = true;
    insta::assert_snapshot!(
        "histogram_whole_run",
        render(60, 8, &a, panels::histogram::render).backend()
    );
}

#[test]
fn panel_percentiles() {
    insta::assert_snapshot!(render(44, 9, &app(), panels::percentiles::render).backend());
}

/// `w`: the percentiles of every phase and segment pooled, counted from the engine's
/// whole-run figures; again `w`: the segment under way.
#[test]
fn percentiles_of_the_whole_run_after_w() {
    let mut a = app();
    let mut snap = fixtures::snapshot();
    snap.run_errors = 7;
    let ok = snap.run_latency.len();
    a.snap = Arc::new(snap);
    let text = |a: &App| {
        format!(
            "{:?}",
            render(44, 9, a, panels::percentiles::render).backend()
        )
    };
    let segment = text(&a);
    assert!(
        segment.contains(&format!("percentiles · n {}", a.snap.current.n)),
        "{segment}"
    );
    a.whole_run = true;
    let whole = text(&a);
    assert!(
        whole.contains(&format!("run percentiles · n {}", ok + 7)),
        "{whole}"
    );
    assert!(whole.contains(&format!("ok {ok}  errors 7")), "{whole}");
    let p99 =
        encbench_core::text::ms(encbench_core::stats::LatencySummary::of(&a.snap.run_latency).p99);
    assert!(whole.contains(&format!("p99  {p99:>6} ms")), "{whole}");
}

#[test]
fn panel_throughput() {
    insta::assert_snapshot!(render(60, 8, &app(), panels::throughput::render).backend());
}

#[test]
fn panel_errors() {
    insta::assert_snapshot!(render(44, 6, &app(), panels::errors::render).backend());
}

#[test]
fn panel_sweep_with_knee_saturation_and_advice() {
    let t = render(64, 16, &app(), panels::sweep::render);
    let text = format!("{}", t.backend());
    assert!(
        text.contains("◀ knee") && text.contains("◀ saturated"),
        "{text}"
    );
    assert!(
        text.contains("» batch cap 1: efficiency 1.00 → 0.25 at 8"),
        "{text}"
    );
    assert!(
        text.contains("» concurrency cap 4: at 8 req/s +2%, p99 ×2.0"),
        "{text}"
    );
    insta::assert_snapshot!(t.backend());
}

/// A reranker's screen speaks of documents: D for the batch, docs/s for its samples, the
/// advice a cap on D.
#[test]
fn a_rerankers_sweep_and_throughput_speak_of_documents() {
    let mut a = app();
    a.info.rerank = true;
    let sweep = format!("{}", render(64, 16, &a, panels::sweep::render).backend());
    assert!(
        sweep.contains(" D               p50    p99 docs/s ×D=1  eff  $/1M"),
        "{sweep}"
    );
    assert!(
        sweep.contains("» D at most 1: efficiency 1.00 → 0.25 at 8") && !sweep.contains("smp/s"),
        "{sweep}"
    );
    let rate = format!(
        "{}",
        render(60, 8, &a, panels::throughput::render).backend()
    );
    assert!(
        rate.contains("docs/s") && !rate.contains("samples/s"),
        "{rate}"
    );
}

#[test]
fn panel_accuracy() {
    insta::assert_snapshot!(render(60, 7, &app(), panels::accuracy::render).backend());
}

#[test]
fn panel_footer_long_and_short() {
    insta::assert_snapshot!(
        "footer_wide",
        render(160, 1, &app(), panels::footer::render).backend()
    );
    insta::assert_snapshot!(
        "footer_narrow",
        render(80, 1, &app(), panels::footer::render).backend()
    );
}

/// A comparison in progress, built from the fixture export of a finished one: two targets
/// done, the third in its last phase.
fn compare_view() -> encbench_load::compare::CompareView {
    use encbench_core::plan::PhaseKind;
    use encbench_load::compare::{CompareStep, CompareView, RowState, RowView};
    let e: encbench_core::export::Export =
        serde_json::from_str(include_str!("../../../tests/fixtures/compare.json")).unwrap();
    let cmp = e.compare.clone().unwrap();
    let step = |kind, b, c| CompareStep {
        kind,
        batch_size: b,
        concurrency: c,
    };
    let steps = vec![
        step(PhaseKind::Batch, 1, 1),
        step(PhaseKind::Batch, 8, 1),
        step(PhaseKind::Concurrency, 1, 8),
    ];
    let rows = cmp
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut results: Vec<_> = e
                .phases
                .iter()
                .filter(|p| p.target.as_deref() == Some(t.name.as_str()))
                .cloned()
                .collect();
            let last = i == cmp.targets.len() - 1;
            if last {
                results.pop();
            }
            let accuracy = t
                .accuracy
                .as_ref()
                .map(|a| encbench_core::verdicts::AccuracyReport::of(a.samples.clone()));
            RowView {
                name: t.name.clone(),
                shown: t.target["url"].as_str().unwrap_or("").into(),
                instance: t.instance_type.clone().zip(t.price_per_hour_usd),
                state: if last {
                    RowState::Running(steps[2], Some((2, 3)))
                } else {
                    RowState::Waiting
                },
                live: last.then(|| {
                    let p = e
                        .phases
                        .iter()
                        .rfind(|p| p.target.as_deref() == Some(t.name.as_str()))
                        .unwrap();
                    (
                        encbench_load::engine::RunState::Running,
                        encbench_load::engine::LiveStats {
                            n: 17,
                            ok: 17,
                            latency: seventeen_around(p.latency_ms.p50),
                            req_per_s: p.req_per_s,
                            ..Default::default()
                        },
                    )
                }),
                results,
                accuracy,
            }
        })
        .collect();
    CompareView {
        order: cmp.order,
        steps,
        done: 8,
        total: 9,
        elapsed: std::time::Duration::from_secs(83),
        rows,
        finished: false,
        started_at: std::time::SystemTime::UNIX_EPOCH,
    }
}

/// The summary of 17 requests spread over 2 ms from `p50` on, as the engine derives it: too
/// few to bound a p99 from above.
fn seventeen_around(p50: f64) -> encbench_core::stats::LatencySummary {
    let mut h = encbench_core::stats::view_histogram();
    for i in 0..17u32 {
        // Microseconds, as the engine records them.
        let us = (p50 - 1.0 + f64::from(i) * 2.0 / 16.0) * 1000.0;
        h.record(us.round() as u64).unwrap();
    }
    encbench_core::stats::LatencySummary::of(&h)
}

#[test]
fn compare_screen_100x24() {
    let v = compare_view();
    let mut t = Terminal::new(TestBackend::new(100, 24)).unwrap();
    t.draw(|f| super::compare::draw(f, &v, false)).unwrap();
    insta::assert_snapshot!(t.backend());
}

#[test]
fn compare_screen_small_and_odd_sizes_do_not_panic() {
    let v = compare_view();
    for (w, h) in [(0, 0), (1, 1), (60, 20), (80, 24), (200, 60)] {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| super::compare::draw(f, &v, true)).unwrap();
    }
}

/// An endpoint seconds behind: every figure keeps one unit ("3230 ms", never "3.23s ms").
#[test]
fn latencies_over_a_second_keep_one_unit() {
    let mut snap = fixtures::snapshot();
    let l = &mut snap.current.latency;
    for v in [
        &mut l.min,
        &mut l.mean,
        &mut l.p50,
        &mut l.p90,
        &mut l.p95,
        &mut l.p99,
        &mut l.p999,
        &mut l.max,
    ] {
        *v *= 100.0;
    }
    let mut h = encbench_core::stats::view_histogram();
    for us in [1_230_000u64, 1_500_000, 1_990_000, 2_600_000, 3_230_000] {
        h.saturating_record(us);
    }
    snap.recent_latency = h;
    let a = App::new(fixtures::info(), Arc::new(snap));
    let p = render(44, 9, &a, panels::percentiles::render);
    let hist = render(60, 8, &a, panels::histogram::render);
    for t in [&p, &hist] {
        let text = format!("{}", t.backend());
        assert!(!text.contains("s ms") && !text.contains("s–"), "{text}");
    }
    insta::assert_snapshot!("percentiles_over_a_second", p.backend());
    insta::assert_snapshot!("histogram_over_a_second", hist.backend());
}

/// The fixture's open loop, offering 74.6 req/s to an endpoint that achieves 38.2.
fn overloaded() -> encbench_load::engine::Snapshot {
    let mut snap = fixtures::snapshot();
    snap.schedule = Some(encbench_load::engine::ScheduleStatus {
        offered_per_s: 74.6,
        backlog: 512,
        lag: std::time::Duration::from_millis(2600),
        queued: 0,
        queue_lag: std::time::Duration::ZERO,
        overloaded: true,
    });
    snap.current.req_per_s = 38.2;
    snap
}

/// An open loop the endpoint cannot keep up with says so first, before the pace.
#[test]
fn panel_header_when_the_endpoint_falls_behind() {
    let snap = overloaded();
    let a = App::new(fixtures::info(), Arc::new(snap));
    let t = render(160, 2, &a, panels::header::render);
    assert!(
        format!("{}", t.backend())
            .contains("OVERLOADED: offered 74.6, achieved 38.2 req/s, backlog 512, lag 2.6 s"),
        "{}",
        t.backend()
    );
    insta::assert_snapshot!(t.backend());
    // Narrower, the figures that matter most stay, and the line stays whole.
    let t = render(100, 2, &a, panels::header::render);
    let text = format!("{}", t.backend());
    assert!(
        text.contains("running · OVERLOADED: lag 2.6 s, backlog 512 · 1:23") && !text.contains('…'),
        "{text}"
    );

    // Under the open loop's default cap the backlog is at the server, and the cap says it
    // was not asked for.
    let mut snap = overloaded();
    snap.schedule = Some(encbench_load::engine::ScheduleStatus {
        backlog: 0,
        lag: std::time::Duration::from_millis(3),
        queued: 45,
        queue_lag: std::time::Duration::from_millis(900),
        ..snap.schedule.unwrap()
    });
    (snap.concurrency, snap.concurrency_default) = (1024, true);
    let a = App::new(fixtures::info(), Arc::new(snap));
    let text = format!("{}", render(200, 2, &a, panels::header::render).backend());
    assert!(
        text.contains(
            "OVERLOADED: offered 74.6, achieved 38.2 req/s, backlog 45 at the server, lag 900 ms"
        ) && text.contains("conc 1024 (default)"),
        "{text}"
    );
    let text = format!("{}", render(100, 2, &a, panels::header::render).backend());
    assert!(
        text.contains("running · OVERLOADED: lag 900 ms · 1:23") && text.contains("conc 1024 "),
        "{text}"
    );
    // Keeping up, the default is said at 100 columns.
    let mut snap = (*a.snap).clone();
    snap.schedule = None;
    let a = App::new(fixtures::info(), Arc::new(snap));
    let text = format!("{}", render(100, 2, &a, panels::header::render).backend());
    assert!(text.contains("· conc 1024 (default) ·"), "{text}");
}

/// A host waiting for the common start of several (`--start-at`) counts down to it.
#[test]
fn panel_header_counts_down_to_the_common_start() {
    let mut snap = fixtures::snapshot();
    snap.state = encbench_load::engine::RunState::Waiting;
    snap.schedule = None;
    snap.starts_in = Some(std::time::Duration::from_millis(11_200));
    let a = App::new(fixtures::info(), Arc::new(snap));
    let text = format!("{}", render(100, 2, &a, panels::header::render).backend());
    assert!(text.contains("start in 12 s"), "{text}");
}

/// An endpoint that stopped answering says so beside the state, from when and why, and for
/// a while once it is back.
#[test]
fn panel_header_says_when_the_endpoint_was_lost_and_back() {
    use encbench_core::reach::{ConnectFailure, EndpointLost};
    let mut snap = fixtures::snapshot();
    snap.schedule = None;
    snap.endpoint_lost = vec![EndpointLost {
        at_s: 80.14,
        kind: ConnectFailure::Refused,
        back_at_s: None,
        attempts: 57,
    }];
    let a = App::new(fixtures::info(), Arc::new(snap.clone()));
    let text = format!("{}", render(160, 2, &a, panels::header::render).backend());
    assert!(
        text.contains(
            "running · ENDPOINT LOST at 80.1 s: connection refused, 57 attempts to connect failed ·"
        ),
        "{text}"
    );
    let text = format!("{}", render(80, 2, &a, panels::header::render).backend());
    assert!(text.contains("LOST at 80.1 s"), "{text}");
    // Back 2.9 s later (the fixture is 83 s in): said for a while, then no more.
    snap.endpoint_lost[0].back_at_s = Some(83.0);
    let a = App::new(fixtures::info(), Arc::new(snap.clone()));
    let text = format!("{}", render(160, 2, &a, panels::header::render).backend());
    assert!(
        text.contains("endpoint back at 83.0 s after 2.9 s lost"),
        "{text}"
    );
    snap.elapsed = std::time::Duration::from_secs(100);
    let a = App::new(fixtures::info(), Arc::new(snap));
    let text = format!("{}", render(160, 2, &a, panels::header::render).backend());
    assert!(
        !text.contains("back at") && !text.contains("LOST"),
        "{text}"
    );
}
