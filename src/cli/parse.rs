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
        r.given = given(&matches);
        rerank_sizes(r, &matches);
        if let Some((from, _)) = r.ramp {
            r.request_rate = super::values::Rate(Some(from));
        }
    }
    check_urls(&cli, url_flag)?;
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

/// The ids of the flags given on the command line, not left at their defaults: whether a
/// flag was given decides what a run refuses and notes (`app::run::flags`).
fn given(m: &ArgMatches) -> Vec<String> {
    m.ids()
        .filter(|id| m.value_source(id.as_str()) == Some(ValueSource::CommandLine))
        .map(|id| id.as_str().to_string())
        .collect()
}
