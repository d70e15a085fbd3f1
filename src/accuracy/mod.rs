//! Proof that the deployment still gives the model's verdicts: known NLI pairs are sent
//! before and after the load and each predicted label is compared with the expected one;
//! across deployments (`diff`), each must give the same verdict as the others.

pub mod diff;

use crate::input::NliSample;
use crate::payload::{Format, LabelMap};
use crate::scrub;
use crate::target::Target;
use serde::{Deserialize, Serialize};

/// What the accuracy check sends, and how it reads the answers.
pub struct AccuracySetup {
    pub samples: Vec<NliSample>,
    pub labels: LabelMap,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub premise: String,
    pub hypothesis: String,
    pub expected: String,
    /// `None` when the request failed or the response held no label.
    pub predicted: Option<String>,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracyReport {
    pub passed: usize,
    pub total: usize,
    pub samples: Vec<Verdict>,
}

/// One request per sample, sent one after another, shaped as the load is shaped (a padded
/// load is checked padded), so the verdicts are the deployment's as it is being measured.
pub async fn check(
    target: &dyn Target,
    format: &dyn Format,
    setup: &AccuracySetup,
) -> AccuracyReport {
    let labels = &setup.labels;
    let mut verdicts = Vec::with_capacity(setup.samples.len());
    for s in &setup.samples {
        let input = s.input();
        let expected = labels.normalize(&s.expected);
        // Labels and parse errors quote the server: scrubbed before they are kept.
        let (predicted, error) = match target.invoke(&format.prepare(&[&input])).await {
            Ok(reply) => match format.verdicts(&reply) {
                Ok(l) => match l.first() {
                    // Scrubbed before lowercasing: an echoed secret is found as it was sent.
                    Some(l) => (Some(labels.normalize(&scrub::text(l))), None),
                    None => (None, Some("response holds no verdict".into())),
                },
                Err(e) => (None, Some(scrub::text(&e))),
            },
            Err(kind) => (None, Some(kind.key())),
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
        });
    }
    AccuracyReport {
        passed: verdicts.iter().filter(|v| v.ok).count(),
        total: verdicts.len(),
        samples: verdicts,
    }
}
