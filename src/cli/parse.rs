//! From the process's arguments to a `Cli`, or how the process ends at once: help, version,
//! clap's own report of a bad command line, or how to start when no target was named.

use crate::cli::{Cli, RunArgs, Sub};
use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use std::ffi::OsString;

/// What a run without a target prints: the ways to name one. Trying a default address
/// instead would greet a newcomer with "connection refused".
const HOW_TO_START: &str = "\
error: no target given; name one of:
  encbench-tui --demo            the built-in reference endpoint, nothing to set up
  encbench-tui --url URL         a server with the SageMaker container contract (/ping,
                                 /invocations), or Triton or vLLM with --engine
  encbench-tui --endpoint NAME   a SageMaker endpoint (AWS credentials, --region)
  encbench-tui --help            every option, with examples";

/// What the command line asks for, or how the process ends at once: help and version are
/// printed whole (exit 0); a bad command line is clap's report whole, with its suggestions,
/// usage line and pointer to --help (exit 2), except a value our own parsers refused, which
/// is their one line; no target is `HOW_TO_START` (exit 2).
pub fn parse<I, T>(args: I) -> Result<Cli, (u8, String)>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let command = Cli::command();
    if args.get(1).is_some_and(|a| a == "tune")
        && let Some(tune) = command.find_subcommand("tune")
    {
        args = super::tune::arrange(args, tune);
    }
    let matches = command
        .try_get_matches_from(args)
        .map_err(|e| clap_report(&e))?;
    let mut cli = Cli::from_arg_matches(&matches).map_err(|e| clap_report(&e))?;
    let mut url_flag = "--url";
    if cli.command.is_none() {
        let r = &mut cli.run;
        if !r.demo && r.url.is_none() && r.endpoint.is_none() {
            (r.url, r.endpoint) = target_from_env()?;
            url_flag = "ENCBENCH_URL";
        }
        if !r.demo && r.url.is_none() && r.endpoint.is_none() {
            return Err((2, HOW_TO_START.into()));
        }
        overridden(r, &matches)?;
        rerank_sizes(r, &matches);
        ramp_and_slices(r, &matches)?;
        r.notes = notes(r, &matches);
    }
    check_urls(&cli, url_flag)?;
    if let Some(Sub::Tune(t)) = &cli.command {
        t.validate()
            .map_err(|line| (2, encbench_core::scrub::text(&line)))?;
    }
    Ok(cli)
}

/// Every URL of the command line, checked before anything runs: one that no request could
/// ever reach (no scheme, port 99999) is bad input for a run, `compare` and `cold-start`
/// alike, never an endpoint to wait for, retry or call unreachable.
fn check_urls(cli: &Cli, url_flag: &str) -> Result<(), (u8, String)> {
    let given: Vec<(&str, Option<&str>)> = match &cli.command {
        None => vec![
            (url_flag, cli.run.url.as_deref()),
            ("--endpoint-url", cli.run.sagemaker.endpoint_url.as_deref()),
            ("--metrics-url", cli.run.server.metrics_url.as_deref()),
        ],
        Some(Sub::ColdStart(a)) => vec![("--endpoint-url", a.sagemaker.endpoint_url.as_deref())],
        Some(Sub::Compare(a)) => vec![("--endpoint-url", a.endpoint_url.as_deref())],
        Some(_) => vec![],
    };
    for (i, (flag, url)) in given.into_iter().enumerate() {
        // The server under load may speak gRPC; the other URLs are HTTP's.
        let check = if i == 0 && cli.command.is_none() {
            encbench_wire::client::address::check_target
        } else {
            encbench_wire::client::address::check
        };
        if let Some(u) = url {
            check(u).map_err(|e| (2, format!("error: {flag}: {e}")))?;
        }
    }
    Ok(())
}

/// The target `ENCBENCH_URL` or `ENCBENCH_ENDPOINT` names: a default for when the command
/// line names none, never a conflict with one it names (`--demo` with `ENCBENCH_URL` set
/// runs the demo), which clap's `env` would make it.
fn target_from_env() -> Result<(Option<String>, Option<String>), (u8, String)> {
    let var = |k| {
        std::env::var(k)
            .ok()
            .filter(|v: &String| !v.trim().is_empty())
    };
    match (var("ENCBENCH_URL"), var("ENCBENCH_ENDPOINT")) {
        (Some(_), Some(_)) => Err((
            2,
            "error: ENCBENCH_URL and ENCBENCH_ENDPOINT are both set: name the target with --url or --endpoint".into(),
        )),
        found => Ok(found),
    }
}

fn clap_report(e: &clap::Error) -> (u8, String) {
    let text = e.to_string();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => (0, text),
        // The message is one of `cli`'s value parsers: our own validation, one line.
        ErrorKind::ValueValidation => {
            let line = text.lines().next().unwrap_or("error: invalid arguments");
            (2, encbench_core::scrub::text(line))
        }
        // Scrubbed line by line: a line break is a control character to `scrub`.
        _ => {
            let lines: Vec<String> = text
                .trim_end()
                .lines()
                .map(encbench_core::scrub::text)
                .collect();
            (2, lines.join("\n"))
        }
    }
}

/// A rerank task's sizes are its batch's: `--docs-per-query` the batch size, `--sweep-docs`
/// a batch sweep of documents per query; either one asks for the rerank task.
fn rerank_sizes(r: &mut RunArgs, m: &ArgMatches) {
    r.batch_size_given = m.value_source("batch_size") == Some(ValueSource::CommandLine);
    if let Some(d) = r.docs_per_query {
        r.batch_size = d;
        r.batch_size_given = true;
        r.task.get_or_insert(encbench_core::input::Task::Rerank);
    }
    if !r.sweep_docs.is_empty() {
        r.sweep_batch = true;
        r.batch_sizes.clone_from(&r.sweep_docs);
        r.task.get_or_insert(encbench_core::input::Task::Rerank);
    }
}

/// A flag given beside the sweep that replaces it is refused: the sweep would silently run
/// without it. With both sweeps each flag still sets the other sweep's fixed setting.
fn overridden(r: &RunArgs, m: &ArgMatches) -> Result<(), (u8, String)> {
    let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
    let refuse = |why: &str| Err((2, format!("error: {why}")));
    if given("batch_size") && r.sweep_batch && !r.sweep_concurrency {
        return refuse(
            "--batch-size: --sweep-batch sends each of --batch-sizes instead, so it would be ignored; drop one (beside --sweep-concurrency too, it is that sweep's batch)",
        );
    }
    if given("concurrency") && r.sweep_concurrency && !r.sweep_batch {
        return refuse(
            "--concurrency: --sweep-concurrency runs each of --concurrency-levels instead, so it would be ignored; drop one (beside --sweep-batch too, it is that sweep's cap)",
        );
    }
    Ok(())
}

/// A ramp is an open loop that starts at its first rate, over a phase of a `--duration`;
/// slices must be few enough to keep. clap's `requires` lets a ramp through beside a flag
/// that conflicts with `--duration` (`-n`, `--replay`), where it would run a steady
/// `FROM` req/s: refused here instead.
fn ramp_and_slices(r: &mut RunArgs, m: &ArgMatches) -> Result<(), (u8, String)> {
    if r.ramp.is_some() && r.duration.is_none() {
        let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
        let why = if r.replay.is_some() {
            "--ramp with --replay: a replay sends at the recorded times, which a ramp cannot move; drop --ramp (--replay-speed sets a replay's pace)".to_string()
        } else if given("n") {
            format!(
                "--ramp with -n {}: a ramp moves the rate over each phase's --duration and cannot shape a phase of a count; give --duration (-z 60s) instead of -n",
                r.n
            )
        } else {
            "--ramp moves the rate over each phase's --duration: give --duration (-z 60s)".into()
        };
        return Err((2, format!("error: {why}")));
    }
    if let Some((from, _)) = r.ramp {
        r.request_rate = super::values::Rate(Some(from));
    }
    if let (Some(slice), Some(d)) = (r.slice, r.duration)
        && d / slice > encbench_core::slices::MAX_SLICES as f64
    {
        return Err((
            2,
            format!(
                "error: --slice {slice} s cuts --duration {d} s into more than {} slices; give a longer slice",
                encbench_core::slices::MAX_SLICES
            ),
        ));
    }
    Ok(())
}

/// One line for each flag given on the command line that this run would not use, naming
/// what uses it. Said only by a headless run: the live screen's keys use the sweep lists
/// and change the rate, and a note before the screen opens would vanish under it.
fn notes(r: &mut RunArgs, m: &ArgMatches) -> Vec<String> {
    let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
    let mut notes = Vec::new();
    if given("batch_sizes") && !r.sweep_batch {
        notes.push(format!(
            "note: --batch-sizes is used by --sweep-batch (and the live screen's key b); this run sends batches of --batch-size {}",
            r.batch_size
        ));
    }
    if given("concurrency_levels") && !r.sweep_concurrency {
        notes.push(format!(
            "note: --concurrency-levels is used by --sweep-concurrency (and the live screen's key s); this run keeps --concurrency {}",
            r.concurrency_cap()
        ));
    }
    // The capacity search offers rates, at this burstiness.
    if given("burstiness") && r.request_rate.0.is_none() && !r.find_capacity {
        notes.push(
            "note: --burstiness shapes open-loop arrivals; with --request-rate inf (closed loop) it has no effect".into(),
        );
    }
    if given("until_stable") && !r.sweep_batch && !r.sweep_concurrency {
        notes.push(
            "note: --until-stable applies to sweep phases (--sweep-batch, --sweep-concurrency, the live screen's b and s); this run's phase stops at -n or --duration".into(),
        );
    }
    let triton_only = [
        ("binary", "--binary"),
        ("text_input", "--text-input"),
        ("input_ids_name", "--input-ids-name"),
        ("attention_mask_name", "--attention-mask-name"),
        ("token_type_ids_name", "--token-type-ids-name"),
        ("output_name", "--output-name"),
    ];
    // Said once the family is known, which discovery may decide (`engine_notes`).
    r.triton_flags = triton_only
        .into_iter()
        .filter(|(id, _)| given(id))
        .map(|(_, flag)| flag.to_string())
        .collect();
    notes
}
