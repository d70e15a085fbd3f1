//! The headless progress line. Its counts are the export's: measured requests only, the
//! warmup shown apart while it runs, and an accuracy check shows its own progress. On a
//! terminal the line is rewritten in place and must never wrap (a wrapped line leaves a
//! new line behind at every rewrite), so the least important fields go first.

use encbench_core::results::RunReport;
use encbench_core::text;
use encbench_load::engine::{RunState, Snapshot};

/// One part of the line; a higher `rank` is dropped sooner when the line must shrink.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    rank: u8,
    text: String,
}

fn field(rank: u8, text: impl Into<String>) -> Field {
    Field {
        rank,
        text: text.into(),
    }
}

/// What the state is, worded for the line: the warmup and an accuracy check count their own
/// requests, since the measured counts do not include them.
fn state(s: &Snapshot) -> String {
    let (answered, total) = s.accuracy_progress;
    match (s.state, &s.phase) {
        (RunState::CheckingAccuracy, _) => {
            // The check before the load is the only one that ends with no verdicts kept.
            let when = if s.accuracy_before.is_none() {
                "before"
            } else {
                "after"
            };
            format!("accuracy {when}: {answered}/{total} answered")
        }
        (RunState::Warming, Some(p)) => format!("warmup {}/{}", p.sent.min(p.warmup), p.warmup),
        (RunState::Waiting, _) => match s.starts_in {
            Some(left) => format!("start in {} s", left.as_secs_f64().ceil()),
            None => RunState::Waiting.label().to_string(),
        },
        (other, _) => other.label().to_string(),
    }
}

/// The line's fields, most important first in rank: the state, then the measured counts,
/// then the phase, throughput, tail and the rest.
pub(crate) fn fields(s: &Snapshot, rerank: bool) -> Vec<Field> {
    let mut out = Vec::new();
    if let Some(p) = &s.phase {
        // The sweep's own count ("batch 2/3"), not the run's phases so far ("7/8").
        let what = match p.step {
            Some((i, n)) => format!(": {} {i}/{n}", p.kind.name()),
            None => format!(" {}", p.kind.name()),
        };
        let rep = p
            .repetition
            .map(|(k, of)| format!(" rep {k}/{of}"))
            .unwrap_or_default();
        out.push(field(
            3,
            format!(
                "[phase {}{what}{rep} {}={} c={}]",
                p.index,
                if rerank { "D" } else { "b" },
                p.batch_size,
                p.concurrency
            ),
        ));
    }
    out.push(field(7, format!("{:.1} s", s.elapsed.as_secs_f64())));
    out.push(field(0, state(s)));
    let measuring = matches!(
        s.state,
        RunState::Running | RunState::Paused | RunState::Draining | RunState::Finished
    ) || s.state == RunState::Failed;
    let Some(p) = s.phase.as_ref().filter(|_| measuring) else {
        return out;
    };
    let c = &s.current;
    out.push(field(
        1,
        format!("sent {}", p.sent.saturating_sub(p.warmup)),
    ));
    out.push(field(1, format!("ok {}", c.ok)));
    out.push(field(1, format!("err {}", c.error_count())));
    out.push(field(5, format!("p50 {} ms", text::ms(c.latency.p50))));
    out.push(field(4, format!("p99 {} ms", text::ms(c.latency.p99))));
    out.push(field(2, format!("{} req/s", text::sig3(c.req_per_s))));
    if s.accuracy_running {
        let (answered, total) = s.accuracy_progress;
        out.push(field(6, format!("accuracy {answered}/{total}")));
    }
    if let Some(t) = s.schedule.and_then(|q| {
        let backlog = q.backlog_words();
        text::behind(
            q.offered_per_s,
            c.req_per_s,
            &backlog,
            q.behind_by(),
            q.overloaded,
        )
    }) {
        out.push(field(2, t));
    }
    out
}

/// The fields joined, as many as fit in `width` characters (all of them without a width):
/// the highest rank goes first, and of equal ranks the one further right. A single field
/// wider than the line is cut.
pub(crate) fn fit(fields: &[Field], width: Option<usize>) -> String {
    let join = |f: &[Field]| {
        f.iter()
            .map(|f| f.text.as_str())
            .collect::<Vec<_>>()
            .join("  ")
    };
    let Some(width) = width else {
        return join(fields);
    };
    let mut kept = fields.to_vec();
    while kept.len() > 1 && join(&kept).chars().count() > width {
        let worst = kept
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (f.rank, *i))
            .map(|(i, _)| i)
            .expect("more than one field");
        kept.remove(worst);
    }
    text::truncate(&join(&kept), width)
}

/// The line after the run: the measured counts of every phase, as the export has them.
pub(super) fn done(r: &RunReport) -> Vec<Field> {
    let sum =
        |f: fn(&encbench_core::results::PhaseResult) -> u64| r.phases.iter().map(f).sum::<u64>();
    // A pooled phase's warmup is one repetition's; each repetition warmed up.
    let warmup = sum(|p| match p.repetitions.as_slice() {
        [] => p.warmup,
        reps => reps.iter().map(|r| r.warmup).sum(),
    });
    let phases = text::count(r.phases.len(), "phase");
    let repeated = match r.phases.iter().map(|p| p.repetitions.len()).max() {
        Some(k) if k > 1 => format!(" × {k} repetitions"),
        _ => String::new(),
    };
    let mut out = vec![
        field(0, if r.stopped_early { "stopped" } else { "done" }),
        field(3, format!("{phases}{repeated}")),
        field(1, format!("sent {}", sum(|p| p.sent))),
        field(1, format!("ok {}", sum(|p| p.ok))),
        field(
            1,
            format!(
                "err {}",
                sum(encbench_core::results::PhaseResult::error_count)
            ),
        ),
    ];
    if warmup > 0 {
        out.push(field(2, format!("(warmup {warmup} not counted)")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::snapshot;
    use encbench_load::engine::PhaseView;

    fn running() -> Snapshot {
        let mut s = snapshot();
        s.accuracy_running = true;
        s.accuracy_progress = (4, 10);
        s
    }

    #[test]
    fn counts_are_the_measured_ones_and_the_warmup_is_apart() {
        let mut s = running();
        let p: &mut PhaseView = s.phase.as_mut().unwrap();
        p.warmup = 3;
        p.sent = 53;
        let line = fit(&fields(&s, false), None);
        assert!(line.contains("sent 50"), "{line}");
        assert!(line.contains(&format!("ok {}", s.current.ok)), "{line}");
        assert!(!line.contains("warmup"), "{line}");

        s.state = RunState::Warming;
        s.phase.as_mut().unwrap().sent = 2;
        let line = fit(&fields(&s, false), None);
        assert!(line.contains("warmup 2/3"), "{line}");
        assert!(!line.contains("sent") && !line.contains("ok "), "{line}");
    }

    #[test]
    fn a_sweep_phase_says_its_place_in_the_sweep() {
        let mut s = running();
        let p: &mut PhaseView = s.phase.as_mut().unwrap();
        p.kind = encbench_core::plan::PhaseKind::Batch;
        (p.index, p.step, p.batch_size, p.concurrency) = (7, Some((2, 3)), 8, 1);
        let line = fit(&fields(&s, false), None);
        assert!(line.contains("[phase 7: batch 2/3 b=8 c=1]"), "{line}");
        assert!(!line.contains("7/"), "{line}");
        s.phase.as_mut().unwrap().step = None;
        assert!(fit(&fields(&s, false), None).contains("[phase 7 batch b=8 c=1]"));
        // A reranker's batch is its documents per query.
        assert!(fit(&fields(&s, true), None).contains("[phase 7 batch D=8 c=1]"));
        // --repeat: the repetition under way, beside the place in the sweep.
        let p = s.phase.as_mut().unwrap();
        (p.step, p.repetition) = (Some((2, 3)), Some((4, 5)));
        let line = fit(&fields(&s, false), None);
        assert!(
            line.contains("[phase 7: batch 2/3 rep 4/5 b=8 c=1]"),
            "{line}"
        );
    }

    #[test]
    fn an_accuracy_check_shows_its_own_progress() {
        let mut s = running();
        s.state = RunState::CheckingAccuracy;
        s.phase = None;
        s.accuracy_before = None;
        s.accuracy_progress = (7, 10);
        let line = fit(&fields(&s, false), None);
        assert!(line.contains("accuracy before: 7/10 answered"), "{line}");
        assert!(!line.contains("ok 0") && !line.contains("sent"), "{line}");

        let mut s = running();
        s.state = RunState::CheckingAccuracy;
        s.accuracy_progress = (2, 10);
        let line = fit(&fields(&s, false), None);
        assert!(line.contains("accuracy after: 2/10 answered"), "{line}");

        // Beside the load, a field of its own.
        let line = fit(&fields(&running(), false), None);
        assert!(line.contains("accuracy 4/10"), "{line}");
    }

    #[test]
    fn the_line_fits_the_width_dropping_the_least_important_first() {
        let all = fields(&running(), false);
        let full = fit(&all, None);
        assert!(full.chars().count() > 80, "{full}");
        for width in [119, 100, 80, 60, 40, 30, 12, 5] {
            let line = fit(&all, Some(width));
            assert!(line.chars().count() <= width, "{width}: {line}");
        }
        // What goes is always of a rank no better than what stays.
        for width in 20..full.chars().count() {
            let line = fit(&all, Some(width));
            let kept = |f: &Field| line.contains(f.text.as_str());
            let worst_kept = all.iter().filter(|f| kept(f)).map(|f| f.rank).max();
            let best_dropped = all.iter().filter(|f| !kept(f)).map(|f| f.rank).min();
            assert!(worst_kept <= best_dropped, "{width}: {line}");
        }
        let at = |w| fit(&all, Some(w));
        // The first to go are the elapsed time, the accuracy beside the load, the p50.
        assert!(
            !at(90).contains("p50") && at(90).contains("p99"),
            "{}",
            at(90)
        );
        let short = at(40);
        assert!(
            short.contains("running") && short.contains("sent") && short.contains("err"),
            "{short}"
        );
        assert!(!short.contains("phase"), "{short}");
        // Wide enough, nothing is dropped.
        assert_eq!(fit(&all, Some(full.chars().count())), full);
    }
}
