//! What is sent to the model: input texts (NLI pairs or single texts) and the known-answer
//! samples whose verdicts the accuracy check compares.

use serde::Deserialize;
use serde_json::{Value, json};
use std::io::Read;
use std::path::Path;

/// What a request is made of (`--task`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Task {
    /// A batch of inputs (texts or pairs), an answer per input.
    #[default]
    Inputs,
    /// One query with D documents (`--docs-per-query`), a score per document.
    Rerank,
}

impl crate::choice::Choice for Task {
    const ALL: &'static [Task] = &[Task::Inputs, Task::Rerank];

    fn name(self) -> &'static str {
        match self {
            Task::Inputs => "inputs",
            Task::Rerank => "rerank",
        }
    }
}

crate::parse_by_name!(Task);

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

/// A reranker's load: queries, each sent with D documents, the documents taken in a fixed
/// order the run's seed shuffles (every host of a sharded run, and every target of a
/// `compare`, sends the same requests).
#[derive(Debug, Clone, PartialEq)]
pub struct Rankings {
    pub queries: Vec<String>,
    pub documents: Vec<String>,
}

impl Rankings {
    /// From input texts: each one's first part a query, its last part a document (a pair's
    /// premise and hypothesis; a plain text is both), each kept once.
    pub fn from_texts(texts: &[Input], seed: u64) -> Rankings {
        let mut queries: Vec<String> = vec![];
        let mut documents: Vec<String> = vec![];
        for t in texts {
            let (a, b) = t.parts();
            if !queries.iter().any(|q| q == a) {
                queries.push(a.to_string());
            }
            let d = b.unwrap_or(a);
            if !documents.iter().any(|x| x == d) {
                documents.push(d.to_string());
            }
        }
        Rankings::shuffled(queries, documents, seed)
    }

    /// From known-answer rerank samples: their queries, and all their documents pooled.
    pub fn from_samples(samples: &[RerankSample], seed: u64) -> Rankings {
        let queries = samples.iter().map(|s| s.query.clone()).collect();
        let mut documents: Vec<String> = vec![];
        for d in samples.iter().flat_map(|s| &s.documents) {
            if !documents.contains(d) {
                documents.push(d.clone());
            }
        }
        Rankings::shuffled(queries, documents, seed)
    }

    fn shuffled(queries: Vec<String>, mut documents: Vec<String>, seed: u64) -> Rankings {
        use rand::SeedableRng;
        use rand::seq::SliceRandom;
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(seed);
        documents.shuffle(&mut rng);
        Rankings { queries, documents }
    }

    /// The inputs of `requests` requests of `d` documents each, request after request: `d`
    /// (query, document) pairs sharing request k's query, its documents the next `d` of the
    /// shuffled list. `batch_inputs(pairs, d, k)` is then request k.
    pub fn pairs(&self, d: usize, requests: usize) -> Vec<Input> {
        let (nq, nd) = (self.queries.len().max(1), self.documents.len().max(1));
        let mut out = Vec::with_capacity(requests * d);
        for k in 0..requests {
            let query = self.queries.get(k % nq).map_or("", String::as_str);
            for j in 0..d {
                let doc = self
                    .documents
                    .get((k * d + j) % nd)
                    .map_or("", String::as_str);
                out.push(Input::pair(query, doc));
            }
        }
        out
    }
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

/// A query with documents, of which a reranker must rank one of `relevant` (indices into
/// `documents`) first.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct RerankSample {
    pub query: String,
    pub documents: Vec<String>,
    pub relevant: Vec<usize>,
}

/// The known answers a deployment is checked on: NLI pairs for a classifier, retrieval
/// items for an embedder, ranked queries for a reranker (which the check uses is decided by
/// what the endpoint answers).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KnownAnswers {
    pub nli: Vec<NliSample>,
    pub retrieval: Vec<RetrievalSample>,
    pub rerank: Vec<RerankSample>,
}

#[derive(Debug, thiserror::Error)]
pub enum SamplesError {
    #[error("cannot read {0}: {1}")]
    Unreadable(String, String),
    #[error(
        "{0} line {1}: expected {{\"premise\", \"hypothesis\", \"expected\"}}, {{\"query\", \"candidates\", \"expected\"}} with expected one of at least two candidates, or {{\"query\", \"documents\", \"relevant\"}} with relevant indices of at least two documents"
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
        if v.get("documents").is_some() {
            let r: RerankSample = serde_json::from_value(v).map_err(|_| bad())?;
            let valid = r.documents.len() >= 2
                && !r.relevant.is_empty()
                && r.relevant.iter().all(|&i| i < r.documents.len());
            if !valid {
                return Err(bad());
            }
            out.rerank.push(r);
        } else if v.get("query").is_some() {
            let r: RetrievalSample = serde_json::from_value(v).map_err(|_| bad())?;
            if r.candidates.len() < 2 || !r.candidates.contains(&r.expected) {
                return Err(bad());
            }
            out.retrieval.push(r);
        } else {
            out.nli.push(serde_json::from_value(v).map_err(|_| bad())?);
        }
    }
    if out.nli.is_empty() && out.retrieval.is_empty() && out.rerank.is_empty() {
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

pub fn shipped_rerank() -> Vec<RerankSample> {
    parse_samples(crate::assets::RERANK_SAMPLES, "shipped rerank samples")
        .expect("shipped rerank samples parse")
        .rerank
}

/// The samples of `path`, or the shipped ones of every kind.
pub fn load_samples(path: Option<&Path>) -> Result<KnownAnswers, SamplesError> {
    match path {
        None => Ok(KnownAnswers {
            nli: shipped_samples(),
            retrieval: shipped_retrieval(),
            rerank: shipped_rerank(),
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
    fn a_rerank_load_sends_each_query_with_its_next_documents() {
        let texts: Vec<Input> = (0..5)
            .map(|i| Input::pair(&format!("q{i}"), &format!("d{i}")))
            .collect();
        let r = Rankings::from_texts(&texts, 7);
        assert_eq!(r.queries, ["q0", "q1", "q2", "q3", "q4"]);
        assert_eq!(r.documents.len(), 5);
        assert_eq!(
            Rankings::from_texts(&texts, 7),
            r,
            "the seed fixes the order"
        );
        let pairs = r.pairs(3, 4);
        assert_eq!(pairs.len(), 12);
        let request = batch_inputs(&pairs, 3, 1);
        assert!(request.iter().all(|p| p.parts().0 == "q1"));
        let docs: Vec<&str> = request.iter().map(|p| p.parts().1.unwrap()).collect();
        assert_eq!(docs, [&r.documents[3], &r.documents[4], &r.documents[0]]);
        let shipped = shipped_rerank();
        assert!(shipped.len() >= 20);
        let from = Rankings::from_samples(&shipped, 1);
        assert_eq!(from.queries.len(), shipped.len());
        assert!(from.documents.len() >= 100);
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
