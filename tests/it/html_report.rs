//! `report --format html` and `--report`: the page's charts checked by structure (each SVG's
//! title, axis names and legend, parsed from the fixed exports), the page free of any
//! external reference, and rendered by a real browser (Chromium headless): the screenshot is
//! the size asked for, every chart's region is drawn on, and the console stays silent.

use crate::common::*;
use rustix::process::Signal;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `report --format html ARGS -o FILE`, the page's text.
fn page(args: &[&str]) -> String {
    let out = tmp_path("report.html");
    let mut all = vec!["report", "--format", "html", "-o", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let ran = run(&all);
    assert!(ran.status.success(), "{args:?}: {}", stderr(&ran));
    std::fs::read_to_string(&out).unwrap()
}

/// One chart of the page: its `data-chart` kind and the texts of its SVG.
#[derive(Debug)]
struct Figure {
    kind: String,
    svgs: usize,
    texts: Vec<String>,
    /// The figure's markup.
    body: String,
}

/// Every `<figure class="chart">`, parsed: the texts are XML-unescaped.
fn figures(html: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find("<figure class=\"chart\"") {
        let body = &rest[at..];
        let end = body.find("</figure>").expect("every figure closes");
        let fig = &body[..end];
        let kind = between(fig, "data-chart=\"", "\"").expect("a figure names its kind");
        let mut texts = Vec::new();
        let mut t = fig;
        while let Some(open) = t.find("<text") {
            let after = &t[open..];
            let start = after.find('>').unwrap() + 1;
            let stop = after.find("</text>").unwrap();
            texts.push(unescape(after[start..stop].trim()));
            t = &after[stop..];
        }
        out.push(Figure {
            kind: kind.to_string(),
            svgs: fig.matches("<svg").count(),
            texts,
            body: fig.to_string(),
        });
        rest = &body[end..];
    }
    out
}

fn between<'a>(s: &'a str, from: &str, to: &str) -> Option<&'a str> {
    let a = s.find(from)? + from.len();
    let b = s[a..].find(to)? + a;
    Some(&s[a..b])
}

fn unescape(s: &str) -> String {
    s.replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// A tick mark's name: a number, or a percentile.
fn is_tick(t: &str) -> bool {
    t.trim_end_matches('%').parse::<f64>().is_ok()
}

/// What one chart must show: its title, axis names (the right-hand one when it has one),
/// the marks named on it, and exactly these legend entries (one per series).
struct Want<'a> {
    kind: &'a str,
    title: &'a str,
    axes: &'a [&'a str],
    marks: &'a [&'a str],
    legend: &'a [&'a str],
}

fn check(fig: &Figure, want: &Want<'_>) {
    assert_eq!(fig.kind, want.kind, "{fig:?}");
    assert_eq!(fig.svgs, 1, "one SVG per chart: {fig:?}");
    let mut texts: Vec<&str> = fig
        .texts
        .iter()
        .map(String::as_str)
        .filter(|t| !is_tick(t))
        .collect();
    for named in std::iter::once(&want.title)
        .chain(want.axes)
        .chain(want.marks)
    {
        let at = texts
            .iter()
            .position(|t| t == named)
            .unwrap_or_else(|| panic!("{:?}: no {named:?} in {texts:?}", want.title));
        texts.remove(at);
    }
    let mut legend = want.legend.to_vec();
    legend.sort_unstable();
    texts.sort_unstable();
    assert_eq!(
        texts, legend,
        "{:?}: the legend, a label per series",
        want.title
    );
}

/// An attribute's value in one SVG element.
fn attr<'a>(element: &'a str, name: &str) -> &'a str {
    between(element, &format!(" {name}=\""), "\"").unwrap_or_default()
}

/// The points of a `<polyline>`.
fn points(element: &str) -> Vec<(f64, f64)> {
    attr(element, "points")
        .split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

/// A chart's error bars, each checked against the points it is of, and how many are open
/// (no upper end). A bar is a vertical stroke one unit wide in a curve's colour, then its low
/// cap, then its top: a cap, or a three-point arrow where no sample bounds it from above.
/// Each point of a barred curve is a dot of radius 3; a closed bar must span a dot of its
/// colour a few units beside it (SVG's y grows downwards), an open one start at or below one.
fn bars(fig: &Figure) -> (usize, usize) {
    let elements: Vec<&str> = fig.body.split('<').collect();
    let dots: Vec<(String, f64, f64)> = elements
        .iter()
        .filter(|e| e.starts_with("circle") && attr(e, "r") == "3")
        .map(|e| {
            let at = |a| attr(e, a).parse::<f64>().unwrap();
            (attr(e, "fill").to_string(), at("cx"), at("cy"))
        })
        .collect();
    let strokes: Vec<&str> = elements
        .iter()
        .copied()
        .filter(|e| {
            e.starts_with("polyline")
                && attr(e, "stroke-width") == "1"
                && !["#000000", "#555555", "#E4E4E4"].contains(&attr(e, "stroke"))
        })
        .collect();
    let (mut found, mut open) = (0, 0);
    let mut i = 0;
    while i + 2 < strokes.len() {
        let p = points(strokes[i]);
        if p.len() != 2 || p[0].0 != p[1].0 {
            i += 1;
            continue;
        }
        let (colour, x, low, top) = (attr(strokes[i], "stroke"), p[0].0, p[0].1, p[1].1);
        let is_open = points(strokes[i + 2]).len() == 3;
        let brackets = |(c, cx, cy): &(String, f64, f64)| {
            c == colour
                && (cx - x).abs() <= 12.0
                && *cy <= low + 1.0
                && (is_open || *cy >= top - 1.0)
        };
        assert!(
            dots.iter().any(brackets),
            "a bar at x {x} from {low} to {top} brackets no point of its colour: {dots:?}"
        );
        found += 1;
        open += usize::from(is_open);
        i += 3;
    }
    assert_eq!(found, dots.len(), "a bar for every point: {dots:?}");
    (found, open)
}

const BATCH_AXIS: &str = "batch size (inputs per request)";
const CONC_AXIS: &str = "concurrency (requests in flight)";
const SPECTRUM_AXES: &[&str] = &["percentile", "latency (ms)"];
/// The legend's entry for the error bars and bands of a chart of percentiles.
const BARS: &str = "95 % interval";

#[test]
fn the_charts_of_a_run_a_comparison_and_a_capacity_search_have_their_series_and_axes() {
    let figs = figures(&page(&["tests/fixtures/run.json"]));
    let wants = [
        Want {
            kind: "batch",
            title: "Batch sweep — latency",
            axes: &[BATCH_AXIS, "scheduled latency (ms)"],
            marks: &["knee at 8"],
            legend: &["p50", "p99", BARS],
        },
        Want {
            kind: "batch",
            title: "Batch sweep — throughput and cost",
            axes: &[BATCH_AXIS, "samples per second", "$ per 1M samples"],
            marks: &["knee at 8"],
            legend: &["samples/s", "$ per 1M samples"],
        },
        Want {
            kind: "batch",
            title: "Batch sweep — efficiency (samples/s per input over batch 1's)",
            axes: &[BATCH_AXIS, "batch efficiency"],
            marks: &["knee at 8"],
            legend: &["efficiency", "knee threshold 0.8"],
        },
        Want {
            kind: "concurrency",
            title: "Concurrency sweep — throughput",
            axes: &[CONC_AXIS, "requests per second"],
            marks: &[],
            legend: &["req/s"],
        },
        Want {
            kind: "concurrency",
            title: "Concurrency sweep — latency",
            axes: &[CONC_AXIS, "scheduled latency (ms)"],
            marks: &[],
            legend: &["p50", "p99", BARS],
        },
        Want {
            kind: "spectrum",
            title: "Latency percentile spectrum — batch phases",
            axes: SPECTRUM_AXES,
            marks: &[],
            legend: &[
                "b=1 · scheduled",
                "b=1 · service",
                "b=8 · scheduled",
                "b=8 · service",
                BARS,
            ],
        },
        Want {
            kind: "spectrum",
            title: "Latency percentile spectrum — concurrency phases",
            axes: SPECTRUM_AXES,
            marks: &[],
            legend: &[
                "c=1 · scheduled",
                "c=1 · service",
                "c=2 · scheduled",
                "c=2 · service",
                "c=4 · scheduled",
                "c=4 · service",
                BARS,
            ],
        },
        Want {
            kind: "timeline",
            title: "Timeline",
            axes: &[
                "time since start (s)",
                "requests per second",
                "p50 and p99 latency (ms)",
            ],
            marks: &[],
            legend: &["req/s", "p99 ms", "p50 ms"],
        },
    ];
    assert_eq!(figs.len(), wants.len(), "{figs:#?}");
    for (f, w) in figs.iter().zip(&wants) {
        check(f, w);
    }
    // Each p50 and p99 with its interval: 40 requests a phase bound each median on both
    // sides and no p99 from above.
    assert_eq!(bars(&figs[0]), (4, 2), "batch sizes 1 and 8");
    assert_eq!(bars(&figs[4]), (6, 3), "concurrency 1, 2 and 4");
    // The spectra's bands, one a phase, under their curves.
    assert_eq!(figs[5].body.matches("<polygon opacity=\"0.15\"").count(), 2);
    // The percentile axis is HdrHistogram's: 50 %, 90 %, 99 % … on a log scale.
    let spectrum = &figs[5].texts;
    for tick in ["50%", "90%", "99%"] {
        assert!(spectrum.iter().any(|t| t == tick), "{spectrum:?}");
    }

    // A comparison: each target a curve on the same axes, the shared knee named once.
    let figs = figures(&page(&["tests/fixtures/compare.json"]));
    assert_eq!(
        bars(&figs[0]),
        (12, 6),
        "3 targets × 2 batch sizes × p50, p99"
    );
    let kinds: Vec<&str> = figs.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "batch", "batch", "batch", "spectrum", "spectrum", "spectrum"
        ]
    );
    check(
        &figs[1],
        &Want {
            kind: "batch",
            title: "Batch sweep — throughput and cost",
            axes: &[BATCH_AXIS, "samples per second", "$ per 1M samples"],
            marks: &["knee at 8: gpu-ic, cpu-mc, lmi"],
            legend: &[
                "gpu-ic · samples/s",
                "gpu-ic · $ per 1M samples",
                "cpu-mc · samples/s",
                "cpu-mc · $ per 1M samples",
                "lmi · samples/s",
                "lmi · $ per 1M samples",
            ],
        },
    );
    check(
        &figs[4],
        &Want {
            kind: "spectrum",
            title: "Latency percentile spectrum — batch 8",
            axes: SPECTRUM_AXES,
            marks: &[],
            legend: &[
                "gpu-ic · scheduled",
                "gpu-ic · service",
                "cpu-mc · scheduled",
                "cpu-mc · service",
                "lmi · scheduled",
                "lmi · service",
                BARS,
            ],
        },
    );

    // A capacity search: the probes that met and missed, the SLO line, the answer marked.
    let want = |marks, legend| Want {
        kind: "capacity",
        title: "Capacity search — batch 1, p99 ≤ 60 ms",
        axes: &[
            "offered rate (requests per second)",
            "p99 scheduled latency (ms)",
        ],
        marks,
        legend,
    };
    let figs = figures(&page(&["tests/fixtures/capacity.json"]));
    let before_intervals = [
        "SLO p99=60ms",
        "probes that met the SLO",
        "probes that missed it",
    ];
    check(
        &figs[0],
        &want(&["capacity 112.3 req/s"], &before_intervals),
    );
    assert_eq!(figs[1].kind, "timeline");
    // The same search as exports give it since the intervals: each probe's p99 with its
    // error bar, the answer's interval in its mark.
    let mut e: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("tests/fixtures/capacity.json").unwrap())
            .unwrap();
    let c = &mut e["capacity"][0];
    c["max_rate_ci95_per_s"] = serde_json::json!([108.4, 116.9]);
    for p in c["probes"].as_array_mut().unwrap() {
        let p99 = p["p99"].as_f64().unwrap();
        p["p99_ci95"] = serde_json::json!([p99 * 0.9, p99 * 1.1]);
    }
    let sure = tmp_path("capacity-ci.json");
    std::fs::write(&sure, e.to_string()).unwrap();
    let figs = figures(&page(&[sure.to_str().unwrap()]));
    let mut with_bars = before_intervals.to_vec();
    with_bars.push(BARS);
    check(
        &figs[0],
        &want(&["capacity 112.3 [108.4, 116.9] req/s"], &with_bars),
    );
}

#[test]
fn several_exports_overlay_their_curves_under_their_labels() {
    let html = page(&[
        "tests/fixtures/run.json",
        "tests/fixtures/run.json",
        "--label",
        "before",
        "--label",
        "after",
    ]);
    let figs = figures(&html);
    check(
        &figs[0],
        &Want {
            kind: "batch",
            title: "Batch sweep — latency",
            axes: &[BATCH_AXIS, "scheduled latency (ms)"],
            marks: &["knee at 8: before, after"],
            legend: &[
                "before · p50",
                "before · p99",
                "after · p50",
                "after · p99",
                BARS,
            ],
        },
    );
    // One timeline each, named by its label.
    let timelines: Vec<&Figure> = figs.iter().filter(|f| f.kind == "timeline").collect();
    assert_eq!(timelines.len(), 2);
    assert!(timelines[1].texts.iter().any(|t| t == "Timeline — after"));
    // A label per file at most.
    let out = run(&[
        "report",
        "--format",
        "html",
        "tests/fixtures/run.json",
        "--label",
        "a",
        "--label",
        "b",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--label"), "{}", stderr(&out));
}

#[test]
fn the_page_references_nothing_outside_itself_and_escapes_what_exports_say() {
    for fixture in ["run", "compare", "capacity"] {
        let html = page(&[&format!("tests/fixtures/{fixture}.json")]);
        let lower = html.to_lowercase();
        for bad in [
            "<script",
            "<link",
            "<img",
            "<iframe",
            "@import",
            "@font-face",
        ] {
            assert!(!lower.contains(bad), "{fixture}: {bad}");
        }
        // No URL in any src, href or CSS url(…): the page asks nothing of the network.
        for attr in ["src=", "href=", "url("] {
            let mut rest = lower.as_str();
            while let Some(at) = rest.find(attr) {
                let value: String = rest[at + attr.len()..].chars().take(12).collect();
                assert!(
                    !value.contains("http:") && !value.contains("https:") && !value.contains("//"),
                    "{fixture}: {attr}{value}"
                );
                rest = &rest[at + attr.len()..];
            }
        }
        assert!(
            html.contains("<table>"),
            "{fixture}: the tables are below the charts"
        );
        assert!(
            html.contains("<pre class=\"config\">"),
            "{fixture}: the configuration"
        );
    }
    // A label from a file is text on the page, never markup.
    let html = page(&[
        "tests/fixtures/run.json",
        "--label",
        "<script>alert(1)</script>\u{1b}[31m",
    ]);
    assert!(!html.contains("<script>"), "the label was not escaped");
    assert!(html.contains("&lt;script&gt;"));
    assert!(
        !html.contains('\u{1b}'),
        "a control character reached the page"
    );
    // Also where the label names curves inside the charts (several files).
    let html = page(&[
        "tests/fixtures/run.json",
        "tests/fixtures/run.json",
        "--label",
        "a\u{1b}[31m",
        "--label",
        "b",
    ]);
    assert!(
        !html.contains('\u{1b}'),
        "a control character reached a chart"
    );
}

/// Chromium, or why not: in CI (which installs it) its absence is a failure.
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("chromium"))
            .find(|c| c.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is not installed: scripts/test.sh installs it (apt-get install chromium)"
        );
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
    }
    found
}

/// Chromium headless on `url` in a window of `width` × `height`, with a profile of its own
/// and none of its calls home (the machine may have no network at all).
fn chromium_run(
    bin: &Path,
    width: u32,
    height: u32,
    extra: &[&str],
    url: &str,
) -> (String, String) {
    let profile = tmp_path("chromium-profile");
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            "--enable-logging=stderr",
            "--v=0",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--window-size={width},{height}"),
        ])
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .expect("chromium starts");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What Chromium shows of `html` in a window `WIDTH` wide: the charts it left blank (by
/// index), after checking that the screenshot is the page's size and that the console said
/// nothing.
fn blank_charts(bin: &Path, html: &str) -> Vec<usize> {
    const WIDTH: u32 = 1000;
    let charts = figures(html).len();
    // Where each chart lands: a copy of the page with a script that writes the layout into
    // the title (the page itself has no script; this one moves nothing on it).
    let probe = tmp_path("layout.html");
    let script = "<script>document.title = JSON.stringify({h: document.documentElement.scrollHeight, \
        r: [...document.querySelectorAll('figure.chart svg')].map(s => { const b = s.getBoundingClientRect(); \
        return [b.left + scrollX, b.top + scrollY, b.width, b.height]; })});</script>";
    std::fs::write(&probe, html.replace("</body>", &format!("{script}</body>"))).unwrap();
    let (dom, _) = chromium_run(
        bin,
        WIDTH,
        800,
        &["--dump-dom"],
        &format!("file://{}", probe.display()),
    );
    let layout: serde_json::Value =
        serde_json::from_str(&unescape(between(&dom, "<title>", "</title>").unwrap())).unwrap();
    let height = layout["h"].as_f64().unwrap() as u32;
    let rects: Vec<[f64; 4]> = layout["r"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| std::array::from_fn(|i| r[i].as_f64().unwrap()))
        .collect();
    assert_eq!(rects.len(), charts);

    // The page itself, whole, in one screenshot.
    let file = tmp_path("page.html");
    std::fs::write(&file, html).unwrap();
    let shot = tmp_path("page.png");
    let (_, log) = chromium_run(
        bin,
        WIDTH,
        height,
        &[&format!("--screenshot={}", shot.display())],
        &format!("file://{}", file.display()),
    );
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "the console spoke: {console:?}");

    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(
        (info.width, info.height),
        (WIDTH, height),
        "the screenshot's size"
    );
    let channels = info.color_type.samples();
    let px = |x: u32, y: u32| {
        let i = (y as usize * info.width as usize + x as usize) * channels;
        [buf[i], buf[i + 1], buf[i + 2]]
    };
    let mut blank = Vec::new();
    for (i, [left, top, w, h]) in rects.iter().enumerate() {
        let (x0, y0) = (*left as u32, *top as u32);
        let (x1, y1) = ((left + w) as u32, (top + h) as u32);
        assert!(x1 <= WIDTH && y1 <= height, "chart {i} off the page");
        let background = px(x0 + 2, y0 + 2);
        let mut drawn = 0u64;
        let mut colours = std::collections::HashSet::new();
        for y in y0..y1 {
            for x in x0..x1 {
                let p = px(x, y);
                if p != background {
                    drawn += 1;
                    colours.insert(p);
                }
            }
        }
        let share = drawn as f64 / f64::from((x1 - x0) * (y1 - y0));
        // Axes, text and curves cover a few percent of a chart, in the curves' colours
        // beside black and grey; a blank one has neither.
        if share < 0.02 || colours.len() < 10 {
            blank.push(i);
        }
    }
    blank
}

/// What does not fit, as Chromium lays `html` out in a window `width` wide: each chart's
/// texts that reach past its SVG (cut off) or overlap another of its texts, and each table
/// wider than the card it is in (a horizontal scroll, cut in print and in screenshots).
fn misfits(bin: &Path, html: &str, width: u32) -> Vec<String> {
    let probe = tmp_path("fit.html");
    let script = r"<script>
const out = [];
document.querySelectorAll('figure.chart').forEach((f, i) => {
  const svg = f.querySelector('svg'); if (!svg) return;
  const s = svg.getBoundingClientRect();
  const boxes = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
    .map(t => [t.textContent.trim(), t.getBoundingClientRect()]);
  for (const [t, b] of boxes)
    if (b.left < s.left - 0.5 || b.right > s.right + 0.5 || b.top < s.top - 0.5 || b.bottom > s.bottom + 0.5)
      out.push(`chart ${i + 1}: ${t} cut off`);
  for (let a = 0; a < boxes.length; a++) for (let c = a + 1; c < boxes.length; c++) {
    const p = boxes[a][1], q = boxes[c][1];
    const x = Math.min(p.right, q.right) - Math.max(p.left, q.left);
    const y = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
    if (x > 1 && y > 1) out.push(`chart ${i + 1}: ${boxes[a][0]} overlaps ${boxes[c][0]}`);
  }
});
document.querySelectorAll('.table-wrap').forEach(w => {
  if (w.scrollWidth > w.clientWidth + 1) out.push(`table ${w.querySelector('caption').textContent} is ${w.scrollWidth} px in ${w.clientWidth}`);
});
document.title = JSON.stringify(out);
</script>";
    std::fs::write(&probe, html.replace("</body>", &format!("{script}</body>"))).unwrap();
    let (dom, _) = chromium_run(
        bin,
        width,
        800,
        &["--dump-dom"],
        &format!("file://{}", probe.display()),
    );
    serde_json::from_str(&unescape(between(&dom, "<title>", "</title>").unwrap())).unwrap()
}

/// Every chart's labels inside their card and clear of each other, every table the card's
/// width, on a screen and at an A4 page's width (about 720 px inside its margins); and no
/// text block shows a newline as `\u{a}`.
#[test]
fn every_label_and_table_fits_its_card_and_text_blocks_are_text() {
    let Some(bin) = chromium() else { return };
    let _turn = load();
    let (cmp, run_json) = ("tests/fixtures/compare.json", "tests/fixtures/run.json");
    let pages: [(&str, Vec<&str>); 4] = [
        ("run", vec![run_json]),
        ("compare", vec![cmp]),
        ("capacity", vec!["tests/fixtures/capacity.json"]),
        // Long names: a legend entry of a priced comparison named by its file's label.
        (
            "two labelled comparisons",
            vec![
                cmp,
                cmp,
                "--label",
                "baseline-g5-2xlarge",
                "--label",
                "candidate-inf2-xlarge",
            ],
        ),
    ];
    for (name, args) in pages {
        let html = page(&args);
        assert!(
            !html.contains("\\u{"),
            "{name}: an escaped control in the page"
        );
        for width in [1000, 720] {
            let bad = misfits(&bin, &html, width);
            assert!(bad.is_empty(), "{name} at {width} px: {bad:#?}");
        }
    }
}

#[test]
fn chromium_renders_every_chart_and_says_nothing_on_its_console() {
    let Some(bin) = chromium() else { return };
    let _turn = load();
    for fixture in ["run", "compare", "capacity"] {
        let html = page(&[&format!("tests/fixtures/{fixture}.json")]);
        assert_eq!(blank_charts(&bin, &html), Vec::<usize>::new(), "{fixture}");
    }
    // The check sees a blank chart: the second one's drawing taken out, its frame kept.
    let html = page(&["tests/fixtures/run.json"]);
    let second = html.match_indices("<svg").nth(1).unwrap().0;
    let end = second + html[second..].find("</svg>").unwrap();
    let open = second + html[second..].find('>').unwrap() + 1;
    let emptied = format!("{}{}", &html[..open], &html[end..]);
    assert_eq!(blank_charts(&bin, &emptied), [1]);
}

#[test]
fn a_ctrl_c_d_run_still_writes_its_report() {
    let s = Serve::fixed(20, 4, &[]);
    let (export, report) = (tmp_path("stopped.json"), tmp_path("stopped.html"));
    let err = tmp_path("stopped.txt");
    let mut child = Command::new(BIN)
        .args([
            "--headless",
            "--url",
            &s.url,
            "--duration",
            "60",
            "--concurrency",
            "4",
            "--export",
            export.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    wait_until("load", 30, || {
        get_json(&format!("{}/_encbench/counters", s.url))["invocations"]
            .as_u64()
            .unwrap()
            >= 40
    });
    signal(child.id(), Signal::INT);
    let status = child.wait().unwrap();
    let text = std::fs::read_to_string(&err).unwrap();
    assert_eq!(status.code(), Some(0), "{text}");
    assert!(text.contains("report written to"), "{text}");
    let html = std::fs::read_to_string(&report).expect("the report was written");
    assert!(html.ends_with("</html>\n"), "the page is whole");
    // The page shows what the export measured.
    let e: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let n = e["phases"][0]["n"].as_u64().unwrap();
    assert!(n > 0);
    let figs = figures(&html);
    assert!(figs.iter().any(|f| f.kind == "spectrum"), "{figs:?}");
    assert!(
        html.contains(&format!("<td class=\"num\">{n}</td>")),
        "the tables hold n = {n}"
    );
    // A report is a file: stdout is the export's or the tables'.
    let out = run(&["--demo", "--report", "-"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--report"), "{}", stderr(&out));
}

#[test]
fn compare_writes_its_report_with_the_targets_side_by_side() {
    let (a, b) = (Serve::one_ms(&[]), Serve::fixed(5, 1, &[]));
    let report = tmp_path("compare.html");
    let out = run(&[
        "compare",
        "--headless",
        "--target",
        &format!("name=fast,url={}", a.url),
        "--target",
        &format!("name=slow,url={}", b.url),
        "-n",
        "10",
        "--warmup",
        "1",
        "--no-concurrency",
        "--no-accuracy",
        "--batch-sizes",
        "1",
        "2",
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let figs = figures(&std::fs::read_to_string(&report).unwrap());
    let latency = figs
        .iter()
        .find(|f| f.texts.iter().any(|t| t == "Batch sweep — latency"))
        .unwrap_or_else(|| panic!("{figs:#?}"));
    for series in ["fast · p50", "fast · p99", "slow · p50", "slow · p99"] {
        assert!(
            latency.texts.iter().any(|t| t == series),
            "{series}: {latency:?}"
        );
    }
}
