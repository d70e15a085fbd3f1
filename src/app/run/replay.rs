//! `--replay`: the file read before anything is sent (a bad one is bad input, exit 2), the
//! plan made once the run's seed is known, and how the run is shaped around it: one open-loop
//! phase as long as the recording over the speed, no warmup (every recorded request is
//! measured), headless.

use super::super::{AppError, usage};
use crate::cli::RunArgs;
use encbench_core::export::{ReplayConfig, RunConfig};
use encbench_core::input::Input;
use encbench_core::plan::{OPEN_LOOP_CAP, RunPlan, StopAt};
use encbench_core::replay::{self, Body, ReplayPlan, Speed, Trace, TraceFormat};
use encbench_load::engine::EngineSpec;
use encbench_wire::exact_text::TextBuilder;
use encbench_wire::tokenize::TokenCounter;
use std::path::PathBuf;
use std::sync::Arc;

/// A replay as the command line settles it: the file read, and how it is to be played.
pub(in crate::app) struct ReplaySpec {
    pub file: PathBuf,
    pub trace: Trace,
    pub speed: Speed,
    /// `--concurrency`, the replay's only cap.
    pub concurrency: Option<usize>,
    pub max_len: usize,
}

/// The schedule made once the run's seed and tokenizer are known, with the note of the
/// lengths clipped, if any were.
pub(super) struct PreparedReplay {
    pub plan: Arc<ReplayPlan>,
    pub note: Option<String>,
    file: PathBuf,
    speed: Speed,
    concurrency: Option<usize>,
}

/// The file's records, or why not; `None` without `--replay`.
pub(super) fn read(a: &RunArgs) -> Result<Option<ReplaySpec>, AppError> {
    let Some(path) = &a.replay else {
        return Ok(None);
    };
    let trace = replay::load(path).map_err(|e| usage("--replay", e))?;
    let grpc = a.url.as_deref().is_some_and(|u| u.starts_with("grpc"));
    if trace.format == TraceFormat::DataCapture && grpc {
        return Err(usage(
            "--replay",
            "Data Capture bodies are HTTP request bodies: replay them to --endpoint or an http:// --url, not a grpc:// one",
        ));
    }
    Ok(Some(ReplaySpec {
        file: path.clone(),
        trace,
        speed: Speed {
            speed: a.replay_speed,
            scale: a.replay_scale,
        },
        concurrency: a.concurrency,
        max_len: a.max_len,
    }))
}

/// The schedule, seeded by the run's seed (where whole seconds are spread); a trace's
/// `{"tokens", "batch_size"}` records become texts of exactly that many tokens. With it, the
/// note of the lengths clipped, if any were.
pub(super) fn plan(
    spec: ReplaySpec,
    seed: u64,
    tok: &TokenCounter,
) -> Result<PreparedReplay, AppError> {
    let ReplaySpec {
        file,
        mut trace,
        speed,
        concurrency,
        max_len,
    } = spec;
    let clipped = texts_of_lengths(&mut trace, tok, seed, max_len);
    let backwards = going_back(&trace);
    let plan = ReplayPlan::new(trace, speed, seed).map_err(|e| usage("--replay", e))?;
    // A run's times end where every time on the command line does.
    let longest = crate::cli::MAX_SECS;
    let played = plan.span.as_secs_f64();
    if played > longest {
        return Err(usage(
            "--replay-speed",
            format!(
                "{} plays the {:.1} s recorded in {:.0} days; a run lasts 31 days at most: give {:.3e} or more",
                speed.speed,
                plan.recorded_s,
                played / 86_400.0,
                speed.speed * played / longest
            ),
        ));
    }
    let note = [clipped.note(max_len), backwards]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
    Ok(PreparedReplay {
        plan: Arc::new(plan),
        note: (!note.is_empty()).then(|| note.join("; ")),
        file,
        speed,
        concurrency,
    })
}

/// Where the trace's times first go back (a capture merged from several hosts, a file
/// edited): said, as its records are sent in time order, not in the file's.
fn going_back(trace: &encbench_core::replay::read::Trace) -> Option<String> {
    let at = |i: usize| trace.records[i].at_ns;
    let i = (1..trace.records.len()).find(|&i| at(i) < at(i - 1))?;
    Some(format!(
        "the trace's times go back at record {} ({:.3} s before the one above it): its records are sent in time order, not the file's",
        i + 1,
        (at(i - 1) - at(i)) as f64 / 1e9
    ))
}

/// Records whose lengths were clipped to what can be sent, as `--input-tokens` clips its
/// draws: over `--max-len` (the longest asked for), or under the shortest text.
#[derive(Default)]
struct Clipped {
    over: usize,
    longest: usize,
    under: usize,
    shortest: usize,
}

impl Clipped {
    fn note(&self, max_len: usize) -> Option<String> {
        let mut said = Vec::new();
        if self.over > 0 {
            said.push(format!(
                "{} of more than --max-len {max_len} tokens (up to {}) sent at {max_len}",
                records(self.over),
                self.longest
            ));
        }
        if self.under > 0 {
            said.push(format!(
                "{} of fewer than {} tokens (the shortest text, special tokens counted) sent at {}",
                records(self.under),
                self.shortest,
                self.shortest
            ));
        }
        (!said.is_empty()).then(|| {
            format!(
                "--replay: {}, as --input-tokens clips its lengths",
                said.join("; ")
            )
        })
    }
}

fn records(n: usize) -> String {
    if n == 1 {
        "1 record".into()
    } else {
        format!("{n} records")
    }
}

/// Each `{"tokens": N, "batch_size": B}` record as B texts of exactly N tokens by the run's
/// tokenizer (special tokens counted, as `--max-len` counts them), built from the shipped
/// corpus by `--input-tokens`' builder, seeded by the run's seed and the record's line. N is
/// clipped to `--max-len` and to the shortest text, as `--input-tokens` clips a draw: a text
/// the server would cut is not what the trace recorded it sending either way, and saying so
/// beats an endpoint that silently truncates.
fn texts_of_lengths(trace: &mut Trace, tok: &TokenCounter, seed: u64, max_len: usize) -> Clipped {
    let mut clipped = Clipped::default();
    if trace.first_tokens_line().is_none() {
        return clipped;
    }
    let builder = TextBuilder::new(tok);
    let shortest = builder.min_tokens(false);
    clipped.shortest = shortest;
    for r in &mut trace.records {
        if let Body::Tokens { tokens, batch_size } = r.body {
            if tokens > max_len {
                clipped.over += 1;
                clipped.longest = clipped.longest.max(tokens);
            } else if tokens < shortest {
                clipped.under += 1;
            }
            let tokens = tokens.clamp(shortest, max_len.max(shortest));
            let texts = (0..batch_size)
                .map(|j| {
                    let k = (r.line as u64).wrapping_mul(0x9E37_79B9) ^ j as u64;
                    Input::Text(builder.text(tokens, seed ^ k))
                })
                .collect();
            r.body = Body::Texts(texts);
        }
    }
    clipped
}

impl PreparedReplay {
    /// The engine runs the replay as its one phase: open loop at the recording's mean rate
    /// (what the result records as its pace), no cap unless `--concurrency` gave one.
    pub fn shape(&self, setup: &mut EngineSpec) {
        let plan = &self.plan;
        setup.pace.rate_per_s = Some(plan.mean_rate());
        setup.pace.burstiness = 1.0;
        setup.plan = RunPlan {
            batch_size: plan.batch_size(),
            concurrency: self.concurrency.unwrap_or(OPEN_LOOP_CAP),
            warmup: 0,
            stop: StopAt::Duration(plan.span),
            live: false,
            ..setup.plan.clone()
        };
        setup.replay = Some(plan.clone());
    }

    /// `config.replay`, and the run's settings as the replay made them.
    pub fn record(&self, c: &mut RunConfig) {
        let plan = &self.plan;
        c.replay = Some(ReplayConfig {
            file: self.file.display().to_string(),
            format: plan.format.name().into(),
            speed: self.speed.speed,
            scale: self.speed.scale,
            records: plan.records(),
            requests: plan.requests(),
            recorded_s: plan.recorded_s,
            duration_s: plan.span.as_secs_f64(),
            spread_within_seconds: plan.spread,
            batch_sizes: plan.batch_sizes().into(),
        });
        c.batch_size = plan.batch_size();
        c.warmup = 0;
        c.duration_s = Some(plan.span.as_secs_f64());
        c.request_rate = Some(plan.mean_rate());
        c.burstiness = Some(1.0);
        c.closed_loop = false;
        c.concurrency = self.concurrency.unwrap_or(OPEN_LOOP_CAP);
    }
}
