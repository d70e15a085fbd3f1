//! Time slices (`--slice`): a phase cut into equal spans of its measured schedule, each with
//! its own percentiles, throughput, errors and offered rate, so a ramp or a replay shows
//! where the tail moved and a long phase shows drift.
//!
//! A request belongs to the slice of its *intended* send time, as latency is counted from
//! it: a stalled server shows up in the slice whose requests waited, not in the one where
//! they finally completed. Throughput ("achieved") counts ok completions by the slice they
//! completed in, so a replay's offered and achieved rates compare slice by slice. Slices
//! are HdrHistograms like phases, so `report --merge` adds them exactly.

use crate::results::{decode_histogram, encode_histogram};
use crate::slo::{Measured, Slo};
use crate::stats::{HIST_MAX_US, LatencySummary, round3};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// More slices than this in one phase (a day at 1 s) are refused at the command line: each
/// holds a histogram (about 20 kB).
pub const MAX_SLICES: u64 = 100_000;

/// A slice's histogram: two significant figures (1 %) keep a slice 7× smaller than a
/// phase's histogram, and every slice has the same bounds, so merging them stays exact.
pub fn slice_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, 2).expect("valid histogram bounds")
}

#[derive(Debug, Clone)]
struct Counts {
    latency: Histogram<u64>,
    ok: u64,
    errors: u64,
    /// Requests due in the slice and never sent (open loop, counted at the phase's end).
    unsent: u64,
    /// Ok completions that ended in this slice, whenever they were due.
    done: u64,
}

impl Default for Counts {
    fn default() -> Self {
        Counts {
            latency: slice_histogram(),
            ok: 0,
            errors: 0,
            unsent: 0,
            done: 0,
        }
    }
}

/// A phase's slices as they are recorded.
#[derive(Debug, Clone)]
pub struct SliceRecorder {
    width: Duration,
    /// The first measured request's intended send time: slice 0 starts here.
    origin: Option<Instant>,
    slices: Vec<Counts>,
}

impl SliceRecorder {
    pub fn new(width: Duration) -> SliceRecorder {
        SliceRecorder {
            width,
            origin: None,
            slices: Vec::new(),
        }
    }

    /// Measuring began with a request due at `at`. Later calls move the origin only
    /// earlier: a closed loop's slots can record a measured request before the first one's
    /// slot has said when it began.
    pub fn start(&mut self, at: Instant) {
        if self.origin.is_none_or(|o| at < o) {
            self.origin = Some(at);
        }
    }

    fn index(&mut self, at: Instant) -> usize {
        let origin = *self.origin.get_or_insert(at);
        let offset = at.saturating_duration_since(origin);
        let i = (offset.as_nanos() / self.width.as_nanos().max(1)) as usize;
        let i = i.min(MAX_SLICES as usize - 1);
        if self.slices.len() <= i {
            self.slices.resize_with(i + 1, Counts::default);
        }
        i
    }

    /// The slice a request due `at` belongs to, once measuring has begun.
    pub fn slice_of(&self, at: Instant) -> Option<usize> {
        let offset = at.saturating_duration_since(self.origin?);
        let i = offset.as_nanos() / self.width.as_nanos().max(1);
        Some((i as usize).min(MAX_SLICES as usize - 1))
    }

    /// A measured request due at `intended` ended at `done`: ok with this latency, or not.
    pub fn record(&mut self, intended: Instant, done: Instant, latency_us: Option<u64>) {
        let i = self.index(intended);
        match latency_us {
            Some(us) => {
                let s = &mut self.slices[i];
                s.ok += 1;
                s.latency.saturating_record(us.max(1));
                let j = self.index(done);
                self.slices[j].done += 1;
            }
            None => self.slices[i].errors += 1,
        }
    }

    /// A measured request due at `at` was never sent.
    pub fn unsent(&mut self, at: Instant) {
        let i = self.index(at);
        self.slices[i].unsent += 1;
    }

    /// The slices of a phase whose measured span is `span` long (from the origin), judged
    /// against `slo` each: those up to the last that had requests due. Completions after
    /// it (the phase's drain) have no slice of their own.
    pub fn results(&self, span: Duration, slo: &Slo) -> Vec<SliceResult> {
        let width = self.width.as_secs_f64();
        let span = span.as_secs_f64();
        let count = self
            .slices
            .iter()
            .rposition(|c| c.ok + c.errors + c.unsent > 0)
            .map_or(0, |i| i + 1);
        (0..count)
            .map(|i| {
                let empty = Counts::default();
                let c = self.slices.get(i).unwrap_or(&empty);
                let start = i as f64 * width;
                // The last slice ends with the phase; a completion after it still counts.
                let end = if i + 1 == count && span > start {
                    (start + width).min(span)
                } else {
                    start + width
                };
                SliceResult::of(c, start, end, slo)
            })
            .collect()
    }
}

/// One slice of a phase, as exports keep it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SliceResult {
    /// Seconds from the phase's first measured request.
    pub start_s: f64,
    pub end_s: f64,
    /// Measured requests due in the slice (sent or not) per second: the offered rate.
    pub offered_per_s: f64,
    /// Ok completions that ended in the slice, per second.
    pub achieved_per_s: f64,
    pub ok: u64,
    pub errors: u64,
    pub unsent: u64,
    /// Scheduled latency of the slice's ok requests (by intended send time).
    pub latency_ms: LatencySummary,
    /// Under `--slo`: the first objective the slice missed, with what it measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_missed: Option<String>,
    /// Scheduled latency in microseconds, HdrHistogram V2 base64, 2 significant figures.
    pub histogram_hdr_b64: String,
    /// Ok completions that ended in the slice (`achieved_per_s` × its length).
    pub done: u64,
}

impl SliceResult {
    fn of(c: &Counts, start: f64, end: f64, slo: &Slo) -> SliceResult {
        let len = end - start;
        let per_s = |n: u64| {
            if len > 0.0 {
                round3(n as f64 / len)
            } else {
                0.0
            }
        };
        let due = c.ok + c.errors + c.unsent;
        SliceResult {
            start_s: round3(start),
            end_s: round3(end),
            offered_per_s: per_s(due),
            achieved_per_s: per_s(c.done),
            ok: c.ok,
            errors: c.errors,
            unsent: c.unsent,
            latency_ms: LatencySummary::of(&c.latency),
            slo_missed: judge(slo, c, per_s(c.done)),
            histogram_hdr_b64: encode_histogram(&c.latency),
            done: c.done,
        }
    }

    /// Two hosts' shares of one slice, as `report --merge` adds them (exact: the
    /// histograms add).
    pub fn merged(a: &SliceResult, b: &SliceResult, slo: &Slo) -> Result<SliceResult, String> {
        let mut h = decode_histogram(&a.histogram_hdr_b64)?;
        h.add(decode_histogram(&b.histogram_hdr_b64)?)
            .map_err(|e| format!("slice histograms do not add: {e:?}"))?;
        let c = Counts {
            latency: h,
            ok: a.ok + b.ok,
            errors: a.errors + b.errors,
            unsent: a.unsent + b.unsent,
            done: a.done + b.done,
        };
        Ok(SliceResult::of(
            &c,
            a.start_s.min(b.start_s),
            a.end_s.max(b.end_s),
            slo,
        ))
    }
}

fn judge(slo: &Slo, c: &Counts, req_per_s: f64) -> Option<String> {
    if slo.is_empty() || c.ok + c.errors + c.unsent == 0 {
        return None;
    }
    slo.judge(&measured(c, req_per_s)).missed
}

fn measured(c: &Counts, req_per_s: f64) -> Measured<'_> {
    Measured {
        scheduled: &c.latency,
        ok: c.ok,
        errors: c.errors,
        unsent: c.unsent,
        overloaded: false,
        req_per_s,
    }
}

mod breaks;

pub use breaks::{SloBreak, first_breaks, requests_to_judge, too_small};

#[cfg(test)]
mod tests {
    use super::*;

    fn slo(s: &str) -> Slo {
        Slo {
            objectives: vec![s.parse().expect("a valid objective")],
        }
    }

    #[test]
    fn requests_fall_in_the_slice_they_were_due_in_and_completions_where_they_ended() {
        let t0 = Instant::now();
        let ms = |m: u64| t0 + Duration::from_millis(m);
        let mut r = SliceRecorder::new(Duration::from_secs(1));
        r.start(t0);
        // Due in slice 0, answered 1.5 s later: its latency is slice 0's, its completion
        // slice 1's throughput.
        r.record(ms(900), ms(2400), Some(1_500_000));
        r.record(ms(100), ms(110), Some(10_000));
        r.record(ms(1200), ms(1300), None);
        r.unsent(ms(2999));
        // Done after the last slice with requests due: the drain, in no slice.
        r.record(ms(2999), ms(3500), Some(501_000));
        r.record(ms(2999), ms(3500), None);
        let s = r.results(Duration::from_secs(3), &slo("p99=100ms"));
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].ok, s[0].errors, s[0].done), (2, 0, 1));
        assert_eq!((s[1].ok, s[1].errors, s[1].done), (0, 1, 0));
        assert_eq!((s[2].unsent, s[2].done, s[2].ok, s[2].errors), (1, 1, 1, 1));
        assert!((s[0].offered_per_s - 2.0).abs() < 1e-9);
        assert!((s[0].latency_ms.max - 1500.0).abs() < 1500.0 * 0.01);
        assert!(s[0].slo_missed.is_some(), "1.5 s is over 100 ms");
        assert!(s[2].slo_missed.is_some(), "an unsent request is a miss");
        let breaks = first_breaks(&s, &slo("errors=0"));
        assert_eq!(breaks.len(), 1);
        assert_eq!(
            (breaks[0].slice, breaks[0].objective.as_str()),
            (2, "errors=0%")
        );
        assert!(
            first_breaks(&s, &slo("p99=100ms")).is_empty(),
            "no slice holds 100 requests"
        );
    }

    #[test]
    fn a_short_last_slice_counts_its_rate_over_its_own_length() {
        let t0 = Instant::now();
        let mut r = SliceRecorder::new(Duration::from_secs(10));
        r.start(t0);
        for k in 0..30 {
            let at = t0 + Duration::from_millis(10_000 + k * 100);
            r.record(at, at, Some(1000));
        }
        let s = r.results(Duration::from_secs(13), &Slo::default());
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].end_s, 13.0);
        assert!(
            (s[1].offered_per_s - 10.0).abs() < 1e-9,
            "{}",
            s[1].offered_per_s
        );
    }

    #[test]
    fn merged_slices_add_exactly() {
        let t0 = Instant::now();
        let mut a = SliceRecorder::new(Duration::from_secs(1));
        let mut b = SliceRecorder::new(Duration::from_secs(1));
        a.start(t0);
        b.start(t0);
        for k in 1..=100u64 {
            let r = if k % 2 == 0 { &mut a } else { &mut b };
            r.record(t0, t0, Some(k * 1000));
        }
        let none = Slo::default();
        let (sa, sb) = (
            a.results(Duration::from_secs(1), &none),
            b.results(Duration::from_secs(1), &none),
        );
        let m = SliceResult::merged(&sa[0], &sb[0], &none).unwrap();
        assert_eq!(m.ok, 100);
        assert!(
            (m.latency_ms.p50 - 50.0).abs() <= 0.5,
            "{}",
            m.latency_ms.p50
        );
        assert!((m.offered_per_s - 100.0).abs() < 1e-9);
    }
}
