//! `--task rerank` on a route that classifies: a cross-encoder served as a classifier of one
//! label (the HF toolkit's pipeline, Triton or KServe with one logit per pair, TEI's
//! `/predict` with pairs), its score per (query, document) pair read as the ranking.

use super::{Answers, Form, Format, Prepared, Reply, check_verdict_count};
use encbench_core::input::Input;
use std::sync::Arc;

pub struct Ranked(pub Arc<dyn Format>);

impl Format for Ranked {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn path(&self) -> String {
        self.0.path()
    }

    fn ready_path(&self) -> Option<String> {
        self.0.ready_path()
    }

    fn stats_path(&self) -> Option<String> {
        self.0.stats_path()
    }

    fn tokenizes(&self) -> bool {
        self.0.tokenizes()
    }

    fn prepare(&self, inputs: &[&Input]) -> Prepared {
        self.0.prepare(inputs)
    }

    fn verdicts(&self, reply: &Reply) -> Result<Vec<String>, String> {
        self.0.verdicts(reply)
    }

    fn answers(&self, reply: &Reply, inputs: &[&Input]) -> Result<Answers, String> {
        self.0.scores(reply, inputs.len()).map(Answers::Ranking)
    }

    fn check(&self, reply: &Reply, inputs: usize) -> Result<(), String> {
        check_verdict_count(self.0.scores(reply, inputs)?.len(), inputs)
    }

    fn ranks(&self) -> bool {
        true
    }

    fn scores(&self, reply: &Reply, inputs: usize) -> Result<Vec<f32>, String> {
        self.0.scores(reply, inputs)
    }

    fn learned(&self) -> Option<String> {
        self.0.learned()
    }

    fn joins_pairs(&self) -> bool {
        self.0.joins_pairs()
    }

    fn form(&self) -> Option<Form> {
        self.0.form()
    }

    fn switch_form(&self) -> Option<Form> {
        self.0.switch_form()
    }
}
