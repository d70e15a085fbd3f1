//! `report --merge`: several hosts ran the same workload against one endpoint at the same
//! time (for example a Kubernetes Indexed Job); their exports add up to one. Counts and
//! histograms add exactly, so the combined percentiles are those of one histogram holding
//! every host's samples; rates add because the hosts loaded the endpoint together.

use encbench_core::export::{Export, rfc3339};
use encbench_core::results::tail_ratio;
use encbench_core::results::{PhaseResult, decode_histogram, derive, encode_histogram};
use encbench_core::stats::{LatencySummary, TimelineEntry, phase_histogram, round3};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::SystemTime;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Config fields that make two runs the same workload. The seed is not one of them: hosts
/// of their own should draw different arrivals (the shards of one run share one: `shards`).
const WORKLOAD_KEYS: [&str; 15] = [
    "target",
    "n",
    "warmup",
    "duration_s",
    "batch_size",
    "sweep_batch",
    "batch_sizes",
    "concurrency",
    "sweep_concurrency",
    "concurrency_levels",
    "request_rate",
    "burstiness",
    "pad_to_max",
    "max_len",
    "texts",
];

fn short(v: &Value) -> String {
    let s = v.to_string();
    encbench_core::text::truncate(&s, 60)
}

/// Why `b` is not the workload of `a`, if it is not.
fn mismatch(a: &Export, b: &Export, sharded: bool) -> Option<String> {
    for k in WORKLOAD_KEYS {
        let (x, y) = (&a.config[k], &b.config[k]);
        if x != y {
            return Some(format!(
                "config.{k} is {} here but {} there",
                short(y),
                short(x)
            ));
        }
    }
    if a.phases.len() != b.phases.len() {
        return Some(format!(
            "{} here but {} there",
            encbench_core::text::count(b.phases.len(), "phase"),
            a.phases.len()
        ));
    }
    for (i, (p, q)) in a.phases.iter().zip(&b.phases).enumerate() {
        let shape = |p: &PhaseResult| {
            (
                p.kind,
                p.batch_size,
                // Each shard ran its share of the concurrency.
                (!sharded).then_some(p.concurrency),
                p.request_rate.map(f64::to_bits),
                p.burstiness.map(f64::to_bits),
                p.pad_to_max,
                p.max_len,
            )
        };
        if shape(p) != shape(q) {
            return Some(format!(
                "phase {} is {:?} b={} c={} here but {:?} b={} c={} there",
                i + 1,
                q.kind,
                q.batch_size,
                q.concurrency,
                p.kind,
                p.batch_size,
                p.concurrency
            ));
        }
    }
    None
}

fn sum_hist(
    sources: &[(String, Export)],
    i: usize,
    field: &str,
    get: fn(&PhaseResult) -> Option<&String>,
) -> Result<hdrhistogram::Histogram<u64>, String> {
    let mut h = phase_histogram();
    for (src, e) in sources {
        let b64 = get(&e.phases[i]).ok_or_else(|| {
            format!(
                "{src}: phase {} has no {field} (written by an older version)",
                i + 1
            )
        })?;
        let part =
            decode_histogram(b64).map_err(|e| format!("{src}: phase {} {field}: {e}", i + 1))?;
        h.add(&part)
            .map_err(|e| format!("{src}: phase {} {field}: {e:?}", i + 1))?;
    }
    Ok(h)
}

/// The larger of two lags, either of which may be absent.
fn worst(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(f64::max(a, b)),
        (a, b) => a.or(b),
    }
}

fn merge_phase(sources: &[(String, Export)], i: usize) -> Result<PhaseResult, String> {
    let latency = sum_hist(sources, i, "histogram_hdr_b64", |p| {
        Some(&p.histogram_hdr_b64)
    })?;
    let service = sum_hist(sources, i, "service_hdr_b64", |p| {
        p.service_hdr_b64.as_ref()
    })?;
    let dispatch = sum_hist(sources, i, "dispatch_delay_hdr_b64", |p| {
        p.dispatch_delay_hdr_b64.as_ref()
    })?;
    let mut m = sources[0].1.phases[i].clone();
    let (mut errors, mut variants) = (BTreeMap::new(), BTreeMap::new());
    let (mut n, mut ok, mut sent, mut rps, mut sps, mut dur) = (0, 0, 0, 0.0, 0.0, 0.0f64);
    // The hosts' schedules add up like their throughputs; behind is the worst of them.
    let (mut unsent, mut offered, mut lag, mut queue_lag) = (0, None::<f64>, None, None);
    // Each host's rate was its own; together they offered the sum (one closed loop: all).
    let mut request_rate = m.request_rate.map(|_| 0.0);
    for (src, e) in sources {
        let p = &e.phases[i];
        // Checked: a sum past u64 or f64 would be written as a wrapped count or a null rate.
        let too_big = |what: &str| format!("{src}: phase {}: {what} too large to add", i + 1);
        let count = |into: &mut u64, v: u64, what: &str| {
            *into = into.checked_add(v).ok_or_else(|| too_big(what))?;
            Ok::<_, String>(())
        };
        let rate = |into: &mut f64, v: f64, what: &str| {
            *into = Some(*into + v)
                .filter(|s| s.is_finite())
                .ok_or_else(|| too_big(what))?;
            Ok::<_, String>(())
        };
        count(&mut n, p.n, "n")?;
        count(&mut sent, p.sent, "sent")?;
        count(&mut unsent, p.unsent, "unsent")?;
        count(&mut ok, p.ok, "ok")?;
        if let (Some(sum), Some(r)) = (request_rate.as_mut(), p.request_rate) {
            rate(sum, r, "request_rate")?;
        }
        if let Some(o) = p.offered_per_s {
            let mut sum = offered.unwrap_or(0.0);
            rate(&mut sum, o, "offered_per_s")?;
            offered = Some(sum);
        }
        lag = worst(lag, p.max_lag_ms);
        queue_lag = worst(queue_lag, p.queue_lag_ms);
        rate(&mut rps, p.req_per_s, "req_per_s")?;
        rate(&mut sps, p.samples_per_s, "samples_per_s")?;
        dur = dur.max(p.duration_s);
        for (into, from, what) in [
            (&mut errors, &p.errors, "errors"),
            (&mut variants, &p.variants, "variants"),
        ] {
            for (k, v) in from {
                count(into.entry(k.clone()).or_default(), *v, what)?;
            }
        }
    }
    let l = LatencySummary::of(&latency);
    if m.shard.take().is_some() {
        m.concurrency = sources.iter().map(|(_, e)| e.phases[i].concurrency).sum();
    }
    m.target = None;
    m.n = n;
    m.sent = sent;
    m.unsent = unsent;
    m.request_rate = request_rate.map(round3);
    m.offered_per_s = offered.map(round3);
    m.max_lag_ms = lag;
    m.queue_lag_ms = queue_lag;
    m.overloaded = sources.iter().any(|(_, e)| e.phases[i].overloaded);
    m.ok = ok;
    m.errors = errors;
    m.variants = variants;
    m.latency_ms = l;
    m.service_ms = LatencySummary::of(&service);
    m.dispatch_delay_ms = LatencySummary::of(&dispatch);
    // Tokenization has no histogram, and a server's statistics counted every host's requests
    // in each host's diff: neither adds up, nor does a metrics endpoint's.
    m.tokenize_ms = None;
    m.input_tokens = encbench_core::lengths::InputTokens::pooled(
        sources.iter().map(|(_, e)| &e.phases[i].input_tokens),
    );
    m.client_cpu_ms_per_request = encbench_core::results::ClientCpu::pooled(
        sources
            .iter()
            .filter_map(|(_, e)| e.phases[i].client_cpu_ms_per_request.as_ref()),
    );
    m.server = None;
    m.server_metrics = None;
    m.cloudwatch = None;
    m.p99_over_p50 = tail_ratio(l.p50, l.p99);
    m.duration_s = round3(dur);
    m.req_per_s = round3(rps);
    m.samples_per_s = round3(sps);
    m.histogram_hdr_b64 = encode_histogram(&latency);
    m.service_hdr_b64 = Some(encode_histogram(&service));
    m.dispatch_delay_hdr_b64 = Some(encode_histogram(&dispatch));
    // The SLO is judged afresh on the merged histogram: the hosts' verdicts do not add up.
    (m.slo_met, m.slo_missed) = (None, None);
    m.goodput_per_s = None;
    m.goodput_share = None;
    let slo = slo_of(&sources[0].1);
    m.slices = merge_slices(sources, i, &slo)?;
    m.endpoint_lost = merge_spans(sources, i);
    m.judge(&slo, &latency);
    m.repetitions = merge_repetitions(sources, i)?;
    Ok(m)
}

/// The spans in which a host could not reach the endpoint, each on that host's clock: the
/// hosts' together, one list.
fn merge_spans(sources: &[(String, Export)], i: usize) -> Vec<encbench_core::reach::EndpointLost> {
    encbench_core::reach::pooled(sources.iter().flat_map(|(_, e)| &e.phases[i].endpoint_lost))
}

/// `--slice`: the hosts' k-th slices add up (each host's slices start at its own first
/// measured request: with a common start, within a few arrivals of each other).
fn merge_slices(
    sources: &[(String, Export)],
    i: usize,
    slo: &encbench_core::slo::Slo,
) -> Result<Vec<encbench_core::slices::SliceResult>, String> {
    let most = sources.iter().map(|(_, e)| e.phases[i].slices.len()).max();
    (0..most.unwrap_or(0))
        .map(|k| {
            let mut parts = sources
                .iter()
                .filter_map(|(_, e)| e.phases[i].slices.get(k));
            let first = parts
                .next()
                .expect("the longest source has slice k")
                .clone();
            parts.try_fold(first, |a, b| {
                encbench_core::slices::SliceResult::merged(&a, b, slo)
                    .map_err(|e| format!("phase {}: slice {}: {e}", i + 1, k + 1))
            })
        })
        .collect()
}

/// `--repeat`: each host's k-th repetition of a phase adds up with the others' k-th, as the
/// hosts ran it together.
fn merge_repetitions(sources: &[(String, Export)], i: usize) -> Result<Vec<PhaseResult>, String> {
    let k = sources[0].1.phases[i].repetitions.len();
    if let Some((src, e)) = sources
        .iter()
        .find(|(_, e)| e.phases[i].repetitions.len() != k)
    {
        return Err(format!(
            "{src}: phase {} has {} here but {k} in {}",
            i + 1,
            encbench_core::text::count(e.phases[i].repetitions.len(), "repetition"),
            sources[0].0
        ));
    }
    (0..k)
        .map(|r| {
            let each: Vec<(String, Export)> = sources
                .iter()
                .map(|(src, e)| {
                    let phase = e.phases[i].repetitions[r].clone();
                    (
                        src.clone(),
                        Export {
                            phases: vec![phase],
                            timeline: vec![],
                            ..e.clone()
                        },
                    )
                })
                .collect();
            merge_phase(&each, 0)
        })
        .collect()
}

/// Derived figures of each repetition (efficiency against the same repetition's batch 1,
/// cost), and the spread across them, once the repetitions are merged.
fn derive_repetitions(phases: &mut [PhaseResult], price: Option<f64>) {
    let most = phases
        .iter()
        .map(|p| p.repetitions.len())
        .max()
        .unwrap_or(0);
    for r in 0..most {
        let at: Vec<usize> = (0..phases.len())
            .filter(|&i| phases[i].repetitions.len() > r)
            .collect();
        let mut reps: Vec<PhaseResult> = at
            .iter()
            .map(|&i| phases[i].repetitions[r].clone())
            .collect();
        derive(&mut reps, price);
        for (&i, rep) in at.iter().zip(reps) {
            phases[i].repetitions[r] = rep;
        }
    }
    for p in phases.iter_mut().filter(|p| !p.repetitions.is_empty()) {
        p.across = Some(encbench_core::results::repeat::Across::of(&p.repetitions));
    }
}

/// The SLO an export's run was judged against (`config.slo`); empty when none.
fn slo_of(e: &Export) -> encbench_core::slo::Slo {
    encbench_core::slo::Slo {
        objectives: e.config["slo"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o.as_str()?.parse().ok())
            .collect(),
    }
}

fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

/// Per-second points of every host on one clock (each export's start time), rates and error
/// counts summed; percentiles of a second cannot be combined without its histogram, so the
/// merged points carry none.
fn merge_timeline(
    sources: &[(String, Export)],
    start: OffsetDateTime,
) -> Result<Vec<TimelineEntry>, String> {
    let mut points: BTreeMap<i64, (f64, f64, u64)> = BTreeMap::new();
    let mut events = Vec::new();
    for (src, e) in sources {
        let offset = parse_time(&e.started_at).map_or(0.0, |t| (t - start).as_seconds_f64());
        for entry in &e.timeline {
            match entry {
                TimelineEntry::Point {
                    t_s,
                    req_per_s,
                    samples_per_s,
                    errors,
                    ..
                } => {
                    let p = points.entry((offset + t_s).round() as i64).or_default();
                    let sum = (
                        p.0 + req_per_s,
                        p.1 + samples_per_s,
                        p.2.checked_add(*errors),
                    );
                    match sum {
                        (r, s, Some(err)) if r.is_finite() && s.is_finite() => *p = (r, s, err),
                        _ => {
                            return Err(format!(
                                "{src}: timeline point at {t_s} s too large to add"
                            ));
                        }
                    }
                }
                TimelineEntry::Event { t_s, event } => events.push(TimelineEntry::Event {
                    t_s: round3(offset + t_s),
                    event: format!("[{src}] {event}"),
                }),
            }
        }
    }
    let mut out: Vec<TimelineEntry> = points
        .into_iter()
        .map(|(t, (r, s, err))| TimelineEntry::Point {
            t_s: t as f64,
            req_per_s: round3(r),
            samples_per_s: round3(s),
            p50_ms: None,
            p99_ms: None,
            errors: err,
        })
        .collect();
    out.extend(events);
    let t = |e: &TimelineEntry| match e {
        TimelineEntry::Point { t_s, .. } | TimelineEntry::Event { t_s, .. } => *t_s,
    };
    out.sort_by(|a, b| t(a).total_cmp(&t(b)));
    Ok(out)
}

/// Adds `sources` (name, export) into one export, or says why they are not one workload.
pub fn merge(sources: &[(String, Export)]) -> Result<Export, String> {
    let (first_src, first) = sources.first().ok_or("nothing to merge")?;
    for (src, e) in sources {
        if e.compare.is_some() {
            return Err(format!(
                "{src} is a compare export; merge the exports of plain runs"
            ));
        }
    }
    let sharded = super::shards::check(sources)?.is_some();
    for (src, e) in &sources[1..] {
        if let Some(why) = mismatch(first, e, sharded) {
            return Err(format!(
                "{src} is not the workload of {first_src}: {why}; merge only exports of one workload"
            ));
        }
    }
    let mut phases = (0..first.phases.len())
        .map(|i| merge_phase(sources, i))
        .collect::<Result<Vec<_>, _>>()?;
    derive(&mut phases, first.config["price_per_hour_usd"].as_f64());
    derive_repetitions(&mut phases, first.config["price_per_hour_usd"].as_f64());

    let times: Vec<(OffsetDateTime, OffsetDateTime)> = sources
        .iter()
        .filter_map(|(_, e)| Some((parse_time(&e.started_at)?, parse_time(&e.ended_at)?)))
        .collect();
    let start = times.iter().map(|t| t.0).min();
    let end = times.iter().map(|t| t.1).max();
    let stamp = |t: Option<OffsetDateTime>, fallback: &str| {
        t.map_or_else(|| fallback.to_string(), |t| rfc3339(SystemTime::from(t)))
    };
    // The worst host's verdicts: a deployment that went wrong under one host's load did.
    let accuracy = sources
        .iter()
        .filter_map(|(_, e)| e.accuracy.clone())
        .min_by_key(|a| a.passed.saturating_mul(1000) / a.total.max(1));
    let mut config = first.config.clone();
    // As each phase's: the rate the hosts offered together, which the heading quotes.
    let rates: Option<Vec<f64>> = sources
        .iter()
        .map(|(_, e)| e.config["request_rate"].as_f64())
        .collect();
    // The shards' configs already give the whole run's rate.
    if let Some(r) = rates.filter(|_| !sharded) {
        config["request_rate"] = json!(round3(r.iter().sum()));
    }
    if let Some(c) = config.as_object_mut().filter(|_| sharded) {
        c.remove("shard");
    }
    config["merged_from"] = Value::Array(
        sources
            .iter()
            .map(|(src, e)| {
                json!({
                    "source": src,
                    "started_at": e.started_at,
                    "ended_at": e.ended_at,
                    "seed": e.config["seed"],
                    "shard": e.config["shard"],
                    // Saturating: a total for the reader, not worth refusing a merge over.
                    "n": e.phases.iter().fold(0u64, |a, p| a.saturating_add(p.n)),
                    "accuracy": e.accuracy.as_ref().map(|a| format!("{}/{}", a.passed, a.total)),
                })
            })
            .collect(),
    );
    let errors: Vec<String> = sources
        .iter()
        .filter_map(|(src, e)| e.error.as_ref().map(|x| format!("{src}: {x}")))
        .collect();
    Ok(Export {
        schema_version: first.schema_version,
        tool: first.tool.clone(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        started_at: stamp(start, &first.started_at),
        ended_at: stamp(end, &first.ended_at),
        config,
        phases,
        // A search's probes ran on each host at its share of the rate: there is no merged
        // capacity to state.
        capacity: vec![],
        accuracy,
        timeline: match start {
            Some(s) => merge_timeline(sources, s)?,
            None => vec![],
        },
        stopped_early: sources.iter().any(|(_, e)| e.stopped_early),
        error: (!errors.is_empty()).then(|| errors.join("; ")),
        notices: sources
            .iter()
            .flat_map(|(src, e)| e.notices.iter().map(move |n| format!("{src}: {n}")))
            .collect(),
        // Each host's thresholds were judged on its own phases, not on the merged ones.
        fail_on: vec![],
        compare: None,
        tune: None,
    })
}
