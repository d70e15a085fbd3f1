//! Proof that the deployment still gives the model's verdicts: known answers are sent
//! before and after the load and each verdict is compared with the expected one. A
//! classifier is checked on NLI pairs (the predicted label); an embedder, found out by its
//! first answer being a vector, on retrieval items (the candidate nearest the query by
//! cosine). The verdicts, and how deployments' verdicts and vectors compare, are `verdicts`.

use crate::client::Target;
use crate::payload::{Answers, Format, LabelMap};
use encbench_core::input::{Input, NliSample, RetrievalSample};
use encbench_core::scrub;
use encbench_core::verdicts::{AccuracyReport, Output, Verdict, cosine};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the accuracy check sends, and how it reads the answers.
pub struct AccuracySetup {
    /// For a classifier.
    pub samples: Vec<NliSample>,
    pub labels: LabelMap,
    /// For an embedder.
    pub retrieval: Vec<RetrievalSample>,
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
}

/// One request of one input, shaped as the load is shaped (a padded load is checked padded),
/// so the verdicts are the deployment's as it is being measured. A row of scores no wider
/// than the class names is logits; a wider one is a vector.
async fn ask(
    target: &dyn Target,
    format: &dyn Format,
    labels: &LabelMap,
    input: &Input,
) -> Result<One, String> {
    let reply = target
        .invoke(&format.prepare(&[input]))
        .await
        .map_err(|failure| failure.to_string())?;
    // Labels and parse errors quote the server: scrubbed before they are kept.
    let answers = format
        .answers(&reply, &[input])
        .map_err(|e| scrub::text(&e))?;
    let none = || "response holds no verdict".to_string();
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
                let l = crate::payload::labels::argmax_label(row.iter().map(|&x| f64::from(x)))?;
                Ok(One::Label(labels.normalize(&l)))
            } else {
                Ok(One::Vector(row))
            }
        }
        Answers::Vectors(v) => v.into_iter().next().map(One::Vector).ok_or_else(none),
    }
}

/// The check: its first answer says which kind of known answers the endpoint needs.
pub async fn check(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySetup,
) -> AccuracyReport {
    check_counted(target, format, setup, &Progress::default()).await
}

/// [`check`], counting its verdicts into `progress` as they come.
pub async fn check_counted(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySetup,
    progress: &Progress,
) -> AccuracyReport {
    // The probe is the first NLI sample when there are any; an embedder's count is set
    // once its first answer shows it is one.
    progress.start(if setup.samples.is_empty() {
        setup.retrieval.len()
    } else {
        setup.samples.len()
    });
    let probe = match (setup.samples.first(), setup.retrieval.first()) {
        (Some(s), _) => s.input(),
        (None, Some(r)) => Input::Text(r.query.clone()),
        (None, None) => return AccuracyReport::new(vec![], None, None, vec![]),
    };
    let first = ask(target, format, &setup.labels, &probe).await;
    let output = match &first {
        Ok(One::Label(_)) => Some(Output::Labels),
        Ok(One::Vector(v)) => Some(Output::Vectors { dim: v.len() }),
        Err(_) => None,
    };
    match output {
        Some(Output::Vectors { dim }) if setup.retrieval.is_empty() => AccuracyReport::new(
            vec![],
            output,
            Some(format!(
                "the endpoint answers vectors ({dim}-d): give retrieval samples \
                 ({{\"query\", \"candidates\", \"expected\"}}) with --accuracy-samples"
            )),
            vec![],
        ),
        Some(Output::Vectors { .. }) => retrieval(target, format, setup, output, progress).await,
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
        // The probe was the first sample: its answer is that sample's verdict.
        _ => nli(target, format, setup, output, first, progress).await,
    }
}

/// One request per sample, sent one after another; the first sample's answer is given.
async fn nli(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySetup,
    output: Option<Output>,
    first: Result<One, String>,
    progress: &Progress,
) -> AccuracyReport {
    progress.start(setup.samples.len());
    let labels = &setup.labels;
    let mut verdicts = Vec::with_capacity(setup.samples.len());
    let mut first = Some(first);
    for s in &setup.samples {
        let expected = labels.normalize(&s.expected);
        let answer = match first.take() {
            Some(a) => a,
            None => ask(target, format, labels, &s.input()).await,
        };
        let (predicted, error) = match answer {
            Ok(One::Label(l)) => (Some(l), None),
            Ok(One::Vector(_)) => (None, Some("answered a vector, not a label".into())),
            Err(e) => (None, Some(e)),
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
        });
        progress.answered();
    }
    AccuracyReport::new(verdicts, output, None, vec![])
}

/// Each distinct text embedded once, alone; the verdict is the candidate nearest the query.
async fn retrieval(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySetup,
    output: Option<Output>,
    progress: &Progress,
) -> AccuracyReport {
    progress.start(setup.retrieval.len());
    let mut seen: Vec<(String, Result<Vec<f32>, String>)> = Vec::new();
    let mut verdicts = Vec::with_capacity(setup.retrieval.len());
    for item in &setup.retrieval {
        let mut vectors = Vec::with_capacity(item.candidates.len() + 1);
        for text in std::iter::once(&item.query).chain(&item.candidates) {
            if !seen.iter().any(|(t, _)| t == text) {
                let v = match ask(target, format, &setup.labels, &Input::Text(text.clone())).await {
                    Ok(One::Vector(v)) => Ok(v),
                    Ok(One::Label(_)) => Err("answered a label, not a vector".to_string()),
                    Err(e) => Err(e),
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
        let predicted = nearest.flatten();
        let shown = |t: &str| scrub::controls(t).into_owned();
        verdicts.push(Verdict {
            premise: shown(&item.query),
            hypothesis: String::new(),
            ok: predicted.as_deref() == Some(item.expected.as_str()),
            expected: shown(&item.expected),
            predicted: predicted.as_deref().map(shown),
            error: error.or_else(|| {
                predicted
                    .is_none()
                    .then(|| "no candidate had a vector".into())
            }),
            candidates: item.candidates.iter().map(|c| shown(c)).collect(),
        });
        progress.answered();
    }
    let vectors = seen
        .into_iter()
        .filter_map(|(t, v)| Some((t, v.ok()?)))
        .collect();
    AccuracyReport::new(verdicts, output, None, vectors)
}
