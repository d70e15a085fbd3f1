//! Class names: what an endpoint calls a class, mapped to the names the samples use.

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

/// `LABEL_n` for the highest of a row of scores (logits or probabilities): the class index
/// as a model without id2label names it. An empty row is no verdict: class 0 would pass the
/// accuracy check whenever it was the expected one.
pub fn argmax_label(scores: impl IntoIterator<Item = f64>) -> Result<String, String> {
    scores
        .into_iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| format!("LABEL_{i}"))
        .ok_or_else(|| "no scores".to_string())
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
    fn the_highest_score_names_the_class() {
        assert_eq!(argmax_label([0.1, 2.0, 0.3]).unwrap(), "LABEL_1");
        assert_eq!(argmax_label([]).unwrap_err(), "no scores");
    }
}
