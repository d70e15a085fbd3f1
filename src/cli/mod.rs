//! The command line. Parsing only: turning it into a run is `app`'s job.
// Doc comments here are `--help` text, read in a terminal: no Markdown in them.
#![allow(clippy::doc_markdown)]

mod choices;
mod commands;
mod fail_on;
pub mod hosts;
mod parse;
mod run;
mod server;
mod tune;
mod values;

pub use commands::{ColdStartArgs, CompareArgs, CompletionsArgs, ReportArgs, ServeArgs};
pub use fail_on::FailOnArgs;
pub use parse::parse;
pub use run::{HttpArgs, RunArgs, SageMakerArgs, SloArgs};
pub use server::ServerArgs;
pub use tune::{Configuration, TuneArgs};
pub use values::{MAX_SECS, Rate};

use clap::{Parser, Subcommand};

/// The version `--version` prints: the commit and its date when the build had them (see
/// build.rs), so a report of a bug names the code that ran.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), env!("ENCBENCH_BUILD_COMMIT"));

const EXAMPLES: &str = "\
Examples:
  # The built-in reference endpoint, no setup: the live screen, or tables when piped
  encbench-tui --demo
  # A local container, batch sweep padded to 512 tokens, results saved
  encbench-tui --url http://localhost:8080 --headless --sweep-batch --pad-to-max -o results.json
  # Open loop: Poisson arrivals at 50 req/s, at most 16 in flight, for a minute
  encbench-tui --url http://localhost:8080 --headless -q 50 -c 16 -z 1m
  # A SageMaker endpoint, the summary as JSON on stdout for a script
  encbench-tui --endpoint my-nli --region us-east-1 --headless -n 200 -o - | jq .phases
  # Three co-hosting deployments side by side, then the tables again as Markdown
  encbench-tui compare --demo -o compare.json && encbench-tui report compare.json --format markdown

Times take units (30s, 5m, 1h30m, 250ms); a bare number keeps the flag's unit. Shell
completions: encbench-tui completions bash; the man page: encbench-tui man.";

#[derive(Parser, Debug)]
#[command(
    name = "encbench-tui",
    version = VERSION,
    // "-5" is a bad value to report, not an unknown flag.
    allow_negative_numbers = true,
    about = "Live load tester for encoder-model inference endpoints",
    long_about = "Sends open-loop traffic (Gamma arrivals, concurrency cap, batches) to an encoder endpoint and \
                  shows latency percentiles, throughput, errors, batch efficiency, cost and accuracy. \
                  Runs headless when stdout is not a terminal. Start with --demo, --url URL or --endpoint NAME.",
    after_long_help = EXAMPLES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Sub>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Run the reference endpoint alone (a simulated encoder with a known service model).
    Serve(ServeArgs),
    /// First-request latency after idleness: retries until the first success, then the
    /// steady-state p50 and the ratio.
    ColdStart(ColdStartArgs),
    /// Several targets on one workload, side by side: latency at each batch size, throughput,
    /// a concurrency table, cost and a verdict diff (the co-hosting comparison).
    Compare(Box<CompareArgs>),
    /// Render exports as tables (terminal, Markdown, CSV), or merge exports of one workload.
    Report(ReportArgs),
    /// Restart a local server for each configuration of its settings (workers, batching,
    /// threads), load each as a run would, and say which gives the most within the SLO per
    /// dollar.
    Tune(Box<TuneArgs>),
    /// Print a shell completion script to stdout (for bash: encbench-tui completions bash
    /// > ~/.local/share/bash-completion/completions/encbench-tui).
    Completions(CompletionsArgs),
    /// Print the man page (roff) to stdout: encbench-tui man > encbench-tui.1
    Man,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// Every flag, positional and subcommand, at every depth, with the path that reaches it.
    fn undocumented(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) -> usize {
        let mut seen = 0;
        let blank = |h: Option<&clap::builder::StyledStr>| {
            h.is_none_or(|h| h.to_string().trim().is_empty())
        };
        for a in cmd.get_arguments() {
            let id = a.get_id().as_str();
            if matches!(id, "help" | "version") {
                continue;
            }
            seen += 1;
            if blank(a.get_help()) && blank(a.get_long_help()) {
                missing.push(format!("{path} {id}"));
            }
        }
        for sub in cmd.get_subcommands() {
            let name = format!("{path} {}", sub.get_name());
            if blank(sub.get_about()) && blank(sub.get_long_about()) {
                missing.push(name.clone());
            }
            seen += undocumented(sub, &name, missing);
        }
        seen
    }

    #[test]
    fn every_flag_has_help() {
        let mut missing = Vec::new();
        let seen = undocumented(&Cli::command(), "encbench-tui", &mut missing);
        assert!(missing.is_empty(), "without help text: {missing:?}");
        // The walk reached the subcommands' flags, not only the run's.
        assert!(seen > 140, "only {seen} arguments seen");
    }
}
