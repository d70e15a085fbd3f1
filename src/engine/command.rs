//! What a front-end can ask of a running engine. Every change is logged in the timeline.

use crate::sweep::SweepKind;

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `None` is an infinite rate: closed loop at the concurrency cap.
    SetRate(Option<f64>),
    /// `f64::INFINITY` is a fixed interval.
    SetBurstiness(f64),
    SetConcurrency(usize),
    Pause,
    Resume,
    /// Clears the current phase's statistics; measurement restarts at once, without warmup.
    Reset,
    /// Ends the live phase and runs a sweep; the live phase resumes after it.
    StartSweep(SweepKind),
    /// Sends the accuracy samples now, beside the load.
    CheckAccuracy,
    /// Ends the run: in-flight requests get a short grace period, nothing measured is lost.
    Stop,
}
