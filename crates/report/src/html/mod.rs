//! `report --format html` and `--report`: one self-contained page a platform engineer can
//! paste into a design review. Charts are inline SVG drawn by plotters (`chart`), chosen from
//! what the exports hold (`figures`); below them the same tables as `--format markdown`, and
//! each run's configuration (an export never holds credentials).
//!
//! Self-contained means no request of any kind when opened: no script, no web font, no
//! stylesheet or image by URL; it reads with JavaScript off and prints on A4.

mod chart;
mod figures;
mod slices;

use super::table::{Cell, Table};
use encbench_core::export::Export;
use std::fmt::Write as _;

/// `&`, `<`, `>` and quotes as entities, and control characters escaped as the other
/// renderings escape them: texts come from servers and files.
pub fn escape(s: &str) -> String {
    let s = encbench_core::scrub::controls(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A text block (`<pre>`): each line escaped on its own, the newlines between them kept as
/// newlines (escaped whole, each would show as `\u{a}`).
fn escape_lines(s: &str) -> String {
    s.split('\n').map(escape).collect::<Vec<_>>().join("\n")
}

const STYLE: &str = r"
:root { color-scheme: light dark; --fg: #1b1d21; --bg: #fafafa; --muted: #5b6068; --rule: #d5d8dd; --card: #ffffff; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e8eaed; --bg: #17191d; --muted: #a4a9b1; --rule: #3a3f47; --card: #ffffff; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif; }
main { max-width: 980px; margin: 0 auto; padding: 20px 16px 48px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.25em; margin: 32px 0 8px; border-bottom: 1px solid var(--rule); padding-bottom: 4px; }
h3 { font-size: 1.05em; margin: 20px 0 6px; }
p.head { margin: 2px 0; color: var(--muted); }
figure.chart { margin: 16px 0; padding: 6px; background: var(--card); border: 1px solid var(--rule);
  border-radius: 6px; break-inside: avoid; page-break-inside: avoid; }
figure.chart svg { display: block; width: 100%; height: auto; }
figure.chart figcaption { color: #333; font-size: 0.9em; padding: 4px 6px 2px; }
figure.chart ol { color: #333; font-size: 0.85em; margin: 4px 0 4px 8px; columns: 2; }
.table-wrap { max-width: 100%; }
table { border-collapse: collapse; margin: 6px 0 4px; font-size: 0.86em; font-variant-numeric: tabular-nums;
  max-width: 100%; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid var(--rule); padding: 3px 5px; overflow-wrap: anywhere; }
th { text-align: left; vertical-align: bottom; }
td.num { text-align: right; white-space: nowrap; }
td.est { white-space: normal; }
td.est span { white-space: nowrap; }
td.est span.ci { color: var(--muted); }
p.note { margin: 2px 0 10px; font-size: 0.86em; color: var(--muted); }
pre.config { font-size: 0.8em; background: var(--card); color: #1b1d21; border: 1px solid var(--rule);
  border-radius: 6px; padding: 8px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
@media print {
  @page { size: A4; margin: 12mm; }
  body { background: #fff; color: #000; font-size: 10pt; }
  main { max-width: none; padding: 0; }
  h2 { break-after: avoid; }
  table { break-inside: avoid; }
  th, td { white-space: normal; }
}
";

/// The page for `files` (label, export), their curves overlaid where they share a chart.
pub fn render(files: &[(String, Export)]) -> String {
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let names: Vec<&str> = files.iter().map(|(l, _)| l.as_str()).collect();
    let _ = writeln!(
        out,
        "<title>encbench-tui report — {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>",
        escape(&names.join(", "))
    );
    out.push_str("<h1>encbench-tui report</h1>\n");
    for (label, e) in files {
        let head = super::heading(e);
        let (first, rest) = head
            .split_first()
            .map_or(("", &[][..]), |(f, r)| (f.as_str(), r));
        if files.len() > 1 {
            let _ = writeln!(out, "<h3>{}</h3>", escape(label));
        }
        let _ = writeln!(
            out,
            "<p class=\"head\"><strong>{}</strong></p>",
            escape(first)
        );
        for line in rest {
            let _ = writeln!(out, "<p class=\"head\">{}</p>", escape(line));
        }
    }

    let mut charts = figures::all(files);
    // Rerankers' charts in their words, where every export is one.
    if !files.is_empty() && files.iter().all(|(_, e)| super::rerank::is_rerank(e)) {
        use super::rerank::words;
        for c in &mut charts {
            c.title = words(&c.title);
            c.caption = words(&c.caption);
            for axis in std::iter::once(&mut c.x)
                .chain([&mut c.y])
                .chain(c.y2.as_mut())
            {
                axis.desc = words(&axis.desc);
            }
            for series in &mut c.series {
                series.label = words(&series.label);
            }
        }
    }
    if !charts.is_empty() {
        out.push_str("<h2>Charts</h2>\n");
    }
    for (i, c) in charts.iter().enumerate() {
        // A chart that cannot be drawn says so in its place; the rest of the page stands.
        let svg = chart::svg(c).unwrap_or_else(|e| format!("<p>{}</p>", escape(&e)));
        let _ = write!(
            out,
            "<figure class=\"chart\" id=\"chart-{}\" data-chart=\"{}\">\n{svg}\n<figcaption>{}</figcaption>\n",
            i + 1,
            c.kind,
            escape(&c.caption)
        );
        if !c.listed.is_empty() {
            out.push_str("<ol>");
            for item in &c.listed {
                let _ = write!(out, "<li>{}</li>", escape(item));
            }
            out.push_str("</ol>\n");
        }
        out.push_str("</figure>\n");
    }

    out.push_str("<h2>Tables</h2>\n");
    for (label, e) in files {
        if files.len() > 1 {
            let _ = writeln!(out, "<h3>{}</h3>", escape(label));
        }
        for t in super::tables(e) {
            table(&mut out, &t);
        }
    }
    out.push_str("<h2>Configuration</h2>\n");
    for (label, e) in files {
        if files.len() > 1 {
            let _ = writeln!(out, "<h3>{}</h3>", escape(label));
        }
        let text = serde_json::to_string_pretty(&e.config).unwrap_or_default();
        let _ = writeln!(out, "<pre class=\"config\">{}</pre>", escape_lines(&text));
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// A cell: figures right-aligned; a percentile's interval may go under its figure where the
/// column is narrow, but neither breaks inside.
fn td(cell: &Cell) -> String {
    match cell {
        Cell::Text(s) => {
            let numeric = s.parse::<f64>().is_ok() || s == "-" || s == super::table::NOT_A_RATE;
            let class = if numeric { " class=\"num\"" } else { "" };
            format!("<td{class}>{}</td>", escape(s))
        }
        Cell::Estimate(_) => match cell.parts() {
            (figure, ci) if ci.is_empty() => format!("<td class=\"num\">{}</td>", escape(&figure)),
            (figure, ci) => format!(
                "<td class=\"num est\"><span>{}</span> <span class=\"ci\">{}</span></td>",
                escape(&figure),
                escape(&ci)
            ),
        },
    }
}

fn table(out: &mut String, t: &Table) {
    out.push_str("<div class=\"table-wrap\"><table>\n");
    let _ = writeln!(out, "<caption>{}</caption>", escape(&t.title));
    out.push_str("<thead><tr>");
    for h in &t.headers {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        out.push_str("<tr>");
        for cell in r {
            out.push_str(&td(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    for n in &t.notes {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Estimate;
    use encbench_core::interval::Interval;

    /// A percentile's interval may go under its figure in a narrow column, never break; an
    /// open one is the bound alone.
    #[test]
    fn a_percentile_cell_keeps_its_figure_and_interval_whole() {
        let est = |ci| {
            Cell::Estimate(Estimate {
                value: Some(45.43),
                ci: Some(ci),
                decimals: Some(1),
            })
        };
        assert_eq!(
            td(&est(Interval(38.12, Some(52.04)))),
            "<td class=\"num est\"><span>45.4</span> <span class=\"ci\">[38.1, 52.0]</span></td>"
        );
        assert_eq!(
            td(&est(Interval(38.12, None))),
            "<td class=\"num\">≥ 38.1</td>"
        );
    }
}
