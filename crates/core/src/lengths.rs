//! Input lengths: the mix `--input-tokens MEAN[:STDDEV]` draws from, and what a phase sent
//! (tokens per input and per request), whatever the inputs came from.
//!
//! Token counts are the tokenizer's with its special tokens ([CLS] a [SEP] b [SEP]),
//! untruncated: what `--max-len` counts, and what a server that tokenizes sees.

use crate::results::{decode_histogram, encode_histogram};
use hdrhistogram::Histogram;
use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, LogNormal, Normal};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How drawn lengths spread about their mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LengthShape {
    /// Symmetric about the mean, clipped to the range.
    Normal,
    /// Right-skewed with the same mean and standard deviation: real documents' lengths
    /// (many short, a long tail) look more like this than like a bell.
    Lognormal,
}

/// `--input-tokens MEAN[:STDDEV[:lognormal]]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LengthMix {
    pub mean: f64,
    pub stddev: f64,
    pub shape: LengthShape,
}

impl LengthMix {
    /// `MEAN[:STDDEV[:normal|lognormal]]`; a refusal is the text after the flag's name.
    pub fn parse(s: &str) -> Result<LengthMix, String> {
        let why = "must be MEAN[:STDDEV] in tokens, a mean of at least 1 and a standard deviation of at least 0 (such as 128 or 128:32; add :lognormal for a right-skewed mix)";
        let mut parts = s.trim().split(':');
        let number = |p: Option<&str>, min: f64| match p.map(|p| p.trim().parse::<f64>()) {
            Some(Ok(v)) if v.is_finite() && v >= min => Ok(v),
            _ => Err(why.to_string()),
        };
        let mean = number(parts.next(), 1.0)?;
        let stddev = match parts.next() {
            None => 0.0,
            p => number(p, 0.0)?,
        };
        let shape = match parts.next().map(str::trim) {
            None | Some("normal") => LengthShape::Normal,
            Some("lognormal") => LengthShape::Lognormal,
            Some(_) => return Err(why.into()),
        };
        if parts.next().is_some() {
            return Err(why.into());
        }
        Ok(LengthMix {
            mean,
            stddev,
            shape,
        })
    }

    /// As the command line writes it.
    pub fn describe(&self) -> String {
        let shape = match self.shape {
            LengthShape::Normal => "normal",
            LengthShape::Lognormal => "lognormal",
        };
        format!("{shape} {} ± {} tokens", self.mean, self.stddev)
    }

    /// `count` token counts, seeded, each rounded and clipped to `min..=max` (`min`: the
    /// shortest input the tokenizer can make of the shape).
    pub fn draw(&self, seed: u64, count: usize, min: usize, max: usize) -> Vec<usize> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let clip = |x: f64| (x.round().max(0.0) as usize).clamp(min, max.max(min));
        if self.stddev == 0.0 {
            return vec![clip(self.mean); count];
        }
        match self.shape {
            LengthShape::Normal => {
                let d = Normal::new(self.mean, self.stddev).expect("a finite stddev >= 0");
                (0..count).map(|_| clip(d.sample(&mut rng))).collect()
            }
            LengthShape::Lognormal => {
                // The log's parameters that give this mean and standard deviation.
                let var = (1.0 + (self.stddev / self.mean).powi(2)).ln();
                let d = LogNormal::new(self.mean.ln() - var / 2.0, var.sqrt())
                    .expect("finite parameters");
                (0..count).map(|_| clip(d.sample(&mut rng))).collect()
            }
        }
    }
}

/// The token counts of one request's inputs: `len` of `counts` from `first` on, wrapping
/// (the way `input::batch_inputs` takes the inputs). Shared, so a request carries no copy.
#[derive(Debug, Clone)]
pub struct BatchTokens {
    pub counts: Arc<[u32]>,
    pub first: usize,
    pub len: usize,
}

impl BatchTokens {
    pub fn each(&self) -> impl Iterator<Item = u32> + '_ {
        let n = self.counts.len().max(1);
        (0..self.len).filter_map(move |j| self.counts.get((self.first + j) % n).copied())
    }
}

/// Tokens per input and per request over a phase's measured requests, sent whether
/// answered or not.
#[derive(Debug, Clone)]
pub struct LengthRecorder {
    per_input: Histogram<u64>,
    requests: u64,
    tokens: u64,
}

/// Longest input a histogram resolves; longer ones saturate here.
const MAX_TOKENS: u64 = 10_000_000;

fn tokens_histogram() -> Histogram<u64> {
    // 3 significant figures: every count up to 2048 exact.
    Histogram::new_with_bounds(1, MAX_TOKENS, 3).expect("valid histogram bounds")
}

impl Default for LengthRecorder {
    fn default() -> Self {
        LengthRecorder {
            per_input: tokens_histogram(),
            requests: 0,
            tokens: 0,
        }
    }
}

impl LengthRecorder {
    pub fn record(&mut self, batch: &BatchTokens) {
        let mut sum = 0;
        for n in batch.each() {
            self.per_input.saturating_record(u64::from(n).max(1));
            sum += u64::from(n);
        }
        self.requests += 1;
        self.tokens += sum;
    }

    /// `None` when no request carried its counts.
    pub fn summary(&self) -> Option<InputTokens> {
        (self.requests > 0).then(|| InputTokens::of(&self.per_input, self.requests))
    }
}

/// `phases[].input_tokens` of the export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputTokens {
    pub p50: u64,
    pub p90: u64,
    pub max: u64,
    /// Per input.
    pub mean: f64,
    /// A request's inputs together (a batch's sum).
    pub mean_per_request: f64,
    /// Tokens per input, HdrHistogram V2 in base64 like the latency's: pooled and merged
    /// exactly.
    pub hdr_b64: String,
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

impl InputTokens {
    fn of(h: &Histogram<u64>, requests: u64) -> InputTokens {
        // Below 2048 the histogram holds every count exactly, so its mean is the mean.
        let total = h.mean() * h.len() as f64;
        InputTokens {
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            max: h.max(),
            mean: round1(h.mean()),
            mean_per_request: round1(total / requests.max(1) as f64),
            hdr_b64: encode_histogram(h),
        }
    }

    /// Requests behind `mean_per_request`, recovered from the histogram's inputs.
    fn requests(&self, h: &Histogram<u64>) -> f64 {
        if self.mean_per_request > 0.0 {
            h.mean() * h.len() as f64 / self.mean_per_request
        } else {
            0.0
        }
    }

    /// Phases measured apart (repetitions, hosts) as one: `None` unless every part has
    /// its lengths.
    pub fn pooled<'a>(parts: impl IntoIterator<Item = &'a Option<InputTokens>>) -> Option<Self> {
        let mut h = tokens_histogram();
        let mut requests = 0.0;
        let mut any = false;
        for part in parts {
            let p = part.as_ref()?;
            let ph = decode_histogram(&p.hdr_b64).ok()?;
            requests += p.requests(&ph);
            h.add(&ph).ok()?;
            any = true;
        }
        (any && !h.is_empty()).then(|| InputTokens::of(&h, requests.round().max(1.0) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_and_bad_ones_say_what_is_wanted() {
        let m = LengthMix::parse("128:32").unwrap();
        assert_eq!(
            (m.mean, m.stddev, m.shape),
            (128.0, 32.0, LengthShape::Normal)
        );
        assert_eq!(LengthMix::parse("64").unwrap().stddev, 0.0);
        assert_eq!(
            LengthMix::parse("64:16:lognormal").unwrap().shape,
            LengthShape::Lognormal
        );
        for bad in [
            "0",
            "abc",
            "128:-1",
            "128:x",
            "-5",
            "inf",
            "128:1:cauchy",
            "1:2:normal:4",
            "",
        ] {
            let e = LengthMix::parse(bad).unwrap_err();
            assert!(e.starts_with("must be MEAN[:STDDEV]"), "{bad}: {e}");
        }
    }

    #[test]
    fn draws_are_seeded_clipped_and_follow_the_mix() {
        let m = LengthMix::parse("128:32").unwrap();
        let a = m.draw(7, 20_000, 5, 512);
        assert_eq!(
            a,
            m.draw(7, 20_000, 5, 512),
            "the same seed, the same lengths"
        );
        assert_ne!(a, m.draw(8, 20_000, 5, 512));
        let mean = a.iter().sum::<usize>() as f64 / a.len() as f64;
        let var = a.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / a.len() as f64;
        assert!((mean - 128.0).abs() < 1.0, "{mean}");
        assert!((var.sqrt() - 32.0).abs() < 1.0, "{}", var.sqrt());
        // Clipped at both ends, never dropped.
        let wide = LengthMix::parse("20:100").unwrap().draw(1, 1000, 5, 64);
        assert_eq!(wide.len(), 1000);
        assert!(wide.iter().all(|&x| (5..=64).contains(&x)));
        assert!(wide.contains(&5) && wide.contains(&64));
        assert_eq!(
            LengthMix::parse("700").unwrap().draw(1, 3, 5, 512),
            [512; 3]
        );
        let skewed = LengthMix::parse("128:64:lognormal")
            .unwrap()
            .draw(3, 20_000, 1, 4096);
        let mean = skewed.iter().sum::<usize>() as f64 / skewed.len() as f64;
        let mut sorted = skewed.clone();
        sorted.sort_unstable();
        assert!((mean - 128.0).abs() < 2.0, "{mean}");
        assert!(
            sorted[sorted.len() / 2] < 120,
            "the median under the mean: right-skewed"
        );
    }

    #[test]
    fn lengths_are_recorded_per_input_and_per_request_and_pool_exactly() {
        let counts: Arc<[u32]> = Arc::from(vec![10u32, 20, 30, 40]);
        let mut r = LengthRecorder::default();
        assert!(r.summary().is_none());
        for k in 0..4 {
            r.record(&BatchTokens {
                counts: counts.clone(),
                first: k * 2,
                len: 2,
            });
        }
        let s = r.summary().unwrap();
        assert_eq!((s.p50, s.p90, s.max), (20, 40, 40));
        assert_eq!((s.mean, s.mean_per_request), (25.0, 50.0));
        let mut single = LengthRecorder::default();
        single.record(&BatchTokens {
            counts,
            first: 3,
            len: 1,
        });
        let pooled = InputTokens::pooled([&Some(s.clone()), &single.summary()]).unwrap();
        assert_eq!(pooled.max, 40);
        // 240 tokens over 5 requests, 9 inputs.
        assert_eq!(pooled.mean_per_request, 48.0);
        assert_eq!(pooled.mean, round1(240.0 / 9.0));
        assert!(InputTokens::pooled([&Some(s), &None]).is_none());
    }
}
