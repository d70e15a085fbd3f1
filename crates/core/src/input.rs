//! What is sent to the model: input texts (NLI pairs or single texts) and the known-answer
//! samples whose verdicts the accuracy check compares.

use serde::Deserialize;
use serde_json::{Value, json};
use std::io::Read;
use std::path::Path;

/// How the endpoint is asked to shape the inputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub pad_to_max: bool,
    pub max_len: usize,
}

/// Largest input file read (texts, samples, a tokenizer and its config): plenty to vary the
/// inputs, and a file of a gigabyte is refused before a byte is read instead of exhausting
/// memory.
pub const MAX_INPUT_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The bytes of `path`, at most `limit` of them: a bigger file is refused by its size before
/// reading, and a pipe or device that turns out bigger once `limit` bytes are read.
pub fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let over = |size: String| format!("{size} is over the {} MiB limit", limit >> 20);
    if let Ok(m) = file.metadata()
        && m.is_file()
        && m.len() > limit
    {
        return Err(over(format!("{} bytes", m.len())));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(over("it".into()));
    }
    Ok(bytes)
}

/// `read_capped` as text.
pub fn read_capped_text(path: &Path, limit: u64) -> Result<String, String> {
    String::from_utf8(read_capped(path, limit)?)
        .map_err(|_| "stream did not contain valid UTF-8".into())
}

/// One model input: an NLI pair or a single text (embedders, classifiers).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize)]
#[serde(untagged)]
pub enum Input {
    Pair { premise: String, hypothesis: String },
    HfPair { text: String, text_pair: String },
    Text(String),
}

impl Input {
    pub fn pair(premise: &str, hypothesis: &str) -> Input {
        Input::Pair {
            premise: premise.into(),
            hypothesis: hypothesis.into(),
        }
    }

    /// (first, optional second) sequence, whatever the input was written as.
    pub fn parts(&self) -> (&str, Option<&str>) {
        match self {
            Input::Pair {
                premise,
                hypothesis,
            } => (premise, Some(hypothesis)),
            Input::HfPair { text, text_pair } => (text, Some(text_pair)),
            Input::Text(t) => (t, None),
        }
    }

    /// The Hugging Face pipeline's form: pairs as `{"text", "text_pair"}`.
    pub fn to_hf(&self) -> Value {
        match self.parts() {
            (a, Some(b)) => json!({ "text": a, "text_pair": b }),
            (a, None) => Value::String(a.to_string()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TextsError {
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("{path} line {line}: expected a JSON string or an object with premise/hypothesis")]
    BadLine { path: String, line: usize },
    #[error(
        "{path} line {line}: starts with {{ but is not JSON ({reason}); write the object whole on one line"
    )]
    BadJson {
        path: String,
        line: usize,
        reason: String,
    },
    #[error("{path}: no inputs")]
    Empty { path: String },
}

/// JSONL of pairs or strings; a line that is not JSON at all is taken as a plain text,
/// unless it starts with `{`: that is an object gone wrong (cut, a missing quote), and sent
/// as text it would measure the wrong inputs without a word. A text that merely holds braces
/// further in is still a text.
pub fn parse_texts(source: &str, path: &str) -> Result<Vec<Input>, TextsError> {
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(v) => {
                out.push(
                    serde_json::from_value::<Input>(v).map_err(|_| TextsError::BadLine {
                        path: path.into(),
                        line: i + 1,
                    })?,
                );
            }
            Err(e) if line.starts_with('{') => {
                return Err(TextsError::BadJson {
                    path: path.into(),
                    line: i + 1,
                    reason: e.to_string(),
                });
            }
            Err(_) => out.push(Input::Text(line.to_string())),
        }
    }
    if out.is_empty() {
        return Err(TextsError::Empty { path: path.into() });
    }
    Ok(out)
}

pub fn load_texts(path: &Path) -> Result<Vec<Input>, TextsError> {
    let shown = path.display().to_string();
    let text =
        read_capped_text(path, MAX_INPUT_FILE_BYTES).map_err(|reason| TextsError::Unreadable {
            path: shown.clone(),
            reason,
        })?;
    parse_texts(&text, &shown)
}

/// The inputs of request `k` of a phase: the batch after request k-1's, cycling through the texts.
pub fn batch_inputs(texts: &[Input], batch_size: usize, k: usize) -> Vec<&Input> {
    (0..batch_size)
        .map(|j| &texts[(k * batch_size + j) % texts.len()])
        .collect()
}

/// A premise/hypothesis pair with the verdict an NLI model must give.
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

/// A query with candidates, of which an embedding model must put `expected` nearest.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RetrievalSample {
    pub query: String,
    pub candidates: Vec<String>,
    pub expected: String,
}

/// The known answers a deployment is checked on: NLI pairs for a classifier, retrieval
/// items for an embedder (which the check uses is decided by what the endpoint answers).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KnownAnswers {
    pub nli: Vec<NliSample>,
    pub retrieval: Vec<RetrievalSample>,
}

#[derive(Debug, thiserror::Error)]
pub enum SamplesError {
    #[error("cannot read {0}: {1}")]
    Unreadable(String, String),
    #[error(
        "{0} line {1}: expected {{\"premise\", \"hypothesis\", \"expected\"}} or {{\"query\", \"candidates\", \"expected\"}} with expected one of at least two candidates"
    )]
    BadLine(String, usize),
    #[error("{0}: no samples")]
    Empty(String),
}

/// Lines of either kind, in one file or two.
pub fn parse_samples(text: &str, name: &str) -> Result<KnownAnswers, SamplesError> {
    let mut out = KnownAnswers::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || SamplesError::BadLine(name.into(), i + 1);
        let v: serde_json::Value = serde_json::from_str(line).map_err(|_| bad())?;
        if v.get("query").is_some() {
            let r: RetrievalSample = serde_json::from_value(v).map_err(|_| bad())?;
            if r.candidates.len() < 2 || !r.candidates.contains(&r.expected) {
                return Err(bad());
            }
            out.retrieval.push(r);
        } else {
            out.nli.push(serde_json::from_value(v).map_err(|_| bad())?);
        }
    }
    if out.nli.is_empty() && out.retrieval.is_empty() {
        return Err(SamplesError::Empty(name.into()));
    }
    Ok(out)
}

pub fn shipped_samples() -> Vec<NliSample> {
    parse_samples(crate::assets::NLI_SAMPLES, "shipped samples")
        .expect("shipped samples parse")
        .nli
}

pub fn shipped_retrieval() -> Vec<RetrievalSample> {
    parse_samples(
        crate::assets::RETRIEVAL_SAMPLES,
        "shipped retrieval samples",
    )
    .expect("shipped retrieval samples parse")
    .retrieval
}

/// The samples of `path`, or the shipped ones of both kinds.
pub fn load_samples(path: Option<&Path>) -> Result<KnownAnswers, SamplesError> {
    match path {
        None => Ok(KnownAnswers {
            nli: shipped_samples(),
            retrieval: shipped_retrieval(),
        }),
        Some(p) => {
            let name = p.display().to_string();
            let text = read_capped_text(p, MAX_INPUT_FILE_BYTES)
                .map_err(|reason| SamplesError::Unreadable(name.clone(), reason))?;
            parse_samples(&text, &name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_file_accepts_pairs_strings_and_plain_lines() {
        let src = "{\"premise\":\"a\",\"hypothesis\":\"b\",\"expected\":\"neutral\"}\n\"quoted\"\nplain words\n\n{\"text\":\"t\",\"text_pair\":\"u\"}\n";
        let t = parse_texts(src, "f").unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(t[0].parts(), ("a", Some("b")));
        assert_eq!(t[1], Input::Text("quoted".into()));
        assert_eq!(t[2], Input::Text("plain words".into()));
        assert_eq!(t[3].parts(), ("t", Some("u")));
        assert!(matches!(
            parse_texts("{\"x\":1}", "f"),
            Err(TextsError::BadLine { line: 1, .. })
        ));
        assert!(matches!(
            parse_texts("\n", "f"),
            Err(TextsError::Empty { .. })
        ));
        // An object cut short is an error naming its line, never a text; braces further in
        // are text.
        let cut = "plain\n  {\"premise\": \"a\", \"hypothesis\":\n";
        let e = parse_texts(cut, "t.jsonl").unwrap_err().to_string();
        assert!(
            e.starts_with("t.jsonl line 2: starts with { but is not JSON ("),
            "{e}"
        );
        let t = parse_texts("set {a, b} is empty\n[CLS] x {\n", "f").unwrap();
        assert_eq!(t[0], Input::Text("set {a, b} is empty".into()));
        assert_eq!(t[1], Input::Text("[CLS] x {".into()));
    }

    #[test]
    fn input_files_are_read_up_to_their_limit() {
        let path = std::env::temp_dir().join(format!("encbench-capped-{}", std::process::id()));
        std::fs::write(&path, "0123456789").unwrap();
        assert_eq!(read_capped(&path, 10).unwrap().len(), 10);
        let err = read_capped(&path, 9).unwrap_err();
        assert!(err.contains("10 bytes is over"), "{err}");
        std::fs::remove_file(&path).unwrap();
        // A device says nothing of its size: the limit stops the read.
        let err = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(err.contains("over the 1 MiB limit"), "{err}");
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
