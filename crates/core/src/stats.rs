//! Aggregation of completed requests into HdrHistograms, counters and a per-second timeline.
//!
//! Microseconds inside, milliseconds at the edges. Memory is constant in run length except for
//! the timeline, which grows by one small entry per second.

use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// Highest latency a histogram resolves; longer ones saturate here rather than being lost.
pub const HIST_MAX_US: u64 = 3_600_000_000;

/// Phase histograms keep 3 significant figures (0.1 %), as exports and merges need.
pub fn phase_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, 3).expect("valid histogram bounds")
}

/// Per-second histograms only feed the live view: 2 significant figures keep them 7× smaller.
pub fn view_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, 2).expect("valid histogram bounds")
}

fn us(d: Duration) -> u64 {
    (d.as_micros() as u64).max(1)
}

fn ms(v_us: u64) -> f64 {
    v_us as f64 / 1000.0
}

/// The quantiles every table and export reports, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct LatencySummary {
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    /// How sure each percentile is: its 95 % interval from the order statistics; `None`
    /// without requests (and in exports written before the intervals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<crate::interval::Ci95>,
}

impl LatencySummary {
    pub fn of(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let q = |x: f64| ms(h.value_at_quantile(x));
        LatencySummary {
            min: ms(h.min()),
            mean: h.mean() / 1000.0,
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            p999: q(0.999),
            max: ms(h.max()),
            ci95: crate::interval::Ci95::of(h),
        }
    }
}

/// Error kind of requests still unanswered when a stopped phase stops waiting.
pub const ABANDONED: &str = "Abandoned";

/// Error kind of a request whose task panicked inside the client: counted, never lost.
pub const CLIENT_PANIC: &str = "ClientPanic";

/// One finished request as the dispatcher saw it.
#[derive(Debug, Clone)]
pub struct Completion {
    pub intended: Instant,
    pub sent: Instant,
    pub done: Instant,
    pub batch_size: usize,
    /// `None` on success, else the error kind's key.
    pub error: Option<String>,
    /// With an error: the start of what the server said with it, raw (shown only through
    /// `text::server_words`).
    pub said: Option<String>,
    /// The production variant that served it, where the target says.
    pub variant: Option<String>,
    /// Client-side tokenization time, inside the latency (formats that tokenize).
    pub tokenize: Option<Duration>,
    /// What the reply's headers said of the server's time (TEI's `x-queue-time`, ...).
    pub server_time: Option<crate::server_metrics::headers::ServerTime>,
    /// Warmup requests are counted in the timeline but never in phase results.
    pub measured: bool,
    /// The token counts of the request's inputs.
    pub tokens: Option<crate::lengths::BatchTokens>,
}

/// Everything measured in one phase.
#[derive(Debug, Clone)]
pub struct PhaseRecorder {
    pub scheduled: Histogram<u64>,
    pub service: Histogram<u64>,
    pub dispatch_delay: Histogram<u64>,
    /// Client-side tokenization, for formats that tokenize (empty otherwise).
    pub tokenize: Histogram<u64>,
    /// The server's time from its replies' headers, once a reply has carried them.
    pub server_time: Option<Box<crate::server_metrics::headers::ServerTimeRecorder>>,
    /// Measured requests sent, counted by the dispatcher; at the end of a phase every one of
    /// them is in `ok` or `errors` (see `count_abandoned`).
    pub sent: u64,
    pub ok: u64,
    pub errors: BTreeMap<String, u64>,
    /// The server's words with the first measured error of each kind that had any.
    pub said: BTreeMap<String, String>,
    pub samples: u64,
    /// Successful measured requests by invoked production variant.
    pub variants: BTreeMap<String, u64>,
    first_intended: Option<Instant>,
    last_done: Option<Instant>,
    /// The phase's first completion, warmup included: in a closed loop, the first send a
    /// completion drove rather than the slots' fill.
    first_done: Option<Instant>,
    /// Closed loop: measured requests sent in the slots' fill (a warmup under the cap).
    pub fill_measured: u64,
    /// Time spent paused inside the measured interval, which throughput must not count.
    paused: Duration,
    /// Closed loop only: when the request after the last measured one would have been sent
    /// (see `req_per_s`).
    pub pipeline_end: Option<Instant>,
    /// A closed loop's slots, when the phase kept one cap throughout (see `measured_interval`).
    pub slots: Option<u64>,
    /// Open loop only: the intended send time of the request after the last measured one (a
    /// fixed count), or the phase's end (see `req_per_s`).
    pub schedule_end: Option<Instant>,
    /// Open loop only: what the schedule asked for and how far behind it the run fell.
    pub schedule: Option<ScheduleOutcome>,
    /// Phases that run until stable keep every ok request, to judge stability by.
    pub probe: Option<ProbeSamples>,
    /// `--slice`: the phase cut into time slices.
    pub slices: Option<crate::slices::SliceRecorder>,
    /// Tokens of the inputs sent.
    pub input_tokens: crate::lengths::LengthRecorder,
}

/// The ok requests of a phase that runs until stable: when each completed and its scheduled
/// latency, in completion order.
#[derive(Debug, Clone, Default)]
pub struct ProbeSamples {
    samples: Vec<(Instant, u32)>,
}

/// The standard error of the logarithm of each named percentile of a phase that kept its
/// samples, in `Percentile::ALL`'s order: what the capacity search weighs its probes by.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct QuantileNoise(pub [Option<crate::quantile_noise::Noise>; 5]);

impl QuantileNoise {
    /// Every named percentile's noise of `latencies` (µs, in the order they completed),
    /// their histogram `h` giving the percentiles.
    pub fn of_samples(latencies: &[u32], h: &Histogram<u64>) -> QuantileNoise {
        QuantileNoise(crate::percentile::Percentile::ALL.map(|p| {
            crate::quantile_noise::noise_at(latencies, p.quantile(), |x| {
                h.value_at_quantile(x) as f64
            })
        }))
    }

    pub fn of(&self, p: crate::percentile::Percentile) -> Option<crate::quantile_noise::Noise> {
        let i = crate::percentile::Percentile::ALL
            .iter()
            .position(|&x| x == p)
            .expect("every percentile is in ALL");
        self.0[i]
    }
}

/// Past this many samples (96 MB) a probe ends: its figures are as precise as they get.
pub const PROBE_SAMPLES_MAX: usize = 4_000_000;

/// The fewest requests a capacity search's closed-loop ceiling measures: its throughput
/// bounds the search and sets the latency curve's shape (`capacity::pool`). With a floor of
/// 30 (and `--min-probe-requests` 200) a ceiling ended stable at 377 requests reading 112
/// req/s of one worker that completes 100 (exponential service: a mean of n draws is
/// within about 1/√n); 1,000 pin it to about 3 %.
pub const CEILING_MIN: u64 = 1000;

/// The fewest samples a third of a probe needs before its p99 counts towards stability.
pub const P99_THIRD_MIN: u64 = 100;

impl ProbeSamples {
    fn push(&mut self, done: Instant, latency: Duration) {
        if self.samples.len() < PROBE_SAMPLES_MAX {
            let us = latency.as_micros().min(u128::from(u32::MAX)) as u32;
            self.samples.push((done, us));
        }
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn full(&self) -> bool {
        self.samples.len() >= PROBE_SAMPLES_MAX
    }

    /// Each named percentile's noise (`quantile_noise`), in `Percentile::ALL`'s order, the
    /// samples taken in the order they completed, the percentiles read from `h`, the
    /// histogram of the same samples.
    pub fn noise(&self, h: &Histogram<u64>) -> QuantileNoise {
        let mut s = self.samples.clone();
        s.sort_by_key(|x| x.0);
        let latencies: Vec<u32> = s.iter().map(|x| x.1).collect();
        QuantileNoise::of_samples(&latencies, h)
    }

    /// At least `min` samples, and the three thirds of them (in completion order) agree:
    /// each one's p99 and throughput within `within` (max − min over the mean) of the
    /// others'. A backlog building up, a cache warming or a neighbour arriving shows up as
    /// thirds that disagree.
    pub fn stable(&self, min: u64, within: f64, throughput_only: bool) -> bool {
        let n = self.samples.len();
        // A third's p99 is a percentile only past 100 samples; under that it is the third's
        // largest, and three maxima agreeing says nothing of the tail (a probe of 239
        // requests was "stable" with a p99 under that of a lower rate's).
        let floor = if throughput_only {
            CEILING_MIN
        } else {
            3 * P99_THIRD_MIN
        };
        if (n as u64) < min.max(floor) {
            return false;
        }
        let bounds = [0, n / 3, 2 * n / 3, n];
        let mut p99 = [0.0; 3];
        let mut rate = [0.0; 3];
        for w in 0..3 {
            let part = &self.samples[bounds[w]..bounds[w + 1]];
            let mut lat: Vec<u32> = part.iter().map(|s| s.1).collect();
            let k = ((lat.len() as f64 * 0.99).ceil() as usize).clamp(1, lat.len()) - 1;
            let (_, v, _) = lat.select_nth_unstable(k);
            p99[w] = f64::from(*v);
            let first = part
                .iter()
                .map(|s| s.0)
                .min()
                .expect("a third holds samples");
            let last = part
                .iter()
                .map(|s| s.0)
                .max()
                .expect("a third holds samples");
            let span = last.saturating_duration_since(first).as_secs_f64();
            rate[w] = if span > 0.0 {
                (part.len() - 1) as f64 / span
            } else {
                f64::INFINITY
            };
        }
        (throughput_only || spread(&p99) <= within) && spread(&rate) <= within
    }
}

/// (max − min) / mean; infinite when any value is.
fn spread(v: &[f64; 3]) -> f64 {
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    let mean = v.iter().sum::<f64>() / 3.0;
    if !mean.is_finite() || mean <= 0.0 {
        return f64::INFINITY;
    }
    (max - min) / mean
}

/// How an open-loop phase kept its schedule.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ScheduleOutcome {
    /// Measured requests that were due (intended send time before the phase's end) but never
    /// got a concurrency slot. They are the longest-waiting requests: leaving them out
    /// silently would drop the worst of the tail (survivorship, like coordinated omission).
    pub unsent: u64,
    /// Measured requests due per second over the measured schedule: sent plus unsent.
    pub offered_per_s: f64,
    /// The longest a due request waited to be sent (the schedule lag), at a send or at the end.
    pub max_lag: Duration,
    /// The server's queue beyond what the latency measured explains, at the end (see
    /// `queue_lag`): where the backlog builds under a cap the server never reaches.
    pub queue_lag: Duration,
    /// The lag or the queue lag kept growing: at the end the larger was over 100 ms and over
    /// 5 % of the phase.
    pub overloaded: bool,
}

/// Overloaded: the lag at the end is over 100 ms and over 5 % of the measured schedule. A
/// queue that keeps up has a lag that stays bounded however long the phase; one that does
/// not has a lag that grows with it.
pub fn overloaded(lag: Duration, span: Duration) -> bool {
    lag > Duration::from_millis(100) && lag.as_secs_f64() > 0.05 * span.as_secs_f64()
}

/// How far the server's queue is behind, in seconds of the offered rate: the requests sent
/// and not completed (`waiting`: in flight, and those the client gave up on at its timeout)
/// beyond what Little's law allows for the latency measured (`waiting` over `rate_per_s`,
/// less `mean_latency`), or zero while that excess is within what random arrivals give
/// (three standard deviations of a Poisson count, plus one request).
///
/// Under a cap the server never reaches, a server that cannot keep up leaves the client's
/// schedule on time and queues the backlog itself: in flight grows as completions fall
/// behind sends. One that keeps up has, on average, the offered rate times the mean latency
/// in flight (Little's law), whatever its latency; one that does not has that many plus the
/// sends it did not complete, a number that grows with the phase while the mean latency of
/// what did complete grows half as fast. So the excess, like the schedule lag, stays bounded
/// when the server keeps up and grows with the phase when it does not (`overloaded`).
pub fn queue_lag(waiting: u64, rate_per_s: f64, mean_latency: Duration) -> Duration {
    if rate_per_s <= 0.0 || !rate_per_s.is_finite() {
        return Duration::ZERO;
    }
    let expected = rate_per_s * mean_latency.as_secs_f64();
    let excess = waiting as f64 - expected;
    if excess <= 3.0 * expected.sqrt() + 1.0 {
        return Duration::ZERO;
    }
    Duration::from_secs_f64(excess / rate_per_s)
}

impl Default for PhaseRecorder {
    fn default() -> Self {
        PhaseRecorder {
            scheduled: phase_histogram(),
            service: phase_histogram(),
            dispatch_delay: phase_histogram(),
            tokenize: phase_histogram(),
            server_time: None,
            sent: 0,
            ok: 0,
            errors: BTreeMap::new(),
            said: BTreeMap::new(),
            samples: 0,
            variants: BTreeMap::new(),
            first_intended: None,
            last_done: None,
            first_done: None,
            fill_measured: 0,
            paused: Duration::ZERO,
            pipeline_end: None,
            slots: None,
            schedule_end: None,
            schedule: None,
            probe: None,
            slices: None,
            input_tokens: crate::lengths::LengthRecorder::default(),
        }
    }
}

impl PhaseRecorder {
    /// An empty recorder; one for a phase that runs until stable keeps its samples.
    pub fn keeping_samples(keep: bool) -> PhaseRecorder {
        PhaseRecorder {
            probe: keep.then(ProbeSamples::default),
            ..PhaseRecorder::default()
        }
    }

    /// The same, cut into slices of `width` (`--slice`).
    #[must_use]
    pub fn sliced(mut self, width: Option<Duration>) -> PhaseRecorder {
        self.slices = width.map(crate::slices::SliceRecorder::new);
        self
    }

    /// Records a measured completion; warmup ones count nowhere in the phase.
    pub fn record(&mut self, c: &Completion) {
        self.first_done = Some(self.first_done.map_or(c.done, |t| t.min(c.done)));
        if !c.measured {
            return;
        }
        self.first_intended = Some(match self.first_intended {
            Some(t) => t.min(c.intended),
            None => c.intended,
        });
        self.last_done = Some(self.last_done.map_or(c.done, |t| t.max(c.done)));
        if let Some(s) = self.slices.as_mut() {
            let ok = c.error.is_none().then(|| us(c.done - c.intended));
            s.record(c.intended, c.done, ok);
        }
        // Sent is sent: a failed request's inputs reached the wire too.
        if let Some(t) = &c.tokens {
            self.input_tokens.record(t);
        }
        match &c.error {
            None => {
                self.ok += 1;
                self.samples += c.batch_size as u64;
                self.scheduled.saturating_record(us(c.done - c.intended));
                if let Some(p) = self.probe.as_mut() {
                    p.push(c.done, c.done - c.intended);
                }
                self.service.saturating_record(us(c.done - c.sent));
                self.dispatch_delay
                    .saturating_record(us(c.sent.saturating_duration_since(c.intended)));
                if let Some(t) = c.tokenize {
                    self.tokenize.saturating_record(us(t));
                }
                if let Some(t) = &c.server_time {
                    self.server_time.get_or_insert_default().record(t);
                }
                if let Some(v) = &c.variant {
                    *self.variants.entry(v.clone()).or_default() += 1;
                }
            }
            Some(kind) => {
                *self.errors.entry(kind.clone()).or_default() += 1;
                // The first of a kind only: its words are made once, not per failure.
                if !self.said.contains_key(kind)
                    && let Some(words) = c.said.as_deref().and_then(crate::text::server_words)
                {
                    self.said.insert(kind.clone(), words);
                }
            }
        }
    }

    pub fn add_paused(&mut self, d: Duration) {
        if self.first_intended.is_some() {
            self.paused += d;
        }
    }

    pub fn completed(&self) -> u64 {
        self.ok + self.errors.values().sum::<u64>()
    }

    /// Requests sent but never answered (a stopped run stops waiting for them) become errors
    /// of their own kind, so `ok + errors = sent` holds and nothing vanishes from a phase.
    pub fn count_abandoned(&mut self) {
        let missing = self.sent.saturating_sub(self.completed());
        if missing > 0 {
            *self.errors.entry(ABANDONED.into()).or_default() += missing;
        }
    }

    /// The interval throughput is counted over, pauses excluded: from the first measured
    /// (intended) send to the pipeline's end in a closed loop; to the later of the schedule's
    /// end and the last measured completion in an open loop; to the last measured completion
    /// otherwise.
    pub fn measured_interval(&self) -> Duration {
        let end = match (self.pipeline_end, self.schedule_end) {
            (Some(p), _) => Some(p),
            (None, Some(s)) => Some(self.last_done.map_or(s, |d| d.max(s))),
            (None, None) => self.last_done,
        };
        let mut span = match (self.first_intended, end) {
            (Some(a), Some(b)) => b.saturating_duration_since(a).saturating_sub(self.paused),
            _ => Duration::ZERO,
        };
        // A warmup under a closed loop's cap leaves measured requests in the slots' fill,
        // sent at once and not at the rate the server completes them (16 slots on 4 workers
        // read 193 req/s of 155). The rate is then the requests sent after the fill, each
        // driven by a completion, over the span from the first completion; the interval is
        // scaled so that ok over it is that rate.
        if let (Some(first), Some(b), Some(_)) = (self.first_done, end, self.slots)
            && self.fill_measured > 0
            && self.ok > self.fill_measured
        {
            let driven = b
                .saturating_duration_since(first)
                .saturating_sub(self.paused);
            let scale = self.ok as f64 / (self.ok - self.fill_measured) as f64;
            span = span.max(driven.mul_f64(scale));
        }
        // `slots` slots cannot serve `ok` requests of this mean latency in less time
        // (Little's law: what is in flight never exceeds the slots). The span rule alone
        // reads a partial last round of a server that answers in step as a whole one: 50
        // requests over 12 rounds of 4 read 4 % over capacity.
        match self.slots {
            Some(c) if c > 0 && !self.scheduled.is_empty() => {
                let busy_s = self.ok as f64 * self.scheduled.mean() / 1e6 / c as f64;
                span.max(Duration::from_secs_f64(busy_s))
            }
            _ => span,
        }
    }

    /// Measured requests completed successfully per second: never more than the server could
    /// do, at any count and concurrency.
    ///
    /// A closed loop keeps every slot busy from the first measured send until a slot that
    /// comes free finds the count used up (or the duration over): the `pipeline_end`. Over
    /// that span exactly the measured requests were sent, at the rate the server completes
    /// them, whether the slots run in step (all sent at once, all done at once) or spread
    /// out. Ending at the last completion instead charges the interval with the pipeline
    /// emptying (about concurrency × service / 2 too long); adding the warmup requests that
    /// finish inside it over-corrects when the slots run in step (n + concurrency − 1 in n
    /// requests' time: 114 req/s from 8 workers that can do 80).
    ///
    /// An open loop that keeps up sends its measured requests over exactly their schedule,
    /// so they are counted over it; one that falls behind completes them later, and the last
    /// completion ends the interval. Every measured request was sent and served inside it, so
    /// the figure cannot exceed the server's capacity.
    ///
    /// Without either (a closed loop that never filled its slots, or was stopped while a
    /// request hung), the interval ends at the last measured completion, which again holds
    /// every measured request whole.
    pub fn req_per_s(&self) -> f64 {
        per_second(self.ok, self.measured_interval())
    }

    pub fn samples_per_s(&self) -> f64 {
        per_second(self.samples, self.measured_interval())
    }
}

fn per_second(count: u64, over: Duration) -> f64 {
    let secs = over.as_secs_f64();
    if secs > 0.0 { count as f64 / secs } else { 0.0 }
}

/// One line of the run's timeline: a per-second point or a logged event.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum TimelineEntry {
    Point {
        t_s: f64,
        req_per_s: f64,
        samples_per_s: f64,
        p50_ms: Option<f64>,
        p99_ms: Option<f64>,
        errors: u64,
    },
    Event {
        t_s: f64,
        event: String,
    },
}

/// All completions, warmup included, bucketed by second: what the endpoint did each second;
/// the latencies are those of measured requests.
#[derive(Debug)]
pub struct Timeline {
    start: Instant,
    second_start: Instant,
    ok: u64,
    samples: u64,
    errors: u64,
    hist: Histogram<u64>,
    /// The second under way's latencies of the current phase or segment only, and the last
    /// `window_len` seconds' of it, for the live "recent" view: a window that crossed a
    /// phase would show a b=32 bucket after the sweep moved on.
    recent_hist: Histogram<u64>,
    window: VecDeque<Histogram<u64>>,
    window_len: usize,
    pub entries: Vec<TimelineEntry>,
}

impl Timeline {
    pub fn new(start: Instant, window_len: usize) -> Timeline {
        Timeline {
            start,
            second_start: start,
            ok: 0,
            samples: 0,
            errors: 0,
            hist: view_histogram(),
            recent_hist: view_histogram(),
            window: VecDeque::new(),
            window_len: window_len.max(1),
            entries: Vec::new(),
        }
    }

    /// Every completion counts towards what the endpoint did that second; only measured ones
    /// towards its latency, as in the phase's percentiles (a warmup request is often a cold
    /// one). `current`: the completion belongs to the phase or segment under way, so it
    /// counts in the recent view too.
    pub fn record(&mut self, c: &Completion, current: bool) {
        match c.error {
            None => {
                self.ok += 1;
                self.samples += c.batch_size as u64;
                if c.measured {
                    let v = us(c.done - c.intended);
                    self.hist.saturating_record(v);
                    if current {
                        self.recent_hist.saturating_record(v);
                    }
                }
            }
            Some(_) => self.errors += 1,
        }
    }

    /// A new phase or segment (or a reset): the recent view starts empty.
    pub fn restart_recent(&mut self) {
        self.recent_hist.reset();
        self.window.clear();
    }

    pub fn event(&mut self, now: Instant, text: impl Into<String>) {
        self.entries.push(TimelineEntry::Event {
            t_s: round3(now.saturating_duration_since(self.start).as_secs_f64()),
            event: text.into(),
        });
    }

    /// Closes the current second if it is over. Called on every engine tick.
    pub fn roll(&mut self, now: Instant) {
        while now.saturating_duration_since(self.second_start) >= Duration::from_secs(1) {
            let point = self.current_point();
            self.second_start += Duration::from_secs(1);
            self.entries.push(point);
            self.hist.reset();
            let full = std::mem::replace(&mut self.recent_hist, view_histogram());
            self.window.push_back(full);
            while self.window.len() > self.window_len {
                self.window.pop_front();
            }
            self.ok = 0;
            self.samples = 0;
            self.errors = 0;
        }
    }

    /// The point of the second under way: the completions of the second that ends at `t_s`.
    fn current_point(&self) -> TimelineEntry {
        let t_s = (self.second_start + Duration::from_secs(1))
            .saturating_duration_since(self.start)
            .as_secs_f64();
        let has = !self.hist.is_empty();
        TimelineEntry::Point {
            t_s: round3(t_s),
            req_per_s: self.ok as f64,
            samples_per_s: self.samples as f64,
            p50_ms: has.then(|| ms(self.hist.value_at_quantile(0.5))),
            p99_ms: has.then(|| ms(self.hist.value_at_quantile(0.99))),
            errors: self.errors,
        }
    }

    /// Every entry so far, with the second under way as a last point when anything completed
    /// in it: an export must not lose the final partial second.
    pub fn complete_entries(&self) -> Vec<TimelineEntry> {
        let mut out = self.entries.clone();
        if self.ok + self.errors > 0 {
            out.push(self.current_point());
        }
        out
    }

    /// Scheduled latency over the last `window_len` seconds plus the current partial second.
    pub fn recent(&self) -> Histogram<u64> {
        let mut h = self.recent_hist.clone();
        for w in &self.window {
            // Same bounds and precision, so adding cannot fail.
            let _ = h.add(w);
        }
        h
    }

    pub fn points(&self) -> impl Iterator<Item = &TimelineEntry> {
        self.entries.iter()
    }
}

pub fn round3(x: f64) -> f64 {
    let scaled = x * 1000.0;
    // Past about 1e305 the scaling overflows to infinity, which JSON writes as null; a
    // number that large has no thousandths to round anyway.
    if scaled.is_finite() {
        scaled.round() / 1000.0
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_when_the_thirds_agree_and_not_when_a_backlog_grows() {
        let t0 = Instant::now();
        let fill = |lat: &dyn Fn(usize) -> u64, n: usize| {
            let mut p = ProbeSamples::default();
            for i in 0..n {
                // 100 a second, latencies repeating a 1..=100 ms cycle.
                p.push(
                    t0 + Duration::from_millis(10 * i as u64),
                    Duration::from_millis(lat(i)),
                );
            }
            p
        };
        let steady = fill(&|i| (i % 100) as u64 + 1, 3000);
        assert!(steady.stable(300, 0.1, false));
        assert!(!steady.stable(5000, 0.1, false), "fewer than the minimum");
        // A backlog: every request waits a little longer than the one before.
        let growing = fill(&|i| 10 + i as u64 / 10, 3000);
        assert!(!growing.stable(300, 0.1, false));
        assert!(growing.stable(300, 0.1, true), "its throughput is steady");
        // 239 requests whatever the minimum: each third's p99 would be its largest sample.
        let short = fill(&|i| (i % 100) as u64 + 1, 239);
        assert!(
            !short.stable(200, 0.5, false),
            "a p99 of 80 samples is their maximum"
        );
        assert!(
            !short.stable(200, 0.5, true),
            "a ceiling measures 1,000 at least"
        );
        let ceiling = fill(&|i| (i % 100) as u64 + 1, 1000);
        assert!(ceiling.stable(200, 0.5, true), "throughput needs no tail");
    }

    #[test]
    fn rounding_to_thousandths_keeps_numbers_too_large_to_scale() {
        assert_eq!(round3(1.23456), 1.235);
        assert_eq!(round3(1e308), 1e308);
        assert!(round3(f64::MAX).is_finite());
    }

    fn completion(start: Instant, intended_ms: u64, sent_ms: u64, done_ms: u64) -> Completion {
        Completion {
            intended: start + Duration::from_millis(intended_ms),
            sent: start + Duration::from_millis(sent_ms),
            done: start + Duration::from_millis(done_ms),
            batch_size: 2,
            error: None,
            said: None,
            variant: None,
            tokenize: None,
            server_time: None,
            measured: true,
            tokens: None,
        }
    }

    #[test]
    fn three_latencies_are_kept_apart() {
        let t0 = Instant::now();
        let mut r = PhaseRecorder::default();
        r.record(&completion(t0, 0, 30, 40)); // waited 30 ms for a slot, served in 10 ms
        let s = LatencySummary::of(&r.scheduled);
        assert!((s.p50 - 40.0).abs() < 0.1);
        assert!((LatencySummary::of(&r.service).p50 - 10.0).abs() < 0.1);
        assert!((LatencySummary::of(&r.dispatch_delay).p50 - 30.0).abs() < 0.1);
    }

    #[test]
    fn throughput_counts_the_measured_interval_without_pauses() {
        let t0 = Instant::now();
        let mut r = PhaseRecorder::default();
        for i in 0..10 {
            r.record(&completion(t0, i * 100, i * 100, i * 100 + 100));
        }
        assert!((r.req_per_s() - 10.0).abs() < 1e-9);
        assert!((r.samples_per_s() - 20.0).abs() < 1e-9);
        r.add_paused(Duration::from_millis(500));
        assert!((r.req_per_s() - 20.0).abs() < 1e-9);
    }

    #[test]
    fn throughput_never_counts_warmup_and_ends_where_the_pipeline_or_schedule_does() {
        let t0 = Instant::now();
        let mut r = PhaseRecorder::default();
        // A warmup request finishing inside the interval counts nowhere.
        let mut w = completion(t0, 0, 0, 150);
        w.measured = false;
        r.record(&w);
        for i in 1..=9 {
            r.record(&completion(t0, 100 + (i - 1) * 100, 100, 100 + i * 100));
        }
        assert!(
            (r.req_per_s() - 9.0 / 0.9).abs() < 1e-9,
            "{}",
            r.req_per_s()
        );
        assert_eq!(r.completed(), 9);
        assert_eq!(r.scheduled.len(), 9, "warmup latencies stay out");
        // A closed loop's interval ends where its pipeline did.
        r.pipeline_end = Some(t0 + Duration::from_secs(1));
        assert!((r.req_per_s() - 10.0).abs() < 1e-9);
        // An open loop's at the later of its schedule's end and its last completion.
        r.pipeline_end = None;
        r.schedule_end = Some(t0 + Duration::from_millis(1900));
        assert!((r.req_per_s() - 5.0).abs() < 1e-9);
        r.schedule_end = Some(t0 + Duration::from_millis(500));
        assert!((r.req_per_s() - 10.0).abs() < 1e-9);
    }

    #[test]
    fn errors_are_counted_by_kind_and_not_in_latency() {
        let t0 = Instant::now();
        let mut r = PhaseRecorder::default();
        let mut c = completion(t0, 0, 0, 5);
        c.error = Some("ThrottlingException".into());
        r.record(&c);
        r.record(&c);
        assert_eq!(r.errors["ThrottlingException"], 2);
        assert_eq!(r.ok, 0);
        assert!(r.scheduled.is_empty());
        assert_eq!(r.completed(), 2);
    }

    #[test]
    fn timeline_rolls_one_point_per_second() {
        let t0 = Instant::now();
        let mut tl = Timeline::new(t0, 10);
        tl.record(&completion(t0, 0, 0, 20), true);
        tl.record(&completion(t0, 10, 10, 30), true);
        tl.roll(t0 + Duration::from_millis(2_500));
        assert_eq!(tl.entries.len(), 2);
        match &tl.entries[0] {
            TimelineEntry::Point {
                req_per_s,
                samples_per_s,
                p50_ms,
                ..
            } => {
                assert_eq!(*req_per_s, 2.0);
                assert_eq!(*samples_per_s, 4.0);
                assert!(p50_ms.unwrap() >= 19.0);
            }
            e @ TimelineEntry::Event { .. } => panic!("unexpected {e:?}"),
        }
        assert!(matches!(
            tl.entries[1],
            TimelineEntry::Point { p50_ms: None, .. }
        ));
        assert_eq!(tl.recent().len(), 2);
        // The second under way is not lost when the run ends inside it.
        tl.record(&completion(t0, 2_100, 2_100, 2_200), true);
        let all = tl.complete_entries();
        assert_eq!(all.len(), 3);
        assert!(
            matches!(all[2], TimelineEntry::Point { t_s, req_per_s, .. } if t_s == 3.0 && req_per_s == 1.0)
        );
    }
}
