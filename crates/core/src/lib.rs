//! encbench's records and arithmetic: what a run is planned as, what it measured and what
//! that amounts to, with no I/O beyond files and the clock. Every other crate builds on it.
//!
//! ```text
//! export          the versioned JSON export, written atomically
//! thresholds      --fail-on limits for CI (exit code 3), and the warning when most failed
//! capacity        capacity search: the highest rate that meets the SLO, per batch size
//! results         what a phase and a run amount to, and what a sweep says (knee, advice);
//!                 repeated phases pooled (`--repeat`)
//! significance    whether two deployments differ: a difference's 95 % interval
//! differences     compare's differences: every pair of targets, phase and figure
//! verdicts        the accuracy check's verdicts, and how deployments' verdicts compare
//! server_metrics  the server's own figures: Prometheus metrics diffed over a phase,
//!                 Triton's statistics, SageMaker's CloudWatch figures
//! slo, percentile service-level objectives, and the percentiles they name
//! quantile_noise  how noisy a percentile of a queue's latencies is (batch means)
//! slices          a phase cut into time slices (`--slice`), and where the SLO first broke
//! stats           HdrHistograms and the timeline
//! plan, input     the phases a run is made of; input texts and known-answer samples
//! lengths         input lengths: the drawn mix (--input-tokens), tokens sent per phase
//! arrival, shard  the arrival process (Gamma gaps, seeded); one run over several hosts
//! ramp            a rate that moves over a phase (`--ramp`), as a time change of it
//! replay          recorded traffic (a trace, SageMaker Data Capture) and its schedule
//! reach           whether the endpoint can be reached: connecting that keeps failing
//! text, pricing   figures as text; instance prices and cost per million
//! scrub           text from servers and files made safe to show: escaped, without secrets
//! assets          data shipped in the binary
//! choice          a setting picked by name: its names and spellings, once
//! tune            a tune's grid of server settings, its placeholders and Pareto front
//! failure         panics recorded, so an internal failure is never exit 0
//! ```
//!
//! `fixtures` (tests and benchmarks only) holds fixed phase rows for the layers' tests.

pub mod arrival;
pub mod assets;
pub mod capacity;
pub mod choice;
pub mod differences;
pub mod export;
pub mod failure;
// Always built: behind a feature, the tests of the crates above would need it enabled.
#[doc(hidden)]
pub mod fixtures;
pub mod input;
pub mod interval;
pub mod lengths;
pub mod percentile;
pub mod plan;
pub mod pricing;
pub mod quantile_noise;
pub mod ramp;
pub mod reach;
pub mod replay;
pub mod results;
pub mod scrub;
pub mod server_metrics;
pub mod shard;
pub mod significance;
pub mod slices;
pub mod slo;
pub mod stats;
pub mod text;
pub mod thresholds;
pub mod tune;
pub mod verdicts;
