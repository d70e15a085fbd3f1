//! Real token counts from a `tokenizer.json`: the shipped BERT WordPiece one or `--tokenizer`.

use crate::payload::Input;
use std::path::Path;
use tokenizers::Tokenizer;

#[derive(Debug, thiserror::Error)]
#[error("cannot load tokenizer {source_name}: {reason}")]
pub struct TokenizerError {
    source_name: String,
    reason: String,
}

pub struct TokenCounter {
    tok: Tokenizer,
}

impl TokenCounter {
    pub fn shipped() -> TokenCounter {
        Self::from_bytes(crate::assets::TOKENIZER_JSON, "(shipped)")
            .expect("shipped tokenizer parses")
    }

    pub fn load(path: Option<&Path>) -> Result<TokenCounter, TokenizerError> {
        match path {
            None => Ok(Self::shipped()),
            Some(p) => {
                let name = p.display().to_string();
                let bytes = std::fs::read(p).map_err(|e| TokenizerError {
                    source_name: name.clone(),
                    reason: e.to_string(),
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

    /// Tokens including special tokens ([CLS] a [SEP] b [SEP]), untruncated.
    pub fn count(&self, input: &Input) -> usize {
        let enc = match input.parts() {
            (a, Some(b)) => self.tok.encode((a, b), true),
            (a, None) => self.tok.encode(a, true),
        };
        enc.map(|e| e.len()).unwrap_or(0)
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
    fn shipped_samples_have_the_seed_natural_length() {
        let t = TokenCounter::shipped();
        for s in crate::accuracy::shipped_samples() {
            let n = t.count(&s.input());
            // About 59 tokens in the seed; 8 of them must stay within the 512-token
            // saturation of the reference endpoint's service model.
            assert!((48..=64).contains(&n), "sample has {n} tokens");
        }
    }

    #[test]
    fn unreadable_file_is_an_error_naming_it() {
        let e = TokenCounter::load(Some(Path::new("/nonexistent/tok.json")))
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/tok.json"));
    }
}
