//! A run's flags weighed against each other: what cannot work together is refused, what
//! would go unused is noted. Checks of one value alone are clap's value parsers' (`cli`).

use super::super::{AppError, usage};
use crate::cli::RunArgs;

/// Flags that cannot work together, whatever the front-end (also each configuration of a
/// tune's).
pub(in crate::app) fn check_together(a: &RunArgs) -> Result<(), AppError> {
    overridden(a)?;
    ramp_and_slices(a)?;
    if a.find_capacity && a.sweep_concurrency {
        return Err(usage(
            "--find-capacity",
            "searches rates at one concurrency cap: drop --sweep-concurrency, or run the search at each --concurrency",
        ));
    }
    if a.server.cloudwatch_wait.is_some() && a.endpoint.is_none() {
        return Err(usage(
            "--cloudwatch-wait",
            "reads SageMaker's metrics of an --endpoint run: give --endpoint, or drop it",
        ));
    }
    Ok(())
}

/// A flag given beside the sweep that replaces it is refused: the sweep would silently run
/// without it. With both sweeps each flag still sets the other sweep's fixed setting.
fn overridden(a: &RunArgs) -> Result<(), AppError> {
    if a.given("batch_size") && a.sweep_batch && !a.sweep_concurrency {
        return Err(usage(
            "--batch-size",
            "--sweep-batch sends each of --batch-sizes instead, so it would be ignored; drop one (beside --sweep-concurrency too, it is that sweep's batch)",
        ));
    }
    if a.given("concurrency") && a.sweep_concurrency && !a.sweep_batch {
        return Err(usage(
            "--concurrency",
            "--sweep-concurrency runs each of --concurrency-levels instead, so it would be ignored; drop one (beside --sweep-batch too, it is that sweep's cap)",
        ));
    }
    Ok(())
}

/// A ramp is an open loop that starts at its first rate, over a phase of a `--duration`;
/// slices must be few enough to keep. clap's `requires` lets a ramp through beside a flag
/// that conflicts with `--duration` (`-n`, `--replay`), where it would run a steady
/// `FROM` req/s: refused here instead.
fn ramp_and_slices(a: &RunArgs) -> Result<(), AppError> {
    if a.ramp.is_some() && a.duration.is_none() {
        let why = if a.replay.is_some() {
            "--ramp with --replay: a replay sends at the recorded times, which a ramp cannot move; drop --ramp (--replay-speed sets a replay's pace)".to_string()
        } else if a.given("n") {
            format!(
                "--ramp with -n {}: a ramp moves the rate over each phase's --duration and cannot shape a phase of a count; give --duration (-z 60s) instead of -n",
                a.n
            )
        } else {
            "--ramp moves the rate over each phase's --duration: give --duration (-z 60s)".into()
        };
        return Err(AppError::Usage(why));
    }
    if let (Some(slice), Some(d)) = (a.slice, a.duration)
        && d / slice > encbench_core::slices::MAX_SLICES as f64
    {
        return Err(AppError::Usage(format!(
            "--slice {slice} s cuts --duration {d} s into more than {} slices; give a longer slice",
            encbench_core::slices::MAX_SLICES
        )));
    }
    Ok(())
}

/// One line for each flag given on the command line that this run would not use, naming
/// what uses it. Said only by a headless run: the live screen's keys use the sweep lists
/// and change the rate, and a note before the screen opens would vanish under it.
pub(in crate::app) fn notes(a: &RunArgs) -> Vec<String> {
    let mut notes = Vec::new();
    if a.given("batch_sizes") && !a.sweep_batch {
        notes.push(format!(
            "note: --batch-sizes is used by --sweep-batch (and the live screen's key b); this run sends batches of --batch-size {}",
            a.batch_size
        ));
    }
    if a.given("concurrency_levels") && !a.sweep_concurrency {
        notes.push(format!(
            "note: --concurrency-levels is used by --sweep-concurrency (and the live screen's key s); this run keeps --concurrency {}",
            a.concurrency_cap()
        ));
    }
    // The capacity search offers rates, at this burstiness.
    if a.given("burstiness") && a.request_rate.0.is_none() && !a.find_capacity {
        notes.push(
            "note: --burstiness shapes open-loop arrivals; with --request-rate inf (closed loop) it has no effect".into(),
        );
    }
    if a.given("until_stable") && !a.sweep_batch && !a.sweep_concurrency {
        notes.push(
            "note: --until-stable applies to sweep phases (--sweep-batch, --sweep-concurrency, the live screen's b and s); this run's phase stops at -n or --duration".into(),
        );
    }
    notes
}

/// The triton engine's flags given: said once the family is known, which discovery may
/// decide (`FlagNotes::for_engine`).
pub(super) fn triton_flags(a: &RunArgs) -> Vec<String> {
    let triton_only = [
        ("binary", "--binary"),
        ("text_input", "--text-input"),
        ("input_ids_name", "--input-ids-name"),
        ("attention_mask_name", "--attention-mask-name"),
        ("token_type_ids_name", "--token-type-ids-name"),
        ("output_name", "--output-name"),
    ];
    triton_only
        .into_iter()
        .filter(|(id, _)| a.given(id))
        .map(|(_, flag)| flag.to_string())
        .collect()
}
