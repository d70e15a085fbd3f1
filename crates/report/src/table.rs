//! One table, three renderings: aligned columns for the terminal, a pipe table to paste into
//! a Markdown document, and CSV for spreadsheets. Tables are built once from an export and
//! rendered by format, so the three never disagree.

use std::fmt::Write as _;

/// The cell of a rate that a phase did not measure enough requests for (fewer than its
/// concurrency cap): numeric for alignment, like "-".
pub const NOT_A_RATE: &str = "n<c";

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
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

    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.headers.len());
        self.rows.push(cells);
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

    /// RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled.
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
                .map(|r| r.iter().map(esc).collect())
                .collect(),
            notes: self.notes.iter().map(esc).collect(),
        }
    }

    /// Columns of numbers align right, any other left.
    fn numeric(&self, col: usize) -> bool {
        self.rows.iter().all(|r| {
            let c = r[col].trim_end_matches(['×', '%']);
            c == "-" || c == NOT_A_RATE || c.parse::<f64>().is_ok()
        })
    }

    fn aligned(&self) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
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
        for r in &self.rows {
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
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
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
        let field = |s: &str| {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let line = |cells: &[String]| cells.iter().map(|c| field(c)).collect::<Vec<_>>().join(",");
        let mut out = format!("{}\n", line(&self.headers));
        for r in &self.rows {
            let _ = writeln!(out, "{}", line(r));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new("Latency", &["target", "p50 ms"]);
        t.row(vec!["gpu|a".into(), "26.8".into()]);
        t.row(vec!["cpu, onnx".into(), "-".into()]);
        t.notes.push("note".into());
        t
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
        t.row(vec!["red\u{1b}[31m\nline".into()]);
        t.notes.push("\u{9b}2J".into());
        for out in [t.terminal(), t.markdown(), t.csv()] {
            assert!(!out.contains(['\u{1b}', '\u{7}', '\u{9b}']), "{out:?}");
            assert!(out.contains("red\\u{1b}[31m\\u{a}line"), "{out:?}");
        }
    }
}
