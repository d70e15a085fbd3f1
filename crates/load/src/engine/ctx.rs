//! Everything a phase's dispatch loop needs besides the command channel: the target, the
//! inputs and their format, the shared state, and the accuracy check run in line or beside
//! the load.

use super::client_threads::ClientThreads;
use super::command::Command;
use super::hosts::Hosts;
use super::settings::EngineSpec;
use super::shared::Shared;
use super::snapshot::RunState;
use crate::accuracy::{self, AccuracySpec, When};
use encbench_core::export::records::RecordsTx;
use encbench_core::input::{Input, Rankings, Shape};
use encbench_core::ramp::Ramp;
use encbench_core::replay::ReplayPlan;
use encbench_core::verdicts::AccuracyReport;
use encbench_wire::client::Target;
use encbench_wire::client::metrics::Scraper;
use encbench_wire::payload::Format;
use encbench_wire::tokenize::TokenCounter;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// (Query, document) pairs a rerank phase's requests are made of: 256 requests at the
/// default 8 documents, one request's worth past 2048 documents.
const RERANK_PAIRS: usize = 2048;

/// Everything a phase's dispatch loop needs besides the command channel.
pub(super) struct Ctx {
    pub(super) target: Arc<dyn Target>,
    pub(super) texts: Arc<Vec<Input>>,
    pub(super) tokenizer: Option<Arc<TokenCounter>>,
    /// The texts' token counts, counted once when a phase first needs them.
    text_tokens: std::sync::OnceLock<Arc<[u32]>>,
    pub(super) rankings: Option<Arc<Rankings>>,
    pub(super) format: Arc<dyn Format>,
    pub(super) shape: Shape,
    pub(super) warmup_timeout: Duration,
    pub(super) seed: u64,
    pub(super) shared: Arc<Shared>,
    pub(super) accuracy: Option<Arc<AccuracySpec>>,
    pub(super) price_per_hour: Option<f64>,
    pub(super) client_threads: ClientThreads,
    /// Commands that came while a phase drained, for the next one (see `steer`).
    pub(super) deferred: Mutex<VecDeque<Command>>,
    pub(super) hosts: Hosts,
    /// The common start, for the first phase's schedule to begin at (see `start`).
    pub(super) origin: Mutex<Option<Instant>>,
    pub(super) metrics: Option<Arc<Scraper>>,
    pub(super) ramp: Option<Ramp>,
    replay: Option<Arc<ReplayPlan>>,
    /// `--records`: every request's line.
    pub(super) records: Option<RecordsTx>,
}

impl Ctx {
    pub(super) fn new(setup: EngineSpec, shared: Arc<Shared>) -> Ctx {
        Ctx {
            target: setup.target,
            texts: Arc::new(setup.texts),
            tokenizer: setup.tokenizer,
            text_tokens: std::sync::OnceLock::new(),
            rankings: setup.rankings,
            format: setup.format,
            shape: setup.shape,
            warmup_timeout: setup.warmup_timeout,
            seed: setup.seed,
            accuracy: setup.accuracy.map(Arc::new),
            price_per_hour: setup.price_per_hour,
            client_threads: ClientThreads::start(setup.client_threads),
            deferred: Mutex::new(VecDeque::new()),
            hosts: shared.hosts,
            origin: Mutex::new(None),
            metrics: setup.metrics,
            ramp: setup.ramp,
            replay: setup.replay,
            records: setup.records,
            shared,
        }
    }

    /// The replay phase `index` sends, if it is one: a replay is the run's first phase
    /// (the command line allows no other before it); a live phase after it paces itself.
    pub(super) fn replay_in(&self, index: usize) -> Option<Arc<ReplayPlan>> {
        self.replay.clone().filter(|_| index == 1)
    }

    pub(super) fn defer(&self, c: Command) {
        self.deferred
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push_back(c);
    }

    pub(super) fn take_origin(&self) -> Option<Instant> {
        self.origin
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    pub(super) fn take_deferred(&self) -> Option<Command> {
        self.deferred
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop_front()
    }

    /// The inputs a phase's requests of `batch_size` are taken from (`batch_inputs`): the
    /// texts, or a reranker's pairs, a query with `batch_size` documents a request, for as
    /// many requests as a phase cycles through: up to 256, fewer as D grows, so that the
    /// pairs made, counted and sent as bodies before the first request stay near
    /// `RERANK_PAIRS` whatever D (a request's worth past it). 256 requests of every D had
    /// made 2000 documents a query take 40 s to prepare and 10,000 take 920 MB.
    pub(super) fn inputs_for(&self, batch_size: usize) -> Arc<Vec<Input>> {
        match &self.rankings {
            Some(r) => {
                let requests =
                    (RERANK_PAIRS / batch_size.max(1)).clamp(1, encbench_wire::payload::MAX_BODIES);
                Arc::new(r.pairs(batch_size, requests))
            }
            None => self.texts.clone(),
        }
    }

    /// The token counts of `inputs_for(batch_size)`, input by input; `None` without a
    /// tokenizer. A reranker's pairs differ with D, so they are counted per phase.
    pub(super) fn tokens_for(&self, inputs: &Arc<Vec<Input>>) -> Option<Arc<[u32]>> {
        let tok = self.tokenizer.as_ref()?;
        let count = |v: &[Input]| -> Arc<[u32]> {
            v.iter()
                .map(|i| u32::try_from(tok.count(i)).unwrap_or(u32::MAX))
                .collect()
        };
        if Arc::ptr_eq(inputs, &self.texts) {
            return Some(self.text_tokens.get_or_init(|| count(inputs)).clone());
        }
        Some(count(inputs))
    }

    /// Runs the accuracy samples while nothing else is sent (before and after the load).
    pub(super) async fn check_accuracy_in_line(&self, when: &str) -> AccuracyReport {
        let a = self
            .accuracy
            .as_ref()
            .expect("called only with accuracy samples");
        let since = {
            let mut live = self.shared.lock();
            live.state = RunState::CheckingAccuracy;
            When::after(live.accuracy_before.as_ref())
        };
        // Before the load, a refused body may switch the form every phase is then built in;
        // after it, the check is the one made before.
        let check = if when == "before load" {
            When::BeforeLoad
        } else {
            since
        };
        let r = accuracy::check_counted(
            self.target.as_ref(),
            self.format.as_ref(),
            a,
            &self.shared.accuracy_progress,
            check,
        )
        .await;
        self.say_learned();
        let mut live = self.shared.lock();
        if let Some(switched) = &r.switched {
            live.notices.push(switched.clone());
        }
        live.timeline.event(
            Instant::now(),
            format!("accuracy {when} {}/{}", r.passed, r.total),
        );
        if when == "before load" {
            live.accuracy_before = Some(r.clone());
        }
        live.accuracy_latest = Some(r.clone());
        r
    }

    /// What the format learned from the replies so far that nobody declared, said once.
    pub(super) fn say_learned(&self) {
        if let Some(note) = self.format.learned() {
            let mut live = self.shared.lock();
            if !live.notices.contains(&note) {
                live.notices.push(note);
            }
        }
    }

    /// Runs the accuracy samples beside the load, reporting into the snapshot.
    pub(super) fn spawn_accuracy_check(&self) {
        let Some(setup) = self.accuracy.clone() else {
            return;
        };
        let since = {
            let mut live = self.shared.lock();
            if live.accuracy_running {
                return;
            }
            live.accuracy_running = true;
            live.timeline
                .event(Instant::now(), "accuracy check started");
            When::after(live.accuracy_before.as_ref())
        };
        let (target, shared, format) = (
            self.target.clone(),
            self.shared.clone(),
            self.format.clone(),
        );
        tokio::spawn(async move {
            // However the check ends, unwinding included, it is no longer running: otherwise
            // the screen would say "running" forever and `a` would never start another.
            struct Done(Arc<Shared>);
            impl Drop for Done {
                fn drop(&mut self) {
                    self.0.lock().accuracy_running = false;
                }
            }
            let done = Done(shared);
            let report = accuracy::check_counted(
                target.as_ref(),
                format.as_ref(),
                &setup,
                &done.0.accuracy_progress,
                since,
            )
            .await;
            let mut live = done.0.lock();
            live.timeline.event(
                Instant::now(),
                format!("accuracy {}/{}", report.passed, report.total),
            );
            live.accuracy_latest = Some(report);
        });
    }
}
