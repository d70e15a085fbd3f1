//! Compact number formats for narrow panels.

use crate::arrival::Pace;
use std::time::Duration;

/// Milliseconds in at most 6 characters: 0.42, 25.8, 103, 1.61s, 12.3s.
pub fn ms(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else if v < 1000.0 {
        format!("{v:.0}")
    } else {
        format!("{:.2}s", v / 1000.0)
    }
}

pub fn rate(r: Option<f64>) -> String {
    match r {
        None => "inf".into(),
        Some(r) if r < 100.0 => format!("{r:.1}"),
        Some(r) => format!("{r:.0}"),
    }
}

pub fn burstiness(b: f64) -> String {
    if b.is_infinite() {
        "inf".into()
    } else {
        format!("{b}")
    }
}

pub fn pace(p: &Pace) -> String {
    match p.rate_per_s {
        None => "closed loop (rate inf)".into(),
        Some(r) => {
            let shape = if p.burstiness.is_infinite() {
                "fixed interval".to_string()
            } else if p.burstiness == 1.0 {
                "Poisson".to_string()
            } else {
                format!("burstiness {}", burstiness(p.burstiness))
            };
            format!("open loop {} req/s {shape}", rate(Some(r)))
        }
    }
}

pub fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

pub fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.prec$}"))
}

/// Cuts to `n` characters with an ellipsis.
pub fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_stay_short() {
        assert_eq!(ms(0.4236), "0.42");
        assert_eq!(ms(25.84), "25.8");
        assert_eq!(ms(102.86), "103");
        assert_eq!(ms(1611.0), "1.61s");
        assert_eq!(elapsed(Duration::from_secs(3723)), "01:02:03");
        assert_eq!(cut("abcdef", 4), "abc…");
    }
}
