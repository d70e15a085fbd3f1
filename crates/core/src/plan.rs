//! The phases a run is made of: a plain run is one phase; a batch sweep is one phase per
//! batch size and a concurrency sweep one per concurrency level, run one after another.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The concurrency cap of an open-loop phase when `--concurrency` was not given: no
/// practical cap, as `AIPerf` and `vllm bench serve` put none on a rate. A cap of 1 under a
/// rate measured one connection, and a server that could keep up fell behind the client's
/// schedule instead. With no cap a server that cannot keep up builds its backlog in its own
/// queue, which the queue lag shows (see `stats::queue_lag`).
pub const OPEN_LOOP_CAP: usize = 1024;
/// The concurrency cap of a closed loop when `--concurrency` was not given: a closed loop
/// sends as fast as its slots come free, so its cap is its load.
pub const CLOSED_LOOP_CAP: usize = 1;
/// A capacity search's ceiling (a closed loop) when no cap was given: enough in flight to
/// fill a server of up to this many slots, without queueing a thousand requests behind each
/// other as the open loop's cap would (past any timeout on a slow server).
pub const SEARCH_CEILING_CAP: usize = 32;

/// The cap a phase at `rate_per_s` (`None`: a closed loop) gets when none was given.
pub fn default_cap(rate_per_s: Option<f64>) -> usize {
    match rate_per_s {
        Some(_) => OPEN_LOOP_CAP,
        None => CLOSED_LOOP_CAP,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseKind {
    Batch,
    Concurrency,
    Live,
    /// A phase of a capacity search: the closed-loop ceiling, then open-loop probes.
    Capacity,
}

impl PhaseKind {
    /// The name exports and tables use.
    pub fn name(self) -> &'static str {
        match self {
            PhaseKind::Batch => "batch",
            PhaseKind::Concurrency => "concurrency",
            PhaseKind::Live => "live",
            PhaseKind::Capacity => "capacity",
        }
    }
}

/// When a phase that runs "until stable" ends: at least `min_requests` measured and the
/// three thirds of what it measured agreeing (see `stats::ProbeSamples::stable`), or
/// `max` after measuring began, whichever comes first. `perf_analyzer`'s rule, with windows
/// that grow as the phase runs, so a noisy tail earns more samples rather than a verdict
/// from too few.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeRule {
    pub min_requests: u64,
    /// Largest spread (max − min over the mean) of the thirds' p99 and throughput.
    pub stability: f64,
    pub max: Duration,
    /// Judge the throughput alone: a closed loop measuring its ceiling has no latency to
    /// keep (its requests queue at the cap by design).
    pub throughput_only: bool,
    /// A capacity probe: exactly this many measured requests (or `max`), never ended by
    /// stability (`capacity::size`: a rule that stops when the figures look settled favours
    /// "meets").
    pub requests: Option<u64>,
}

/// `--max-probe-secs`'s default: a probe's time bound. A p99 probe plans 10,000 requests
/// or more (`capacity::size`): at 83 req/s or more it is never cut short; under that it
/// ends at this bound and weighs less in the answer.
pub const DEFAULT_MAX_PROBE_SECS: f64 = 120.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StopAt {
    /// This many measured requests after the warmup.
    Count(u64),
    /// Measure for this long after the warmup.
    Duration(Duration),
    /// Until the operator stops or starts a sweep (the TUI's live phase).
    Never,
    /// Until stable, or a time bound (capacity probes, `--until-stable`).
    Stable(ProbeRule),
}

impl StopAt {
    /// The measured requests the phase sends, where it has a fixed number: `Count`, and a
    /// capacity probe's planned requests.
    pub fn count(&self) -> Option<u64> {
        match *self {
            StopAt::Count(n) => Some(n),
            StopAt::Stable(rule) => rule.requests,
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseSpec {
    pub kind: PhaseKind,
    pub batch_size: usize,
    pub concurrency: usize,
    /// Every phase warms up: a new batch shape must (TensorRT compiles shapes on first use,
    /// padding buffers grow), and a new concurrency level opens new connections.
    pub warmup: u64,
    pub stop: StopAt,
    /// `--repeat`: this is repetition k of K (1-based); `None` for a phase measured once.
    pub repetition: Option<(u32, u32)>,
}

/// The sweep-related part of the workload.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPlan {
    pub batch_size: usize,
    /// The cap at the run's starting pace: `--concurrency`, or `default_cap` without it.
    pub concurrency: usize,
    /// `--concurrency` was given: it holds at every pace. Without it the cap follows the
    /// pace (`default_cap`), also when the live screen or a capacity search changes it.
    pub concurrency_given: bool,
    pub warmup: u64,
    pub stop: StopAt,
    pub sweep_batch: bool,
    pub sweep_concurrency: bool,
    pub batch_sizes: Vec<usize>,
    pub concurrency_levels: Vec<usize>,
    /// Front-ends that run until told to stop (the TUI) start and end in a live phase.
    pub live: bool,
    /// `--until-stable`: sweep phases run until stable instead of a fixed count.
    pub until_stable: Option<ProbeRule>,
    /// `--repeat`: how many times each planned phase (and each capacity search) runs.
    pub repeat: u32,
    /// `--ramp`: the plain phase is the ramp, and runs also before the live screen's live
    /// phase.
    pub ramp: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepKind {
    Batch,
    Concurrency,
}

impl SweepKind {
    pub fn name(self) -> &'static str {
        match self {
            SweepKind::Batch => "batch",
            SweepKind::Concurrency => "concurrency",
        }
    }
}

impl RunPlan {
    pub fn initial(&self) -> Vec<PhaseSpec> {
        let mut out = Vec::new();
        if self.sweep_batch {
            out.extend(self.sweep(SweepKind::Batch, self.concurrency));
        }
        if self.sweep_concurrency {
            out.extend(self.sweep(SweepKind::Concurrency, self.batch_size));
        }
        if out.is_empty() && (!self.live || self.ramp) {
            out.push(PhaseSpec {
                kind: PhaseKind::Batch,
                batch_size: self.batch_size,
                concurrency: self.concurrency,
                warmup: self.warmup,
                stop: self.stop,
                repetition: None,
            });
        }
        self.repeated(&out)
    }

    /// `--repeat K`: the phases K times over, round robin (1 8 32 1 8 32 …, not 1 1 8 8 …),
    /// so that drift during the run falls on every phase alike.
    pub fn repeated(&self, once: &[PhaseSpec]) -> Vec<PhaseSpec> {
        if self.repeat <= 1 {
            return once.to_vec();
        }
        (1..=self.repeat)
            .flat_map(|k| {
                once.iter().map(move |s| PhaseSpec {
                    repetition: Some((k, self.repeat)),
                    ..*s
                })
            })
            .collect()
    }

    /// `fixed` is the concurrency of a batch sweep, or the batch size of a concurrency sweep.
    pub fn sweep(&self, kind: SweepKind, fixed: usize) -> Vec<PhaseSpec> {
        let stop = match (self.until_stable, self.stop) {
            (Some(rule), _) => StopAt::Stable(rule),
            (None, StopAt::Never) => StopAt::Count(100),
            (None, s) => s,
        };
        match kind {
            SweepKind::Batch => self
                .batch_sizes
                .iter()
                .map(|&b| PhaseSpec {
                    kind: PhaseKind::Batch,
                    batch_size: b,
                    concurrency: fixed,
                    warmup: self.warmup,
                    stop,
                    repetition: None,
                })
                .collect(),
            SweepKind::Concurrency => self
                .concurrency_levels
                .iter()
                .map(|&c| PhaseSpec {
                    kind: PhaseKind::Concurrency,
                    batch_size: fixed,
                    concurrency: c,
                    warmup: self.warmup,
                    stop,
                    repetition: None,
                })
                .collect(),
        }
    }

    pub fn live_phase(&self, batch_size: usize, concurrency: usize) -> PhaseSpec {
        PhaseSpec {
            kind: PhaseKind::Live,
            batch_size,
            concurrency,
            warmup: self.warmup,
            stop: StopAt::Never,
            repetition: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> RunPlan {
        RunPlan {
            batch_size: 2,
            concurrency: 3,
            concurrency_given: true,
            warmup: 5,
            stop: StopAt::Count(50),
            sweep_batch: false,
            sweep_concurrency: false,
            batch_sizes: vec![1, 8, 32],
            concurrency_levels: vec![1, 4],
            live: false,
            until_stable: None,
            repeat: 1,
            ramp: false,
        }
    }

    #[test]
    fn plain_run_is_one_batch_phase() {
        let p = plan().initial();
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].batch_size, p[0].concurrency, p[0].warmup), (2, 3, 5));
    }

    #[test]
    fn both_sweeps_run_batch_then_concurrency_each_with_warmup() {
        let p = RunPlan {
            sweep_batch: true,
            sweep_concurrency: true,
            ..plan()
        }
        .initial();
        let rows: Vec<_> = p
            .iter()
            .map(|s| (s.kind, s.batch_size, s.concurrency))
            .collect();
        assert_eq!(
            rows,
            vec![
                (PhaseKind::Batch, 1, 3),
                (PhaseKind::Batch, 8, 3),
                (PhaseKind::Batch, 32, 3),
                (PhaseKind::Concurrency, 2, 1),
                (PhaseKind::Concurrency, 2, 4)
            ]
        );
        assert!(
            p.iter()
                .all(|s| s.warmup == 5 && s.stop == StopAt::Count(50))
        );
    }

    #[test]
    fn repeated_phases_take_turns() {
        let p = RunPlan {
            sweep_batch: true,
            repeat: 3,
            ..plan()
        }
        .initial();
        let rows: Vec<_> = p.iter().map(|s| (s.batch_size, s.repetition)).collect();
        let mut want = vec![];
        for k in 1..=3 {
            want.extend([1, 8, 32].map(|b| (b, Some((k, 3)))));
        }
        assert_eq!(rows, want);
        let once = RunPlan {
            repeat: 1,
            ..plan()
        }
        .initial();
        assert_eq!(once[0].repetition, None);
    }

    #[test]
    fn live_runs_start_with_no_fixed_phase_and_sweeps_need_a_stop() {
        let live = RunPlan {
            live: true,
            stop: StopAt::Never,
            ..plan()
        };
        assert!(live.initial().is_empty());
        // A ramp is a timed phase the live screen runs first.
        let ramp = RunPlan {
            ramp: true,
            stop: StopAt::Duration(std::time::Duration::from_secs(30)),
            ..live.clone()
        };
        assert_eq!(ramp.initial().len(), 1);
        assert!(
            live.sweep(SweepKind::Batch, 1)
                .iter()
                .all(|s| s.stop == StopAt::Count(100))
        );
    }
}
