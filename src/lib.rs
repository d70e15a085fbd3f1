//! encbench: the engine, targets and reference endpoint behind `encbench-tui`.

pub mod accuracy;
pub mod app;
pub mod arrival;
pub mod assets;
pub mod cli;
pub mod cold_start;
pub mod compare;
pub mod engine;
pub mod export;
pub mod headless;
pub mod metrics;
pub mod payload;
pub mod report;
pub mod serve;
pub mod stats;
pub mod sweep;
pub mod target;
pub mod timing;
pub mod tokenize;
pub mod tui;
