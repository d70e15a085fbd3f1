//! A replay phase's request bodies: request k sends the record the plan gives it. A trace's
//! texts go out in the target's own format (prepared once here, or per request where the
//! format tokenizes, so that tokenizing is timed as in any phase); a Data Capture body goes
//! out as it was captured, under its recorded content type.

use encbench_core::input::Input;
use encbench_core::lengths::BatchTokens;
use encbench_core::replay::{Body, ReplayPlan};
use encbench_wire::payload::{Format, Prepared};
use encbench_wire::tokenize::TokenCounter;
use std::sync::Arc;

pub(crate) struct ReplayBodies {
    plan: Arc<ReplayPlan>,
    /// Per record: its request, where it can be made before the phase.
    ready: Vec<Option<Prepared>>,
    /// What the phase's input lengths and the records' `tokens` say; a captured body's
    /// inputs are the endpoint's to read: none counted.
    tokens: Option<RecordTokens>,
}

/// Every text's tokens by the run's tokenizer, record after record, and where each record's
/// start (`None` for a record of another kind).
struct RecordTokens {
    counts: Arc<[u32]>,
    starts: Vec<Option<usize>>,
}

/// What request k needs before it is sent.
pub(crate) enum Next<'a> {
    Ready(Prepared),
    /// Texts for a format that tokenizes.
    Tokenize(&'a [Input]),
    /// No body for this request (past the plan, or a record the run refused).
    Missing,
}

impl ReplayBodies {
    pub fn new(
        plan: Arc<ReplayPlan>,
        format: &dyn Format,
        tokenizer: Option<&TokenCounter>,
    ) -> ReplayBodies {
        let ready = (plan.bodies.iter())
            .map(|b| match b {
                Body::Captured(c) => Some(Prepared::raw(&c.data, &c.content_type)),
                Body::Texts(t) if !format.tokenizes() => {
                    Some(format.prepare(&t.iter().collect::<Vec<_>>()))
                }
                Body::Texts(_) | Body::Tokens { .. } => None,
            })
            .collect();
        let tokens = tokenizer.map(|tok| counted(&plan, tok));
        ReplayBodies {
            plan,
            ready,
            tokens,
        }
    }

    /// The tokens of request `idx`'s inputs, where they are texts.
    pub fn tokens(&self, idx: u64) -> Option<BatchTokens> {
        let t = self.tokens.as_ref()?;
        let record = *self.plan.record_of.get(usize::try_from(idx).ok()?)? as usize;
        Some(BatchTokens {
            counts: t.counts.clone(),
            first: (*t.starts.get(record)?)?,
            len: self.plan.bodies[record].inputs(),
        })
    }

    /// Inputs request `idx` carries: its batch.
    pub fn inputs(&self, idx: u64) -> usize {
        self.plan.body_of(idx).map_or(1, Body::inputs)
    }

    /// A recorded body is sent as it was: its reply is the endpoint's to shape, and only its
    /// status is checked.
    pub fn checks_reply(&self, idx: u64) -> bool {
        matches!(self.plan.body_of(idx), Some(Body::Texts(_)))
    }

    pub fn next(&self, idx: u64) -> Next<'_> {
        let record = usize::try_from(idx)
            .ok()
            .and_then(|i| self.plan.record_of.get(i))
            .map(|&r| r as usize);
        match record.map(|r| (&self.ready[r], &self.plan.bodies[r])) {
            Some((Some(p), _)) => Next::Ready(p.clone()),
            Some((None, Body::Texts(t))) => Next::Tokenize(t),
            _ => Next::Missing,
        }
    }
}

fn counted(plan: &ReplayPlan, tok: &TokenCounter) -> RecordTokens {
    let mut counts = Vec::new();
    let starts = (plan.bodies.iter())
        .map(|b| match b {
            Body::Texts(t) => {
                let first = counts.len();
                counts.extend(
                    t.iter()
                        .map(|i| u32::try_from(tok.count(i)).unwrap_or(u32::MAX)),
                );
                Some(first)
            }
            Body::Tokens { .. } | Body::Captured(_) => None,
        })
        .collect();
    RecordTokens {
        counts: counts.into(),
        starts,
    }
}
