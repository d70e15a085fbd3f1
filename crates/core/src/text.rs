//! Figures and names as text, for every front-end alike: the tables, the live screen, the
//! progress lines and the timeline's events all describe a rate or a pace the same way.

use crate::arrival::Pace;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// `n` and the noun that agrees with it: "1 request", "3 requests". Every count said in a
/// sentence goes through here, so that none reads "1 steady requests".
pub fn count<N: Copy + std::fmt::Display + PartialEq + From<u8>>(n: N, noun: &str) -> String {
    if n == N::from(1) {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// A count with its thousands grouped: 38,200.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A figure with `prec` decimals, or `-` when there is none (or it is not finite).
pub fn num(v: Option<f64>, prec: usize) -> String {
    v.filter(|x| x.is_finite())
        .map_or("-".into(), |x| format!("{x:.prec$}"))
}

/// Milliseconds in few characters, for narrow panels: 0.42, 25.8, 103, 3230. Always
/// milliseconds, so a panel that says "ms" once never shows a figure in another unit.
pub fn ms(v: f64) -> String {
    sig3(v)
}

/// About three significant figures, for rates and counts in a sentence: 0.42, 53.1, 425.
pub fn sig3(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// A schedule lag: "85 ms", "2.6 s".
pub fn lag(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{:.0} ms", s * 1000.0)
    } else {
        format!("{s:.1} s")
    }
}

/// An open loop's backlog: requests due and not sent ("backlog 512"), requests queued at the
/// server beyond what its latency explains ("backlog 45 at the server"), or both ("backlog
/// 557, 45 at the server").
pub fn backlog(unsent: u64, queued: u64) -> String {
    match (unsent, queued) {
        (u, 0) => format!("backlog {u}"),
        (0, q) => format!("backlog {q} at the server"),
        (u, q) => format!("backlog {}, {q} at the server", u + q),
    }
}

/// How far an open loop is behind its schedule, or `None` when it keeps up (less than 100 ms
/// behind): "OVERLOADED:
/// offered 200.0, achieved 98.1 req/s, backlog 512, lag 2.6 s". `backlog` as `backlog` words it.
pub fn behind(
    offered: f64,
    achieved: f64,
    backlog: &str,
    lag_by: Duration,
    overloaded: bool,
) -> Option<String> {
    // A request or two due a few milliseconds ago is every open loop's normal state.
    (lag_by >= Duration::from_millis(100) || overloaded).then(|| {
        format!(
            "{}: offered {}, achieved {} req/s, {backlog}, lag {}",
            if overloaded { "OVERLOADED" } else { "behind" },
            rate(Some(offered)),
            rate(Some(achieved)),
            lag(lag_by)
        )
    })
}

/// A request rate as the timeline and the tables write it: `inf` is a closed loop.
pub fn rate(r: Option<f64>) -> String {
    match r {
        None => "inf".into(),
        // Slow rates keep their digits: 0.002 is not 0.0.
        Some(r) if r > 0.0 && r < 0.1 => format!("{r:.4}"),
        Some(r) => format!("{r:.1}"),
    }
}

/// A request rate in at most 5 characters, for narrow panels.
pub fn rate_short(r: Option<f64>) -> String {
    match r {
        None => "inf".into(),
        Some(r) if r < 100.0 => format!("{r:.1}"),
        Some(r) => format!("{r:.0}"),
    }
}

/// Burstiness as given on the command line: `inf` is a fixed interval.
pub fn burstiness(b: f64) -> String {
    if b.is_finite() {
        format!("{b}")
    } else {
        "inf".into()
    }
}

/// The arrival process a burstiness gives (Gamma-distributed gaps of that shape).
pub fn arrivals(burstiness: f64) -> String {
    if burstiness.is_infinite() {
        "fixed interval".into()
    } else if burstiness == 1.0 {
        "Poisson".into()
    } else {
        format!("burstiness {burstiness}")
    }
}

/// The pace in a few words: "open loop 20.0 req/s Poisson", "closed loop (rate inf)".
pub fn pace(p: &Pace) -> String {
    match p.rate_per_s {
        None => "closed loop (rate inf)".into(),
        Some(r) => format!(
            "open loop {} req/s {}",
            rate(Some(r)),
            arrivals(p.burstiness)
        ),
    }
}

/// The pace in a table cell: "closed", "200.0 Poisson", "50.0 fixed", "20.0 burst 0.25" (b=
/// names the batch size in every table).
pub fn pace_short(p: &Pace) -> String {
    match p.rate_per_s {
        None => "closed".into(),
        Some(r) if p.burstiness.is_infinite() => format!("{} fixed", rate(Some(r))),
        Some(r) if p.burstiness == 1.0 => format!("{} Poisson", rate(Some(r))),
        Some(r) => format!("{} burst {}", rate(Some(r)), p.burstiness),
    }
}

/// The pace with the concurrency cap and what it means for the latency figures. `hosts`
/// runs merged into one (`report --merge`) offered the rate together, each under its own
/// cap: the cap is said per host, beside the hosts' count.
pub fn pace_at(p: &Pace, concurrency: usize, hosts: usize) -> String {
    let cap = if hosts > 1 {
        format!("{concurrency} per host × {hosts} hosts")
    } else {
        concurrency.to_string()
    };
    match p.rate_per_s {
        None => format!("closed loop at concurrency {cap} (rate inf: latency is service time)"),
        Some(r) => format!(
            "open loop {} req/s{}, {}, concurrency cap {cap}",
            rate(Some(r)),
            if hosts > 1 { " in all" } else { "" },
            arrivals(p.burstiness)
        ),
    }
}

/// Hours, minutes and seconds: 01:02:03.
pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// At most `max_chars` characters, the last one an ellipsis when anything was cut.
pub fn truncate(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max_chars.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// How much of what a server said is kept: enough for a validation message, not a page.
pub const WORDS_CHARS: usize = 200;

/// Text a server sent, ready to show and store in one line: JSON as compact as it goes (most
/// servers indent theirs, and more of the reason then fits), whitespace runs as one space,
/// scrubbed (secrets, URL passwords, control characters), cut to `WORDS_CHARS`. `None` when
/// it said nothing.
pub fn server_words(text: &str) -> Option<String> {
    let compact = compact_json(text);
    let text = compact.as_deref().unwrap_or(text);
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!one_line.is_empty()).then(|| truncate(&crate::scrub::text(&one_line), WORDS_CHARS))
}

/// What a 404 or 405 on the invocation route means, and what to do: the words users need
/// where the status alone would send them after labels or payloads.
pub fn no_route(route: &str) -> String {
    format!(
        "{route} is not a route of this server: name its API with --engine (hf, triton, vllm, \
         openai, tei, infinity, jina), its model with --model, or the route with --path"
    )
}

/// Whether an error kind says the route does not exist.
pub fn is_no_route(kind: &str) -> bool {
    matches!(kind, "HTTP 404" | "HTTP 405")
}

/// JSON without the whitespace between its tokens, its keys in the server's order (`FastAPI`
/// puts `msg` before the `input` it refused, and the reason must come first); `None` when
/// `text` is not JSON.
fn compact_json(text: &str) -> Option<String> {
    serde_json::from_str::<serde::de::IgnoredAny>(text).ok()?;
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    Some(out)
}

/// Counts by name in one line: `ModelError(500) 10, ThrottlingException 3`.
pub fn counts(by_name: &BTreeMap<String, u64>) -> String {
    by_name
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An endpoint and its routing (container, component, model, variant) as the screen, the
/// tables and errors name it: `sagemaker:nli-ep component=ic-1`.
pub fn sagemaker_target(endpoint: &str, routing: [Option<&str>; 4]) -> String {
    let mut s = format!("sagemaker:{endpoint}");
    for (label, v) in ["container", "component", "model", "variant"]
        .into_iter()
        .zip(routing)
    {
        if let Some(v) = v {
            let _ = write!(s, " {label}={v}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_and_its_noun_agree() {
        assert_eq!(count(1u64, "steady request"), "1 steady request");
        assert_eq!(count(0usize, "attempt"), "0 attempts");
        assert_eq!(count(3u64, "phase"), "3 phases");
    }

    #[test]
    fn figures_stay_short_and_say_what_is_missing() {
        assert_eq!(ms(0.4236), "0.42");
        assert_eq!(ms(25.84), "25.8");
        assert_eq!(ms(102.86), "103");
        assert_eq!(ms(1611.0), "1611", "milliseconds, never a second unit");
        assert_eq!(rate(Some(0.002)), "0.0020");
        assert_eq!(lag(Duration::from_millis(85)), "85 ms");
        assert_eq!(lag(Duration::from_millis(2600)), "2.6 s");
        assert_eq!(num(None, 2), "-");
        assert_eq!(num(Some(f64::NAN), 2), "-");
        assert_eq!(num(Some(1.005), 1), "1.0");
        assert_eq!(rate_short(Some(1234.4)), "1234");
        assert_eq!(rate(Some(1234.4)), "1234.4");
        assert_eq!(elapsed(Duration::from_secs(3723)), "01:02:03");
    }

    #[test]
    fn truncation_counts_characters_not_bytes() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abcd", 4), "abcd");
        assert_eq!(truncate("ééééé", 3), "éé…");
    }

    #[test]
    fn a_servers_words_come_in_one_line_compact_escaped_and_cut() {
        assert_eq!(
            server_words("{\n  \"detail\": [\n    {\"msg\": \"bad\"}\n  ]\n}").as_deref(),
            Some(r#"{"detail":[{"msg":"bad"}]}"#)
        );
        // The server's order, not the alphabet's: the reason before the input it refused.
        assert_eq!(
            server_words(r#"{"msg": "Input should be a valid string", "input": [1, 2]}"#)
                .as_deref(),
            Some(r#"{"msg":"Input should be a valid string","input":[1,2]}"#)
        );
        assert_eq!(
            server_words(r#"{"a": "x \" y\\", "b" : 1}"#).as_deref(),
            Some(r#"{"a":"x \" y\\","b":1}"#)
        );
        assert_eq!(
            server_words("not\n\tjson  at all").as_deref(),
            Some("not json at all")
        );
        assert_eq!(
            server_words("red\u{1b}[31m").as_deref(),
            Some("red\\u{1b}[31m")
        );
        assert_eq!(server_words(" \n "), None);
        assert_eq!(
            server_words(&"x".repeat(500)).unwrap().chars().count(),
            WORDS_CHARS
        );
    }

    #[test]
    fn paces_in_words() {
        let p = |r, b| Pace {
            rate_per_s: r,
            burstiness: b,
        };
        assert_eq!(pace(&p(Some(20.0), 1.0)), "open loop 20.0 req/s Poisson");
        assert_eq!(pace(&p(None, 1.0)), "closed loop (rate inf)");
        assert_eq!(
            pace_at(&p(Some(5.0), f64::INFINITY), 4, 1),
            "open loop 5.0 req/s, fixed interval, concurrency cap 4"
        );
        assert_eq!(
            pace_at(&p(Some(5.0), 0.25), 1, 1),
            "open loop 5.0 req/s, burstiness 0.25, concurrency cap 1"
        );
        assert!(pace_at(&p(None, 1.0), 8, 1).starts_with("closed loop at concurrency 8"));
        // Two hosts merged: their rates summed, each under its own cap.
        assert_eq!(
            pace_at(&p(Some(40.0), 1.0), 4, 2),
            "open loop 40.0 req/s in all, Poisson, concurrency cap 4 per host × 2 hosts"
        );
        assert!(
            pace_at(&p(None, 1.0), 4, 2)
                .starts_with("closed loop at concurrency 4 per host × 2 hosts")
        );
    }
}
