//! One table, three renderings: aligned columns for the terminal, a pipe table to paste into
//! a Markdown document, and CSV for spreadsheets. Tables are built once from an export and
//! rendered by format, so the three never disagree. A percentile's cell carries its
//! interval ([`Estimate`]), which each rendering shows its own way.

pub use super::cell::{Cell, Estimate};
use std::fmt::Write as _;

/// The cell of a rate that a phase did not measure enough requests for (fewer than its
/// concurrency cap): numeric for alignment, like "-".
pub const NOT_A_RATE: &str = "n<c";

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
    /// Lines printed under the table (notes, advice, hints).
    pub notes: Vec<String>,
}

impl Table {
    pub fn new(title: impl Into<String>, headers: &[&str]) -> Table {
        Table {
            title: title.into(),
            headers: headers
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
            rows: vec![],
            notes: vec![],
        }
    }

    pub fn row<C: Into<Cell>>(&mut self, cells: Vec<C>) {
        debug_assert_eq!(cells.len(), self.headers.len());
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// Aligned columns. Every rendering escapes the control characters of every text first:
    /// cells quote servers (labels, error codes) and files (samples, exports), and a
    /// terminal obeys controls.
    pub fn terminal(&self) -> String {
        self.escaped().aligned()
    }

    /// A Markdown pipe table.
    pub fn markdown(&self) -> String {
        self.escaped().piped()
    }

    /// RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled. A
    /// column of percentiles is three, the figure and its interval's ends (`p99_ms`,
    /// `p99_lo_ms`, `p99_hi_ms`), each a number or empty.
    pub fn csv(&self) -> String {
        self.escaped().separated()
    }

    fn escaped(&self) -> Table {
        let esc = |s: &String| encbench_core::scrub::controls(s).into_owned();
        Table {
            title: esc(&self.title),
            headers: self.headers.iter().map(esc).collect(),
            rows: self
                .rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|c| match c {
                            Cell::Text(s) => Cell::Text(esc(s)),
                            Cell::Estimate(e) => Cell::Estimate(*e),
                        })
                        .collect()
                })
                .collect(),
            notes: self.notes.iter().map(esc).collect(),
        }
    }

    /// Columns of numbers align right, any other left.
    fn numeric(&self, col: usize) -> bool {
        self.rows.iter().all(|r| match &r[col] {
            Cell::Estimate(_) => true,
            Cell::Text(s) => {
                let c = s.trim_end_matches(['×', '%']);
                c == "-" || c == NOT_A_RATE || c.parse::<f64>().is_ok()
            }
        })
    }

    /// Whether column `col` holds percentiles with intervals.
    fn estimates(&self, col: usize) -> bool {
        self.rows
            .iter()
            .any(|r| matches!(r[col], Cell::Estimate(_)))
    }

    /// Each row's cells as the terminal shows them: in a column of percentiles the figures
    /// right-aligned on one edge and the intervals left-aligned after them, so that digits
    /// line up down the column.
    fn lined_up(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(Cell::shown).collect())
            .collect();
        for c in (0..self.headers.len()).filter(|&c| self.estimates(c)) {
            let parts: Vec<(String, String)> = self.rows.iter().map(|r| r[c].parts()).collect();
            let wide = |f: fn(&(String, String)) -> &String| {
                parts
                    .iter()
                    .map(|p| f(p).chars().count())
                    .max()
                    .unwrap_or(0)
            };
            let (wa, wb) = (wide(|p| &p.0), wide(|p| &p.1));
            for (row, (a, b)) in out.iter_mut().zip(parts) {
                row[c] = if wb == 0 {
                    a
                } else {
                    format!("{a:>wa$} {b:<wb$}")
                };
            }
        }
        out
    }

    fn aligned(&self) -> String {
        let rows = self.lined_up();
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                rows.iter()
                    .map(|r| r[c].chars().count())
                    .chain([self.headers[c].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (c, cell) in cells.iter().enumerate() {
                let pad = widths[c] - cell.chars().count();
                if c > 0 {
                    s.push_str("  ");
                }
                if self.numeric(c) {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(cell);
                } else {
                    s.push_str(cell);
                    s.push_str(&" ".repeat(pad));
                }
            }
            s.trim_end().to_string()
        };
        let mut out = format!("{}\n{}\n", self.title, line(&self.headers));
        for r in &rows {
            let _ = writeln!(out, "{}", line(r));
        }
        for n in &self.notes {
            let _ = writeln!(out, "{n}");
        }
        out
    }

    fn piped(&self) -> String {
        let esc = |s: &str| s.replace('|', "\\|");
        let mut out = format!("### {}\n\n", self.title);
        let _ = writeln!(
            out,
            "| {} |",
            self.headers
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let rule: Vec<&str> = (0..self.headers.len())
            .map(|c| if self.numeric(c) { "---:" } else { "---" })
            .collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
        for r in &self.rows {
            let _ = writeln!(
                out,
                "| {} |",
                r.iter()
                    .map(|c| esc(&c.shown()))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                let _ = writeln!(out, "{}  ", esc(n));
            }
        }
        out
    }

    fn separated(&self) -> String {
        // RFC 4180 quoting (a field with a comma, quote or line break quoted, its quotes
        // doubled), lines ending in \n as the other formats do.
        let line = |cells: &[String]| {
            let mut w = csv::WriterBuilder::new()
                .terminator(csv::Terminator::Any(b'\n'))
                .from_writer(Vec::new());
            w.write_record(cells).expect("writing to memory");
            let bytes = w.into_inner().expect("writing to memory");
            String::from_utf8(bytes)
                .expect("fields are UTF-8")
                .trim_end_matches('\n')
                .to_string()
        };
        // An empty table has no cells to say which columns are percentiles: its header is
        // the one given.
        let mut headers = Vec::new();
        for (c, h) in self.headers.iter().enumerate() {
            headers.push(h.clone());
            if self.estimates(c) {
                headers.extend(["lo", "hi"].map(|end| super::cell::bound_header(h, end)));
            }
        }
        let mut out = format!("{}\n", line(&headers));
        for r in &self.rows {
            let fields: Vec<String> = r
                .iter()
                .enumerate()
                .flat_map(|(c, cell)| match cell {
                    Cell::Estimate(e) => e.fields().to_vec(),
                    // A text in a column of percentiles leaves its interval's fields empty.
                    Cell::Text(s) if self.estimates(c) => {
                        vec![s.clone(), String::new(), String::new()]
                    }
                    Cell::Text(s) => vec![s.clone()],
                })
                .collect();
            let _ = writeln!(out, "{}", line(&fields));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("Latency", &["target", "p50 ms"]);
        t.row(vec!["gpu|a", "26.8"]);
        t.row(vec!["cpu, onnx", "-"]);
        t.notes.push("note".into());
        t
    }

    /// p99 of three targets: an interval, one open at the top, one an old export left
    /// without; and a target with no figure at all.
    fn percentiles() -> Table {
        use encbench_core::interval::Interval;
        let est = |value, ci| Estimate {
            value: Some(value),
            ci,
            decimals: Some(1),
        };
        let mut t = Table::new("Latency", &["target", "p99_ms"]);
        let rows = [
            ("gpu", est(45.43, Some(Interval(38.12, Some(52.04))))),
            ("cpu", est(108.2, Some(Interval(101.3, None)))),
            ("old", est(7.55, None)),
            ("down", Estimate::MISSING),
        ];
        for (name, e) in rows {
            t.row(vec![Cell::from(name), e.into()]);
        }
        t
    }

    #[test]
    fn a_percentile_shows_its_interval_in_every_rendering() {
        let t = percentiles();
        // The figures right-aligned on one edge, their intervals after them.
        assert_eq!(
            t.terminal(),
            "Latency\n\
             target              p99_ms\n\
             gpu      45.4 [38.1, 52.0]\n\
             cpu     ≥ 101\n\
             old       7.5\n\
             down        -\n"
        );
        assert_eq!(
            t.markdown(),
            "### Latency\n\n| target | p99_ms |\n| --- | ---: |\n| gpu | 45.4 [38.1, 52.0] |\n\
             | cpu | ≥ 101 |\n| old | 7.5 |\n| down | - |\n"
        );
        // Numbers in fields of their own, each one a number or empty.
        assert_eq!(
            t.csv(),
            "target,p99_ms,p99_lo_ms,p99_hi_ms\ngpu,45.4,38.1,52.0\ncpu,108.2,101.3,\n\
             old,7.5,,\ndown,,,\n"
        );
    }

    #[test]
    fn renderings() {
        let t = sample();
        assert_eq!(
            t.terminal(),
            "Latency\ntarget     p50 ms\ngpu|a        26.8\ncpu, onnx       -\nnote\n"
        );
        assert_eq!(
            t.markdown(),
            "### Latency\n\n| target | p50 ms |\n| --- | ---: |\n| gpu\\|a | 26.8 |\n| cpu, onnx | - |\n\nnote  \n"
        );
        assert_eq!(t.csv(), "target,p50 ms\ngpu|a,26.8\n\"cpu, onnx\",-\n");
    }

    #[test]
    fn control_characters_are_escaped_in_every_rendering() {
        let mut t = Table::new("T\u{1b}]0;x\u{7}", &["target"]);
        t.row(vec!["red\u{1b}[31m\nline"]);
        t.notes.push("\u{9b}2J".into());
        for out in [t.terminal(), t.markdown(), t.csv()] {
            assert!(!out.contains(['\u{1b}', '\u{7}', '\u{9b}']), "{out:?}");
            assert!(out.contains("red\\u{1b}[31m\\u{a}line"), "{out:?}");
        }
    }
}
