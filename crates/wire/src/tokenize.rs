//! Real token counts from a `tokenizer.json`: the shipped BERT WordPiece one or `--tokenizer`.

use encbench_core::input::Input;
use std::path::Path;
use tokenizers::Tokenizer;

#[derive(Debug, thiserror::Error)]
#[error("cannot load tokenizer {source_name}: {reason}")]
pub struct TokenizerError {
    source_name: String,
    reason: String,
}

/// The shipped all-MiniLM-L6-v2 tokenizer's `model_max_length`.
const SHIPPED_MAX_LEN: usize = 512;

/// HF writes a huge sentinel as `model_max_length` when a model has no limit.
const NO_LIMIT: u64 = 1 << 40;

/// The longest input the tokenizer's model takes: `model_max_length` from the
/// `tokenizer_config.json` beside a given tokenizer.json (a tokenizer.json does not carry
/// it), with where it was read; `None` when nothing says.
pub fn model_max_length(tokenizer: Option<&Path>) -> Option<(usize, String)> {
    let Some(path) = tokenizer else {
        return Some((SHIPPED_MAX_LEN, "the shipped tokenizer".into()));
    };
    let config = path.with_file_name("tokenizer_config.json");
    let text =
        encbench_core::input::read_capped_text(&config, encbench_core::input::MAX_INPUT_FILE_BYTES)
            .ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let n = v
        .get("model_max_length")?
        .as_u64()
        .filter(|n| *n < NO_LIMIT)?;
    Some((n as usize, config.display().to_string()))
}

pub struct TokenCounter {
    tok: Tokenizer,
}

impl TokenCounter {
    pub fn shipped() -> TokenCounter {
        Self::from_bytes(encbench_core::assets::TOKENIZER_JSON, "(shipped)")
            .expect("shipped tokenizer parses")
    }

    pub fn load(path: Option<&Path>) -> Result<TokenCounter, TokenizerError> {
        match path {
            None => Ok(Self::shipped()),
            Some(p) => {
                let name = p.display().to_string();
                let bytes = encbench_core::input::read_capped(
                    p,
                    encbench_core::input::MAX_INPUT_FILE_BYTES,
                )
                .map_err(|reason| TokenizerError {
                    source_name: name.clone(),
                    reason,
                })?;
                Self::from_bytes(&bytes, &name)
            }
        }
    }

    fn from_bytes(bytes: &[u8], name: &str) -> Result<TokenCounter, TokenizerError> {
        let mut tok = Tokenizer::from_bytes(bytes).map_err(|e| TokenizerError {
            source_name: name.into(),
            reason: e.to_string(),
        })?;
        // The shipped file fixes truncation and padding at 128; we want natural lengths and
        // apply the endpoint's own padding rule ourselves.
        tok.with_padding(None);
        tok.with_truncation(None).map_err(|e| TokenizerError {
            source_name: name.into(),
            reason: e.to_string(),
        })?;
        Ok(TokenCounter { tok })
    }

    /// A client-side encoder that truncates to `max_len` (longest-first for pairs, as the
    /// Hugging Face tokenizer call with `truncation=True` does).
    pub fn encoder(&self, max_len: usize) -> Result<Encoder, TokenizerError> {
        let mut tok = self.tok.clone();
        tok.with_truncation(Some(tokenizers::TruncationParams {
            max_length: max_len,
            ..Default::default()
        }))
        .map_err(|e| TokenizerError {
            source_name: "tokenizer".into(),
            reason: e.to_string(),
        })?;
        Ok(Encoder {
            tok,
            untruncated: self.tok.clone(),
            max_len,
        })
    }

    /// Tokens including special tokens ([CLS] a [SEP] b [SEP]), untruncated.
    pub fn count(&self, input: &Input) -> usize {
        let enc = match input.parts() {
            (a, Some(b)) => self.tok.encode((a, b), true),
            (a, None) => self.tok.encode(a, true),
        };
        enc.map_or(0, |e| e.len())
    }
}

/// Model inputs for a batch, row-major [batch, len], as INT64 tensors take them.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    pub batch: usize,
    pub len: usize,
    pub input_ids: Vec<i64>,
    pub attention_mask: Vec<i64>,
    pub token_type_ids: Vec<i64>,
}

pub struct Encoder {
    tok: Tokenizer,
    /// For counting what a server that tokenizes would see.
    untruncated: Tokenizer,
    max_len: usize,
}

impl Encoder {
    /// Encodes a batch, padded to `max_len` when `pad_to_max`, else to its longest row.
    pub fn encode(&self, inputs: &[&Input], pad_to_max: bool) -> Encoded {
        let rows: Vec<tokenizers::Encoding> = inputs
            .iter()
            .map(|i| {
                let enc = match i.parts() {
                    (a, Some(b)) => self.tok.encode((a, b), true),
                    (a, None) => self.tok.encode(a, true),
                };
                enc.unwrap_or_default()
            })
            .collect();
        let len = if pad_to_max {
            self.max_len
        } else {
            rows.iter()
                .map(tokenizers::Encoding::len)
                .max()
                .unwrap_or(0)
        };
        let mut out = Encoded {
            batch: rows.len(),
            len,
            input_ids: Vec::with_capacity(rows.len() * len),
            attention_mask: Vec::with_capacity(rows.len() * len),
            token_type_ids: Vec::with_capacity(rows.len() * len),
        };
        for r in &rows {
            let n = r.len().min(len);
            out.input_ids
                .extend(r.get_ids()[..n].iter().map(|&x| i64::from(x)));
            out.attention_mask.extend(std::iter::repeat_n(1, n));
            out.token_type_ids
                .extend(r.get_type_ids()[..n].iter().map(|&x| i64::from(x)));
            // [PAD] is id 0 in BERT vocabularies; the mask is what the model reads.
            out.input_ids.extend(std::iter::repeat_n(0, len - n));
            out.attention_mask.extend(std::iter::repeat_n(0, len - n));
            out.token_type_ids.extend(std::iter::repeat_n(0, len - n));
        }
        out
    }

    /// Token ids of exactly `max_len` for servers that cannot pad (vLLM): the input's own
    /// tokens, then its first sequence's tokens again until the length is reached.
    pub fn exact_len_ids(&self, input: &Input) -> Vec<i64> {
        let full = self.encode(&[input], false);
        let mut ids: Vec<i64> = full.input_ids;
        if ids.len() >= self.max_len || ids.len() < 3 {
            ids.truncate(self.max_len);
            return ids;
        }
        // Repeat the body (between [CLS] and the final [SEP]) before the final [SEP].
        let last = ids.pop().expect("at least [CLS] [SEP]");
        let body: Vec<i64> = ids[1..].to_vec();
        let mut k = 0;
        while ids.len() + 1 < self.max_len {
            ids.push(body[k % body.len()]);
            k += 1;
        }
        ids.push(last);
        ids
    }

    /// Tokens of `text` (after `first`, as a pair's second sequence), special tokens included
    /// and nothing truncated: what a server that tokenizes counts.
    fn server_count(&self, first: Option<&str>, text: &str) -> usize {
        let enc = match first {
            Some(a) => self.untruncated.encode((a, text), true),
            None => self.untruncated.encode(text, true),
        };
        enc.map_or(0, |e| e.len())
    }

    /// A text of exactly `max_len` tokens (with `first` before it, as a pair) for servers
    /// that tokenize and cannot pad (TEI, Infinity, OpenAI-compatible ones): the text's own
    /// words again and again, as many as fit, then single-token words to the length. Longer
    /// texts are cut at a word. A server with another tokenizer counts a few tokens apart.
    pub fn text_of_len(&self, first: Option<&str>, text: &str) -> String {
        let words: Vec<&str> = text.split_whitespace().collect();
        let words = if words.is_empty() { vec!["a"] } else { words };
        let of = |k: usize| {
            (0..k)
                .map(|i| words[i % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        };
        let target = self.max_len;
        // Every word is a token at least, so more than `target` words never fit.
        let (mut lo, mut hi) = (1, target.max(1));
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if self.server_count(first, &of(mid)) <= target {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let mut out = of(lo);
        let mut n = self.server_count(first, &out);
        while n < target {
            out.push_str(" a");
            let next = self.server_count(first, &out);
            if next <= n {
                break;
            }
            n = next;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_tokenizer_counts_special_tokens() {
        let t = TokenCounter::shipped();
        // [CLS] hello world [SEP]
        assert_eq!(t.count(&Input::Text("hello world".into())), 4);
        // [CLS] a [SEP] b [SEP]
        assert_eq!(t.count(&Input::pair("hello", "world")), 5);
    }

    #[test]
    fn shipped_samples_have_a_natural_length_near_59_tokens() {
        let t = TokenCounter::shipped();
        for s in encbench_core::input::shipped_samples() {
            let n = t.count(&s.input());
            // About 59 tokens, as measured for mDeBERTa's inputs; 8 of them must stay within
            // the 512-token saturation of the reference endpoint's service model.
            assert!((48..=64).contains(&n), "sample has {n} tokens");
        }
    }

    #[test]
    fn batches_encode_to_padded_int64_tensors() {
        let e = TokenCounter::shipped().encoder(512).unwrap();
        let a = Input::pair("hello", "world");
        let b = Input::Text("a somewhat longer text".into());
        let natural = e.encode(&[&a, &b], false);
        assert_eq!(natural.batch, 2);
        assert_eq!(natural.len, 6, "[CLS] a somewhat longer text [SEP]");
        assert_eq!(natural.input_ids.len(), 12);
        assert_eq!(&natural.attention_mask[..6], &[1, 1, 1, 1, 1, 0]);
        assert_eq!(&natural.token_type_ids[..5], &[0, 0, 0, 1, 1]);
        let padded = e.encode(&[&a, &b], true);
        assert_eq!(
            (padded.batch, padded.len, padded.input_ids.len()),
            (2, 512, 1024)
        );
        assert_eq!(padded.attention_mask.iter().sum::<i64>(), 5 + 6);
        let truncated = TokenCounter::shipped()
            .encoder(4)
            .unwrap()
            .encode(&[&b], true);
        assert_eq!(truncated.len, 4);
        assert_eq!(truncated.attention_mask, vec![1, 1, 1, 1]);
    }

    #[test]
    fn exact_length_ids_for_servers_that_cannot_pad() {
        let e = TokenCounter::shipped().encoder(512).unwrap();
        let ids = e.exact_len_ids(&Input::pair("hello there", "world"));
        assert_eq!(ids.len(), 512);
        assert_eq!(ids[0], 101, "[CLS]");
        assert_eq!(ids[511], 102, "[SEP]");
    }

    #[test]
    fn texts_of_an_exact_length_for_servers_that_tokenize_but_cannot_pad() {
        let t = TokenCounter::shipped();
        let e = t.encoder(128).unwrap();
        let text = e.text_of_len(None, "a short sentence, with punctuation!");
        assert_eq!(t.count(&Input::Text(text.clone())), 128, "{text}");
        let second = e.text_of_len(Some("the premise"), "the hypothesis");
        assert_eq!(t.count(&Input::pair("the premise", &second)), 128);
        let long = "word ".repeat(400);
        assert_eq!(t.count(&Input::Text(e.text_of_len(None, &long))), 128);
        assert_eq!(t.count(&Input::Text(e.text_of_len(None, "  "))), 128);
    }

    #[test]
    fn unreadable_file_is_an_error_naming_it() {
        let e = TokenCounter::load(Some(Path::new("/nonexistent/tok.json")))
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/tok.json"));
    }
}
