//! Frame render time from engine snapshots after 1 minute and after 30 minutes of a simulated
//! run at 1,000 req/s. The stats structures are the engine's own, fed with completions on a
//! simulated clock; the screen is drawn into a 160×48 `TestBackend`. The point is the ratio:
//! frame cost must not grow with run length (oha's TUI rescans every sample each frame).
//!
//! Run: `cargo bench --bench frame_render` (numbers go into BENCHMARKS.md).

use encbench::fixtures::{self, Live};
use encbench::tui::screen;
use encbench::tui::state::App;
use encbench_core::stats::{Completion, LatencySummary, PhaseRecorder, Timeline, view_histogram};
use encbench_load::engine::{LiveStats, Snapshot};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::Arc;
use std::time::{Duration, Instant};

const RATE: u64 = 1_000;

/// Runs `secs` of simulated traffic through the real aggregation and returns the snapshot a
/// front-end would receive at the end, and how long building it took.
fn simulate(secs: u64) -> (Snapshot, Duration) {
    let t0 = Instant::now();
    let mut timeline = Timeline::new(t0, 10);
    let mut recorder = PhaseRecorder::default();
    let mut run = view_histogram();
    let mut x: u64 = 12345;
    for i in 0..secs * RATE {
        // A cheap deterministic spread of 20–60 ms with a tail.
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let lat_us = 20_000 + (x >> 33) % 40_000 + if i % 997 == 0 { 400_000 } else { 0 };
        let intended = t0 + Duration::from_micros(i * 1_000_000 / RATE);
        let c = Completion {
            intended,
            sent: intended,
            done: intended + Duration::from_micros(lat_us),
            batch_size: 1,
            error: None,
            said: None,
            variant: None,
            tokenize: None,
            server_time: None,
            measured: true,
            tokens: None,
        };
        timeline.record(&c, true);
        recorder.record(&c);
        run.record(lat_us).unwrap();
        if i % RATE == 0 {
            timeline.roll(intended);
        }
    }
    let now = t0 + Duration::from_secs(secs);
    let build = Instant::now();
    timeline.roll(now);
    let entries = &timeline.entries;
    let tail = entries[entries.len().saturating_sub(300)..].to_vec();
    let snap = fixtures::live_snapshot(Live {
        elapsed: Duration::from_secs(secs),
        phase_index: 1,
        rate_per_s: RATE as f64,
        concurrency: 64,
        in_flight: 40,
        schedule: None,
        sent: secs * RATE,
        current: LiveStats {
            n: recorder.completed(),
            ok: recorder.ok,
            errors: recorder.errors.clone(),
            said: recorder.said.clone(),
            latency: LatencySummary::of(&recorder.scheduled),
            service: LatencySummary::of(&recorder.service),
            dispatch_delay: LatencySummary::of(&recorder.dispatch_delay),
            tokenize: None,
            req_per_s: recorder.req_per_s(),
            samples_per_s: recorder.samples_per_s(),
            slo: None,
            server: None,
            server_time: None,
        },
        recent_latency: timeline.recent(),
        run_latency: run,
        timeline_tail: tail,
        phases: Vec::new(),
    });
    (snap, build.elapsed())
}

fn frame_time(snap: Snapshot, frames: u32, whole_run: bool) -> Duration {
    let mut app = App::new(fixtures::info(), Arc::new(snap));
    app.whole_run = whole_run;
    let mut term = Terminal::new(TestBackend::new(160, 48)).unwrap();
    for _ in 0..50 {
        term.draw(|f| {
            screen::draw(f, &app);
        })
        .unwrap();
    }
    let start = Instant::now();
    for _ in 0..frames {
        term.draw(|f| {
            screen::draw(f, &app);
        })
        .unwrap();
    }
    start.elapsed() / frames
}

fn main() {
    let frames = 2_000;
    println!(
        "{:>10} {:>14} {:>16} {:>18} {:>16}",
        "run", "completions", "snapshot build", "frame (recent)", "frame (whole)"
    );
    let mut results = Vec::new();
    for secs in [60u64, 1_800] {
        let (snap, build) = simulate(secs);
        let recent = frame_time(snap.clone(), frames, false);
        let whole = frame_time(snap, frames, true);
        println!(
            "{:>8} s {:>14} {:>13.1} µs {:>15.1} µs {:>13.1} µs",
            secs,
            secs * RATE,
            build.as_secs_f64() * 1e6,
            recent.as_secs_f64() * 1e6,
            whole.as_secs_f64() * 1e6
        );
        results.push(recent.as_secs_f64());
    }
    println!(
        "frame time ratio 30 min / 1 min: {:.2}",
        results[1] / results[0]
    );
}
