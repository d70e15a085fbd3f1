//! encbench: the front-ends behind `encbench-tui`, a load tester for encoder-model inference
//! endpoints, on the layers of the workspace (`Cargo.toml` numbers them; each crate uses only
//! crates of the layers below its own, and the compiler keeps it so):
//!
//! ```text
//! encbench (this)   app, cli: from the command line to a finished run (main.rs calls app)
//!                   tui, headless: front-ends driving one engine by commands
//!                   signals: SIGINT/SIGTERM: stop, and a second one means now
//!                   stderr: the one way lines reach stderr (the layers below report)
//! encbench-load     the engine, targets prepared, the accuracy check, compare, cold start
//! encbench-serve    the reference endpoint: a simulated encoder with a known service model
//! encbench-report   exports to tables (terminal, Markdown, CSV) and HTML charts; merging
//! encbench-wire     payload formats, tokenizing, clients (URL, SageMaker), the timer
//! encbench-core     records and arithmetic: plans, arrivals, stats, SLOs, results, capacity,
//!                   thresholds, the export, verdicts, prices, text
//! ```
//!
//! The layers' modules are re-exported here under the names they have always had
//! (`encbench::engine`, `encbench::report`, …), for the integration tests and benchmarks.
//! `fixtures` (tests and benchmarks only) holds fixed values for the screen tests.

pub mod app;
pub mod cli;
// Always built: behind a feature, the benchmark would need the crate as its own
// dev-dependency, and that makes the unit tests wait for the library to compile first.
#[doc(hidden)]
pub mod fixtures;
pub mod headless;
pub mod signals;
pub mod stderr;
pub mod tui;

pub use encbench_core::{
    arrival, assets, capacity, choice, export, failure, input, interval, lengths, percentile, plan,
    pricing, ramp, replay, results, scrub, server_metrics, shard, slices, slo, stats, text,
    thresholds, verdicts,
};
pub use encbench_load::{accuracy, cold_start, compare, engine, setup};
pub use encbench_report as report;
pub use encbench_serve as serve;
pub use encbench_wire::{client, exact_text, grpc, payload, timing, tokenize};
