//! Target, engine, loop, phase, state and elapsed time. A narrow terminal gets shorter words
//! for them (`50.0 Poisson` for `open loop 50.0 req/s Poisson`), never a line cut mid-word.

use crate::tui::state::App;
use encbench_core::plan::PhaseKind;
use encbench_core::text;
use encbench_load::engine::{RunState, Snapshot};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

/// One field of a line: its wordings from the longest, the last possibly empty (left out).
struct Field {
    forms: Vec<String>,
    style: Style,
}

fn field(forms: Vec<String>, style: Style) -> Field {
    Field { forms, style }
}

/// The fields joined by " · " in `width` columns: the fields named by `order` take their
/// next shorter wording, one step at a time, until the line fits; if even the shortest do
/// not, the end is cut with an ellipsis.
fn fit(lead: Vec<Span<'static>>, fields: &[Field], order: &[usize], width: usize) -> Line<'static> {
    let mut level = vec![0; fields.len()];
    let form = |level: &[usize], i: usize| fields[i].forms[level[i]].as_str();
    let length = |level: &[usize]| {
        let shown = (0..fields.len()).filter(|&i| !form(level, i).is_empty());
        lead.iter().map(Span::width).sum::<usize>()
            + shown
                .enumerate()
                .map(|(n, i)| form(level, i).chars().count() + if n > 0 { 3 } else { 0 })
                .sum::<usize>()
    };
    let mut steps = order.iter();
    while length(&level) > width {
        let Some(&i) = steps.find(|&&i| level[i] + 1 < fields[i].forms.len()) else {
            break;
        };
        level[i] += 1;
    }
    let mut spans = lead;
    let mut shown = 0;
    for (i, f) in fields.iter().enumerate() {
        let text = form(&level, i);
        if text.is_empty() {
            continue;
        }
        if shown > 0 {
            spans.push(Span::raw(" · "));
        }
        shown += 1;
        spans.push(Span::styled(text.to_string(), f.style));
    }
    cut(Line::from(spans), width)
}

/// The line's end replaced by an ellipsis if it is wider than `width`.
fn cut(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut room = width.saturating_sub(1);
    let mut spans = Vec::new();
    for s in line.spans {
        if room == 0 {
            break;
        }
        let text = text::truncate(&s.content, room + 1);
        let text = text.strip_suffix('…').unwrap_or(&text).to_string();
        room -= text.chars().count().min(room);
        spans.push(Span::styled(text, s.style));
    }
    spans.push(Span::raw("…"));
    Line::from(spans)
}

pub fn render(f: &mut Frame, area: Rect, app: &App) {
    let width = area.width as usize;
    f.render_widget(
        Paragraph::new(vec![
            first(app, width),
            second(&app.snap, app.info.rerank, width),
        ]),
        area,
    );
}

fn first(app: &App, width: usize) -> Line<'static> {
    let s = &app.snap;
    let name = Span::styled(
        " encbench-tui ",
        Style::default()
            .add_modifier(Modifier::BOLD)
            .fg(Color::Cyan),
    );
    let mut fields = vec![
        field(vec![s.target.clone()], Style::default()),
        field(vec![app.info.format.clone()], Style::default()),
    ];
    if let Some(o) = s.accuracy_before.as_ref().and_then(|a| a.output) {
        fields.push(field(vec![o.to_string()], Style::default()));
    }
    let mut order = vec![];
    if let Some(m) = &app.info.lengths {
        order.extend([fields.len(); 2]);
        // What sets the service time, beside what is served: dropped first when narrow.
        fields.push(field(
            vec![
                format!("inputs {}", m.describe()),
                format!("{}±{} tok", m.mean, m.stddev),
                String::new(),
            ],
            Style::default(),
        ));
    }
    if app.info.simulated {
        fields.push(field(
            vec!["simulated endpoint".into(), "simulated".into()],
            Style::default().fg(Color::Yellow),
        ));
    }
    order.push(fields.len() - 1);
    fit(vec![name], &fields, &order, width)
}

/// The arrival process in a word or two: `Poisson`, `fixed`, `burst 2`.
fn arrivals_short(burstiness: f64) -> String {
    if burstiness.is_infinite() {
        "fixed".into()
    } else if burstiness == 1.0 {
        "Poisson".into()
    } else {
        format!("burst {burstiness}")
    }
}

/// How far behind an open loop is, in four wordings from the fullest; `None` when it keeps up.
fn behind_field(s: &Snapshot) -> Option<Field> {
    let q = s.schedule?;
    let achieved = s.current.req_per_s;
    let backlog = q.backlog_words();
    let full = text::behind(
        q.offered_per_s,
        achieved,
        &backlog,
        q.behind_by(),
        q.overloaded,
    )?;
    let word = if q.overloaded { "OVERLOADED" } else { "behind" };
    let lag = text::lag(q.behind_by());
    let style = if q.overloaded {
        Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
    } else {
        Style::default().fg(Color::Yellow)
    };
    Some(field(
        vec![
            full,
            format!(
                "{word}: {} of {} req/s, {backlog}, lag {lag}",
                text::rate(Some(achieved)),
                text::rate(Some(q.offered_per_s)),
            ),
            format!("{word}: lag {lag}, {backlog}"),
            format!("{word}: lag {lag}"),
        ],
        style,
    ))
}

/// How long after the endpoint came back the header still says so.
const BACK_SHOWN_FOR_S: f64 = 10.0;

/// The endpoint lost (connecting keeps failing), or back a moment ago; `None` otherwise.
fn lost_field(s: &Snapshot) -> Option<Field> {
    let span = s.endpoint_lost.last()?;
    let Some(back) = span.back_at_s else {
        let at = format!("{:.1} s", span.at_s);
        return Some(field(
            vec![
                format!(
                    "ENDPOINT LOST at {at}: {}, {}",
                    span.kind.words(),
                    encbench_core::reach::attempts_failed(span.attempts)
                ),
                format!("ENDPOINT LOST at {at}: {}", span.kind.words()),
                format!("LOST at {at}"),
            ],
            Style::default().fg(Color::Red).add_modifier(Modifier::BOLD),
        ));
    };
    (s.elapsed.as_secs_f64() - back < BACK_SHOWN_FOR_S).then(|| {
        field(
            vec![
                format!(
                    "endpoint back at {back:.1} s after {:.1} s lost",
                    back - span.at_s
                ),
                format!("back at {back:.1} s"),
                String::new(),
            ],
            Style::default().fg(Color::Yellow),
        )
    })
}

/// State, how far behind the schedule, elapsed, phase, pace, concurrency, batch, in flight.
fn second(s: &Snapshot, rerank: bool, width: usize) -> Line<'static> {
    let state_style = match s.state {
        RunState::Running => Style::default().fg(Color::Green),
        RunState::Paused => Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD),
        RunState::Warming | RunState::CheckingAccuracy => Style::default().fg(Color::Cyan),
        _ => Style::default(),
    };
    let plain = Style::default();
    let state = match s.starts_in {
        Some(left) => format!("start in {} s", left.as_secs_f64().ceil()),
        None => s.state.label().into(),
    };
    let mut fields = vec![field(vec![state], state_style)];
    // Index 0 (the state, of one wording) stands for a field that is not there.
    let lost = lost_field(s).map_or(0, |f| {
        fields.push(f);
        fields.len() - 1
    });
    fields.extend(behind_field(s));
    let behind = fields.len() - 1;
    let secs = s.elapsed.as_secs();
    let compact = if secs < 3600 {
        format!("{}:{:02}", secs / 60, secs % 60)
    } else {
        text::elapsed(s.elapsed)
    };
    fields.push(field(vec![text::elapsed(s.elapsed), compact], plain));
    let phase = match &s.phase {
        Some(p) => {
            let of = p.step.map(|(i, n)| format!(" {i}/{n}")).unwrap_or_default();
            let rep = p
                .repetition
                .map(|(k, of)| (format!(" rep {k}/{of}"), format!(" r{k}/{of}")))
                .unwrap_or_default();
            let short = match p.kind {
                PhaseKind::Concurrency => "conc",
                k => k.name(),
            };
            vec![
                format!("phase {} {}{of}{}", p.index, p.kind.name(), rep.0),
                format!("#{} {short}{of}{}", p.index, rep.1),
            ]
        }
        None => vec!["starting".into()],
    };
    fields.push(field(phase, plain));
    let pace = &s.pace;
    let medium = match pace.rate_per_s {
        None => "closed loop".into(),
        Some(r) => format!(
            "{} req/s {}",
            text::rate(Some(r)),
            text::arrivals(pace.burstiness)
        ),
    };
    // The footer's words (burst, conc, batch): a bare `b` was burstiness beside the rate and
    // the batch size at the end of the same line, and `×b=` is the batch in the tables.
    let (short, shortest) = match pace.rate_per_s {
        None => ("closed".into(), "closed".into()),
        Some(r) => {
            let (r, a) = (text::rate(Some(r)), arrivals_short(pace.burstiness));
            (format!("{r} req/s {a}"), format!("{r}/s {a}"))
        }
    };
    fields.push(field(
        vec![text::pace(pace), medium, short, shortest],
        plain,
    ));
    // The open loop's default cap is said as such: 1024 is not a cap anyone asked for.
    let conc = format!("conc {}", s.concurrency);
    if s.concurrency_default && s.pace.rate_per_s.is_some() {
        fields.push(field(vec![format!("{conc} (default)"), conc], plain));
    } else {
        fields.push(field(vec![conc], plain));
    }
    // Left out last, and only beside an endpoint falling behind: the sweep panel and the
    // tables name the batch too.
    fields.push(field(
        // A reranker's batch is its documents per query.
        vec![
            format!("{} {}", if rerank { "D" } else { "batch" }, s.batch_size),
            String::new(),
        ],
        plain,
    ));
    fields.push(field(
        vec![format!("in flight {}", s.in_flight), String::new()],
        plain,
    ));
    let (elapsed, phase, pace, conc, batch, in_flight) = (
        behind + 1,
        behind + 2,
        behind + 3,
        behind + 4,
        behind + 5,
        behind + 6,
    );
    // What goes first is what a reader misses least; the state and the concurrency cap keep
    // their words (a default cap's "(default)" outlasts the long forms of the time and the
    // phase), and an endpoint falling behind keeps its figures longest (in flight is then the
    // cap anyway).
    let order = [
        pace, elapsed, phase, conc, pace, in_flight, pace, behind, behind, behind, batch, lost,
        lost,
    ];
    fit(vec![Span::raw(" ")], &fields, &order, width)
}
