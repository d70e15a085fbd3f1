//! Replies of embedding models: a vector per input, or a vector per token that the client
//! pools into one (as sentence-transformers does), and how alike two vectors are.

/// What a reply says about each input.
#[derive(Debug, Clone, PartialEq)]
pub enum Answers {
    /// A class name per input.
    Labels(Vec<String>),
    /// A row of scores per input that may be logits or an embedding (a KServe v2 FP32
    /// [batch, n] output): the reader decides by the row's width.
    Scores(Vec<Vec<f32>>),
    /// A vector per input, from an embedding model.
    Vectors(Vec<Vec<f32>>),
    /// A reranker's relevance score for each document of the request, in the order sent.
    Ranking(Vec<f32>),
}

impl Answers {
    pub fn len(&self) -> usize {
        match self {
            Answers::Labels(l) => l.len(),
            Answers::Scores(r) | Answers::Vectors(r) => r.len(),
            Answers::Ranking(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How a vector per token becomes one per input (`--pooling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// The mean over the input's real tokens (the attention mask): sentence-transformers'
    /// default, and all-MiniLM-L6-v2's.
    #[default]
    Mean,
    /// The first token's vector ([CLS]).
    Cls,
    /// No pooling: a reply of vectors per token is refused.
    None,
}

impl encbench_core::choice::Choice for Pooling {
    const ALL: &'static [Pooling] = &[Pooling::Mean, Pooling::Cls, Pooling::None];

    fn name(self) -> &'static str {
        match self {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
            Pooling::None => "none",
        }
    }
}

encbench_core::parse_by_name!(Pooling);

impl Pooling {
    /// One vector from `rows` (one per token, each `dim` long), of which those with a true
    /// `mask` are real tokens (all of them without a mask).
    pub fn pool(self, rows: &[&[f32]], mask: Option<&[bool]>) -> Result<Vec<f32>, String> {
        let dim = rows.first().map_or(0, |r| r.len());
        if dim == 0 || rows.iter().any(|r| r.len() != dim) {
            return Err("token vectors of unequal or no length".into());
        }
        match self {
            Pooling::None => Err(
                "the reply holds a vector per token: pool them with --pooling mean or cls".into(),
            ),
            Pooling::Cls => Ok(rows[0].to_vec()),
            Pooling::Mean => {
                let mut sum = vec![0.0f64; dim];
                let mut n = 0usize;
                for (i, r) in rows.iter().enumerate() {
                    if mask.is_some_and(|m| !m.get(i).copied().unwrap_or(false)) {
                        continue;
                    }
                    n += 1;
                    for (s, x) in sum.iter_mut().zip(*r) {
                        *s += f64::from(*x);
                    }
                }
                if n == 0 {
                    return Err("no real token to pool".into());
                }
                Ok(sum.into_iter().map(|s| (s / n as f64) as f32).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pooling_leaves_out_the_padding() {
        let rows: [&[f32]; 3] = [&[1.0, 0.0], &[3.0, 2.0], &[100.0, 100.0]];
        let mask = [true, true, false];
        assert_eq!(
            Pooling::Mean.pool(&rows, Some(&mask)).unwrap(),
            vec![2.0, 1.0]
        );
        assert_eq!(
            Pooling::Cls.pool(&rows, Some(&mask)).unwrap(),
            vec![1.0, 0.0]
        );
        assert!(Pooling::None.pool(&rows, None).is_err());
        assert!(Pooling::Mean.pool(&rows, Some(&[false; 3])).is_err());
    }
}
