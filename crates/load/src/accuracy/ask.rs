//! One question of the check and its answer: a request shaped as the load is, its reply read
//! as a label, a vector or a ranking, and a body the server refuses asked again in the API's
//! other form.

use encbench_core::input::Input;
use encbench_core::scrub;
use encbench_wire::client::{ErrorKind, Failure, Target};
use encbench_wire::payload::{Answers, Format, LabelMap};

/// One input's answer.
pub(super) enum One {
    Label(String),
    Vector(Vec<f32>),
    /// A score per candidate, in the order sent.
    Ranking(Vec<f32>),
}

/// What one request of the check asks: an input's answer, or a query's candidates ranked.
pub(super) enum Question<'a> {
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
pub(super) enum Unanswered {
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
pub(super) async fn ask(
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
                let l =
                    encbench_wire::payload::labels::argmax_label(row.iter().map(|&x| f64::from(x)))
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
pub(super) async fn ask_or_switch(
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
