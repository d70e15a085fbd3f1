//! What one flag's value may be: parsed, and checked against the range a run can honour.
//! A refusal is the text clap prints after the flag's name.

/// A request rate; `None` is `inf` (closed loop).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate(pub Option<f64>);

pub(super) fn parse_rate(s: &str) -> Result<Rate, String> {
    if s.eq_ignore_ascii_case("inf") {
        return Ok(Rate(None));
    }
    let r = s
        .parse::<f64>()
        .map_err(|_| "must be a number of requests per second, or inf".to_string())?;
    encbench_core::arrival::check_rate(r).map(|r| Rate(Some(r)))
}

pub(super) fn parse_burstiness(s: &str) -> Result<f64, String> {
    if s.eq_ignore_ascii_case("inf") {
        return Ok(f64::INFINITY);
    }
    let b = s
        .parse::<f64>()
        .map_err(|_| "must be a number, or inf (1.0 is Poisson)".to_string())?;
    encbench_core::arrival::check_burstiness(b)
}

/// A finite number that `ok` accepts, or the error `why`.
fn number(s: &str, ok: fn(f64) -> bool, why: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && ok(v) => Ok(v),
        _ => Err(why.into()),
    }
}

/// The longest time any flag can ask for. Beyond it a time is a typo, and far beyond it
/// (1e20 s) no clock can represent the deadline.
pub const MAX_SECS: f64 = 31.0 * 24.0 * 3600.0;

/// A time as `unit`s: a bare number is in that unit (what every time flag took before
/// units were accepted, so old command lines keep their meaning), anything else a
/// humantime duration ("1m30s", "250ms", "2h").
fn time_in(s: &str, unit: f64) -> Option<f64> {
    let s = s.trim();
    match s.parse::<f64>() {
        Ok(v) => v.is_finite().then_some(v),
        Err(_) => humantime::parse_duration(s)
            .ok()
            .map(|d| d.as_secs_f64() / unit),
    }
}

/// A time in seconds within `min..=31 days` (`min` itself allowed only when `zero_ok`).
fn secs(s: &str, zero_ok: bool) -> Result<f64, String> {
    let above = if zero_ok { ">= 0" } else { "> 0" };
    match time_in(s, 1.0) {
        Some(v) if (v > 0.0 || (zero_ok && v == 0.0)) && v <= MAX_SECS => Ok(v),
        _ => Err(format!(
            "must be a duration {above} and at most 31 days, such as 30s, 5m or 1.5 (seconds)"
        )),
    }
}

pub(super) fn positive_secs(s: &str) -> Result<f64, String> {
    secs(s, false)
}

/// `--ramp FROM..TO`.
pub(super) fn ramp_rates(s: &str) -> Result<(f64, f64), String> {
    encbench_core::ramp::parse_ramp(s)
}

/// `--slice`: at least a millisecond, as a slice needs requests to have percentiles.
pub(super) fn slice_secs(s: &str) -> Result<f64, String> {
    match time_in(s, 1.0) {
        Some(v) if (1e-3..=MAX_SECS).contains(&v) => Ok(v),
        _ => Err(
            "must be a duration of at least 1ms and at most 31 days, such as 10s or 500ms".into(),
        ),
    }
}

pub(super) fn non_negative_secs(s: &str) -> Result<f64, String> {
    secs(s, true)
}

/// Milliseconds of the reference endpoint's simulated service, stalls and outages.
pub(super) fn sim_ms(s: &str) -> Result<f64, String> {
    match time_in(s, 1e-3) {
        Some(v) if (0.0..=MAX_SECS * 1000.0).contains(&v) => Ok(v),
        _ => Err(
            "must be a duration >= 0 and at most 31 days, such as 250ms, 2s or 14.8 (milliseconds)"
                .into(),
        ),
    }
}

pub(super) fn positive(s: &str) -> Result<f64, String> {
    number(s, |v| v > 0.0, "must be a number > 0")
}

/// A batch efficiency threshold: samples/s per sample against batch 1's, which is 1 at batch
/// 1 itself. Above 1 batch 1 would be past its own knee; 0 would mark nothing.
pub(super) fn efficiency(s: &str) -> Result<f64, String> {
    number(
        s,
        |v| v > 0.0 && v <= 1.0,
        "must be a batch efficiency above 0 and at most 1 (0.8: past the knee when a batch size \
         gives under 80 % of batch 1's samples/s per sample)",
    )
}

pub(super) fn probability(s: &str) -> Result<f64, String> {
    number(
        s,
        |v| (0.0..=1.0).contains(&v),
        "must be a probability between 0 and 1",
    )
}

/// A whole number from `min` to `max`: counts, sizes and levels have ceilings because each
/// unit costs memory or a task, and a billion of them is a typo that would take the machine.
fn whole(s: &str, min: u64, max: u64) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(format!("must be a whole number from {min} to {max}")),
    }
}

/// Requests in a phase (or its warmup): at most a billion.
pub(super) fn count(s: &str) -> Result<u64, String> {
    whole(s, 1, 1_000_000_000)
}

pub(super) fn warmup_count(s: &str) -> Result<u64, String> {
    whole(s, 0, 1_000_000_000)
}

/// `--repeat`: each repetition is a whole phase (or search); past a thousand the interval
/// narrows by under 0.1 % of its width per repetition.
pub(super) fn repetitions(s: &str) -> Result<u32, String> {
    whole(s, 1, 1000).map(|v| v as u32)
}

/// `--replay-speed`: how many times faster than recorded; past 10000 a day of traffic is
/// under nine seconds, and a clock keeps no recorded gap apart.
pub(super) fn replay_speed(s: &str) -> Result<f64, String> {
    number(
        s,
        |v| v > 0.0 && v <= 10_000.0,
        "must be a number above 0 and at most 10000 (2 replays twice as fast, 0.5 at half speed)",
    )
}

/// `--replay-scale`: sends per record (a capture sampled at 20 % replays at 5).
pub(super) fn replay_scale(s: &str) -> Result<u32, String> {
    whole(s, 1, 10_000).map(|v| v as u32)
}

/// Requests in flight: each is a task and a connection.
pub(super) fn concurrency(s: &str) -> Result<usize, String> {
    whole(s, 1, 100_000).map(|v| v as usize)
}

/// Tokens per input: the longest encoder contexts are 8192; 131072 leaves room.
pub(super) fn tokens(s: &str) -> Result<usize, String> {
    whole(s, 1, 131_072).map(|v| v as usize)
}

/// Threads or server workers.
pub(super) fn threads(s: &str) -> Result<usize, String> {
    whole(s, 1, 1024).map(|v| v as usize)
}

/// `--grpc-connections`: HTTP/2 connections per client thread, each carrying many streams.
pub(super) fn connections(s: &str) -> Result<usize, String> {
    whole(s, 1, 256).map(|v| v as usize)
}

/// A batch size. How large a body may grow is checked against the target's body limit
/// before any is built; this only keeps the number itself sane.
pub(super) fn batch(s: &str) -> Result<usize, String> {
    whole(s, 1, 1_000_000_000).map(|v| v as usize)
}

/// A small positive setting of the live screen (refresh rate, window seconds).
pub(super) fn screen_setting(s: &str) -> Result<u64, String> {
    whole(s, 1, 3600)
}

pub(super) fn window_secs(s: &str) -> Result<usize, String> {
    screen_setting(s).map(|v| v as usize)
}

pub(super) fn objective(s: &str) -> Result<encbench_core::slo::Objective, String> {
    s.parse()
}

/// A share: "5%" or 0.05, above 0 and at most 1.
pub(super) fn share(s: &str) -> Result<f64, String> {
    let v = match s.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => s.trim().parse::<f64>(),
    };
    match v {
        Ok(x) if x > 0.0 && x <= 1.0 => Ok(x),
        _ => Err("must be a share above 0 and at most 1: 5% or 0.05".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_burstiness() {
        assert_eq!(parse_rate("inf").unwrap(), Rate(None));
        assert_eq!(parse_rate("12.5").unwrap(), Rate(Some(12.5)));
        assert!(parse_rate("0").is_err() && parse_rate("-1").is_err() && parse_rate("x").is_err());
        assert!(parse_burstiness("inf").unwrap().is_infinite());
        assert!(parse_burstiness("0").is_err() && parse_burstiness("-2").is_err());
    }

    #[test]
    fn times_take_units_and_a_bare_number_keeps_its_old_unit() {
        assert_eq!(positive_secs("1.5").unwrap(), 1.5);
        assert_eq!(positive_secs("1m30s").unwrap(), 90.0);
        assert_eq!(positive_secs("250ms").unwrap(), 0.25);
        assert_eq!(positive_secs("2h").unwrap(), 7200.0);
        assert_eq!(non_negative_secs("0").unwrap(), 0.0);
        assert_eq!(non_negative_secs("0s").unwrap(), 0.0);
        assert_eq!(sim_ms("14.8").unwrap(), 14.8);
        assert_eq!(sim_ms("2s").unwrap(), 2000.0);
        assert_eq!(sim_ms("250us").unwrap(), 0.25);
        for bad in [
            "0",
            "0s",
            "-1",
            "32d",
            "1e20",
            "NaN",
            "inf",
            "5 parsecs",
            "",
        ] {
            let e = positive_secs(bad).unwrap_err();
            assert!(e.contains("such as 30s, 5m or 1.5"), "{bad}: {e}");
        }
        assert!(non_negative_secs("-1s").is_err() && sim_ms("-3").is_err());
        assert!(sim_ms("32d").is_err() && sim_ms("fast").is_err());
    }
}

/// `--header` and `--require-header`. clap quotes a value its parser refuses back in full,
/// and a header's value is a secret: the refusal is made here, naming the flag and what is
/// wrong, never the value.
#[derive(Clone)]
pub(super) struct HeaderParser;

impl clap::builder::TypedValueParser for HeaderParser {
    type Value = (String, String);

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        let flag = arg
            .and_then(clap::Arg::get_long)
            .map_or_else(|| "--header".to_string(), |l| format!("--{l}"));
        let refused = |why: &str| {
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("invalid value for '{flag}': {why}\n"),
            )
        };
        let s = value
            .to_str()
            .ok_or_else(|| refused("not UTF-8 (a header is ASCII)"))?;
        encbench_wire::client::headers::parse_header(s).map_err(|why| refused(&why))
    }
}

/// `--path`, `--ready-path`: a route from `/`, in one line.
pub fn route(s: &str) -> Result<String, String> {
    encbench_load::setup::check_route(s)
}

/// `--min-tau`: a rank correlation, from -1 (reversed) to 1 (the same order).
pub fn tau(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if (-1.0..=1.0).contains(&t) => Ok(t),
        _ => Err("must be a Kendall's tau from -1 to 1 (0.99: nearly the same order)".into()),
    }
}
