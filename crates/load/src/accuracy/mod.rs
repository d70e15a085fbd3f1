//! Proof that the deployment still gives the model's verdicts: known answers are sent
//! before and after the load and each verdict is compared with the expected one. One plain
//! text goes first, and what the model answers it says which known answers fit: a
//! classifier is checked on NLI pairs (the predicted label), an embedder on retrieval items
//! (the candidate nearest the query by cosine), a reranker on the same items (the candidate
//! it scores highest). The verdicts, and how deployments' verdicts and vectors compare, are
//! `verdicts`.

use ask::{One, Question, Unanswered, ask, ask_or_switch};
use encbench_core::input::{Input, NliSample, RerankSample, RetrievalSample};
use encbench_core::scrub;
use encbench_core::text::{is_no_route, no_route};
use encbench_core::verdicts::{AccuracyReport, Output, Verdict, cosine, judge};
use encbench_wire::client::{ErrorKind, Target};
use encbench_wire::payload::{Format, LabelMap};
use std::sync::atomic::{AtomicUsize, Ordering};

mod ask;
mod not_sent;

/// What the accuracy check sends, and how it reads the answers.
pub struct AccuracySpec {
    /// For a classifier.
    pub samples: Vec<NliSample>,
    pub labels: LabelMap,
    /// For an embedder.
    pub retrieval: Vec<RetrievalSample>,
    /// For a reranker; the retrieval items are ranked where there are none.
    pub rerank: Vec<RerankSample>,
    /// The load's first input, sent once too where the format sends it in another form
    /// than a plain text (a pair as token ids): a server that refuses that form is found
    /// out before the load, not by every request of it.
    pub load_input: Option<Input>,
}

/// How far a check under way has got: a check of a slow endpoint takes seconds, and a
/// front-end that showed nothing meanwhile would look stuck.
#[derive(Debug, Default)]
pub struct Progress {
    answered: AtomicUsize,
    total: AtomicUsize,
}

impl Progress {
    /// (verdicts given, verdicts to give) of the check under way, or of the last one.
    pub fn get(&self) -> (usize, usize) {
        (
            self.answered.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }

    fn start(&self, total: usize) {
        self.answered.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    fn answered(&self) {
        self.answered.fetch_add(1, Ordering::Relaxed);
    }
}

/// When a check runs, which decides what it may change and what it compares with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Before the load: the first answer says which known answers fit, and a refused body
    /// may switch the form every request of the run is then built in.
    BeforeLoad,
    /// Beside or after the load: the same known answers as the check before it (`None`:
    /// that one had no answer to go by). The deployment is the same one, so its first
    /// answer is not asked again what the model is: a server that went away would make a
    /// retrieval target look like a classifier, and its check a different one.
    Since(Option<Output>),
}

impl When {
    /// A check after (or beside) the one `before` made before the load.
    pub fn after(before: Option<&AccuracyReport>) -> When {
        When::Since(before.and_then(|b| b.output))
    }
}

/// The check: a plain text (or, for a reranker, a query and its candidates) first, whose
/// answer says which kind of known answers the endpoint needs.
pub async fn check(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySpec,
) -> AccuracyReport {
    check_counted(
        target,
        format,
        setup,
        &Progress::default(),
        When::BeforeLoad,
    )
    .await
}

/// [`check`], counting its verdicts into `progress` as they come.
pub async fn check_counted(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySpec,
    progress: &Progress,
    when: When,
) -> AccuracyReport {
    let labels = &setup.labels;
    let ranked = setup.ranked();
    let since = match when {
        When::Since(o) => o,
        When::BeforeLoad => None,
    };
    progress.start(match since {
        _ if format.ranks() => ranked.len(),
        Some(Output::Vectors { .. }) => setup.retrieval.len(),
        _ if setup.samples.is_empty() => setup.retrieval.len(),
        _ => setup.samples.len(),
    });
    let probe_text;
    let probe = match (
        format.ranks(),
        ranked.first(),
        setup.retrieval.first(),
        setup.samples.first(),
    ) {
        (true, Some(r), _, _) => Question::Rank {
            query: &r.query,
            candidates: &r.documents,
        },
        (true, None, _, _) => {
            let note = "the endpoint answers rankings: give rerank samples ({\"query\", \
                \"documents\", \"relevant\"}) with --rerank-samples";
            return AccuracyReport::new(vec![], Some(Output::Rankings), Some(note.into()), vec![]);
        }
        (false, _, Some(r), _) => {
            probe_text = Input::Text(r.query.clone());
            Question::One(&probe_text)
        }
        (false, _, None, Some(s)) => {
            probe_text = Input::Text(s.premise.clone());
            Question::One(&probe_text)
        }
        (false, _, None, None) => return AccuracyReport::new(vec![], None, None, vec![]),
    };
    let mut may_switch = when == When::BeforeLoad;
    let (first, mut switched) =
        ask_or_switch(target, format, labels, &probe, &mut may_switch).await;
    if let Some(input) = setup.load_input.as_ref().filter(|_| may_switch) {
        let (_, s) = ask_or_switch(
            target,
            format,
            labels,
            &Question::One(input),
            &mut may_switch,
        )
        .await;
        switched = switched.or(s);
    }
    let no_route = match (&first, target.route()) {
        (Err(Unanswered::Refused(f)), Some(route)) if is_no_route(&f.kind.key()) => {
            Some(no_route(&route))
        }
        _ => None,
    };
    let output = match &first {
        Ok(One::Label(_)) => Some(Output::Labels),
        Ok(One::Vector(v)) => Some(Output::Vectors { dim: v.len() }),
        Ok(One::Ranking(_)) => Some(Output::Rankings),
        Err(_) => since,
    };
    // The set the check before used, and nobody there to answer it: said, not sent.
    if let (Err(Unanswered::Refused(f)), Some(o)) = (&first, since)
        && matches!(f.kind, ErrorKind::Connection | ErrorKind::Timeout)
    {
        return not_sent::report(setup, &ranked, o, &not_sent::why(&first));
    }
    let mut report = by_output(target, format, setup, &ranked, output, first, progress).await;
    report.switched = switched;
    report.no_route = no_route.is_some() && report.passed == 0;
    report.note = no_route.or(report.note);
    report
}

/// The check of the known answers `output` calls for, given the first question's answer.
async fn by_output(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySpec,
    ranked: &[RerankSample],
    output: Option<Output>,
    first: Result<One, Unanswered>,
    progress: &Progress,
) -> AccuracyReport {
    match (output, first) {
        (Some(Output::Vectors { dim }), _) if setup.retrieval.is_empty() => AccuracyReport::new(
            vec![],
            output,
            Some(need_retrieval(&format!("vectors ({dim}-d)"))),
            vec![],
        ),
        (Some(Output::Vectors { .. }), first) => {
            let seen = vec![(
                setup.retrieval[0].query.clone(),
                match first {
                    Ok(One::Vector(v)) => Ok(v),
                    Ok(_) => Err("answered a label, not a vector".to_string()),
                    Err(e) => Err(e.to_string()),
                },
            )];
            retrieval(target, format, setup, output, seen, progress).await
        }
        (Some(Output::Rankings), first) => {
            rankings(target, format, setup, ranked, first, progress).await
        }
        _ if setup.samples.is_empty() => AccuracyReport::new(
            vec![],
            output,
            Some(
                "the endpoint answers labels: give NLI samples ({\"premise\", \"hypothesis\", \
                 \"expected\"}) with --accuracy-samples"
                    .into(),
            ),
            vec![],
        ),
        // The probe was a plain text: its failure is each sample's until they say otherwise.
        _ => nli(target, format, setup, output, progress).await,
    }
}

/// The note of an endpoint whose answers need the retrieval items, and none were given.
fn need_retrieval(answers: &str) -> String {
    format!(
        "the endpoint answers {answers}: give retrieval samples \
         ({{\"query\", \"candidates\", \"expected\"}}) with --accuracy-samples"
    )
}

/// One request per sample, sent one after another.
async fn nli(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySpec,
    output: Option<Output>,
    progress: &Progress,
) -> AccuracyReport {
    progress.start(setup.samples.len());
    let labels = &setup.labels;
    let mut verdicts = Vec::with_capacity(setup.samples.len());
    for s in &setup.samples {
        let expected = labels.normalize(&s.expected);
        let input = s.input();
        let (predicted, error) = match ask(target, format, labels, &Question::One(&input)).await {
            Ok(One::Label(l)) => (Some(l), None),
            Ok(One::Vector(_) | One::Ranking(_)) => {
                (None, Some("answered a vector, not a label".into()))
            }
            Err(e) => (None, Some(e.to_string())),
        };
        // The samples file's text is sent as written but kept escaped: it is shown and
        // exported from here.
        verdicts.push(Verdict {
            premise: scrub::controls(&s.premise).into_owned(),
            hypothesis: scrub::controls(&s.hypothesis).into_owned(),
            ok: predicted.as_deref() == Some(expected.as_str()),
            expected,
            predicted,
            error,
            candidates: vec![],
            ranking: vec![],
        });
        progress.answered();
    }
    let read = verdicts.iter().any(|v| v.predicted.is_some());
    let joined = (read && format.joins_pairs()).then(|| {
        format!(
            "{} {} takes single texts: each pair went as one, premise and hypothesis joined by a space, which a model trained on pairs may judge otherwise",
            format.name(),
            format.path()
        )
    });
    AccuracyReport::new(verdicts, output, joined, vec![])
}

/// A reranker, checked on the ranked samples: each query with its documents in one request,
/// the verdict whether the document it scores highest is a relevant one. `first` is the
/// first sample's answer.
async fn rankings(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySpec,
    ranked: &[RerankSample],
    first: Result<One, Unanswered>,
    progress: &Progress,
) -> AccuracyReport {
    progress.start(ranked.len());
    let mut first = Some(first);
    let mut verdicts = Vec::with_capacity(ranked.len());
    let mut scores = Vec::with_capacity(ranked.len());
    for item in ranked {
        let answer = match first.take() {
            Some(a) => a,
            None => {
                let q = Question::Rank {
                    query: &item.query,
                    candidates: &item.documents,
                };
                ask(target, format, &setup.labels, &q).await
            }
        };
        let verdict = match answer {
            Ok(One::Ranking(s)) if s.len() == item.documents.len() => {
                let v = judge::ranking(item, Ok(&s));
                scores.push((item.query.clone(), s));
                v
            }
            Ok(One::Ranking(s)) => judge::ranking(
                item,
                Err(format!(
                    "{} scores for {} documents",
                    s.len(),
                    item.documents.len()
                )),
            ),
            Ok(_) => judge::ranking(item, Err("answered no ranking".into())),
            Err(e) => judge::ranking(item, Err(e.to_string())),
        };
        verdicts.push(verdict);
        progress.answered();
    }
    let mut report = AccuracyReport::new(verdicts, Some(Output::Rankings), None, vec![]);
    report.scores = scores;
    report
}

impl AccuracySpec {
    /// What a reranker is checked on: the rerank samples, else the retrieval items as
    /// queries whose one relevant document is the expected candidate.
    fn ranked(&self) -> std::borrow::Cow<'_, [RerankSample]> {
        if !self.rerank.is_empty() {
            return std::borrow::Cow::Borrowed(&self.rerank);
        }
        std::borrow::Cow::Owned(
            self.retrieval
                .iter()
                .map(|r| RerankSample {
                    query: r.query.clone(),
                    documents: r.candidates.clone(),
                    relevant: r
                        .candidates
                        .iter()
                        .position(|c| *c == r.expected)
                        .into_iter()
                        .collect(),
                })
                .collect(),
        )
    }
}

/// Each distinct text embedded once, alone; the verdict is the candidate nearest the query.
/// `seen` holds the vectors already had (the probe's).
async fn retrieval(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySpec,
    output: Option<Output>,
    mut seen: Vec<(String, Result<Vec<f32>, String>)>,
    progress: &Progress,
) -> AccuracyReport {
    progress.start(setup.retrieval.len());
    let mut verdicts = Vec::with_capacity(setup.retrieval.len());
    for item in &setup.retrieval {
        let mut vectors = Vec::with_capacity(item.candidates.len() + 1);
        for text in std::iter::once(&item.query).chain(&item.candidates) {
            if !seen.iter().any(|(t, _)| t == text) {
                let input = Input::Text(text.clone());
                let v = match ask(target, format, &setup.labels, &Question::One(&input)).await {
                    Ok(One::Vector(v)) => Ok(v),
                    Ok(_) => Err("answered a label, not a vector".to_string()),
                    Err(e) => Err(e.to_string()),
                };
                seen.push((text.clone(), v));
            }
            let v = &seen
                .iter()
                .find(|(t, _)| t == text)
                .expect("just embedded")
                .1;
            vectors.push(v.clone());
        }
        let error = vectors.iter().find_map(|v| v.as_ref().err().cloned());
        let nearest = error.is_none().then(|| {
            let query = vectors[0].as_ref().expect("no error");
            item.candidates
                .iter()
                .zip(&vectors[1..])
                .filter_map(|(c, v)| Some((c, cosine(query, v.as_ref().ok()?)?)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(c, _)| c.clone())
        });
        verdicts.push(judge::retrieval(item, nearest.flatten().as_deref(), error));
        progress.answered();
    }
    let vectors = seen
        .into_iter()
        .filter_map(|(t, v)| Some((t, v.ok()?)))
        .collect();
    AccuracyReport::new(verdicts, output, None, vectors)
}
