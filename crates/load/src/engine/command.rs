//! What a front-end can ask of a running engine. Every change is logged in the timeline.
//!
//! The relative forms (scale, add, toggle) are resolved by the engine against its own state,
//! so keys pressed faster than snapshots arrive still each take effect.

use encbench_core::plan::SweepKind;

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `None` is an infinite rate: closed loop at the concurrency cap.
    SetRate(Option<f64>),
    /// Multiplies the rate; from `inf` it first goes back to the last finite rate.
    ScaleRate(f64),
    /// Finite ⇄ inf; back to finite means the last finite rate (or the measured one).
    ToggleRateInf,
    /// `f64::INFINITY` is a fixed interval.
    SetBurstiness(f64),
    /// Multiplies burstiness; dividing `inf` gives 64, multiplying it stays `inf`.
    ScaleBurstiness(f64),
    SetConcurrency(usize),
    /// Adds to the concurrency cap (never below 1).
    AddConcurrency(i64),
    Pause,
    Resume,
    TogglePause,
    /// Clears the current phase's statistics; measurement restarts at once, without warmup.
    Reset,
    /// Ends the live phase and runs a sweep; the live phase resumes after it.
    StartSweep(SweepKind),
    /// Ends the live phase and searches the highest rate that meets the SLO (`capacity`);
    /// the live phase resumes after it.
    FindCapacity,
    /// Sends the accuracy samples now, beside the load.
    CheckAccuracy,
    /// Ends the run: in-flight requests get a short grace period, nothing measured is lost.
    Stop,
}
