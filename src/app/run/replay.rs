//! `--replay`: the file read before anything is sent (a bad one is bad input, exit 2), the
//! plan made once the run's seed is known, and how the run is shaped around it: one open-loop
//! phase as long as the recording over the speed, no warmup (every recorded request is
//! measured), headless.

use super::super::{AppError, usage};
use crate::cli::RunArgs;
use encbench_core::export::ReplayConfig;
use encbench_core::input::Input;
use encbench_core::plan::{OPEN_LOOP_CAP, RunPlan, StopAt};
use encbench_core::replay::{self, Body, Format, ReplayPlan, Speed, Trace};
use encbench_load::engine::EngineSetup;
use encbench_wire::exact_text::TextBuilder;
use encbench_wire::tokenize::TokenCounter;
use std::sync::Arc;

/// The file's records, or why not; `None` without `--replay`.
pub(super) fn read(a: &RunArgs) -> Result<Option<Trace>, AppError> {
    let Some(path) = &a.replay else {
        return Ok(None);
    };
    let trace = replay::load(path).map_err(|e| usage("--replay", e))?;
    let grpc = a.url.as_deref().is_some_and(|u| u.starts_with("grpc"));
    if trace.format == Format::DataCapture && grpc {
        return Err(usage(
            "--replay",
            "Data Capture bodies are HTTP request bodies: replay them to --endpoint or an http:// --url, not a grpc:// one",
        ));
    }
    Ok(Some(trace))
}

/// The schedule, seeded by the run's seed (where whole seconds are spread); a trace's
/// `{"tokens", "batch_size"}` records become texts of exactly that many tokens.
pub(super) fn plan(
    a: &RunArgs,
    mut trace: Trace,
    seed: u64,
    tok: &TokenCounter,
) -> Result<Arc<ReplayPlan>, AppError> {
    texts_of_lengths(&mut trace, tok, seed);
    let speed = Speed {
        speed: a.replay_speed,
        scale: a.replay_scale,
    };
    ReplayPlan::new(trace, speed, seed)
        .map(Arc::new)
        .map_err(|e| usage("--replay", e))
}

/// Each `{"tokens": N, "batch_size": B}` record as B texts of exactly N tokens by the run's
/// tokenizer (special tokens counted, as `--max-len` counts them), built from the shipped
/// corpus by `--input-tokens`' builder, seeded by the run's seed and the record's line.
fn texts_of_lengths(trace: &mut Trace, tok: &TokenCounter, seed: u64) {
    if trace.first_tokens_line().is_none() {
        return;
    }
    let builder = TextBuilder::new(tok);
    for r in &mut trace.records {
        if let Body::Tokens { tokens, batch_size } = r.body {
            let texts = (0..batch_size)
                .map(|j| {
                    let k = (r.line as u64).wrapping_mul(0x9E37_79B9) ^ j as u64;
                    Input::Text(builder.text(tokens, seed ^ k))
                })
                .collect();
            r.body = Body::Texts(texts);
        }
    }
}

/// The engine runs the replay as its one phase: open loop at the recording's mean rate (what
/// the result records as its pace), no cap unless `--concurrency` gave one.
pub(super) fn shape(a: &RunArgs, setup: &mut EngineSetup, plan: &Arc<ReplayPlan>) {
    setup.pace.rate_per_s = Some(plan.mean_rate());
    setup.pace.burstiness = 1.0;
    setup.plan = RunPlan {
        concurrency: a.concurrency.unwrap_or(OPEN_LOOP_CAP),
        warmup: 0,
        stop: StopAt::Duration(plan.span),
        live: false,
        ..setup.plan.clone()
    };
    setup.replay = Some(plan.clone());
}

/// `config.replay`, and the run's settings as the replay made them.
pub(super) fn config(a: &RunArgs, plan: &ReplayPlan, c: &mut encbench_core::export::RunConfig) {
    c.replay = Some(ReplayConfig {
        file: a
            .replay
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        format: plan.format.name().into(),
        speed: a.replay_speed,
        scale: a.replay_scale,
        records: plan.records(),
        requests: plan.requests(),
        recorded_s: plan.recorded_s,
        duration_s: plan.span.as_secs_f64(),
        spread_within_seconds: plan.spread,
    });
    c.warmup = 0;
    c.duration_s = Some(plan.span.as_secs_f64());
    c.request_rate = Some(plan.mean_rate());
    c.burstiness = Some(1.0);
    c.closed_loop = false;
    c.concurrency = a.concurrency.unwrap_or(OPEN_LOOP_CAP);
}
