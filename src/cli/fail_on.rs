//! `--fail-on`, the limits a CI job sets (judged by `thresholds`).

use encbench_core::thresholds::Threshold;

/// `--fail-on`: limits that set exit code 3 when a measured phase breaks one.
#[allow(
    clippy::doc_markdown,
    reason = "the field's comment is the flag's help text, where backticks would show"
)]
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FailOnArgs {
    /// Exit with code 3 when a measured phase breaks this limit (for CI): p50, p90, p95, p99
    /// or p999 > a time (p99>200ms), errors > a share (errors>1%), req_per_s < a rate
    /// (req_per_s<50), or slo (a phase missed --slo). Repeatable; judged after the export
    /// and the tables are written.
    #[arg(long = "fail-on", value_name = "THRESHOLD", value_parser = threshold, help_heading = "SLO and capacity")]
    pub thresholds: Vec<Threshold>,
}

fn threshold(s: &str) -> Result<Threshold, String> {
    s.parse()
}
