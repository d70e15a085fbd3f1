//! A table's cell: text as it is shown, or a percentile with its 95 % interval, which each
//! rendering shows its own way: beside the figure for a reader (`45.4 [38.1, 52.0]`), in
//! columns of their own for a spreadsheet.

use encbench_core::interval::Interval;
use encbench_core::percentile::Percentile;
use encbench_core::stats::LatencySummary;

#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Text(String),
    Estimate(Estimate),
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Text(s.to_string())
    }
}

impl From<Estimate> for Cell {
    fn from(e: Estimate) -> Cell {
        Cell::Estimate(e)
    }
}

impl Cell {
    /// The cell as one piece of text (Markdown, HTML, a sentence).
    pub fn shown(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Estimate(e) => e.shown(),
        }
    }

    /// The figure's part and the interval's part, which the terminal lines up apart.
    pub(crate) fn parts(&self) -> (String, String) {
        match self {
            Cell::Text(s) => (s.clone(), String::new()),
            Cell::Estimate(e) => e.parts(),
        }
    }
}

/// A percentile and how sure it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: Option<f64>,
    /// `None` where the export holds no interval (no request succeeded, or a summary with no
    /// histogram behind it written before the intervals).
    pub ci: Option<Interval>,
    /// Decimals a reader sees; `None`: full precision (CSV).
    pub decimals: Option<usize>,
}

impl Estimate {
    /// No figure at all (no request succeeded): `-`, or empty fields.
    pub const MISSING: Estimate = Estimate {
        value: None,
        ci: None,
        decimals: None,
    };

    /// Percentile `at` of `s`, shown with `decimals`.
    pub fn of(s: &LatencySummary, at: Percentile, decimals: usize) -> Estimate {
        Estimate {
            value: Some(at.of(s)),
            ci: s.ci95.map(|c| c.of_percentile(at)),
            decimals: Some(decimals),
        }
    }

    /// The same figure at full precision, for spreadsheets.
    #[must_use]
    pub fn full(self) -> Estimate {
        Estimate {
            decimals: None,
            ..self
        }
    }

    /// Divided by `k` (a reranker's latency per document: the same ranks, each over D).
    #[must_use]
    pub fn over(self, k: f64) -> Estimate {
        Estimate {
            value: self.value.map(|v| v / k),
            ci: self
                .ci
                .map(|Interval(lo, hi)| Interval(lo / k, hi.map(|h| h / k))),
            ..self
        }
    }

    /// `45.4 [38.1, 52.0]`; `≥ 38.1` where no sample bounds it from above (the figure is
    /// then no more than the largest sample, and says nothing the bound does not); the figure
    /// alone without an interval; `-` without a figure.
    pub fn shown(&self) -> String {
        match self.parts() {
            (figure, ci) if ci.is_empty() => figure,
            (figure, ci) => format!("{figure} {ci}"),
        }
    }

    fn parts(&self) -> (String, String) {
        let Some(v) = self.value.filter(|v| v.is_finite()) else {
            return ("-".into(), String::new());
        };
        match self.ci {
            None => (self.figure(v), String::new()),
            Some(Interval(lo, None)) => (format!("≥ {}", self.bound(lo, End::Low)), String::new()),
            Some(Interval(lo, Some(hi))) => (
                self.figure(v),
                format!(
                    "[{}, {}]",
                    self.bound(lo, End::Low),
                    self.bound(hi, End::High)
                ),
            ),
        }
    }

    /// The figure, its interval's low end and its high end (empty where there is none, or
    /// where no sample bounds it): numbers in fields of their own.
    pub fn fields(&self) -> [String; 3] {
        let lo = self.ci.map(|i| i.0);
        let hi = self.ci.and_then(|i| i.1);
        [self.value, lo, hi].map(|x| {
            x.filter(|x| x.is_finite())
                .map_or_else(String::new, |x| self.figure(x))
        })
    }

    fn figure(&self, v: f64) -> String {
        match self.decimals {
            Some(d) => format!("{v:.d$}"),
            None => v.to_string(),
        }
    }

    /// A bound to at most three significant figures (`[270, 291]`, not `[270.1, 290.5]`):
    /// the ends of an interval are themselves uncertain by a bucket of the histogram, and a
    /// column of them stays narrow. Fewer decimals than the figure's round outward (the low
    /// end down, the high end up), so that the interval shown still holds the figure shown:
    /// `367.9 [367, 369]`, never `[368, 368]`.
    fn bound(&self, v: f64, end: End) -> String {
        let Some(d) = self.decimals else {
            return v.to_string();
        };
        let sig3 = match v.abs() {
            x if x < 10.0 => 2,
            x if x < 100.0 => 1,
            _ => 0,
        };
        if sig3 >= d {
            return format!("{v:.d$}");
        }
        let scale = 10f64.powi(i32::try_from(sig3).unwrap_or(0));
        let out = match end {
            End::Low => (v * scale).floor(),
            End::High => (v * scale).ceil(),
        } / scale;
        format!("{out:.sig3$}")
    }
}

/// Which end of an interval a bound is.
#[derive(Clone, Copy)]
enum End {
    Low,
    High,
}

/// The header of an interval's low or high end beside its figure's column: `p99_ms` gives
/// `p99_lo_ms`, `p99 ms` gives `p99 lo ms`, `p99` gives `p99 lo`.
pub fn bound_header(header: &str, end: &str) -> String {
    let sep = if header.contains(' ') || !header.contains('_') {
        ' '
    } else {
        '_'
    };
    match header.rsplit_once(sep) {
        Some((stem, "ms")) => format!("{stem}{sep}{end}{sep}ms"),
        _ => format!("{header}{sep}{end}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(ci: Option<Interval>) -> Estimate {
        Estimate {
            value: Some(45.43),
            ci,
            decimals: Some(1),
        }
    }

    #[test]
    fn a_closed_an_open_and_a_missing_interval_read_as_the_issue_wrote_them() {
        let closed = est(Some(Interval(38.12, Some(52.04))));
        assert_eq!(closed.shown(), "45.4 [38.1, 52.0]");
        assert_eq!(closed.full().fields(), ["45.43", "38.12", "52.04"]);
        let open = est(Some(Interval(38.12, None)));
        assert_eq!(open.shown(), "≥ 38.1");
        assert_eq!(open.full().fields(), ["45.43", "38.12", ""]);
        let old = est(None);
        assert_eq!(old.shown(), "45.4");
        assert_eq!(old.fields(), ["45.4", "", ""]);
        assert_eq!(Estimate::MISSING.shown(), "-");
        assert_eq!(Estimate::MISSING.fields(), ["", "", ""]);
    }

    #[test]
    fn bounds_keep_three_significant_figures_and_a_reranker_divides_by_d() {
        let wide = Estimate {
            value: Some(278.34),
            ci: Some(Interval(270.1, Some(290.6))),
            decimals: Some(1),
        };
        assert_eq!(wide.shown(), "278.3 [270, 291]");
        // Rounded outward where the bounds have fewer decimals: the figure stays inside.
        let tight = Estimate {
            value: Some(367.9),
            ci: Some(Interval(367.84, Some(368.12))),
            decimals: Some(1),
        };
        assert_eq!(tight.shown(), "367.9 [367, 369]");
        let open = Estimate {
            ci: Some(Interval(369.6, None)),
            ..tight
        };
        assert_eq!(open.shown(), "≥ 369");
        let per_doc = Estimate {
            decimals: Some(2),
            ..wide
        }
        .over(32.0);
        assert_eq!(per_doc.shown(), "8.70 [8.44, 9.08]");
        assert_eq!(
            Estimate {
                value: Some(4.5),
                ci: Some(Interval(4.42, Some(4.61))),
                decimals: Some(1)
            }
            .shown(),
            "4.5 [4.4, 4.6]"
        );
    }

    #[test]
    fn bound_headers_keep_the_unit_last() {
        assert_eq!(bound_header("p99_ms", "lo"), "p99_lo_ms");
        assert_eq!(bound_header("steady_p50_ms", "hi"), "steady_p50_hi_ms");
        assert_eq!(bound_header("p99 ms", "lo"), "p99 lo ms");
        assert_eq!(bound_header("client p50", "hi"), "client p50 hi");
        assert_eq!(bound_header("p99", "lo"), "p99 lo");
    }
}
