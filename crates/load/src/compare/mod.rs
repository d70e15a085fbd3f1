//! `compare`: several targets on one workload, side by side (the co-hosting question:
//! multi-container, inference components or LMI multi-model). Each target is prepared as a
//! plain run would be; each (target, phase) pair is one engine run, so measurement rules are
//! the engine's and nothing is re-implemented here.

pub mod spec;

use crate::accuracy;
use crate::engine::{Command, Engine, EngineSpec, LiveStats, RunState, Snapshot};
use crate::setup::PreparedTarget;
use encbench_core::arrival::{Pace, phase_seed};
use encbench_core::export::{
    AccuracyExport, CompareOrder, CompareSection, CompareTarget, Export, SCHEMA_VERSION, rfc3339,
};
use encbench_core::plan::{PhaseKind, RunPlan, StopAt};
use encbench_core::results::{PhaseResult, RunReport, derive};
use encbench_core::verdicts::{AccuracyReport, diff};
use encbench_wire::payload::PayloadFormat;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::watch;

/// The workload every target gets, and the defaults of targets that do not say otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareSpec {
    /// Batch sizes measured closed loop at `batch_concurrency`.
    pub batch_sizes: Vec<usize>,
    /// The batch phases' cap (`--concurrency`): 1 measures latency with nothing queued.
    pub batch_concurrency: usize,
    /// `--repeat`: every phase this many times, the targets taking turns in each.
    pub repeat: u32,
    /// Concurrency levels measured at batch 1 (empty: no concurrency table).
    pub concurrency_levels: Vec<usize>,
    pub n: u64,
    pub warmup: u64,
    pub pad_to_max: bool,
    pub max_len: usize,
    pub order: CompareOrder,
    /// `None`: each URL target's family is discovered (SageMaker targets take hf).
    pub format: Option<PayloadFormat>,
    pub model: Option<String>,
    pub instance_type: Option<String>,
    pub texts: Option<PathBuf>,
    pub tokenizer: Option<PathBuf>,
    pub timeout: Duration,
    pub warmup_timeout: Duration,
    pub ready_timeout: Duration,
    /// Shared by every target (default: random, recorded in the export).
    pub seed: Option<u64>,
    pub accuracy_samples: Option<PathBuf>,
    pub accuracy_check: bool,
    pub labels: Vec<String>,
    pub region: Option<String>,
    pub profile: Option<String>,
    pub endpoint_url: Option<String>,
    /// `--slo`: every phase is judged, and each target's capacity searched.
    pub slo: encbench_core::slo::Slo,
    pub search: Option<crate::engine::SearchSpec>,
    pub pooling: encbench_wire::payload::Pooling,
    pub api: Option<encbench_wire::payload::Api>,
    /// `--task`: each target's requests (a reranker's when its route ranks).
    pub task: Option<encbench_core::input::Task>,
    pub rerank_samples: Option<PathBuf>,
    /// The least Kendall's tau two targets' rankings may have (`--min-tau`).
    pub min_tau: f64,
    /// `--header` pairs and the Bearer token's variable, for every URL target.
    pub headers: Vec<(String, String)>,
    pub bearer_token_env: Option<String>,
}

/// One phase of the shared workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompareStep {
    pub kind: PhaseKind,
    pub batch_size: usize,
    pub concurrency: usize,
}

impl CompareStep {
    pub fn label(&self) -> String {
        match self.kind {
            PhaseKind::Concurrency => format!("c={} b={}", self.concurrency, self.batch_size),
            PhaseKind::Capacity => format!("capacity c={}", self.concurrency),
            _ => format!("b={} c={}", self.batch_size, self.concurrency),
        }
    }
}

/// Every batch size at the batch phases' cap (1 by default), then every concurrency level at
/// batch 1, closed loop; with an SLO, a capacity search over the batch sizes at the highest
/// concurrency last.
pub fn steps(a: &CompareSpec) -> Vec<CompareStep> {
    let batch = a.batch_sizes.iter().map(|&b| CompareStep {
        kind: PhaseKind::Batch,
        batch_size: b,
        concurrency: a.batch_concurrency,
    });
    let conc = a.concurrency_levels.iter().map(|&c| CompareStep {
        kind: PhaseKind::Concurrency,
        batch_size: 1,
        concurrency: c,
    });
    let search = a.search.map(|_| CompareStep {
        kind: PhaseKind::Capacity,
        batch_size: a.batch_sizes.first().copied().unwrap_or(1),
        concurrency: a.concurrency_levels.iter().copied().max().unwrap_or(8),
    });
    batch.chain(conc).chain(search).collect()
}

pub fn order_note(order: CompareOrder) -> &'static str {
    match order {
        CompareOrder::Interleaved => {
            "targets interleaved phase by phase, one at a time: drift during the run (other \
             tenants, autoscaling, warming caches) falls on every target alike, and no two \
             targets share the client or the network at once"
        }
        CompareOrder::Sequential => {
            "targets one after another, each through every phase (--order sequential): a \
             target's phases are contiguous, but drift between targets is not cancelled"
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum RowState {
    Waiting,
    CheckingAccuracy,
    /// The step, and with `--repeat` its repetition k of K.
    Running(CompareStep, Option<(u32, u32)>),
    Done,
}

/// What the live screen shows of one target.
#[derive(Debug, Clone)]
pub struct RowView {
    pub name: String,
    pub shown: String,
    pub instance: Option<(String, f64)>,
    pub state: RowState,
    /// The running phase's figures so far, and the engine's state (warming, running…).
    pub live: Option<(RunState, LiveStats)>,
    pub results: Vec<PhaseResult>,
    pub accuracy: Option<AccuracyReport>,
}

#[derive(Debug, Clone)]
pub struct CompareView {
    pub order: CompareOrder,
    pub steps: Vec<CompareStep>,
    pub done: usize,
    pub total: usize,
    pub elapsed: Duration,
    pub rows: Vec<RowView>,
    pub finished: bool,
    pub started_at: SystemTime,
}

/// A target prepared for the comparison.
pub struct Entry {
    pub name: String,
    pub prepared: PreparedTarget,
    /// `metrics-url=` of its `--target`: its server's side of every phase.
    pub metrics: Option<Arc<encbench_wire::client::metrics::Scraper>>,
}

struct Outcome {
    phases: Vec<PhaseResult>,
    capacity: Vec<encbench_core::results::capacity::Capacity>,
    before: Option<AccuracyReport>,
    after: Option<AccuracyReport>,
    notices: Vec<String>,
}

impl Outcome {
    /// An engine run's phases, capacity answers and notices, each named after its target
    /// and marked with its repetition.
    fn keep(&mut self, target: &str, report: RunReport, repetition: Option<u32>) {
        for mut ph in report.phases {
            ph.target = Some(target.to_string());
            ph.repetition = repetition;
            self.phases.push(ph);
        }
        for n in report.notices {
            let n = format!("{target}: {n}");
            if !self.notices.contains(&n) {
                self.notices.push(n);
            }
        }
        for mut c in report.capacity {
            c.target = Some(target.to_string());
            c.repetition = repetition;
            self.capacity.push(c);
        }
    }
}

/// `index` numbers the (step, repetition) pairs: each repetition draws arrivals of its own.
fn engine_for(entry: &Entry, a: &CompareSpec, step: CompareStep, index: usize) -> Engine {
    let p = &entry.prepared;
    Engine::start(EngineSpec {
        target: p.target.clone(),
        texts: p.texts.clone(),
        tokenizer: Some(p.tokenizer.clone()),
        rankings: p.rankings.clone(),
        format: p.format.clone(),
        shape: p.shape,
        warmup_timeout: a.warmup_timeout,
        endpoint_wait: a.timeout,
        pace: Pace {
            rate_per_s: None,
            burstiness: 1.0,
        },
        plan: RunPlan {
            batch_size: step.batch_size,
            concurrency: step.concurrency,
            concurrency_given: true,
            warmup: a.warmup,
            stop: StopAt::Count(a.n),
            sweep_batch: step.kind != PhaseKind::Concurrency,
            sweep_concurrency: step.kind == PhaseKind::Concurrency,
            batch_sizes: if step.kind == PhaseKind::Capacity {
                a.batch_sizes.clone()
            } else {
                vec![step.batch_size]
            },
            concurrency_levels: vec![step.concurrency],
            live: false,
            until_stable: None,
            repeat: 1,
            ramp: false,
        },
        seed: phase_seed(p.seed, index, 0),
        accuracy: None,
        price_per_hour: p.price.as_ref().map(|p| p.1),
        window_s: 10,
        tick: Duration::from_millis(200),
        client_threads: crate::engine::client_threads::default_count(),
        slo: a.slo.clone(),
        search: a
            .search
            .filter(|_| step.kind == PhaseKind::Capacity)
            .map(|s| crate::engine::SearchSpec {
                at_start: true,
                ..s
            }),
        metrics: entry.metrics.clone(),
        ramp: None,
        slice: None,
        replay: None,
        // Each target's rows are kept, whatever its check found.
        stop_without_route: false,
        records: None,
    })
}

/// The check before a target's first phase may switch the form its bodies are sent in; the
/// one after its last checks the known answers the one `before` did.
async fn check_accuracy(
    p: &PreparedTarget,
    before_load: bool,
    before: Option<&AccuracyReport>,
) -> Option<AccuracyReport> {
    let acc = p.accuracy.as_ref()?;
    let when = if before_load {
        accuracy::When::BeforeLoad
    } else {
        accuracy::When::after(before)
    };
    let progress = accuracy::Progress::default();
    let target = p.target.as_ref();
    Some(accuracy::check_counted(target, p.format.as_ref(), acc, &progress, when).await)
}

/// Runs the comparison, publishing a view for the front-end. `stop` turning true ends it
/// early: the phase in progress is stopped and kept, later phases are skipped.
pub async fn run(
    a: &CompareSpec,
    entries: &[Entry],
    view: watch::Sender<CompareView>,
    mut stop: watch::Receiver<bool>,
) -> Export {
    let started_at = SystemTime::now();
    view.send_modify(|v| v.started_at = started_at);
    let clock = std::time::Instant::now();
    let steps = steps(a);
    let mut outcomes: Vec<Outcome> = entries
        .iter()
        .map(|_| Outcome {
            phases: vec![],
            capacity: vec![],
            before: None,
            after: None,
            notices: vec![],
        })
        .collect();
    let repeat = a.repeat.max(1);
    let pairs = turns(a.order, entries.len(), steps.len(), repeat);
    let set_row = |t: usize, f: &dyn Fn(&mut RowView)| {
        view.send_modify(|v| {
            f(&mut v.rows[t]);
            v.elapsed = clock.elapsed();
        });
    };
    let mut stopped = false;
    let mut failure = None;
    for (
        k,
        &Turn {
            target: t,
            step: s,
            rep,
        },
    ) in pairs.iter().enumerate()
    {
        if *stop.borrow() {
            stopped = true;
            break;
        }
        let p = &entries[t].prepared;
        if s == 0 && rep == 0 {
            set_row(t, &|r| r.state = RowState::CheckingAccuracy);
            outcomes[t].before = check_accuracy(p, true, None).await;
            let before = outcomes[t].before.clone();
            if let Some(switched) = before.as_ref().and_then(|b| b.switched.as_ref()) {
                outcomes[t]
                    .notices
                    .push(format!("{}: {switched}", entries[t].name));
            }
            set_row(t, &|r| r.accuracy.clone_from(&before));
        }
        let step = steps[s];
        let shown_rep = (repeat > 1).then_some((rep + 1, repeat));
        set_row(t, &|r| r.state = RowState::Running(step, shown_rep));
        let index = s + rep as usize * steps.len();
        let engine = engine_for(&entries[t], a, step, index);
        let live =
            |snap: &Snapshot| set_row(t, &|r| r.live = Some((snap.state, snap.current.clone())));
        let report = drive(engine, &live, &mut stop, &mut stopped).await;
        if let Some(e) = &report.error {
            // An engine that failed measured what it measured; nothing after it is trusted.
            failure = Some(format!("{}: {e}", entries[t].name));
            stopped = true;
        }
        outcomes[t].keep(&entries[t].name, report, shown_rep.map(|r| r.0));
        let results = outcomes[t].phases.clone();
        set_row(t, &|r| {
            r.live = None;
            r.results.clone_from(&results);
        });
        view.send_modify(|v| v.done = k + 1);
        if stopped {
            break;
        }
        if s + 1 == steps.len() && rep + 1 == repeat {
            set_row(t, &|r| r.state = RowState::CheckingAccuracy);
            outcomes[t].after = check_accuracy(p, false, outcomes[t].before.as_ref()).await;
            let after = outcomes[t].after.clone();
            set_row(t, &|r| {
                r.accuracy.clone_from(&after);
                r.state = RowState::Done;
            });
        } else if a.order == CompareOrder::Interleaved {
            set_row(t, &|r| r.state = RowState::Waiting);
        }
    }
    let mut export = export(a, entries, outcomes, started_at, stopped);
    export.error = failure;
    view.send_modify(|v| {
        v.finished = true;
        v.elapsed = clock.elapsed();
        for r in &mut v.rows {
            r.results = export
                .phases
                .iter()
                .filter(|p| p.target.as_deref() == Some(r.name.as_str()))
                .cloned()
                .collect();
        }
    });
    export
}

/// One engine run of the comparison: a target, a step, and its repetition (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Turn {
    target: usize,
    step: usize,
    rep: u32,
}

/// The turns in the order they are taken. Interleaved, each step's repetitions take turns
/// between the targets (A B A B …, not A A B B), so drift falls on both of every pair.
fn turns(order: CompareOrder, targets: usize, steps: usize, repeat: u32) -> Vec<Turn> {
    let turn = |target, step, rep| Turn { target, step, rep };
    match order {
        CompareOrder::Interleaved => (0..steps)
            .flat_map(|s| (0..repeat).flat_map(move |r| (0..targets).map(move |t| turn(t, s, r))))
            .collect(),
        CompareOrder::Sequential => (0..targets)
            .flat_map(|t| (0..steps).flat_map(move |s| (0..repeat).map(move |r| turn(t, s, r))))
            .collect(),
    }
}

/// Runs one engine to its end, showing its snapshots; a stop asked for meanwhile stops it
/// (and is remembered in `stopped`).
async fn drive(
    engine: Engine,
    live: &dyn Fn(&Snapshot),
    stop: &mut watch::Receiver<bool>,
    stopped: &mut bool,
) -> RunReport {
    let mut snaps = engine.snapshots();
    let commands = engine.commands();
    let finish = engine.finish();
    tokio::pin!(finish);
    loop {
        tokio::select! {
            r = &mut finish => return r,
            Ok(()) = snaps.changed() => {
                let snap = snaps.borrow_and_update().clone();
                live(&snap);
            }
            Ok(()) = stop.changed(), if !*stopped => {
                *stopped = true;
                let _ = commands.send(Command::Stop);
            }
        }
    }
}

/// What a second Ctrl-C writes: the phases finished so far, as the view holds them; the one
/// in progress is not waited for.
pub fn interim_export(a: &CompareSpec, entries: &[Entry], v: &CompareView) -> Export {
    let outcomes = v
        .rows
        .iter()
        .map(|r| Outcome {
            phases: r.results.clone(),
            capacity: vec![],
            before: None,
            after: r.accuracy.clone(),
            notices: vec![],
        })
        .collect();
    let mut e = export(a, entries, outcomes, v.started_at, true);
    e.error = Some("interrupted twice: the phase in progress was not waited for".into());
    e
}

pub fn initial_view(a: &CompareSpec, entries: &[Entry]) -> CompareView {
    let steps = steps(a);
    CompareView {
        order: a.order,
        total: steps.len() * entries.len() * a.repeat.max(1) as usize,
        steps,
        done: 0,
        elapsed: Duration::ZERO,
        rows: entries
            .iter()
            .map(|e| RowView {
                name: e.name.clone(),
                shown: e.prepared.shown.clone(),
                instance: e.prepared.price.clone(),
                state: RowState::Waiting,
                live: None,
                results: vec![],
                accuracy: None,
            })
            .collect(),
        finished: false,
        started_at: SystemTime::now(),
    }
}

fn export(
    a: &CompareSpec,
    entries: &[Entry],
    mut outcomes: Vec<Outcome>,
    started_at: SystemTime,
    stopped: bool,
) -> Export {
    for (o, e) in outcomes.iter_mut().zip(entries) {
        let price = e.prepared.price.as_ref().map(|p| p.1);
        derive(&mut o.phases, price);
        o.phases = encbench_core::results::repeat::pool(&o.phases, &a.slo, price);
    }
    let checked: Vec<(String, Option<AccuracyReport>)> = entries
        .iter()
        .zip(&outcomes)
        .map(|(e, o)| (e.name.clone(), o.after.clone().or(o.before.clone())))
        .collect();
    let diff = diff::diff(&checked);
    let vector_agreement = encbench_core::verdicts::agreement::agreement(&checked);
    let score_agreement =
        encbench_core::verdicts::rank_agreement::rank_agreement(&checked, a.min_tau);
    let notices = outcomes.iter().flat_map(|o| o.notices.clone()).collect();
    let first = &entries[0].prepared;
    // Each target's family is its own (given or found); the first's stands for them all
    // where they agree, and `engines` lists them.
    let mut engines: Vec<&str> = vec![];
    for e in entries {
        let engine = e.prepared.target_config.engine.as_str();
        if !engines.contains(&engine) {
            engines.push(engine);
        }
    }
    let config = json!({
        "target": {
            "url": null,
            "engine": engines[0],
            "engines": engines,
            "compare": entries.iter().map(|e| e.name.clone()).collect::<Vec<_>>(),
        },
        "n": a.n,
        "warmup": a.warmup,
        "task": first.task,
        "batch_size": 1,
        "concurrency": a.batch_concurrency,
        "repeat": a.repeat.max(1),
        "request_rate": null,
        "burstiness": 1.0,
        "closed_loop": true,
        "pad_to_max": first.shape.pad_to_max,
        "max_len": first.shape.max_len,
        "natural_tokens_per_input": (first.natural_tokens * 10.0).round() / 10.0,
        "batch_sizes": a.batch_sizes,
        "concurrency_levels": a.concurrency_levels,
        "order": a.order,
        "texts": a.texts.as_ref().map(|p| p.display().to_string()),
        "timeout_s": a.timeout.as_secs_f64(),
        "seed": first.seed,
        "accuracy_check": a.accuracy_check,
        "labels": a.labels,
        "slo": a.slo.objectives.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "find_capacity": a.search.is_some(),
        "capacity_precision": a.search.map(|s| s.precision),
        "min_probe_requests": a.search.map(|s| s.probe.min_requests),
        "stability": a.search.map(|s| s.probe.stability),
        "max_probe_secs": a.search.map(|s| s.probe.max.as_secs_f64()),
    });
    let targets = entries
        .iter()
        .zip(&outcomes)
        .map(|(e, o)| CompareTarget {
            name: e.name.clone(),
            target: serde_json::to_value(&e.prepared.target_config)
                .expect("a target's config serializes"),
            instance_type: e.prepared.price.as_ref().map(|p| p.0.clone()),
            price_per_hour_usd: e.prepared.price.as_ref().map(|p| p.1),
            accuracy: AccuracyExport::of(&o.before, &o.after),
        })
        .collect();
    let capacity: Vec<_> = outcomes.iter().flat_map(|o| o.capacity.clone()).collect();
    let phases: Vec<PhaseResult> = outcomes.into_iter().flat_map(|o| o.phases).collect();
    let names: Vec<String> = entries.iter().map(|e| e.name.clone()).collect();
    let differences = encbench_core::differences::differences(&phases, &capacity, &names);
    Export {
        schema_version: SCHEMA_VERSION,
        tool: "encbench-tui".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: rfc3339(started_at),
        ended_at: rfc3339(SystemTime::now()),
        config,
        capacity,
        phases,
        accuracy: None,
        timeline: vec![],
        stopped_early: stopped,
        error: None,
        notices,
        fail_on: vec![],
        compare: Some(CompareSection {
            order: a.order,
            order_note: order_note(a.order).into(),
            targets,
            verdict_diff: diff,
            vector_agreement,
            score_agreement,
            differences,
        }),
        tune: None,
    }
}
