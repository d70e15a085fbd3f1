//! Proof that the deployment still gives the model's verdicts: known answers are sent
//! before and after the load and each verdict is compared with the expected one. One plain
//! text goes first, and what the model answers it says which known answers fit: a
//! classifier is checked on NLI pairs (the predicted label), an embedder on retrieval items
//! (the candidate nearest the query by cosine), a reranker on the same items (the candidate
//! it scores highest). The verdicts, and how deployments' verdicts and vectors compare, are
//! `verdicts`.

use crate::client::{ErrorKind, Failure, Target};
use crate::payload::{Answers, Format, LabelMap};
use encbench_core::input::{Input, NliSample, RerankSample, RetrievalSample};
use encbench_core::scrub;
use encbench_core::text::{is_no_route, no_route};
use encbench_core::verdicts::{AccuracyReport, Output, Verdict, cosine};
use std::sync::atomic::{AtomicUsize, Ordering};

mod not_sent;

/// What the accuracy check sends, and how it reads the answers.
pub struct AccuracySetup {
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

/// One input's answer.
enum One {
    Label(String),
    Vector(Vec<f32>),
    /// A score per candidate, in the order sent.
    Ranking(Vec<f32>),
}

/// What one request of the check asks: an input's answer, or a query's candidates ranked.
enum Question<'a> {
    One(&'a Input),
    Rank {
        query: &'a str,
        candidates: &'a [String],
    },
}

impl Question<'_> {
    /// The request's inputs: a ranking is a batch of (query, candidate) pairs.
    fn inputs(&self) -> Vec<Input> {
        match self {
            Question::One(i) => vec![(*i).clone()],
            Question::Rank { query, candidates } => {
                candidates.iter().map(|c| Input::pair(query, c)).collect()
            }
        }
    }
}

/// Why a question got no answer: the server refused it (with what it said), or its reply
/// could not be read.
enum Unanswered {
    Refused(Failure),
    Unread(String),
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unanswered::Refused(failure) => write!(f, "{failure}"),
            Unanswered::Unread(why) => f.write_str(why),
        }
    }
}

/// A refusal of the body itself (400, 422): another form of the same inputs may pass.
fn refused_the_body(u: &Unanswered) -> bool {
    let Unanswered::Refused(f) = u else {
        return false;
    };
    matches!(
        f.kind,
        ErrorKind::Http(400 | 422)
            | ErrorKind::Validation
            | ErrorKind::ModelError {
                original_status: Some(400 | 422)
            }
    )
}

/// One request, shaped as the load is shaped (a padded load is checked padded), so the
/// verdicts are the deployment's as it is being measured. A row of scores no wider than the
/// class names is logits; a wider one is a vector.
async fn ask(
    target: &dyn Target,
    format: &dyn Format,
    labels: &LabelMap,
    question: &Question<'_>,
) -> Result<One, Unanswered> {
    let inputs = question.inputs();
    let refs: Vec<&Input> = inputs.iter().collect();
    let reply = target
        .invoke(&format.prepare_whole(&refs))
        .await
        .map_err(Unanswered::Refused)?;
    // Labels and parse errors quote the server: scrubbed before they are kept.
    let unread = |e: String| Unanswered::Unread(scrub::text(&e));
    let answers = format.answers(&reply, &refs).map_err(unread)?;
    let none = || unread("response holds no verdict".to_string());
    match answers {
        Answers::Labels(l) => l
            .into_iter()
            .next()
            // Scrubbed before lowercasing: an echoed secret is found as it was sent.
            .map(|l| One::Label(labels.normalize(&scrub::text(&l))))
            .ok_or_else(none),
        Answers::Scores(rows) => {
            let row = rows.into_iter().next().ok_or_else(none)?;
            if row.len() <= labels.names().len() {
                let l = crate::payload::labels::argmax_label(row.iter().map(|&x| f64::from(x)))
                    .map_err(unread)?;
                Ok(One::Label(labels.normalize(&l)))
            } else {
                Ok(One::Vector(row))
            }
        }
        Answers::Vectors(v) => v.into_iter().next().map(One::Vector).ok_or_else(none),
        Answers::Ranking(scores) => Ok(One::Ranking(scores)),
    }
}

/// A question, asked once more in the API's other form when the server refuses the body
/// (Infinity takes strings only, a server without a tokenizer ids only): the answer, and
/// what was switched, in words. `may_switch` is spent on the first refusal.
async fn ask_or_switch(
    target: &dyn Target,
    format: &dyn Format,
    labels: &LabelMap,
    question: &Question<'_>,
    may_switch: &mut bool,
) -> (Result<One, Unanswered>, Option<String>) {
    let first = ask(target, format, labels, question).await;
    let refused = match &first {
        Err(u) if *may_switch && refused_the_body(u) => u.to_string(),
        _ => return (first, None),
    };
    *may_switch = false;
    let (Some(was), Some(now)) = (format.form(), format.switch_form()) else {
        return (first, None);
    };
    match ask(target, format, labels, question).await {
        Ok(answer) => (
            Ok(answer),
            Some(format!(
                "the server refused {} ({refused}): sending {} from now on",
                was.name(),
                now.name()
            )),
        ),
        Err(_) => {
            // Neither form passed: back to the documented one, and its refusal is the answer.
            format.switch_form();
            (first, None)
        }
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
    setup: &AccuracySetup,
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
    setup: &AccuracySetup,
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
    report.note = no_route.or(report.note);
    report
}

/// The check of the known answers `output` calls for, given the first question's answer.
async fn by_output(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySetup,
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
    setup: &AccuracySetup,
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
    setup: &AccuracySetup,
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
                let v = ranking_verdict(item, Ok(&s));
                scores.push((item.query.clone(), s));
                v
            }
            Ok(One::Ranking(s)) => ranking_verdict(
                item,
                Err(format!(
                    "{} scores for {} documents",
                    s.len(),
                    item.documents.len()
                )),
            ),
            Ok(_) => ranking_verdict(item, Err("answered no ranking".into())),
            Err(e) => ranking_verdict(item, Err(e.to_string())),
        };
        verdicts.push(verdict);
        progress.answered();
    }
    let mut report = AccuracyReport::new(verdicts, Some(Output::Rankings), None, vec![]);
    report.scores = scores;
    report
}

/// A ranked query's verdict: its documents ordered by score, right when the first is a
/// relevant one.
fn ranking_verdict(item: &RerankSample, scores: Result<&[f32], String>) -> Verdict {
    let shown = |t: &str| scrub::controls(t).into_owned();
    let expected = item
        .relevant
        .first()
        .map_or("", |&i| item.documents[i].as_str());
    let (ranking, error) = match scores {
        Ok(s) => {
            let mut order: Vec<usize> = (0..s.len()).collect();
            // Best first; a tie keeps the documents' order, so the same scores give the
            // same ranking everywhere.
            order.sort_by(|&a, &b| s[b].total_cmp(&s[a]));
            (order, None)
        }
        Err(e) => (vec![], Some(e)),
    };
    let top = ranking.first().copied();
    Verdict {
        premise: shown(&item.query),
        hypothesis: String::new(),
        ok: top.is_some_and(|t| item.relevant.contains(&t)),
        expected: shown(expected),
        predicted: top.map(|t| shown(&item.documents[t])),
        error,
        candidates: item.documents.iter().map(|c| shown(c)).collect(),
        ranking,
    }
}

impl AccuracySetup {
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

/// A retrieval item's verdict: the candidate predicted nearest, or why none was.
fn retrieval_verdict(
    item: &RetrievalSample,
    predicted: Option<&str>,
    error: Option<String>,
) -> Verdict {
    let shown = |t: &str| scrub::controls(t).into_owned();
    Verdict {
        premise: shown(&item.query),
        hypothesis: String::new(),
        ok: predicted == Some(item.expected.as_str()),
        expected: shown(&item.expected),
        predicted: predicted.map(shown),
        error: error.or_else(|| {
            predicted
                .is_none()
                .then(|| "no candidate had a vector".into())
        }),
        candidates: item.candidates.iter().map(|c| shown(c)).collect(),
        ranking: vec![],
    }
}

/// Each distinct text embedded once, alone; the verdict is the candidate nearest the query.
/// `seen` holds the vectors already had (the probe's).
async fn retrieval(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySetup,
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
        verdicts.push(retrieval_verdict(item, nearest.flatten().as_deref(), error));
        progress.answered();
    }
    let vectors = seen
        .into_iter()
        .filter_map(|(t, v)| Some((t, v.ok()?)))
        .collect();
    AccuracyReport::new(verdicts, output, None, vectors)
}
