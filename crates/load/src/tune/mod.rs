//! `tune`'s parts below the command line: the local server each configuration starts and
//! stops (`server`), and the view a front-end draws while the configurations run one after
//! another: each configuration's state, the engine's snapshot while it loads, and once it
//! ended its record with the phases and capacity answers it measured.

pub mod server;

use crate::engine::Snapshot;
use encbench_core::export::tune::{TuneConfiguration, TuneStatus};
use encbench_core::results::PhaseResult;
use encbench_core::results::capacity::Capacity;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Where a configuration stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigurationState {
    Waiting,
    /// Its server started, its ready route not answering yet.
    Starting,
    /// Ready, the engine loading it.
    Measuring,
    /// Its server being stopped.
    Stopping,
    Done(TuneStatus),
}

impl ConfigurationState {
    pub fn label(self) -> &'static str {
        match self {
            ConfigurationState::Waiting => "waiting",
            ConfigurationState::Starting => "starting",
            ConfigurationState::Measuring => "measuring",
            ConfigurationState::Stopping => "stopping",
            ConfigurationState::Done(s) => s.name(),
        }
    }
}

/// One configuration as the screens show it and the export keeps it.
#[derive(Debug, Clone)]
pub struct Row {
    pub label: String,
    pub state: ConfigurationState,
    /// The engine's latest snapshot while it loads this configuration.
    pub snapshot: Option<Arc<Snapshot>>,
    /// Once it ended: its record, phases and capacity answers (each naming it), and what
    /// the run noticed.
    pub record: Option<TuneConfiguration>,
    pub phases: Vec<PhaseResult>,
    pub capacity: Vec<Capacity>,
    pub notices: Vec<String>,
}

impl Row {
    pub fn waiting(label: String) -> Row {
        Row {
            label,
            state: ConfigurationState::Waiting,
            snapshot: None,
            record: None,
            phases: vec![],
            capacity: vec![],
            notices: vec![],
        }
    }
}

#[derive(Debug, Clone)]
pub struct TuneView {
    pub rows: Vec<Row>,
    /// The row under way.
    pub current: Option<usize>,
    /// The process group of the server under way: what a second interrupt kills.
    pub server: Option<i32>,
    /// Where the server under way writes its output.
    pub log: Option<String>,
    pub started_at: SystemTime,
    pub elapsed: Duration,
    pub finished: bool,
    /// The SLO the configurations are searched against, as the tables name it.
    pub slo: Option<String>,
}

impl TuneView {
    pub fn new(labels: Vec<String>, slo: Option<String>) -> TuneView {
        TuneView {
            rows: labels.into_iter().map(Row::waiting).collect(),
            current: None,
            server: None,
            log: None,
            started_at: SystemTime::now(),
            elapsed: Duration::ZERO,
            finished: false,
            slo,
        }
    }

    /// Configurations ended so far.
    pub fn done(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| matches!(r.state, ConfigurationState::Done(_)))
            .count()
    }
}
