//! Texts of an exact token count, built from the shipped corpus's words (the known-answer
//! samples' sentences) and checked with the real tokenizer: `--input-tokens`, and any input
//! that only says how long it is (a trace record's `{"tokens": N}`).
//!
//! A count includes the special tokens, as `--max-len` counts them: `[CLS] text [SEP]` for
//! a text, `[CLS] a [SEP] b [SEP]` for a pair (with the shipped tokenizer; another one's
//! own). So the shortest text is 3 tokens (one word) and the shortest pair 5.

use crate::tokenize::TokenCounter;
use encbench_core::input::{Input, shipped_rerank, shipped_retrieval, shipped_samples};
use encbench_core::lengths::LengthMix;

/// Builds texts of exact lengths with one tokenizer; the corpus's words are counted once.
pub struct TextBuilder<'a> {
    tok: &'a TokenCounter,
    /// Each corpus word with its tokens.
    words: Vec<(String, usize)>,
    /// Words of one token, to fill the last few.
    singles: Vec<String>,
    /// Special tokens of a text and of a pair.
    text_specials: usize,
    pair_specials: usize,
}

/// A well-spread 64-bit value of `x` (splitmix64): seeds become offsets into the corpus.
fn spread(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn corpus() -> Vec<String> {
    let mut texts: Vec<String> = vec![];
    for s in shipped_samples() {
        texts.extend([s.premise, s.hypothesis]);
    }
    for s in shipped_retrieval() {
        texts.push(s.query);
        texts.extend(s.candidates);
    }
    for s in shipped_rerank() {
        texts.push(s.query);
        texts.extend(s.documents);
    }
    texts
        .iter()
        .flat_map(|t| t.split_whitespace().map(str::to_owned))
        .collect()
}

impl<'a> TextBuilder<'a> {
    pub fn new(tok: &'a TokenCounter) -> TextBuilder<'a> {
        let text_specials = tok.count(&Input::Text(String::new()));
        let pair_specials = tok.count(&Input::pair("", ""));
        let content = |w: &str| {
            tok.count(&Input::Text(w.to_string()))
                .saturating_sub(text_specials)
        };
        let words: Vec<(String, usize)> = corpus()
            .into_iter()
            .map(|w| {
                let n = content(&w);
                (w, n)
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        let mut singles: Vec<String> = words
            .iter()
            .filter(|(w, n)| *n == 1 && w.chars().all(char::is_alphabetic))
            .map(|(w, _)| w.clone())
            .collect();
        singles.sort_unstable();
        singles.dedup();
        if singles.is_empty() {
            singles.push("a".into());
        }
        TextBuilder {
            tok,
            words,
            singles,
            text_specials,
            pair_specials,
        }
    }

    /// The fewest tokens a text (or a pair, one word a side) can have.
    pub fn min_tokens(&self, pair: bool) -> usize {
        if pair {
            self.pair_specials + 2
        } else {
            self.text_specials + 1
        }
    }

    /// Tokens of `text` without the special ones; after `first` (a pair's first side, and
    /// its own tokens) those it adds to the pair.
    fn content(&self, first: Option<(&str, usize)>, text: &str) -> usize {
        match first {
            Some((a, a_len)) => self
                .tok
                .count(&Input::pair(a, text))
                .saturating_sub(self.pair_specials + a_len),
            None => self
                .tok
                .count(&Input::Text(text.into()))
                .saturating_sub(self.text_specials),
        }
    }

    /// Words of `body` tokens in all (after `first`, as a pair's second part): corpus words
    /// from a seeded place on, then one-token words for what the next word would overrun;
    /// the real count corrects any word a tokenizer splits differently in company. With the
    /// text, its tokens by that count.
    fn body(&self, first: Option<(&str, usize)>, body: usize, seed: u64) -> (String, usize) {
        let mut out: Vec<&str> = vec![];
        let (mut have, start) = (0, spread(seed) as usize);
        // Each word taken is a token at least: at most `body` turns.
        for k in 0.. {
            let (w, n) = &self.words[(start + k) % self.words.len()];
            if have + n > body {
                break;
            }
            out.push(w);
            have += n;
            if have == body {
                break;
            }
        }
        let single = |k: usize| self.singles[(start + k) % self.singles.len()].as_str();
        for k in have..body {
            out.push(single(k));
        }
        // Every word is a token at least, so a corrected text stays within `body` words.
        let mut text = out.join(" ");
        for k in 0..=body {
            let n = self.content(first, &text);
            if n == body {
                return (text, n);
            }
            if n > body {
                out.pop();
            } else {
                out.push(single(body + k));
            }
            text = out.join(" ");
        }
        let n = self.content(first, &text);
        (text, n)
    }

    /// A text of `n` tokens by this tokenizer (at least `min_tokens(false)`).
    pub fn text(&self, n: usize, seed: u64) -> String {
        self.body(
            None,
            n.max(self.min_tokens(false)) - self.text_specials,
            seed,
        )
        .0
    }

    /// A pair of `n` tokens together (at least `min_tokens(true)`): where it splits is drawn
    /// from the seed too, each side at least one word.
    pub fn pair(&self, n: usize, seed: u64) -> Input {
        let body = n.max(self.min_tokens(true)) - self.pair_specials;
        let first_len = 1 + (spread(seed ^ 0x5eed) as usize) % (body - 1);
        let (a, a_len) = self.body(None, first_len, seed);
        let (b, _) = self.body(Some((&a, a_len)), body - first_len, spread(seed));
        Input::pair(&a, &b)
    }
}

/// A text of exactly `n` tokens (special tokens counted, as `--max-len` counts them) by
/// `tok`, the same for the same seed. For many texts keep one `TextBuilder`: it counts the
/// corpus once.
pub fn text_with_tokens(tok: &TokenCounter, n: usize, seed: u64) -> String {
    TextBuilder::new(tok).text(n, seed)
}

/// How many inputs a length mix is drawn as: enough that the phase's mean is the mix's
/// within about 1 % at a standard deviation of a quarter of the mean.
pub const DRAWN_INPUTS: usize = 1024;

/// `count` pairs (or texts) whose lengths are drawn from `mix`, clipped to the shortest the
/// tokenizer makes and `max_len`; seeded.
pub fn drawn_inputs(
    tok: &TokenCounter,
    mix: &LengthMix,
    pairs: bool,
    count: usize,
    max_len: usize,
    seed: u64,
) -> Vec<Input> {
    let b = TextBuilder::new(tok);
    mix.draw(seed, count, b.min_tokens(pairs), max_len)
        .into_iter()
        .enumerate()
        .map(|(i, n)| {
            let s = spread(seed.wrapping_add(i as u64));
            if pairs {
                b.pair(n, s)
            } else {
                Input::Text(b.text(n, s))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_have_exactly_the_tokens_asked_for() {
        let tok = TokenCounter::shipped();
        let b = TextBuilder::new(&tok);
        assert_eq!((b.min_tokens(false), b.min_tokens(true)), (3, 5));
        for n in (3..=512).step_by(7).chain([3, 4, 5, 511, 512]) {
            for seed in [0, 1, 99] {
                let t = b.text(n, seed);
                assert_eq!(tok.count(&Input::Text(t.clone())), n, "{n} {seed}: {t}");
            }
        }
        assert_eq!(b.text(40, 5), b.text(40, 5), "seeded");
        assert_ne!(b.text(40, 5), b.text(40, 6));
        assert_eq!(text_with_tokens(&tok, 128, 3), b.text(128, 3));
        // Shorter than one word is one word.
        assert_eq!(tok.count(&Input::Text(b.text(1, 0))), 3);
    }

    #[test]
    fn pairs_have_exactly_the_tokens_asked_for_with_both_sides_drawn() {
        let tok = TokenCounter::shipped();
        let b = TextBuilder::new(&tok);
        let mut firsts = std::collections::BTreeSet::new();
        for n in (5..=512).step_by(11).chain([5, 6, 512]) {
            for seed in [0, 7] {
                let p = b.pair(n, seed);
                assert_eq!(tok.count(&p), n, "{n} {seed}: {p:?}");
                let (a, c) = p.parts();
                assert!(!a.is_empty() && !c.unwrap().is_empty());
                firsts.insert(tok.count(&Input::Text(a.into())));
            }
        }
        assert!(firsts.len() > 40, "the split varies: {firsts:?}");
    }

    #[test]
    fn drawn_inputs_follow_the_mix() {
        let tok = TokenCounter::shipped();
        let mix = LengthMix::parse("128:32").unwrap();
        let inputs = drawn_inputs(&tok, &mix, true, DRAWN_INPUTS, 512, 11);
        let drawn = mix.draw(11, DRAWN_INPUTS, 5, 512);
        let counts: Vec<usize> = inputs.iter().map(|i| tok.count(i)).collect();
        assert_eq!(counts, drawn, "each input exactly its drawn length");
        let mean = counts.iter().sum::<usize>() as f64 / counts.len() as f64;
        assert!((mean / 128.0 - 1.0).abs() < 0.02, "{mean}");
        let texts = drawn_inputs(&tok, &mix, false, 50, 512, 11);
        assert!(texts.iter().all(|t| t.parts().1.is_none()));
        assert_eq!(
            texts.iter().map(|i| tok.count(i)).collect::<Vec<_>>(),
            mix.draw(11, 50, 3, 512)
        );
    }
}
