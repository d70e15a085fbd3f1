//! encbench's load: targets prepared from their settings, the engine that loads them, the
//! known-answer check sent to them, and the runs built of engine runs (several targets
//! compared, cold starts).
//!
//! ```text
//! accuracy    the known-answer check: samples sent through a client before and after the
//!             load, their verdicts judged (`verdicts`)
//! compare     several targets on one workload, each (target, phase) one engine run
//! cold_start  first-request latency after idleness
//! setup       settings to a prepared target: inputs, samples, price, format, client
//! engine      the load engine: one dispatch loop, closed-loop slots, client threads
//! tune        a local server per configuration (started, stopped as a process group) and
//!             the view of a tune under way
//! ```

pub mod accuracy;
pub mod cold_start;
pub mod compare;
pub mod engine;
pub mod setup;
pub mod tune;
