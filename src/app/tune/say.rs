//! A tune's headless lines: each configuration as it starts, becomes ready and ends (with
//! its answer, or why it failed and its log's last line), the capacity search's probes as
//! they come, and every few seconds the progress line of the load under way.

use super::Plan;
use crate::headless::SearchSaid;
use crate::headless::progress;
use encbench_core::export::tune::{TuneConfiguration, TuneStatus};
use encbench_core::text::{ms, sig3};
use encbench_load::tune::{ConfigurationState, TuneView};

pub(super) struct Said {
    states: Vec<ConfigurationState>,
    /// The probes said of the configuration under way.
    search: Option<(usize, SearchSaid)>,
    rerank: bool,
    resumed_from: Option<String>,
}

impl Said {
    pub(super) fn new(plan: &Plan, rerank: bool) -> Said {
        Said {
            states: vec![ConfigurationState::Waiting; plan.grid.len()],
            search: None,
            rerank,
            resumed_from: plan.args.resume.as_ref().map(|p| p.display().to_string()),
        }
    }

    /// What changed since the last call; with `progress_due`, the load's progress line.
    pub(super) fn lines(&mut self, v: &TuneView, progress_due: bool) -> Vec<String> {
        let n = v.rows.len();
        let mut out = Vec::new();
        for (i, row) in v.rows.iter().enumerate() {
            if row.state == self.states[i] {
                continue;
            }
            self.states[i] = row.state;
            let head = format!("tune {}/{n} {}", i + 1, row.label);
            match (row.state, &row.record) {
                (ConfigurationState::Starting, _) => out.push(format!(
                    "{head}: starting its server (output: {})",
                    v.log.as_deref().unwrap_or("-")
                )),
                (ConfigurationState::Measuring, _) => {
                    out.push(format!("{head}: ready; loading it"));
                }
                (ConfigurationState::Done(_), Some(r)) if r.resumed => out.push(format!(
                    "{head}: measured before, taken from {}",
                    self.resumed_from.as_deref().unwrap_or("--resume")
                )),
                (ConfigurationState::Done(_), Some(r)) => out.push(format!("{head}: {}", ended(r))),
                _ => {}
            }
        }
        let Some(i) = v.current else {
            return out;
        };
        let Some(snap) = v.rows[i].snapshot.as_deref() else {
            return out;
        };
        if self.search.as_ref().is_none_or(|(at, _)| *at != i) {
            self.search = Some((i, SearchSaid::new(self.rerank)));
        }
        if let Some((_, said)) = self.search.as_mut() {
            let label = &v.rows[i].label;
            out.extend(said.news(snap).into_iter().map(|l| format!("{label}: {l}")));
        }
        if progress_due && v.rows[i].state == ConfigurationState::Measuring {
            let fields = progress::fields(snap, self.rerank);
            out.push(format!(
                "[tune {}/{n} {}] {}",
                i + 1,
                v.rows[i].label,
                progress::fit(&fields, None)
            ));
        }
        out
    }
}

/// How a configuration ended, in one line.
fn ended(r: &TuneConfiguration) -> String {
    let server = r
        .server_exit
        .as_deref()
        .map(|s| format!("; server {s}"))
        .unwrap_or_default();
    match r.status {
        TuneStatus::Measured => {
            let what = match &r.capacity {
                Some(c) => match c.max_rate_per_s {
                    Some(rate) => format!(
                        "capacity {} req/s ({} samples/s) within {}, p99 {} ms",
                        sig3(rate),
                        sig3(c.samples_per_s.unwrap_or(0.0)),
                        c.slo,
                        c.p99_ms.map_or("-".into(), ms)
                    ),
                    None => format!("no rate probed meets {}", c.slo),
                },
                None => "its phases ran".into(),
            };
            format!("measured: {what}{server}")
        }
        _ => {
            let last = r
                .log_tail
                .last()
                .map(|l| format!("; its log ends: {l}"))
                .unwrap_or_default();
            format!(
                "{}: {}{server}{last}",
                r.status.name(),
                r.reason.as_deref().unwrap_or("-")
            )
        }
    }
}
