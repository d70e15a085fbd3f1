//! The simulated encoder: how long a request takes and what it answers.

use encbench_core::input::Input;
use encbench_core::input::shipped_samples;
use encbench_wire::tokenize::TokenCounter;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Width of the reference embeddings (MiniLM's).
pub const EMBEDDING_DIM: usize = 384;

/// Service time of one forward pass over `batch` inputs padded to `len` tokens:
/// base + `per_token` × max(batch × len, saturation). Below the saturation point the GPU is
/// not yet busy, so small batches cost the same (measured on an ml.g6.12xlarge: b=8 at 59
/// tokens ≈ b=1 at 512).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServiceModel {
    pub base_ms: f64,
    pub per_token_ms: f64,
    pub saturation_tokens: usize,
}

impl ServiceModel {
    pub fn forward(&self, batch: usize, len: usize) -> Duration {
        let tokens = (batch * len).max(self.saturation_tokens) as f64;
        Duration::from_secs_f64((self.base_ms + self.per_token_ms * tokens) / 1000.0)
    }
}

/// What the HF pipeline would do with one request's inputs and parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    /// Each forward pass: (inputs in it, padded length).
    pub passes: Vec<(usize, usize)>,
}

impl Work {
    /// One forward pass over a tensor batch of `batch` rows of `len` tokens.
    pub fn tensor(batch: usize, len: usize) -> Work {
        Work {
            passes: vec![(batch, len)],
        }
    }
}

impl Work {
    pub fn service_time(&self, model: &ServiceModel) -> Duration {
        self.passes.iter().map(|&(b, l)| model.forward(b, l)).sum()
    }
}

/// Token counts are cached: load tests send the same few texts over and over.
pub struct Lengths {
    counter: TokenCounter,
    cache: Mutex<HashMap<Input, usize>>,
    /// Inputs of text requests planned, and their tokens: what a client's reported input
    /// lengths are checked against (`GET /_encbench/counters`).
    seen_inputs: AtomicU64,
    seen_tokens: AtomicU64,
}

const CACHE_LIMIT: usize = 10_000;

impl Lengths {
    pub fn new(counter: TokenCounter) -> Lengths {
        Lengths {
            counter,
            cache: Mutex::new(HashMap::new()),
            seen_inputs: AtomicU64::new(0),
            seen_tokens: AtomicU64::new(0),
        }
    }

    /// `{"inputs", "tokens"}` of every text request planned so far.
    pub fn seen(&self) -> Value {
        serde_json::json!({
            "inputs": self.seen_inputs.load(Ordering::Relaxed),
            "tokens": self.seen_tokens.load(Ordering::Relaxed),
        })
    }

    /// Tokens of one input, with special tokens, untruncated.
    pub fn natural(&self, input: &Input) -> usize {
        if let Some(&n) = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(input)
        {
            return n;
        }
        let n = self.counter.count(input);
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(input.clone(), n);
        n
    }

    /// Splits the inputs into passes of `batch_size` (the pipeline runs one input at a time
    /// when no `batch_size` is given) and pads each pass like the tokenizer call would:
    /// to `max_length` with `padding=max_length`, else to the longest input in the pass.
    pub fn plan(&self, inputs: &[Input], parameters: &Value) -> Work {
        let batch_size = parameters
            .get("batch_size")
            .and_then(Value::as_u64)
            .unwrap_or(1)
            .max(1) as usize;
        let max_length = parameters
            .get("max_length")
            .and_then(Value::as_u64)
            .map(|m| m as usize);
        let pad_to_max = parameters.get("padding").and_then(Value::as_str) == Some("max_length");
        let tokens: usize = inputs.iter().map(|i| self.natural(i)).sum();
        self.seen_inputs
            .fetch_add(inputs.len() as u64, Ordering::Relaxed);
        self.seen_tokens.fetch_add(tokens as u64, Ordering::Relaxed);
        let truncate = parameters
            .get("truncation")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let passes = inputs
            .chunks(batch_size)
            .map(|chunk| {
                let len = if let (true, Some(m)) = (pad_to_max, max_length) {
                    m
                } else {
                    let longest = chunk.iter().map(|i| self.natural(i)).max().unwrap_or(0);
                    match (truncate, max_length) {
                        (true, Some(m)) => longest.min(m),
                        _ => longest,
                    }
                };
                (chunk.len(), len)
            })
            .collect();
        Work { passes }
    }
}

/// mDeBERTa-v3 xnli's id2label order.
pub const LABELS: [&str; 3] = ["entailment", "neutral", "contradiction"];

/// The shipped samples get their expected verdict; anything else a stable one of its own.
/// Text inputs are matched by their text, token-id inputs (KServe tensors, vLLM ids) by the
/// sample's token ids at their start (a padded or repeated tail does not matter).
pub struct Verdicts {
    known: HashMap<(String, String), usize>,
    /// The same pairs sent as one text, premise and hypothesis joined by a space (routes
    /// with no pair form): the simulated model reads the join as the pair.
    known_joined: HashMap<String, usize>,
    known_ids: Vec<(Vec<i64>, usize)>,
    pub flip: bool,
    pub label_ids: bool,
}

impl Verdicts {
    pub fn new(flip: bool, label_ids: bool, tokenizer: &TokenCounter) -> Verdicts {
        let encoder = tokenizer.encoder(512).ok();
        let mut known = HashMap::new();
        let mut known_joined = HashMap::new();
        let mut known_ids = Vec::new();
        for s in shipped_samples() {
            let Some(idx) = LABELS.iter().position(|l| *l == s.expected.to_lowercase()) else {
                continue;
            };
            if let Some(e) = &encoder {
                let mut ids = e.encode(&[&s.input()], false).input_ids;
                ids.pop(); // the final [SEP]: servers that cannot pad get repeats before it
                known_ids.push((ids, idx));
            }
            known_joined.insert(format!("{} {}", s.premise, s.hypothesis), idx);
            known.insert((s.premise, s.hypothesis), idx);
        }
        Verdicts {
            known,
            known_joined,
            known_ids,
            flip,
            label_ids,
        }
    }

    fn shown(&self, idx: usize) -> usize {
        // Flipping moves every verdict to another class, so every sample mismatches.
        if self.flip {
            (idx + 1) % LABELS.len()
        } else {
            idx
        }
    }

    fn name(&self, idx: usize) -> String {
        if self.label_ids {
            format!("LABEL_{idx}")
        } else {
            LABELS[idx].to_string()
        }
    }

    pub fn label(&self, input: &Input) -> String {
        self.name(self.class_of_text(input))
    }

    /// The class index of a text input (after flipping).
    pub fn class_of_text(&self, input: &Input) -> usize {
        let idx = match input.parts() {
            (a, Some(b)) => self.known.get(&(a.to_string(), b.to_string())).copied(),
            (t, None) => self.known_joined.get(t).copied(),
        }
        .unwrap_or_else(|| stable_hash(input) % LABELS.len());
        self.shown(idx)
    }

    /// The class index of a row of token ids (padding already removed).
    pub fn class_of_ids(&self, ids: &[i64]) -> usize {
        let idx = self
            .known_ids
            .iter()
            .find(|(prefix, _)| ids.starts_with(prefix))
            .map_or_else(
                || {
                    ids.iter()
                        .fold(0usize, |h, &x| h.wrapping_mul(31).wrapping_add(x as usize))
                        % LABELS.len()
                },
                |(_, idx)| *idx,
            );
        self.shown(idx)
    }

    pub fn label_of_ids(&self, ids: &[i64]) -> String {
        self.name(self.class_of_ids(ids))
    }
}

/// Reference embeddings with known answers: each shipped retrieval query and the candidate it
/// must find share one axis, every other candidate has an axis of its own, anything else a
/// stable one of its own. Flipped (`--flip-labels`), a query points at a wrong candidate.
pub struct Embeddings {
    known: HashMap<String, usize>,
    /// Longest first: a text whose tokens start another's does not take its answer.
    known_ids: Vec<(Vec<i64>, usize)>,
}

impl Embeddings {
    pub fn new(flip: bool, tokenizer: &TokenCounter) -> Embeddings {
        let encoder = tokenizer.encoder(512).ok();
        let items = encbench_core::input::shipped_retrieval();
        let mut known = HashMap::new();
        let mut distractors = items.len();
        for (i, item) in items.iter().enumerate() {
            let mut first_wrong = None;
            for c in &item.candidates {
                if *c == item.expected {
                    known.insert(c.clone(), i);
                } else {
                    first_wrong.get_or_insert(distractors);
                    known.insert(c.clone(), distractors);
                    distractors += 1;
                }
            }
            let axis = if flip { first_wrong.unwrap_or(i) } else { i };
            known.insert(item.query.clone(), axis);
        }
        let mut known_ids: Vec<(Vec<i64>, usize)> = encoder
            .map(|e| {
                known
                    .iter()
                    .map(|(text, &axis)| {
                        let mut ids = e.encode(&[&Input::Text(text.clone())], false).input_ids;
                        ids.pop(); // the final [SEP], as for the verdicts
                        (ids, axis)
                    })
                    .collect()
            })
            .unwrap_or_default();
        known_ids.sort_by_key(|(ids, _)| std::cmp::Reverse(ids.len()));
        Embeddings { known, known_ids }
    }

    fn one_hot(axis: usize) -> Vec<f32> {
        let mut v = vec![0.0; EMBEDDING_DIM];
        v[axis % EMBEDDING_DIM] = 1.0;
        v
    }

    /// Axes past the shipped items' for any other input.
    fn unknown(&self, h: usize) -> Vec<f32> {
        let taken = self.known.len();
        Self::one_hot(taken + h % (EMBEDDING_DIM - taken))
    }

    pub fn of_text(&self, text: &str) -> Vec<f32> {
        match self.known.get(text) {
            Some(&axis) => Self::one_hot(axis),
            None => self.unknown(stable_hash(&Input::Text(text.to_string()))),
        }
    }

    pub fn of_ids(&self, ids: &[i64]) -> Vec<f32> {
        match self.known_ids.iter().find(|(p, _)| ids.starts_with(p)) {
            Some((_, axis)) => Self::one_hot(*axis),
            None => self.unknown(
                ids.iter()
                    .fold(0usize, |h, &x| h.wrapping_mul(31).wrapping_add(x as usize)),
            ),
        }
    }
}

/// A simulated cross-encoder with known answers: each shipped rerank query's relevant
/// documents score high (in the order listed), its other documents low, each a little apart
/// so an ordering is an ordering; a pair nobody listed scores by the reference embeddings'
/// cosine. Pairs sent as token ids (Triton, KServe) are matched by the pair's ids at their
/// start. Flipped (`--flip-labels`), every ranking is reversed.
pub struct Relevance {
    known: HashMap<(String, String), f32>,
    /// Longest first, as the embeddings' ids.
    known_ids: Vec<(Vec<i64>, f32)>,
    flip: bool,
}

impl Relevance {
    pub fn new(flip: bool, tokenizer: &TokenCounter) -> Relevance {
        let encoder = tokenizer.encoder(512).ok();
        let mut known = HashMap::new();
        for sample in encbench_core::input::shipped_rerank() {
            for (i, d) in sample.documents.iter().enumerate() {
                let jitter = (stable_hash(&Input::pair(&sample.query, d)) % 1000) as f32 / 1000.0;
                let score = match sample.relevant.iter().position(|&r| r == i) {
                    Some(rank) => 0.95 - 0.02 * rank as f32,
                    None => 0.05 + 0.3 * jitter,
                };
                known.insert((sample.query.clone(), d.clone()), score);
            }
        }
        let mut known_ids: Vec<(Vec<i64>, f32)> = encoder
            .map(|e| {
                known
                    .iter()
                    .map(|((q, d), &score)| {
                        let mut ids = e.encode(&[&Input::pair(q, d)], false).input_ids;
                        ids.pop(); // the final [SEP], as for the verdicts
                        (ids, score)
                    })
                    .collect()
            })
            .unwrap_or_default();
        known_ids.sort_by_key(|(ids, _)| std::cmp::Reverse(ids.len()));
        Relevance {
            known,
            known_ids,
            flip,
        }
    }

    fn shown(&self, score: f32) -> f32 {
        if self.flip { 1.0 - score } else { score }
    }

    /// The relevance of `document` to `query`, in (0, 1).
    pub fn of(&self, embeddings: &Embeddings, query: &str, document: &str) -> f32 {
        let score = match self.known.get(&(query.to_string(), document.to_string())) {
            Some(&s) => s,
            None => {
                let (q, d) = (embeddings.of_text(query), embeddings.of_text(document));
                let cos: f32 = q.iter().zip(&d).map(|(a, b)| a * b).sum();
                let jitter = (stable_hash(&Input::pair(query, document)) % 1000) as f32 / 100_000.0;
                0.05 + 0.9 * cos.max(0.0) + jitter
            }
        };
        self.shown(score)
    }

    /// The relevance of a pair sent as token ids ([CLS] query [SEP] document [SEP]).
    pub fn of_ids(&self, ids: &[i64]) -> f32 {
        let score = self
            .known_ids
            .iter()
            .find(|(p, _)| ids.starts_with(p))
            .map_or_else(
                || {
                    let h = ids
                        .iter()
                        .fold(0usize, |h, &x| h.wrapping_mul(31).wrapping_add(x as usize));
                    0.05 + (h % 1000) as f32 / 5000.0
                },
                |(_, s)| *s,
            );
        self.shown(score)
    }
}

/// FNV-1a: the same answer in every process and every version, unlike `DefaultHasher`.
fn stable_hash(input: &Input) -> usize {
    let (a, b) = input.parts();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in a.bytes().chain([0u8]).chain(b.unwrap_or("").bytes()) {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn g6_inference_component() -> ServiceModel {
        ServiceModel {
            base_ms: 14.8,
            per_token_ms: 0.0215,
            saturation_tokens: 512,
        }
    }

    #[test]
    fn reproduces_the_g6_inference_component_figures() {
        let m = g6_inference_component();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        assert!((ms(m.forward(1, 512)) - 25.808).abs() < 1e-6);
        assert!((ms(m.forward(8, 512)) - 102.864).abs() < 1e-6);
        assert!((ms(m.forward(8, 59)) - 25.808).abs() < 1e-6);
    }

    #[test]
    fn passes_follow_batch_size_and_padding() {
        let l = Lengths::new(TokenCounter::shipped());
        let inputs: Vec<Input> = shipped_samples()
            .iter()
            .map(encbench_core::input::NliSample::input)
            .collect();
        let padded = l.plan(&inputs, &json!({"batch_size": 4, "padding": "max_length", "truncation": true, "max_length": 512}));
        assert_eq!(padded.passes, vec![(4, 512)]);
        let one_by_one = l.plan(&inputs, &json!({}));
        assert_eq!(one_by_one.passes.len(), 4);
        assert!(
            one_by_one
                .passes
                .iter()
                .all(|&(b, len)| b == 1 && (48..=64).contains(&len))
        );
        let natural = l.plan(&inputs, &json!({"batch_size": 4}));
        let longest = one_by_one.passes.iter().map(|p| p.1).max().unwrap();
        assert_eq!(natural.passes, vec![(4, longest)]);
    }

    #[test]
    fn verdicts_known_flipped_and_as_ids() {
        let samples = shipped_samples();
        let t = TokenCounter::shipped();
        let v = Verdicts::new(false, false, &t);
        for s in &samples {
            assert_eq!(v.label(&s.input()), s.expected);
        }
        let flipped = Verdicts::new(true, false, &t);
        assert!(
            samples
                .iter()
                .all(|s| flipped.label(&s.input()) != s.expected)
        );
        let ids = Verdicts::new(false, true, &t);
        assert!(ids.label(&samples[0].input()).starts_with("LABEL_"));
        let e = t.encoder(512).unwrap();
        for s in &samples {
            let row = e.encode(&[&s.input()], true);
            let unpadded: Vec<i64> = row
                .input_ids
                .iter()
                .zip(&row.attention_mask)
                .filter(|(_, m)| **m == 1)
                .map(|(i, _)| *i)
                .collect();
            assert_eq!(v.label_of_ids(&unpadded), s.expected);
            assert_eq!(v.label_of_ids(&e.exact_len_ids(&s.input())), s.expected);
        }
        let other = Input::Text("anything".into());
        assert_eq!(v.label(&other), v.label(&other));
    }
}
