//! The server's side of the figures: its metrics endpoint, and the metrics named in it.
// Doc comments here are `--help` text, read in a terminal: no Markdown in them.
#![allow(clippy::doc_markdown)]

use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub struct ServerArgs {
    /// The server's Prometheus metrics, read before and after every phase (and about once a
    /// second on the live screen) and diffed over it. Triton's are on port 8002:
    /// http://HOST:8002/metrics gives the queue and compute time per request and the batch
    /// factor with --engine triton. A failing endpoint is one warning; the run goes on.
    #[arg(long, value_name = "URL", value_parser = metrics_url, help_heading = "Server side")]
    pub metrics_url: Option<String>,
    /// A counter, gauge, histogram or summary of --metrics-url to report per phase (its
    /// label sets summed); repeat for more.
    #[arg(long = "metric", value_name = "NAME", value_parser = metric_name, requires = "metrics_url", help_heading = "Server side")]
    pub metrics: Vec<String>,
    /// --endpoint: after the run, wait this long (a countdown; Ctrl-C reads at once), then
    /// read SageMaker's CloudWatch metrics (ModelLatency, OverheadLatency, invocations and
    /// errors, ModelSetupTime) for each phase's window. CloudWatch has one-minute periods
    /// and publishes a minute or more late: 90s is a safe wait. Needs
    /// cloudwatch:GetMetricData; without it, one warning. Units accepted; 0 reads at once.
    #[arg(long, value_name = "SECS", value_parser = super::values::non_negative_secs, help_heading = "Server side")]
    pub cloudwatch_wait: Option<f64>,
}

fn metrics_url(s: &str) -> Result<String, String> {
    let rest = s
        .strip_prefix("http://")
        .or_else(|| s.strip_prefix("https://"));
    match rest {
        Some(r) if !r.is_empty() && !r.starts_with('/') => Ok(s.to_string()),
        _ => {
            Err("must be an http:// or https:// URL, such as http://127.0.0.1:8002/metrics".into())
        }
    }
}

/// Prometheus's own rule for metric names.
fn metric_name(s: &str) -> Result<String, String> {
    let mut chars = s.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
        Ok(s.to_string())
    } else {
        Err("must be a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), such as nv_inference_count".into())
    }
}
