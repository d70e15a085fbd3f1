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
//! Nothing of the layers is re-exported here: a test, benchmark or example names the crate
//! whose code it uses (`encbench_load::engine`, `encbench_report`). `fixtures` (tests and
//! benchmarks only) holds fixed values for the screen tests.

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
