//! Whether the endpoint can be reached. Connecting that keeps failing (refused, reset,
//! unreachable) is the endpoint gone — killed, its host down, its port closed — not the model
//! answering badly: it is said once with its time, and again when something answers, and
//! each phase records the spans it overlapped (`endpoint_lost` in the export).
//!
//! Why a sustained span and not the first refusal: a server restarted by its supervisor, or
//! one whose accept queue overflowed for an instant, refuses a connection or two and goes on;
//! calling that "lost" would cry wolf. Why "answered" ends it and not any completion: a
//! request cut when the server died, or one that timed out on a host that went silent, says
//! nothing of whether anyone is there now.

use crate::stats::round3;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// How long connecting must fail, with nothing answering meanwhile, before the endpoint is
/// called lost.
pub const SUSTAINED: Duration = Duration::from_secs(1);

/// Why no connection could be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectFailure {
    /// Nobody listens on the port (the server was killed, or not started).
    Refused,
    /// The connection was cut before a request could go out on it.
    Reset,
    /// No route to the host, or its name does not resolve.
    Unreachable,
    /// Nothing answered the connection attempt in time (a host gone silent).
    TimedOut,
}

impl ConnectFailure {
    /// The kind of an I/O error met while connecting.
    pub fn of_io(kind: std::io::ErrorKind) -> ConnectFailure {
        use std::io::ErrorKind as K;
        match kind {
            K::ConnectionRefused => ConnectFailure::Refused,
            K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
                ConnectFailure::Reset
            }
            K::TimedOut => ConnectFailure::TimedOut,
            _ => ConnectFailure::Unreachable,
        }
    }

    /// The kind found among an error's causes, if one of them is an I/O error.
    pub fn in_causes(e: &(dyn std::error::Error + 'static)) -> Option<ConnectFailure> {
        let mut cause = Some(e);
        while let Some(c) = cause {
            if let Some(io) = c.downcast_ref::<std::io::Error>() {
                return Some(ConnectFailure::of_io(io.kind()));
            }
            cause = c.source();
        }
        None
    }

    pub fn words(self) -> &'static str {
        match self {
            ConnectFailure::Refused => "connection refused",
            ConnectFailure::Reset => "connection reset",
            ConnectFailure::Unreachable => "unreachable",
            ConnectFailure::TimedOut => "connecting timed out",
        }
    }
}

/// A span in which the endpoint could not be reached, as a phase records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndpointLost {
    /// Seconds from the run's start (the timeline's clock) to the first attempt that failed.
    pub at_s: f64,
    /// Why connecting failed when the endpoint was called lost.
    pub kind: ConnectFailure,
    /// When something answered again; `None` when nothing had by the phase's end.
    pub back_at_s: Option<f64>,
    /// Connection attempts that failed in this phase while it was lost (the span's first
    /// second included). A closed loop's are not measured requests; an open loop's are its
    /// requests that failed by kind.
    pub attempts: u64,
}

impl EndpointLost {
    /// `the endpoint stopped answering at 3.1 s: connection refused`
    pub fn lost_line(&self) -> String {
        format!(
            "the endpoint stopped answering at {:.1} s: {}",
            self.at_s,
            self.kind.words()
        )
    }

    /// `the endpoint answered again at 5.2 s, 2.1 s after it stopped (57 attempts to connect failed)`
    pub fn back_line(&self) -> Option<String> {
        let back = self.back_at_s?;
        Some(format!(
            "the endpoint answered again at {back:.1} s, {:.1} s after it stopped ({})",
            back - self.at_s,
            attempts_failed(self.attempts)
        ))
    }
}

/// `57 attempts to connect failed`
pub fn attempts_failed(n: u64) -> String {
    format!("{} to connect failed", crate::text::count(n, "attempt"))
}

/// The spans of several phases as one (repetitions pooled, hosts merged): a span open across
/// two of them is one span, its attempts added and its end the one that saw it end.
pub fn pooled<'a>(spans: impl IntoIterator<Item = &'a EndpointLost>) -> Vec<EndpointLost> {
    let mut out: Vec<EndpointLost> = Vec::new();
    for s in spans {
        match out
            .iter_mut()
            .find(|o| o.at_s == s.at_s && o.kind == s.kind)
        {
            Some(o) => {
                o.attempts += s.attempts;
                o.back_at_s = match (o.back_at_s, s.back_at_s) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    (a, b) => a.or(b),
                };
            }
            None => out.push(s.clone()),
        }
    }
    out.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    out
}

/// Whether the endpoint was lost and had not come back by the end of `spans` (a run's
/// phases in any order): the latest span has no end in any of the phases it is in.
pub fn still_lost<'a>(spans: impl IntoIterator<Item = &'a EndpointLost>) -> Option<EndpointLost> {
    pooled(spans).pop().filter(|s| s.back_at_s.is_none())
}

/// Failed connection attempts since the last answer.
#[derive(Debug, Clone, Copy)]
struct Streak {
    first: Instant,
    kind: ConnectFailure,
    attempts: u64,
}

/// Whether the endpoint can be reached, run-wide, fed with every request's outcome.
#[derive(Debug)]
pub struct Reach {
    start: Instant,
    streak: Option<Streak>,
    /// Every span so far, the last one open while the endpoint is lost.
    spans: Vec<EndpointLost>,
    /// When the open span began.
    lost_since: Option<Instant>,
    /// The spans of the phase under way: from this index of `spans`, the first one's
    /// attempts counted from `carried` (what an open span had when the phase began).
    phase_from: usize,
    carried: u64,
}

impl Reach {
    pub fn new(start: Instant) -> Reach {
        Reach {
            start,
            streak: None,
            spans: Vec::new(),
            lost_since: None,
            phase_from: 0,
            carried: 0,
        }
    }

    fn secs(&self, at: Instant) -> f64 {
        round3(at.saturating_duration_since(self.start).as_secs_f64())
    }

    /// A connection attempt failed. Returns the span when this made the endpoint lost.
    pub fn unconnected(&mut self, at: Instant, kind: ConnectFailure) -> Option<EndpointLost> {
        if let Some(open) = self.open_mut() {
            open.attempts += 1;
            return None;
        }
        let s = self.streak.get_or_insert(Streak {
            first: at,
            kind,
            attempts: 0,
        });
        s.attempts += 1;
        // What connecting meets now, not as the server went down: a listener killed while
        // a connection was in its queue resets that one, and refuses every one after.
        s.kind = kind;
        self.declare_if_sustained(at)
    }

    fn declare_if_sustained(&mut self, now: Instant) -> Option<EndpointLost> {
        let s = self.streak?;
        if now.saturating_duration_since(s.first) < SUSTAINED {
            return None;
        }
        self.streak = None;
        self.lost_since = Some(s.first);
        let span = EndpointLost {
            at_s: self.secs(s.first),
            kind: s.kind,
            back_at_s: None,
            attempts: s.attempts,
        };
        self.spans.push(span.clone());
        Some(span)
    }

    /// The endpoint answered (a reply with a status, whatever it said). Returns the span
    /// it ended, if the endpoint was lost.
    pub fn answered(&mut self, at: Instant) -> Option<EndpointLost> {
        self.streak = None;
        self.lost_since?;
        self.lost_since = None;
        let back = self.secs(at);
        let open = self.spans.last_mut().expect("an open span");
        open.back_at_s = Some(back);
        Some(open.clone())
    }

    fn open_mut(&mut self) -> Option<&mut EndpointLost> {
        self.lost_since?;
        self.spans.last_mut()
    }

    /// Since when the endpoint has been lost, if it is.
    pub fn lost_since(&self) -> Option<Instant> {
        self.lost_since
    }

    /// Every span so far, the run's (attempts over the whole span).
    pub fn spans(&self) -> &[EndpointLost] {
        &self.spans
    }

    /// A phase begins: its spans are those from here on, and the one still open.
    pub fn phase_start(&mut self) {
        match self.lost_since {
            Some(_) => {
                self.phase_from = self.spans.len() - 1;
                self.carried = self.spans.last().map_or(0, |s| s.attempts);
            }
            None => {
                self.phase_from = self.spans.len();
                self.carried = 0;
            }
        }
    }

    /// The phase under way as it stands at `now`: the spans it overlapped, its own attempts
    /// in each. A failing streak that has lasted long enough by `now` is declared here (the
    /// second value), as no attempt may come after it to do so.
    pub fn phase_so_far(&mut self, now: Instant) -> (Vec<EndpointLost>, Option<EndpointLost>) {
        let declared = self.declare_if_sustained(now);
        let mut spans = self.spans[self.phase_from.min(self.spans.len())..].to_vec();
        if let Some(first) = spans.first_mut() {
            first.attempts = first.attempts.saturating_sub(self.carried);
        }
        (spans, declared)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(start: Instant, t: u64) -> Instant {
        start + Duration::from_millis(t)
    }

    #[test]
    fn a_sustained_failure_is_lost_once_and_back_once() {
        let t0 = Instant::now();
        let mut r = Reach::new(t0);
        r.phase_start();
        assert!(r.answered(ms(t0, 100)).is_none());
        // Failing from 3.1 s on: not lost before a second of it.
        assert!(r.unconnected(ms(t0, 3100), ConnectFailure::Reset).is_none());
        for t in [3110, 3130, 3170, 3900] {
            assert!(r.unconnected(ms(t0, t), ConnectFailure::Refused).is_none());
        }
        let lost = r
            .unconnected(ms(t0, 4100), ConnectFailure::Refused)
            .expect("lost");
        assert_eq!(lost.at_s, 3.1);
        assert_eq!(lost.kind, ConnectFailure::Refused, "what it is when lost");
        assert_eq!(lost.attempts, 6);
        assert_eq!(
            lost.lost_line(),
            "the endpoint stopped answering at 3.1 s: connection refused"
        );
        assert!(
            r.unconnected(ms(t0, 5000), ConnectFailure::Refused)
                .is_none()
        );
        assert_eq!(r.lost_since(), Some(ms(t0, 3100)));
        let back = r.answered(ms(t0, 5200)).expect("back");
        assert_eq!((back.back_at_s, back.attempts), (Some(5.2), 7));
        assert!(back.back_line().unwrap().starts_with(
            "the endpoint answered again at 5.2 s, 2.1 s after it stopped (7 attempts"
        ));
        assert!(r.answered(ms(t0, 5300)).is_none(), "said once");
        assert_eq!(r.lost_since(), None);
        let (spans, declared) = r.phase_so_far(ms(t0, 8000));
        assert_eq!(spans, vec![back]);
        assert!(declared.is_none());
    }

    #[test]
    fn an_answer_within_the_span_ends_the_streak() {
        let t0 = Instant::now();
        let mut r = Reach::new(t0);
        r.phase_start();
        r.unconnected(ms(t0, 0), ConnectFailure::Refused);
        r.unconnected(ms(t0, 900), ConnectFailure::Refused);
        r.answered(ms(t0, 950));
        assert!(
            r.unconnected(ms(t0, 1500), ConnectFailure::Refused)
                .is_none(),
            "a new streak, 0 s long"
        );
        assert!(r.spans().is_empty());
    }

    #[test]
    fn a_span_open_across_phases_is_in_each_with_its_own_attempts() {
        let t0 = Instant::now();
        let mut r = Reach::new(t0);
        r.phase_start();
        r.unconnected(ms(t0, 1000), ConnectFailure::Refused);
        r.unconnected(ms(t0, 2000), ConnectFailure::Refused);
        r.unconnected(ms(t0, 2500), ConnectFailure::Refused);
        let (first, _) = r.phase_so_far(ms(t0, 3000));
        assert_eq!((first.len(), first[0].attempts), (1, 3));
        assert_eq!(first[0].back_at_s, None);
        r.phase_start();
        r.unconnected(ms(t0, 3500), ConnectFailure::Refused);
        r.answered(ms(t0, 4000));
        let (second, _) = r.phase_so_far(ms(t0, 6000));
        assert_eq!(second.len(), 1);
        assert_eq!(
            (second[0].at_s, second[0].back_at_s, second[0].attempts),
            (1.0, Some(4.0), 1)
        );
        r.phase_start();
        assert!(r.phase_so_far(ms(t0, 7000)).0.is_empty());
    }

    #[test]
    fn a_streak_that_lasted_to_the_phase_end_is_declared_there() {
        let t0 = Instant::now();
        let mut r = Reach::new(t0);
        r.phase_start();
        r.unconnected(ms(t0, 7000), ConnectFailure::Refused);
        // Under a second by the end: not lost, nothing recorded.
        let (spans, declared) = r.phase_so_far(ms(t0, 7500));
        assert!(spans.is_empty() && declared.is_none());
        let (spans, declared) = r.phase_so_far(ms(t0, 8200));
        assert_eq!(declared.map(|d| d.at_s), Some(7.0));
        assert_eq!(spans.len(), 1);
    }

    #[test]
    fn spans_of_several_phases_pool_into_one_each() {
        let span = |at_s, back_at_s, attempts| EndpointLost {
            at_s,
            kind: ConnectFailure::Refused,
            back_at_s,
            attempts,
        };
        let phases = [
            span(1.0, None, 3),
            span(1.0, Some(4.0), 1),
            span(9.0, None, 5),
        ];
        assert_eq!(
            pooled(&phases),
            vec![span(1.0, Some(4.0), 4), span(9.0, None, 5)]
        );
        assert_eq!(still_lost(&phases), Some(span(9.0, None, 5)));
        assert_eq!(still_lost(&phases[..2]), None);
    }

    /// An error whose cause is an I/O error, as a client library's are.
    #[derive(Debug)]
    struct Wrapped(std::io::Error);

    impl std::fmt::Display for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("wrapped")
        }
    }
    impl std::error::Error for Wrapped {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn io_errors_name_their_kind() {
        use std::io::{Error, ErrorKind};
        assert_eq!(
            ConnectFailure::of_io(ErrorKind::ConnectionRefused),
            ConnectFailure::Refused
        );
        assert_eq!(
            ConnectFailure::of_io(ErrorKind::ConnectionReset),
            ConnectFailure::Reset
        );
        assert_eq!(
            ConnectFailure::of_io(ErrorKind::HostUnreachable),
            ConnectFailure::Unreachable
        );
        let e = Wrapped(Error::from(ErrorKind::ConnectionRefused));
        assert_eq!(ConnectFailure::in_causes(&e), Some(ConnectFailure::Refused));
        assert_eq!(
            serde_json::to_string(&ConnectFailure::TimedOut).unwrap(),
            "\"timed_out\""
        );
    }
}
