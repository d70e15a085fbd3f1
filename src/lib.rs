//! encbench: the load engine, targets, reference endpoint and front-ends behind
//! `encbench-tui`, a load tester for encoder-model inference endpoints.
//!
//! The layers, from the bottom up. A module uses only modules of its own layer or below;
//! nothing below knows what is above it.
//!
//! ```text
//! app, cli          the command line, and from it to a finished run (main.rs calls app)
//! tui, headless     front-ends: drive one engine by commands, draw its snapshots
//! signals           SIGINT/SIGTERM: stop, and a second one means now
//! compare           several targets on one workload, each (target, phase) one engine run
//! cold_start        first-request latency after idleness
//! setup             settings to a prepared target: inputs, samples, price, format, client
//! report            exports to tables (terminal, Markdown, CSV) and to an HTML page of
//!                   charts, and merging exports
//! export            the versioned JSON export, written atomically
//! thresholds        --fail-on limits for CI (exit code 3), and the warning when most failed
//! engine            the load engine: one dispatch loop, closed-loop slots, client threads
//! capacity          capacity search: the highest rate that meets the SLO, per batch size
//! results           what a phase and a run amount to, and what a sweep says (knee, advice)
//! server_metrics    the server's own figures: Prometheus metrics diffed over a phase
//! accuracy          the known-answer verdicts (labels or nearest candidates), the verdict
//!                   diff and the vector agreement across deployments
//! target            where requests go: a URL (HTTP/1.1 pool, reqwest) or SageMaker (AWS SDK)
//! serve             the reference endpoint: a simulated encoder with a known service model
//! payload           the wire formats (hf, triton, vllm): request bodies, replies, labels,
//!                   vectors and their pooling
//! tokenize          real token counts and client-side tokenization from a tokenizer.json
//! input             input texts and known-answer samples
//! sweep             the phases a run is made of (plain, batch sweep, concurrency sweep, live)
//! slo              service-level objectives: met or not, and goodput
//! stats, metrics    HdrHistograms and the timeline; efficiency, cost and prices
//! fmt, arrival      figures as text; the arrival process (Gamma gaps, seeded)
//! shard             one run over several hosts: this host's share of one schedule
//! scrub             text from servers and files made safe to show: escaped, without secrets
//! timing, assets    sub-millisecond sleeps; data shipped in the binary
//! failure           panics recorded, so an internal failure is never exit 0
//! ```
//!
//! `fixtures` (tests and benchmarks only) holds fixed values for the screen tests.

pub mod accuracy;
pub mod app;
pub mod arrival;
pub mod assets;
pub mod capacity;
pub mod cli;
pub mod cold_start;
pub mod compare;
pub mod engine;
pub mod export;
pub mod failure;
// Always built: behind a feature, the benchmark would need the crate as its own
// dev-dependency, and that makes the unit tests wait for the library to compile first.
pub mod client;
#[doc(hidden)]
pub mod fixtures;
pub mod headless;
pub mod input;
pub mod payload;
pub mod percentile;
pub mod plan;
pub mod pricing;
pub mod report;
pub mod results;
pub mod scrub;
pub mod serve;
pub mod server_metrics;
pub mod setup;
pub mod shard;
pub mod signals;
pub mod slo;
pub mod stats;
pub mod text;
pub mod thresholds;
pub mod timing;
pub mod tokenize;
pub mod tui;
pub mod verdicts;
