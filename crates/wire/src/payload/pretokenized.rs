//! `--pretokenize`: a format that tokenizes on the client, with its encodings prepared
//! before each phase instead of in each request's timed path. For users who want the
//! server's capacity without the client's tokenization in it; the export and the header say
//! so, and no phase reports a `tokenize_ms` it did not spend.

use super::{Answers, Form, Format, Prepared, Reply};
use encbench_core::input::Input;
use std::sync::Arc;

pub struct Pretokenized(pub Arc<dyn Format>);

impl Format for Pretokenized {
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

    /// Not per request: the engine then prepares the phase's bodies once, before it starts,
    /// as it does for formats that send text.
    fn tokenizes(&self) -> bool {
        false
    }

    fn prepare(&self, inputs: &[&Input]) -> Prepared {
        Prepared {
            tokenize: None,
            ..self.0.prepare(inputs)
        }
    }

    fn verdicts(&self, reply: &Reply) -> Result<Vec<String>, String> {
        self.0.verdicts(reply)
    }

    fn answers(&self, reply: &Reply, inputs: &[&Input]) -> Result<Answers, String> {
        self.0.answers(reply, inputs)
    }

    fn check(&self, reply: &Reply, inputs: usize) -> Result<(), String> {
        self.0.check(reply, inputs)
    }

    fn ranks(&self) -> bool {
        self.0.ranks()
    }

    fn scores(&self, reply: &Reply, inputs: usize) -> Result<Vec<f32>, String> {
        self.0.scores(reply, inputs)
    }

    fn joins_pairs(&self) -> bool {
        self.0.joins_pairs()
    }

    fn learned(&self) -> Option<String> {
        self.0.learned()
    }

    fn form(&self) -> Option<Form> {
        self.0.form()
    }

    fn switch_form(&self) -> Option<Form> {
        self.0.switch_form()
    }
}
