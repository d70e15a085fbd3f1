//! One request from its concurrency slot to its recorded completion. The open-loop
//! dispatcher spawns it on a client thread; a closed-loop slot awaits it in its own loop.

use super::ctx::Ctx;
use super::limiter::Permit;
use super::replay::{Next, ReplayBodies};
use super::shared::{Heard, Shared};
use encbench_core::export::records::{RecordsTx, RequestRecord};
use encbench_core::input::{Input, batch_inputs};
use encbench_core::lengths::BatchTokens;
use encbench_core::plan::PhaseSpec;
use encbench_core::server_metrics::headers::ServerTime;
use encbench_core::stats::{CLIENT_PANIC, Completion};
use encbench_wire::client::{ErrorKind, Failure, Target};
use encbench_wire::payload::{Format, Prepared, prepared_ring};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What every request of one phase shares.
pub(crate) struct Requester {
    pub shared: Arc<Shared>,
    target: Arc<dyn Target>,
    format: Arc<dyn Format>,
    texts: Arc<Vec<Input>>,
    /// Each of `texts`' token counts.
    tokens: Option<Arc<[u32]>>,
    /// Bodies built once, for formats that do not tokenize on the client (those prepare each
    /// request as it is sent, so the time is measured).
    ring: Option<Vec<Prepared>>,
    batch_size: usize,
    warmup_timeout: Duration,
    /// A replay phase's bodies: each request the record the plan gives it.
    replay: Option<ReplayBodies>,
    /// `--records`: where each request's line goes, and what it says of the phase.
    records: Option<(RecordsTx, PhaseTag)>,
}

/// The phase as a request's record names it.
#[derive(Clone, Copy)]
struct PhaseTag {
    phase: u32,
    kind: &'static str,
    repetition: Option<u32>,
}

impl PhaseTag {
    fn of(spec: &PhaseSpec, index: usize) -> PhaseTag {
        PhaseTag {
            phase: u32::try_from(index).unwrap_or(u32::MAX),
            kind: spec.kind.name(),
            repetition: spec.repetition.map(|(k, _)| k),
        }
    }
}

/// Where one request stands in its phase.
#[derive(Clone, Copy)]
pub(crate) struct Ticket {
    pub idx: u64,
    pub intended: Instant,
    pub measured: bool,
    pub generation: u64,
}

impl Requester {
    /// The requester of phase number `index` (as the run counts them), run as `spec`.
    pub fn new(ctx: &Ctx, spec: &PhaseSpec, index: usize) -> Arc<Requester> {
        let batch_size = spec.batch_size;
        let texts = ctx.inputs_for(batch_size);
        let tokens = ctx.tokens_for(&texts);
        let tag = PhaseTag::of(spec, index);
        Arc::new(Requester {
            tokens,
            shared: ctx.shared.clone(),
            target: ctx.target.clone(),
            format: ctx.format.clone(),
            ring: (!ctx.format.tokenizes())
                .then(|| prepared_ring(ctx.format.as_ref(), &texts, batch_size)),
            texts,
            batch_size,
            warmup_timeout: ctx.warmup_timeout,
            replay: None,
            records: ctx.records.clone().map(|tx| (tx, tag)),
        })
    }

    /// The requests of a replay phase (see `replay`).
    pub fn replaying(
        ctx: &Ctx,
        spec: &PhaseSpec,
        index: usize,
        plan: Arc<encbench_core::replay::ReplayPlan>,
    ) -> Arc<Requester> {
        let tag = PhaseTag::of(spec, index);
        Arc::new(Requester {
            shared: ctx.shared.clone(),
            target: ctx.target.clone(),
            format: ctx.format.clone(),
            ring: None,
            texts: ctx.texts.clone(),
            // A record's inputs are its own: `replay` counts their tokens.
            tokens: None,
            batch_size: 1,
            warmup_timeout: ctx.warmup_timeout,
            replay: Some(ReplayBodies::new(
                plan,
                ctx.format.as_ref(),
                ctx.tokenizer.as_deref(),
            )),
            records: ctx.records.clone().map(|tx| (tx, tag)),
        })
    }

    /// Request `idx`'s batch, and whether its reply is checked against it.
    fn batch_of(&self, idx: u64) -> (usize, bool) {
        match &self.replay {
            Some(r) => (r.inputs(idx), r.checks_reply(idx)),
            None => (self.batch_size, true),
        }
    }

    /// Sends, reads to the last byte, checks the reply and records the result; the slot is
    /// given back only after that. An open loop keeps its schedule whatever the endpoint
    /// does: a request that could not connect is a failure of its kind like any other.
    pub async fn send(self: Arc<Self>, ticket: Ticket, permit: Permit) {
        self.send_as(ticket, permit, false).await;
    }

    /// [`send`](Self::send) for a closed-loop slot: a request that could not connect is
    /// not recorded but handed back with its slot, for the slot to try again after a pause
    /// (see `closed`); the attempt is counted apart.
    pub async fn send_or_hand_back(self: Arc<Self>, ticket: Ticket, permit: Permit) -> Sent {
        self.send_as(ticket, permit, true).await
    }

    /// Request `k`'s body (see `send_as`); `None` when tokenizing it panicked, or a replay
    /// has no record for it.
    async fn body(self: &Arc<Self>, replayed: Option<Next<'_>>, k: usize) -> Option<Prepared> {
        match (&self.ring, replayed) {
            (_, Some(Next::Ready(p))) => Some(p),
            (_, Some(Next::Tokenize(texts))) => {
                let (format, texts) = (self.format.clone(), texts.to_vec());
                super::tokenizer_pool::run(move || {
                    format.prepare(&texts.iter().collect::<Vec<_>>())
                })
                .await
            }
            (_, Some(Next::Missing)) => None,
            (Some(ring), None) => Some(ring[k].clone()),
            // Tokenizing is CPU work: off the reactor and below it (see `tokenizer_pool`), so
            // other requests' sends are not held up behind it.
            (None, None) => {
                let this = self.clone();
                super::tokenizer_pool::run(move || {
                    this.format
                        .prepare(&batch_inputs(&this.texts, this.batch_size, k))
                })
                .await
            }
        }
    }

    async fn send_as(self: Arc<Self>, ticket: Ticket, permit: Permit, hand_back: bool) -> Sent {
        let (batch_size, check) = self.batch_of(ticket.idx);
        let mut guard = Unfinished {
            shared: self.shared.clone(),
            generation: ticket.generation,
            intended: ticket.intended,
            // The hand-off to a client thread is dispatch delay, not service time.
            sent: Instant::now(),
            batch_size,
            measured: ticket.measured,
            tokenize: None,
            tokens: None,
            permit: Some(permit),
            line: self.records.as_ref().map(|(tx, tag)| Line {
                tx: tx.clone(),
                tag: *tag,
                idx: ticket.idx,
                request_bytes: 0,
                tokens: None,
                reply_bytes: None,
            }),
        };
        let replayed = self.replay.as_ref().map(|r| r.next(ticket.idx));
        // The k of `batch_inputs(texts, batch_size, k)` this request sends.
        let k = match &self.ring {
            Some(ring) => (ticket.idx as usize) % ring.len(),
            None => ticket.idx as usize,
        };
        // A replayed request sends its record's inputs, not the run's texts.
        guard.tokens = match &self.replay {
            Some(r) => r.tokens(ticket.idx),
            None => self.tokens.as_ref().map(|counts| BatchTokens {
                counts: counts.clone(),
                first: k * self.batch_size,
                len: self.batch_size,
            }),
        };
        let Some(prepared) = self.body(replayed, k).await else {
            return guard.finish(Instant::now(), Err(panicked()));
        };
        let prepared = Prepared {
            timeout: (!ticket.measured).then_some(self.warmup_timeout),
            ..prepared
        };
        // What the client tokenized (padding left out), else the run's tokenizer's count.
        let counted = (guard.tokens.as_ref()).map(|t| t.each().map(u64::from).sum::<u64>());
        if let Some(line) = guard.line.as_mut() {
            line.request_bytes = prepared.body.len() as u64;
            line.tokens = prepared.tokens.or(counted);
        }
        let result = self.target.invoke(&prepared).await;
        let done = Instant::now();
        if let Err(Failure {
            unconnected: Some(why),
            ..
        }) = &result
            && hand_back
            && let Some(permit) = guard.permit.take()
        {
            self.shared.attempt_failed(guard.sent, *why);
            return Sent::Unconnected(ticket, permit);
        }
        if let (Some(line), Ok(reply)) = (guard.line.as_mut(), &result) {
            line.reply_bytes = Some(reply.body.len() as u64);
        }
        // After `done`: latency ends at the last byte, not after our parse.
        let result = result.and_then(|reply| {
            if !check
                || !self.target.checks_replies()
                || self.format.check(&reply, batch_size).is_ok()
            {
                Ok(reply)
            } else {
                // What came back instead, as the server's words: outputs under other names.
                Err(Failure::with_body(ErrorKind::BadResponse, &reply.body))
            }
        });
        guard.tokenize = prepared.tokenize;
        guard.finish(
            done,
            result.map(|r| Answered {
                variant: r.variant,
                server_time: r.server_time,
            }),
        )
    }
}

/// What became of a closed-loop slot's request.
pub(crate) enum Sent {
    /// Recorded, however it ended: a connection was made, or the request was never tried.
    Recorded,
    /// No connection could be made: nothing recorded, the request and its slot handed back.
    Unconnected(Ticket, Permit),
}

/// What a success carries into its record.
struct Answered {
    variant: Option<String>,
    server_time: Option<ServerTime>,
}

/// A request between dispatch and its recorded completion. If its task unwinds (a panic in
/// the client) the request is still counted, as a `ClientPanic` error; the concurrency slot
/// is given back only after the result is recorded, so a drained phase has every result.
struct Unfinished {
    shared: Arc<Shared>,
    generation: u64,
    intended: Instant,
    sent: Instant,
    batch_size: usize,
    measured: bool,
    tokenize: Option<Duration>,
    tokens: Option<BatchTokens>,
    permit: Option<Permit>,
    /// `--records`: what the request's line says beyond its completion.
    line: Option<Line>,
}

/// A request's record as it fills in on the way.
struct Line {
    tx: RecordsTx,
    tag: PhaseTag,
    idx: u64,
    request_bytes: u64,
    tokens: Option<u64>,
    reply_bytes: Option<u64>,
}

impl Unfinished {
    fn finish(mut self, done: Instant, result: Result<Answered, Failure>) -> Sent {
        self.record(done, result);
        Sent::Recorded
    }

    fn record(&mut self, done: Instant, result: Result<Answered, Failure>) {
        let Some(permit) = self.permit.take() else {
            return;
        };
        let heard = Heard::of(result.as_ref().err());
        let (variant, server_time, error, said) = match result {
            Ok(a) => (a.variant, a.server_time, None, None),
            Err(f) => (None, None, Some(f.kind.key()), f.said),
        };
        let c = Completion {
            intended: self.intended,
            sent: self.sent,
            done,
            batch_size: self.batch_size,
            error,
            said,
            variant,
            tokenize: self.tokenize,
            server_time,
            measured: self.measured,
            tokens: self.tokens.take(),
        };
        let slice = self.shared.record(&c, self.generation, heard);
        if let Some(line) = self.line.take() {
            let since =
                |t: Instant| t.saturating_duration_since(self.shared.started).as_micros() as u64;
            // Before the slot is given back: the line of a drained phase is sent with it.
            line.tx.send(RequestRecord {
                phase: line.tag.phase,
                kind: line.tag.kind,
                repetition: line.tag.repetition,
                idx: line.idx,
                intended_us: since(c.intended),
                sent_us: since(c.sent),
                done_us: since(c.done),
                error: c.error,
                batch_size: u32::try_from(c.batch_size).unwrap_or(u32::MAX),
                tokens: line.tokens,
                request_bytes: line.request_bytes,
                reply_bytes: line.reply_bytes,
                measured: c.measured,
                slice,
            });
        }
        drop(permit);
    }
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        // Only unwinding counts: a task dropped at runtime shutdown belongs to no result.
        if self.permit.is_some() && std::thread::panicking() {
            self.record(Instant::now(), Err(panicked()));
        }
    }
}

/// A panic in the client: an error kind of our own, with no words of the server's.
fn panicked() -> Failure {
    Failure {
        kind: ErrorKind::Service(CLIENT_PANIC.into()),
        said: None,
        unconnected: None,
    }
}
