//! Proof that the deployment still gives the model's verdicts: known NLI pairs are sent
//! before and after the load and each predicted label is compared with the expected one.

use crate::payload::{Format, Input};
use crate::target::Target;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct NliSample {
    pub premise: String,
    pub hypothesis: String,
    pub expected: String,
}

impl NliSample {
    pub fn input(&self) -> Input {
        Input::pair(&self.premise, &self.hypothesis)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SamplesError {
    #[error("cannot read {0}: {1}")]
    Unreadable(String, String),
    #[error("{0} line {1}: expected {{\"premise\", \"hypothesis\", \"expected\"}}")]
    BadLine(String, usize),
    #[error("{0}: no samples")]
    Empty(String),
}

pub fn parse_samples(text: &str, name: &str) -> Result<Vec<NliSample>, SamplesError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            serde_json::from_str(line).map_err(|_| SamplesError::BadLine(name.into(), i + 1))?,
        );
    }
    if out.is_empty() {
        return Err(SamplesError::Empty(name.into()));
    }
    Ok(out)
}

pub fn shipped_samples() -> Vec<NliSample> {
    parse_samples(crate::assets::NLI_SAMPLES, "shipped samples").expect("shipped samples parse")
}

pub fn load_samples(path: Option<&Path>) -> Result<Vec<NliSample>, SamplesError> {
    match path {
        None => Ok(shipped_samples()),
        Some(p) => {
            let name = p.display().to_string();
            let text = std::fs::read_to_string(p)
                .map_err(|e| SamplesError::Unreadable(name.clone(), e.to_string()))?;
            parse_samples(&text, &name)
        }
    }
}

/// Maps what an endpoint calls a class to our label names, case-insensitively.
/// `LABEL_n` (a model exported without id2label) maps to the n-th configured name.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelMap {
    names: Vec<String>,
}

impl Default for LabelMap {
    /// mDeBERTa-v3 xnli's id2label order.
    fn default() -> Self {
        LabelMap::new(["entailment", "neutral", "contradiction"])
    }
}

impl LabelMap {
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> LabelMap {
        LabelMap {
            names: names
                .into_iter()
                .map(|s| s.as_ref().trim().to_lowercase())
                .collect(),
        }
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn normalize(&self, raw: &str) -> String {
        let lower = raw.trim().to_lowercase();
        if let Some(idx) = lower
            .strip_prefix("label_")
            .and_then(|n| n.parse::<usize>().ok())
            && let Some(name) = self.names.get(idx)
        {
            return name.clone();
        }
        lower
    }
}

/// Labels from an HF pipeline response. Accepts `[{label, score}]` (one per input),
/// a bare `{label, score}` (single input), and `[[{label, score}, ...]]` (top_k: best wins).
pub fn hf_labels(body: &[u8]) -> Result<Vec<String>, String> {
    let v: Value =
        serde_json::from_slice(body).map_err(|e| format!("response is not JSON: {e}"))?;
    fn one(v: &Value) -> Option<String> {
        match v {
            Value::Object(o) => o.get("label").and_then(Value::as_str).map(str::to_owned),
            Value::Array(items) => items
                .iter()
                .filter_map(|i| Some((i.get("score")?.as_f64()?, i.get("label")?.as_str()?)))
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, l)| l.to_owned()),
            _ => None,
        }
    }
    let items: Vec<&Value> = match &v {
        Value::Array(a) => a.iter().collect(),
        o @ Value::Object(_) => vec![o],
        _ => vec![],
    };
    let labels: Option<Vec<String>> = items.into_iter().map(one).collect();
    match labels {
        Some(l) if !l.is_empty() => Ok(l),
        _ => Err(format!(
            "no label in response: {}",
            truncate(&v.to_string(), 120)
        )),
    }
}

pub fn truncate(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_string()
    } else {
        format!("{}…", &s[..s.floor_char_boundary(n)])
    }
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

impl AccuracyReport {
    pub fn mismatches(&self) -> impl Iterator<Item = &Verdict> {
        self.samples.iter().filter(|v| !v.ok)
    }
}

/// One request per sample, sent one after another, shaped as the load is shaped (a padded
/// load is checked padded), so the verdicts are the deployment's as it is being measured.
pub async fn check(
    target: &dyn Target,
    format: &dyn Format,
    samples: &[NliSample],
    labels: &LabelMap,
) -> AccuracyReport {
    let mut verdicts = Vec::with_capacity(samples.len());
    for s in samples {
        let input = s.input();
        let expected = labels.normalize(&s.expected);
        let (predicted, error) = match target.invoke(&format.prepare(&[&input])).await {
            Ok(reply) => match format.verdicts(&reply) {
                Ok(l) => (Some(labels.normalize(&l[0])), None),
                Err(e) => (None, Some(e)),
            },
            Err(kind) => (None, Some(kind.key())),
        };
        verdicts.push(Verdict {
            premise: s.premise.clone(),
            hypothesis: s.hypothesis.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_case_insensitive_and_label_n_maps_by_index() {
        let m = LabelMap::default();
        assert_eq!(m.normalize("ENTAILMENT"), "entailment");
        assert_eq!(m.normalize("LABEL_2"), "contradiction");
        assert_eq!(m.normalize("label_1"), "neutral");
        assert_eq!(m.normalize("LABEL_9"), "label_9");
        let custom = LabelMap::new(["Contradiction", "Entailment"]);
        assert_eq!(custom.normalize("LABEL_0"), "contradiction");
    }

    #[test]
    fn hf_response_shapes() {
        assert_eq!(
            hf_labels(br#"[{"label":"neutral","score":0.9}]"#).unwrap(),
            vec!["neutral"]
        );
        assert_eq!(
            hf_labels(br#"{"label":"LABEL_0","score":0.9}"#).unwrap(),
            vec!["LABEL_0"]
        );
        let top_k = br#"[[{"label":"a","score":0.1},{"label":"b","score":0.8}]]"#;
        assert_eq!(hf_labels(top_k).unwrap(), vec!["b"]);
        assert!(hf_labels(b"[]").is_err());
        assert!(hf_labels(b"not json").is_err());
    }

    #[test]
    fn shipped_samples_cover_every_verdict() {
        let s = shipped_samples();
        assert!(s.len() >= 4);
        for label in ["entailment", "neutral", "contradiction"] {
            assert!(s.iter().any(|x| x.expected == label), "{label} missing");
        }
    }
}
