//! The server's own time on each request, from its reply's headers: TEI sends
//! `x-queue-time`, `x-inference-time` and `x-tokenization-time` (whole milliseconds; for a
//! batch, the mean over its inputs) with every success, and any server that sends them is
//! read alike. Per phase they become percentiles beside the client's latency, without
//! Prometheus.

use crate::stats::{LatencySummary, phase_histogram};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The headers, as sent on the wire.
pub const QUEUE: &str = "x-queue-time";
pub const INFERENCE: &str = "x-inference-time";
pub const TOKENIZATION: &str = "x-tokenization-time";

/// What one reply said of the server's time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerTime {
    pub queue: Option<Duration>,
    pub inference: Option<Duration>,
    pub tokenization: Option<Duration>,
}

impl ServerTime {
    /// From a header lookup; `None` when the reply carries none of them. A value is
    /// milliseconds, whole or not; one that is not a number is not read.
    pub fn read<'a>(header: impl Fn(&str) -> Option<&'a str>) -> Option<ServerTime> {
        let ms = |name: &str| {
            header(name)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .map(|v| Duration::from_secs_f64(v / 1000.0))
        };
        let t = ServerTime {
            queue: ms(QUEUE),
            inference: ms(INFERENCE),
            tokenization: ms(TOKENIZATION),
        };
        (t != ServerTime::default()).then_some(t)
    }
}

/// A phase's server times, one histogram per header (microseconds).
#[derive(Debug, Clone)]
pub struct ServerTimeRecorder {
    pub replies: u64,
    pub queue: Histogram<u64>,
    pub inference: Histogram<u64>,
    pub tokenization: Histogram<u64>,
}

impl Default for ServerTimeRecorder {
    fn default() -> Self {
        ServerTimeRecorder {
            replies: 0,
            queue: phase_histogram(),
            inference: phase_histogram(),
            tokenization: phase_histogram(),
        }
    }
}

impl ServerTimeRecorder {
    pub fn record(&mut self, t: &ServerTime) {
        self.replies += 1;
        for (h, d) in [
            (&mut self.queue, t.queue),
            (&mut self.inference, t.inference),
            (&mut self.tokenization, t.tokenization),
        ] {
            // Zero is a value here: TEI truncates to whole milliseconds.
            if let Some(d) = d {
                h.saturating_record(d.as_micros() as u64);
            }
        }
    }

    pub fn summary(&self) -> ServerTimeSummary {
        let of = |h: &Histogram<u64>| (!h.is_empty()).then(|| LatencySummary::of(h));
        ServerTimeSummary {
            replies: self.replies,
            queue: of(&self.queue),
            inference: of(&self.inference),
            tokenization: of(&self.tokenization),
        }
    }
}

/// `phases[].server_time_ms`: what the server's headers said of its time, in milliseconds,
/// over the phase's successful measured requests.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ServerTimeSummary {
    /// Successful requests whose reply carried any of the headers.
    pub replies: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inference: Option<LatencySummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenization: Option<LatencySummary>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_in_whole_or_fractional_milliseconds() {
        let headers = [(QUEUE, "12"), (INFERENCE, "3.5"), (TOKENIZATION, "x")];
        let get = |n: &str| headers.iter().find(|h| h.0 == n).map(|h| h.1);
        let t = ServerTime::read(get).unwrap();
        assert_eq!(t.queue, Some(Duration::from_millis(12)));
        assert_eq!(t.inference, Some(Duration::from_micros(3500)));
        assert_eq!(t.tokenization, None);
        assert_eq!(ServerTime::read(|_| None), None);
        let mut r = ServerTimeRecorder::default();
        r.record(&t);
        r.record(&ServerTime {
            queue: Some(Duration::ZERO),
            ..t
        });
        let s = r.summary();
        assert_eq!(s.replies, 2);
        let q = s.queue.unwrap();
        // Three significant figures, as every phase histogram keeps.
        assert_eq!(q.min, 0.0);
        assert!((q.max - 12.0).abs() < 0.012, "{q:?}");
        assert_eq!(s.tokenization, None);
    }
}
