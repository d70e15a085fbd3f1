//! One chart, drawn as inline SVG: what `figures` says to draw (series, marks, axes) and the
//! one function that draws any of them with plotters.
//!
//! Every axis is linear in plotters' eyes: a log axis is drawn over the logarithms of its
//! values with the tick marks placed and named here, so one code path (one coordinate type)
//! draws every chart, and ticks land on the values a reader looks for (1, 2, 4, 8 …; 90 %,
//! 99 %, 99.9 %) rather than on plotters' round logarithms.

use plotters::chart::DualCoordChartContext;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, KeyPointWeight};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

/// How an axis maps values to the page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// From zero (or the least value, when it is negative) to the largest.
    Linear,
    /// Powers of two apart (batch sizes, concurrency caps).
    Log2,
    /// A quantile's "nines", -log10(1 - q): HdrHistogram's percentile spectrum.
    Nines,
}

#[derive(Debug, Clone)]
pub struct Axis {
    pub desc: String,
    pub scale: Scale,
}

impl Axis {
    pub fn new(desc: impl Into<String>, scale: Scale) -> Axis {
        Axis {
            desc: desc.into(),
            scale,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Line,
    Dashed,
    /// A filled circle per point.
    Dots,
    /// A cross per point.
    Crosses,
    /// An error bar, and a band: only the legend draws them as a style.
    Bar,
    Band,
}

#[derive(Debug, Clone)]
pub struct Series {
    pub label: String,
    /// In the axes' own units (batch sizes, not their logarithms; quantiles as nines).
    pub points: Vec<(f64, f64)>,
    /// Index into the palette.
    pub colour: usize,
    pub style: Style,
    /// Against the right-hand axis.
    pub right: bool,
    /// The points' 95 % intervals, drawn as error bars with each point marked (left axis).
    pub bars: Vec<Bar>,
    /// A curve's 95 % interval as a shaded band, (x, low, high) wherever it has both ends
    /// (left axis).
    pub band: Vec<(f64, f64, f64)>,
}

/// The 95 % interval of a percentile `y` at `x`: from `lo` to `hi`, or where no sample bounds
/// it from above (`hi` none) an arrow up from `lo`, past `y`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: Option<f64>,
}

/// The legend's name for the error bars.
pub const BARS_LABEL: &str = "95 % interval";

/// A vertical line across the plot at `x`, named at its top (the knee, the saturation point,
/// the capacity found, a live change).
#[derive(Debug, Clone)]
pub struct Mark {
    pub x: f64,
    pub label: String,
}

/// A horizontal line at `y` of the left axis (an SLO bound, the knee's threshold), with a
/// legend entry.
#[derive(Debug, Clone)]
pub struct Level {
    pub y: f64,
    pub label: String,
}

#[derive(Debug, Clone)]
pub struct Chart {
    /// What kind of chart (`spectrum`, `batch`, …): the figure's `data-chart`.
    pub kind: &'static str,
    pub title: String,
    /// What the chart shows, in words under it (for print, and for screen readers).
    pub caption: String,
    pub x: Axis,
    pub y: Axis,
    pub y2: Option<Axis>,
    pub series: Vec<Series>,
    pub marks: Vec<Mark>,
    pub levels: Vec<Level>,
    /// What the numbered marks stand for, listed under the chart (a timeline's live changes).
    pub listed: Vec<String>,
}

/// Okabe & Ito's palette, told apart with every common colour-vision deficiency; yellow is
/// last, as it is faint on white.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0xF0, 0xE4, 0x42),
];

const GREY: RGBColor = RGBColor(0x55, 0x55, 0x55);

pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The chart's size in SVG units; the page scales it to its column.
pub const WIDTH: u32 = 880;
pub const HEIGHT: u32 = 380;

/// A linear axis with the tick marks given: plotters' own `with_key_points` loses the value
/// formatter its mesh needs.
#[derive(Debug, Clone)]
struct Ticked {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(range: Range<f64>, ticks: Vec<f64>) -> Ticked {
        Ticked { range, ticks }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let Range { start, end } = self.range;
        let share = (value - start) / (end - start);
        let px = f64::from(limit.0) + share * f64::from(limit.1 - limit.0);
        // A value far off the axis must not wrap around an i32.
        px.clamp(-1e6, 1e6).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        match hint.weight() {
            KeyPointWeight::Bold => self.ticks.clone(),
            // No light grid between the ticks: the charts stay quiet.
            KeyPointWeight::Any => vec![],
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// Where a value lands on its axis before plotters' linear mapping.
fn to_axis(scale: Scale, v: f64) -> f64 {
    match scale {
        Scale::Linear | Scale::Nines => v,
        Scale::Log2 => v.max(f64::MIN_POSITIVE).log2(),
    }
}

/// The axis's range and its ticks, both in axis units.
fn span(scale: Scale, values: impl Iterator<Item = f64>) -> (Range<f64>, Vec<f64>) {
    let vals: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    match scale {
        Scale::Linear => {
            let lo = lo.min(0.0);
            let hi = if hi > lo { hi * 1.08 } else { lo + 1.0 };
            let step = nice_step((hi - lo) / 6.0);
            let first = (lo / step).ceil() * step;
            let ticks = (0..)
                .map(|i| first + f64::from(i) * step)
                .take_while(|t| *t <= hi + step * 1e-9)
                .take(40)
                .collect();
            (lo..hi, ticks)
        }
        Scale::Log2 => {
            let (a, b) = (to_axis(scale, lo).floor(), to_axis(scale, hi).ceil());
            let b = if b > a { b } else { a + 1.0 };
            let ticks = (0..)
                .map(|i| a + f64::from(i))
                .take_while(|t| *t <= b)
                .take(40)
                .collect();
            (a - 0.15..b + 0.15, ticks)
        }
        Scale::Nines => {
            let hi = hi.clamp(1.0, 6.0).ceil();
            let ticks = std::iter::once(0.0)
                .chain(std::iter::once(2f64.log10()))
                // hi is a whole number of nines, 1 to 6.
                .chain((1..=hi as i32).map(f64::from))
                .collect();
            (0.0..hi, ticks)
        }
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

/// A tick's name: the value it stands for, as a reader writes it.
pub fn tick_label(scale: Scale, t: f64) -> String {
    match scale {
        Scale::Linear => trim(t),
        Scale::Log2 => trim(2f64.powf(t).round()),
        Scale::Nines => {
            let q = 1.0 - 10f64.powf(-t);
            let pct = q * 100.0;
            // 99.9 %, not 99.90000000000001 %.
            let digits = (t - 2.0).max(0.0).round() as usize;
            format!("{pct:.digits$}%")
        }
    }
}

fn trim(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn desc_font() -> TextStyle<'static> {
    ("sans-serif", 17).into_font().color(&BLACK)
}

/// The chart as an `<svg>` element. Its texts quote exports (targets, labels, events, the
/// SLO), so control characters are escaped first, as every rendering escapes them: a page
/// printed to stdout reaches a terminal. plotters escapes XML.
pub fn svg(c: &Chart) -> Result<String, String> {
    let c = escaped(c);
    let mut out = String::new();
    draw(&c, &mut out).map_err(|e| format!("cannot draw '{}': {e}", c.title))?;
    Ok(out)
}

fn escaped(c: &Chart) -> Chart {
    let esc = |s: &str| encbench_core::scrub::controls(s).into_owned();
    let mut c = c.clone();
    c.title = esc(&c.title);
    for a in std::iter::once(&mut c.x)
        .chain(std::iter::once(&mut c.y))
        .chain(c.y2.as_mut())
    {
        a.desc = esc(&a.desc);
    }
    for s in &mut c.series {
        s.label = esc(&s.label);
    }
    for m in &mut c.marks {
        m.label = esc(&m.label);
    }
    for l in &mut c.levels {
        l.label = esc(&l.label);
    }
    c
}

type Failed = Box<dyn std::error::Error>;

fn draw(c: &Chart, out: &mut String) -> Result<(), Failed> {
    let left = |s: &Series| !s.right;
    let (xr, xt) = span(
        c.x.scale,
        c.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .chain(c.marks.iter().map(|m| m.x)),
    );
    // The bars' ends too: an interval cut off by the axis would claim less than it is.
    let (yr, yt) = span(
        c.y.scale,
        c.series
            .iter()
            .filter(|s| left(s))
            .flat_map(|s| {
                s.points
                    .iter()
                    .map(|p| p.1)
                    .chain(s.bars.iter().flat_map(|b| [Some(b.lo), b.hi]).flatten())
                    .chain(s.band.iter().map(|b| b.2))
            })
            .chain(c.levels.iter().map(|l| l.y)),
    );
    let y2_scale = c.y2.as_ref().map_or(Scale::Linear, |a| a.scale);
    let (y2r, y2t) = span(
        y2_scale,
        c.series
            .iter()
            .filter(|s| s.right)
            .flat_map(|s| s.points.iter().map(|p| p.1)),
    );
    let (x0, x1) = (xr.start, xr.end);
    let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(&c.title, ("sans-serif", 21).into_font().color(&BLACK))?;
    // The legend beside the plot, not over it: curves fill any corner a legend could take.
    let (plot, side) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
    let mut chart = ChartBuilder::on(&plot)
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(70)
        .right_y_label_area_size(if c.y2.is_some() { 70 } else { 12 })
        .build_cartesian_2d(
            Ticked::new(xr.clone(), xt.clone()),
            Ticked::new(yr.clone(), yt),
        )?
        .set_secondary_coord(Ticked::new(xr, xt), Ticked::new(y2r, y2t));
    let (xs, ys) = (c.x.scale, c.y.scale);
    chart
        .configure_mesh()
        .x_desc(&c.x.desc)
        .y_desc(&c.y.desc)
        .axis_desc_style(desc_font())
        .label_style(("sans-serif", 15).into_font().color(&BLACK))
        .light_line_style(TRANSPARENT)
        .bold_line_style(RGBColor(0xE4, 0xE4, 0xE4))
        .x_label_formatter(&|v| tick_label(xs, *v))
        .y_label_formatter(&|v| tick_label(ys, *v))
        .draw()?;
    if let Some(a) = &c.y2 {
        chart
            .configure_secondary_axes()
            .y_desc(&a.desc)
            .axis_desc_style(desc_font())
            .label_style(("sans-serif", 15).into_font().color(&BLACK))
            .y_label_formatter(&|v| tick_label(y2_scale, *v))
            .draw()?;
    }
    for l in &c.levels {
        let style = ShapeStyle::from(GREY).stroke_width(1);
        let pts = [(x0, l.y), (x1, l.y)];
        chart.draw_series(DashedLineSeries::new(pts, 8, 5, style))?;
    }
    draw_bands(&mut chart, c)?;
    draw_curves(&mut chart, c)?;
    draw_bars(&mut chart, c)?;
    draw_marks(&mut chart, c, x0..x1, yr)?;
    legend(c, &side)?;
    root.present()?;
    Ok(())
}

/// The plot's two coordinate systems: the left y axis, and the right one (`y2`).
type Plot<'a, 'b> = DualCoordChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<Ticked, Ticked>,
    Cartesian2d<Ticked, Ticked>,
>;

/// Every series in its style, on the axis it belongs to.
fn draw_curves(chart: &mut Plot<'_, '_>, c: &Chart) -> Result<(), Failed> {
    for s in &c.series {
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|&(x, y)| (to_axis(c.x.scale, x), y))
            .filter(|p| p.0.is_finite() && p.1.is_finite())
            .collect();
        let col = colour(s.colour);
        let line = ShapeStyle::from(col).stroke_width(2);
        match (s.style, s.right) {
            (Style::Line, false) => chart.draw_series(LineSeries::new(pts, line))?,
            (Style::Line, true) => chart.draw_secondary_series(LineSeries::new(pts, line))?,
            (Style::Dashed, false) => chart.draw_series(DashedLineSeries::new(pts, 7, 4, line))?,
            (Style::Dashed, true) => {
                chart.draw_secondary_series(DashedLineSeries::new(pts, 7, 4, line))?
            }
            (Style::Dots, false) => chart.draw_series(
                pts.into_iter()
                    .map(|p| Circle::new(p, 5, col.filled()).into_dyn()),
            )?,
            (Style::Dots, true) => chart.draw_secondary_series(
                pts.into_iter()
                    .map(|p| Circle::new(p, 5, col.filled()).into_dyn()),
            )?,
            (Style::Crosses, false) => {
                chart.draw_series(pts.into_iter().map(|p| Cross::new(p, 6, line).into_dyn()))?
            }
            (Style::Crosses, true) => chart.draw_secondary_series(
                pts.into_iter().map(|p| Cross::new(p, 6, line).into_dyn()),
            )?,
            (Style::Bar | Style::Band, _) => continue,
        };
    }
    Ok(())
}

/// Each series' band under the curves, in its colour, faint enough for several to overlap.
fn draw_bands(chart: &mut Plot<'_, '_>, c: &Chart) -> Result<(), Failed> {
    for s in c.series.iter().filter(|s| !s.band.is_empty() && !s.right) {
        let x = |v| to_axis(c.x.scale, v);
        let outline: Vec<(f64, f64)> = s
            .band
            .iter()
            .map(|&(v, lo, _)| (x(v), lo))
            .chain(s.band.iter().rev().map(|&(v, _, hi)| (x(v), hi)))
            .collect();
        let fill = colour(s.colour).mix(BAND_OPACITY).filled();
        chart.draw_series(std::iter::once(Polygon::new(outline, fill)))?;
    }
    Ok(())
}

/// A band's opacity: three overlapping still show the grid through them.
const BAND_OPACITY: f64 = 0.15;

/// Half the width of a bar's caps and of its arrow, in SVG units.
const CAP: i32 = 4;

/// How far an open interval's arrow reaches past its figure, in SVG units.
const PAST: i32 = 14;

/// Each series' error bars, in its colour and a hair apart from another series' at the same
/// x (p50's and p99's, two sources' overlaid), its points marked with a dot. An interval
/// with no upper end is an arrow up from its low end, past the figure: "at least this";
/// one up to the plot's top would cross every label there.
fn draw_bars(chart: &mut Plot<'_, '_>, c: &Chart) -> Result<(), Failed> {
    let barred: Vec<&Series> = c
        .series
        .iter()
        .filter(|s| !s.bars.is_empty() && !s.right)
        .collect();
    for (i, s) in barred.iter().enumerate() {
        let col = colour(s.colour);
        let stroke = ShapeStyle::from(col).stroke_width(1);
        let shift =
            (i32::try_from(i).unwrap_or(0) * 2 - i32::try_from(barred.len()).unwrap_or(1) + 1) * 2;
        for b in &s.bars {
            let x = to_axis(c.x.scale, b.x);
            let px = |y: f64| chart.backend_coord(&(x, y)).1;
            let rise = match b.hi {
                Some(hi) => px(hi) - px(b.lo),
                None => px(b.y.max(b.lo)) - px(b.lo) - PAST,
            };
            // The top: a cap, or an arrow where the interval has no upper end.
            let end = if b.hi.is_some() {
                vec![(shift - CAP, rise), (shift + CAP, rise)]
            } else {
                vec![
                    (shift - CAP, rise + 2 * CAP),
                    (shift, rise),
                    (shift + CAP, rise + 2 * CAP),
                ]
            };
            let bar = EmptyElement::at((x, b.lo))
                + PathElement::new(vec![(shift, 0), (shift, rise)], stroke)
                + PathElement::new(vec![(shift - CAP, 0), (shift + CAP, 0)], stroke)
                + PathElement::new(end, stroke);
            chart.draw_series(std::iter::once(bar))?;
        }
        chart.draw_series(
            s.points
                .iter()
                .map(|&(x, y)| Circle::new((to_axis(c.x.scale, x), y), 3, col.filled())),
        )?;
    }
    Ok(())
}

/// The marks: a dashed vertical line across the plot (`y`), named beside it.
fn draw_marks(
    chart: &mut Plot<'_, '_>,
    c: &Chart,
    x: Range<f64>,
    y: Range<f64>,
) -> Result<(), Failed> {
    let (top, bottom) = (y.end, y.start);
    let (x0, x1) = (x.start, x.end);
    // Names placed so far, as boxes relative to the plot's top: a name goes as high as it
    // clears them, so marks close together (a timeline's changes a second apart) are named
    // one under the other instead of on top of each other.
    let mut placed: Vec<[i32; 4]> = Vec::new();
    let (plot_left, plot_right) = (
        chart.backend_coord(&(x0, top)).0,
        chart.backend_coord(&(x1, top)).0,
    );
    let mut order: Vec<&Mark> = c.marks.iter().collect();
    order.sort_by(|a, b| a.x.total_cmp(&b.x));
    for m in order {
        let x = to_axis(c.x.scale, m.x);
        let style = ShapeStyle::from(GREY).stroke_width(1);
        chart.draw_series(DashedLineSeries::new([(x, bottom), (x, top)], 4, 4, style))?;
        let px = chart.backend_coord(&(x, top)).0;
        // Named beside its line, on the side with room (a name past the plot is cut off),
        // over several lines when neither side has room for it on one.
        let (room_left, room_right) = (px - 4 - plot_left, plot_right - px - 4);
        let width = text_width(&m.label, MARK_FONT);
        let right_half = (x - x0) / (x1 - x0) > 0.6;
        let on_left = if width <= room_left && width <= room_right {
            right_half
        } else {
            room_left > room_right
        };
        let lines = wrap(
            &m.label,
            if on_left { room_left } else { room_right },
            MARK_FONT,
        );
        let width = lines
            .iter()
            .map(|l| text_width(l, MARK_FONT))
            .max()
            .unwrap_or(0);
        let (side, gap, left, right) = if on_left {
            (HPos::Right, -4, px - 4 - width, px - 4)
        } else {
            (HPos::Left, 4, px + 4, px + 4 + width)
        };
        let dy = place(&mut placed, left, right, lines.len());
        let font = ("sans-serif", MARK_FONT)
            .into_font()
            .color(&GREY)
            .pos(Pos::new(side, VPos::Top));
        for (i, line) in (0..).zip(lines) {
            chart.draw_series(std::iter::once(
                EmptyElement::at((x, top))
                    + Text::new(line, (gap, dy + i * MARK_LINE), font.clone()),
            ))?;
        }
    }
    Ok(())
}

/// The height of a line of a mark's name, in SVG units.
const MARK_LINE: i32 = MARK_FONT as i32 + 3;

/// The first offset from the plot's top where a name of `lines` lines from `left` to
/// `right` clears every name placed, which it joins.
fn place(placed: &mut Vec<[i32; 4]>, left: i32, right: i32, lines: usize) -> i32 {
    let height = i32::try_from(lines).unwrap_or(1) * MARK_LINE;
    let mut dy = 2;
    while !placed
        .iter()
        .all(|b| right + 3 <= b[0] || left >= b[1] + 3 || dy + height <= b[2] || dy >= b[3])
    {
        dy += MARK_LINE;
    }
    placed.push([left, right, dy, dy + height]);
    dy
}

/// `s` in lines of at most `width` SVG units at `size`, broken between words (and inside a
/// word only when it alone is wider).
fn wrap(s: &str, width: i32, size: u32) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in s.split(' ') {
        let joined = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if text_width(&joined, size) <= width || line.is_empty() && word.is_empty() {
            line = joined;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        for ch in word.chars() {
            if !line.is_empty() && text_width(&format!("{line}{ch}"), size) > width {
                lines.push(std::mem::take(&mut line));
            }
            line.push(ch);
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

const MARK_FONT: u32 = 13;

/// A generous estimate of how wide `s` is in a sans-serif font of `size` (SVG units), so a
/// name placed by it reaches neither its neighbour's nor past the chart. plotters writes a
/// font of size 15 as 12.1 px; `DejaVu Sans`, among the widest of the usual fonts, has
/// digits 0.64 em wide and most lower-case letters less: 0.55 of `size` is 0.68 em.
fn text_width(s: &str, size: u32) -> i32 {
    let em = f64::from(size) * 0.55;
    (s.chars().count() as f64 * em).ceil() as i32
}

/// Room for the legend at the right of every chart, in SVG units.
const LEGEND_WIDTH: u32 = 220;

/// One entry per series (and per level line), top down: its sample and its label.
fn legend(
    c: &Chart,
    area: &DrawingArea<SVGBackend<'_>, plotters::coord::Shift>,
) -> Result<(), Failed> {
    let barred = c.series.iter().any(|s| !s.bars.is_empty());
    let banded = c.series.iter().any(|s| !s.band.is_empty());
    let entries: Vec<(Style, RGBColor, &str)> = c
        .levels
        .iter()
        .map(|l| (Style::Dashed, GREY, l.label.as_str()))
        .chain(
            c.series
                .iter()
                .map(|s| (s.style, colour(s.colour), s.label.as_str())),
        )
        .chain(barred.then_some((Style::Bar, GREY, BARS_LABEL)))
        .chain(banded.then_some((Style::Band, GREY, BARS_LABEL)))
        .collect();
    if entries.is_empty() {
        return Ok(());
    }
    let (size, labels) = legend_lines(&entries);
    let line = i32::try_from(size).unwrap_or(15) + 4;
    let font = ("sans-serif", size)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let mut y = 30;
    for ((style, col, _), lines) in entries.into_iter().zip(labels) {
        let (a, b, dot) = glyph(style);
        let stroke = if style == Style::Band {
            ShapeStyle::from(col.mix(BAND_OPACITY * 2.0)).stroke_width(10)
        } else {
            ShapeStyle::from(col).stroke_width(2)
        };
        area.draw(
            &(EmptyElement::at((4, y))
                + PathElement::new(a.to_vec(), stroke)
                + PathElement::new(b.to_vec(), stroke)
                + Circle::new((10, 0), dot, col.filled())),
        )?;
        for text in lines {
            area.draw(&(EmptyElement::at((4, y)) + Text::new(text, (28, 0), font.clone())))?;
            y += line;
        }
        y += 3;
    }
    Ok(())
}

/// The legend's font size and each entry's lines: whole at the largest size from 15 down
/// to 12 where every entry fits the legend's width and all its height, else broken into
/// lines at the largest size where they fit.
fn legend_lines(entries: &[(Style, RGBColor, &str)]) -> (u32, Vec<Vec<String>>) {
    let width = i32::try_from(LEGEND_WIDTH).unwrap_or(200) - 28 - 6;
    let room = i32::try_from(HEIGHT).unwrap_or(380) - 40;
    let height = |size: u32, lines: &[Vec<String>]| {
        let n = lines.iter().map(Vec::len).sum::<usize>();
        i32::try_from(n).unwrap_or(i32::MAX) * (size as i32 + 4)
            + 3 * i32::try_from(lines.len()).unwrap_or(0)
    };
    for size in (12..=15).rev() {
        let whole: Vec<Vec<String>> = entries.iter().map(|e| vec![e.2.to_string()]).collect();
        if entries.iter().all(|e| text_width(e.2, size) <= width) && height(size, &whole) <= room {
            return (size, whole);
        }
    }
    let mut size = 15;
    loop {
        let lines: Vec<Vec<String>> = entries.iter().map(|e| wrap(e.2, width, size)).collect();
        if size <= 8 || height(size, &lines) <= room {
            return (size, lines);
        }
        size -= 1;
    }
}

/// A point pair of a legend sample, relative to where the legend puts it.
type Stroke = [(i32, i32); 2];

/// The legend's sample of a series as two strokes and a dot (a stroke, two short strokes for
/// dashed, a dot, or a cross), so that every style draws as one element type.
fn glyph(style: Style) -> (Stroke, Stroke, u32) {
    match style {
        // A band's sample is a line drawn broad and faint.
        Style::Line | Style::Band => ([(0, 0), (20, 0)], [(20, 0), (20, 0)], 0),
        Style::Dashed => ([(0, 0), (8, 0)], [(12, 0), (20, 0)], 0),
        Style::Dots => ([(10, 0), (10, 0)], [(10, 0), (10, 0)], 5),
        Style::Crosses => ([(5, -5), (15, 5)], [(5, 5), (15, -5)], 0),
        // Its caps are left out: two strokes are all a glyph has.
        Style::Bar => ([(10, -7), (10, 7)], [(6, -7), (14, -7)], 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_name_the_values_a_reader_looks_for() {
        let (_, t) = span(Scale::Nines, [0.0, 2.7].into_iter());
        let names: Vec<String> = t.iter().map(|&v| tick_label(Scale::Nines, v)).collect();
        assert_eq!(names, ["0%", "50%", "90%", "99%", "99.9%"]);
        let (_, t) = span(Scale::Log2, [1.0, 32.0].into_iter());
        let names: Vec<String> = t.iter().map(|&v| tick_label(Scale::Log2, v)).collect();
        assert_eq!(names, ["1", "2", "4", "8", "16", "32"]);
        let (r, t) = span(Scale::Linear, [3.0, 97.0].into_iter());
        assert!(r.start == 0.0 && r.end > 97.0);
        assert_eq!(t[..3], [0.0, 20.0, 40.0]);
    }
}
