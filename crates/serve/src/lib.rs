//! The reference endpoint: a real HTTP server on 127.0.0.1 behaving like a deployed encoder
//! with a known service model, for demos and for exact, known-answer tests. It sleeps rather
//! than computes, so it does not steal the load generator's cores.
//!
//! It speaks the SageMaker container contract (`GET /ping`, `POST /invocations` with
//! Hugging Face payloads) and the SageMaker runtime API (`sagemaker`). `GET /_encbench/counters`
//! tells tests what the server saw.

mod arrivals;
pub mod families;
mod faults;
mod grpc_body;
mod json_apis;
mod kserve;
mod kserve_grpc;
pub mod model;
mod request_log;
mod routes;
mod sagemaker;
mod sigv4;
pub mod tls;
mod workers;
pub use families::{ApiFamily, ModelKind};
pub use kserve::V2Tensors;
pub use workers::Queue;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use encbench_core::input::Input;
use encbench_wire::timing;
use encbench_wire::tokenize::TokenCounter;
use model::{Lengths, ServiceModel, Verdicts};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use workers::{Slot, Workers};

/// Everything `encbench-tui serve` can be told.
#[derive(Debug, Clone, PartialEq)]
pub struct ServeSettings {
    pub port: u16,
    pub workers: usize,
    pub model_load: Duration,
    pub service: ServiceModel,
    /// Probability that a request ends in a 500 (after its service time).
    pub error_rate: f64,
    /// More requests in flight than this get SageMaker's `ThrottlingException`.
    pub throttle_above: Option<usize>,
    /// Seconds after the first request at which the server freezes once, and for how long.
    pub stall_at: Option<Duration>,
    pub stall_for: Duration,
    /// Seconds after the first request at which every request fails with a 500 for a while
    /// (a model reload, a bad deploy being rolled back), and for how long.
    pub error_burst_at: Option<Duration>,
    pub error_burst_for: Duration,
    /// Probability that a successful reply is cut off half-way and the connection closed.
    pub reset_rate: f64,
    /// Probability that a successful reply's body is replaced by one that is not a response.
    pub garbage_rate: f64,
    /// Successful replies say `text/html` although their body is JSON.
    pub wrong_content_type: bool,
    pub flip_labels: bool,
    /// Answer `LABEL_n` instead of class names, like a model exported without id2label.
    pub label_ids: bool,
    pub seed: u64,
    /// Access key id and secret that SageMaker-API requests must be signed with (SigV4);
    /// without them signatures are not checked.
    pub credentials: Option<(String, String)>,
    /// `/ping` says Unhealthy for this long after start.
    pub unhealthy_for: Duration,
    /// How each request's service time varies about the service model's.
    pub service_dist: ServiceDist,
    /// How requests wait for a worker: a queue each, or one for all.
    pub queue: Queue,
    /// Independent copies of the workers, each request routed to one at random.
    pub replicas: usize,
    /// Headers every request must carry, or be refused with 401 (the test counters aside).
    pub require_headers: Vec<(String, String)>,
    /// The KServe v2 model's tensors as clients see them.
    pub v2: V2Tensors,
    /// One family's routes alone (`--only`), as its server answers them; every family's
    /// invocation routes otherwise.
    pub only: Option<ApiFamily>,
    /// What the one family's model is (`--model-kind`); the family's usual kind otherwise.
    pub model_kind: Option<ModelKind>,
    /// The model the server lists and names in replies (`--served-model-name`).
    pub served_model: String,
    /// `--request-log`: a line per invocation appended here (see `request_log`).
    pub request_log: Option<std::path::PathBuf>,
    /// HTTPS (and gRPC over TLS) instead of plain HTTP: `tls::settings`.
    pub tls: Option<tls::ServerTls>,
}

/// `fixed` serves every request in the model's time (an M/D/c queue under Poisson load);
/// `exp` draws it from an exponential distribution with that mean (M/M/c), whose queueing
/// delays have closed forms (Erlang C) the capacity search is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServiceDist {
    #[default]
    Fixed,
    Exp,
}

impl encbench_core::choice::Choice for ServiceDist {
    const ALL: &'static [ServiceDist] = &[ServiceDist::Fixed, ServiceDist::Exp];

    fn name(self) -> &'static str {
        match self {
            ServiceDist::Fixed => "fixed",
            ServiceDist::Exp => "exp",
        }
    }
}

encbench_core::parse_by_name!(ServiceDist);

impl Default for ServeSettings {
    /// mDeBERTa on an inference component of an ml.g6.12xlarge, as measured: 25.8 ms at
    /// b=1 and 102.8 ms at b=8, padded to 512 tokens.
    fn default() -> Self {
        ServeSettings {
            port: 0,
            workers: 4,
            model_load: Duration::ZERO,
            service: ServiceModel {
                base_ms: 14.8,
                per_token_ms: 0.0215,
                saturation_tokens: 512,
            },
            error_rate: 0.0,
            throttle_above: None,
            stall_at: None,
            stall_for: Duration::ZERO,
            error_burst_at: None,
            error_burst_for: Duration::ZERO,
            reset_rate: 0.0,
            garbage_rate: 0.0,
            wrong_content_type: false,
            flip_labels: false,
            label_ids: false,
            seed: 0,
            credentials: None,
            unhealthy_for: Duration::ZERO,
            service_dist: ServiceDist::Fixed,
            queue: Queue::PerWorker,
            replicas: 1,
            require_headers: Vec::new(),
            v2: V2Tensors::default(),
            only: None,
            model_kind: None,
            served_model: "encbench-reference".into(),
            request_log: None,
            tls: None,
        }
    }
}

const SIMULATOR_NOTE: &str =
    "encbench-tui reference endpoint: simulated service times, table verdicts";

/// Why a request was not answered with verdicts; each protocol words it its own way.
enum Fault {
    Throttled(String),
    Invalid(String),
    /// The model failed (the container answers 500).
    ModelError,
    /// The worker's model is still loading (SageMaker API only).
    NotReady,
}

/// Where a served request's time went.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Served {
    queue: Duration,
    compute: Duration,
}

/// What the server saw, for tests (`GET /_encbench/counters`).
#[derive(Default)]
struct Counters {
    invocations: AtomicU64,
    throttled: AtomicU64,
    /// Replies cut off or replaced by a wire fault.
    mangled: AtomicU64,
    /// Requests failed by the error burst.
    burst_errors: AtomicU64,
    /// Requests failed by --error-rate.
    rate_errors: AtomicU64,
    /// Requests refused for a missing or wrong --require-header.
    unauthorized: AtomicU64,
    last_routing: Mutex<BTreeMap<String, String>>,
    /// Requests per endpoint and routing header value ("ep header=value"): which target a
    /// compare run reached how often.
    routed: Mutex<BTreeMap<String, u64>>,
    /// The tensors of the last KServe v2 request: name, datatype, shape; and whether binary.
    last_tensors: Mutex<Value>,
    /// Token counts of the inputs of the last request of a JSON API (vLLM, TEI, ...).
    last_vllm: Mutex<Value>,
    /// The timing headers TEI's routes sent, in milliseconds, for tests to compare.
    tei_sent: json_apis::tei::SentTimes,
    kserve: Mutex<kserve::Stats>,
    arrival_gaps: arrivals::ArrivalGaps,
}

struct Server {
    cfg: ServeSettings,
    /// Independent copies of the endpoint behind one address, each request routed to one at
    /// random (SageMaker's RANDOM routing across instances).
    replicas: Vec<Arc<Workers>>,
    counters: Counters,
    lengths: Lengths,
    verdicts: Verdicts,
    embeddings: model::Embeddings,
    relevance: model::Relevance,
    in_flight: AtomicUsize,
    started: Instant,
    first_request: OnceLock<Instant>,
    rng: Mutex<Xoshiro256PlusPlus>,
    request_log: Option<request_log::RequestLog>,
}

impl Server {
    /// The simulated cross-encoder's score of a (query, document) pair.
    fn relevance(&self, query: &str, document: &str) -> f32 {
        self.relevance.of(&self.embeddings, query, document)
    }

    /// Holds a request while the one-off stall is on; says whether it did.
    async fn wait_out_stall(&self) -> bool {
        let (Some(at), Some(first)) = (self.cfg.stall_at, self.first_request.get()) else {
            return false;
        };
        let (start, end) = (*first + at, *first + at + self.cfg.stall_for);
        let now = Instant::now();
        if now >= start && now < end {
            timing::sleep_until(end).await;
            return true;
        }
        false
    }

    /// The shared path of every protocol: throttle, queue at a worker, serve, fail or not.
    /// `work` is the protocol's parse of the request, begun at `arrived`: parsing and
    /// tokenizing count towards the simulated service time instead of adding to it, so the
    /// service model holds however slow the host is. `wait_for_load` is the container's
    /// behaviour (a request waits while its worker loads); the SageMaker API refuses instead.
    async fn execute(
        &self,
        arrived: Instant,
        work: Result<model::Work, String>,
        wait_for_load: bool,
    ) -> Result<Served, Fault> {
        self.first_request.get_or_init(|| arrived);
        self.counters.arrival_gaps.record(arrived);
        self.counters.invocations.fetch_add(1, Ordering::Relaxed);
        let n = self.in_flight.fetch_add(1, Ordering::AcqRel) + 1;
        let _guard = InFlight(&self.in_flight);
        if let Some(limit) = self.cfg.throttle_above
            && n > limit
        {
            self.counters.throttled.fetch_add(1, Ordering::Relaxed);
            return Err(Fault::Throttled(format!(
                "{n} requests in flight, limit {limit}"
            )));
        }
        let service = self.draw(
            work.map_err(Fault::Invalid)?
                .service_time(&self.cfg.service),
        );
        let workers = self.replica();
        let mut slot = if wait_for_load {
            workers.acquire(arrived).await
        } else {
            workers.try_acquire(arrived).await.ok_or(Fault::NotReady)?
        };
        if self.wait_out_stall().await {
            slot = Slot::restart(slot);
        }
        let queue = slot.start().saturating_duration_since(arrived);
        slot.serve(service).await;
        if self.wait_out_stall().await {
            slot.held_until_now();
        }
        drop(slot);
        if self.model_error() {
            return Err(Fault::ModelError);
        }
        Ok(Served {
            queue,
            compute: service,
        })
    }

    /// The Hugging Face toolkit's path: parse, execute, a verdict per input.
    async fn infer(&self, body: &[u8], wait_for_load: bool) -> Result<Vec<Value>, Fault> {
        let arrived = Instant::now();
        let parsed = parse_hf(body);
        let work = parsed
            .as_ref()
            .map(|(inputs, parameters)| self.lengths.plan(inputs, parameters))
            .map_err(Clone::clone);
        self.execute(arrived, work, wait_for_load).await?;
        let (inputs, _) = parsed.map_err(Fault::Invalid)?;
        // A cross-encoder behind the toolkit: one label, its score the pair's relevance
        // (also the demo's endpoint for a rerank task, which plays every family).
        let reranks = matches!(self.cfg.only, None | Some(ApiFamily::Hf))
            && self.cfg.model_kind == Some(ModelKind::Reranker);
        Ok(inputs
            .iter()
            .map(|i| match (reranks, i.parts()) {
                (true, (q, d)) => {
                    json!({ "label": "LABEL_0", "score": self.relevance(q, d.unwrap_or("")) })
                }
                (false, _) => json!({ "label": self.verdicts.label(i), "score": 0.97 }),
            })
            .collect())
    }

    fn replica(&self) -> &Arc<Workers> {
        if self.replicas.len() == 1 {
            return &self.replicas[0];
        }
        let i = self
            .rng
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .random_range(0..self.replicas.len());
        &self.replicas[i]
    }

    /// This request's service time, about the model's `mean` (see `ServiceDist`).
    fn draw(&self, mean: Duration) -> Duration {
        match self.cfg.service_dist {
            ServiceDist::Fixed => mean,
            ServiceDist::Exp => {
                let u: f64 = self
                    .rng
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .random();
                // u < 1, so the draw is finite (at most 37 means).
                mean.mul_f64(-(1.0 - u).ln())
            }
        }
    }

    fn model_error(&self) -> bool {
        if let (Some(at), Some(first)) = (self.cfg.error_burst_at, self.first_request.get()) {
            let since = first.elapsed();
            if since >= at && since < at + self.cfg.error_burst_for {
                self.counters.burst_errors.fetch_add(1, Ordering::Relaxed);
                return true;
            }
        }
        let failed = self.cfg.error_rate > 0.0
            && self
                .rng
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .random_bool(self.cfg.error_rate.min(1.0));
        if failed {
            self.counters.rate_errors.fetch_add(1, Ordering::Relaxed);
        }
        failed
    }
}

/// A running reference endpoint; dropping it shuts the server down.
pub struct RunningServer {
    pub addr: SocketAddr,
    tls: bool,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl RunningServer {
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Binds 127.0.0.1 (never a public interface) and serves in the background.
pub async fn start(cfg: ServeSettings, tokenizer: TokenCounter) -> std::io::Result<RunningServer> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", cfg.port)).await?;
    let addr = listener.local_addr()?;
    let server = Arc::new(Server {
        replicas: (0..cfg.replicas.max(1))
            .map(|_| Arc::new(Workers::new(cfg.workers, cfg.model_load, cfg.queue)))
            .collect(),
        counters: Counters::default(),
        verdicts: Verdicts::new(cfg.flip_labels, cfg.label_ids, &tokenizer),
        embeddings: model::Embeddings::new(cfg.flip_labels, &tokenizer),
        relevance: model::Relevance::new(cfg.flip_labels, &tokenizer),
        lengths: Lengths::new(tokenizer),
        in_flight: AtomicUsize::new(0),
        started: Instant::now(),
        first_request: OnceLock::new(),
        rng: Mutex::new(Xoshiro256PlusPlus::seed_from_u64(cfg.seed)),
        request_log: (cfg.request_log.as_deref())
            .map(request_log::RequestLog::open)
            .transpose()?,
        cfg,
    });
    let playing = families::Playing {
        only: server.cfg.only,
        kind: server.cfg.model_kind,
    };
    let inference = routes::inference(playing)
        .route_layer(axum::middleware::from_fn_with_state(
            server.clone(),
            faults::wire_faults,
        ))
        .route_layer(axum::middleware::from_fn_with_state(
            server.clone(),
            request_log::record,
        ));
    let mut app = routes::describing(playing)
        .merge(inference)
        .route_layer(axum::middleware::from_fn_with_state(
            server.clone(),
            require_headers,
        ))
        .route("/_encbench/counters", get(counters))
        .fallback(move || async move { routes::not_found(playing) });
    if playing.only.is_none() || playing.is(ApiFamily::Triton) {
        app = app.route("/metrics", get(kserve::metrics));
    }
    if playing.only.is_none() || playing.is(ApiFamily::Triton) || playing.is(ApiFamily::Kserve) {
        // Its own check of required headers: a gRPC client reads a refusal in grpc-status.
        app = app.route(
            "/inference.GRPCInferenceService/{method}",
            axum::routing::post(kserve_grpc::call),
        );
    }
    let tls = server.cfg.tls.clone();
    let app = app.with_state(server);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let stopped = async move {
        let _ = rx.await;
    };
    if let Some(config) = &tls {
        let listener = tls::TlsListener::new(listener, config)?;
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stopped)
                .await;
        });
    } else {
        // Without TCP_NODELAY small responses wait on delayed ACKs (about 40 ms on Linux).
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stopped)
                .await;
        });
    }
    Ok(RunningServer {
        addr,
        tls: tls.is_some(),
        shutdown: Some(tx),
    })
}

/// A gateway's check: every required header present with its value, or 401. The value is
/// not echoed.
async fn require_headers(
    State(s): State<Arc<Server>>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    for (name, value) in &s.cfg.require_headers {
        let given = req
            .headers()
            .get(name.as_str())
            .and_then(|v| v.to_str().ok());
        if given != Some(value.as_str()) {
            s.counters.unauthorized.fetch_add(1, Ordering::Relaxed);
            return error(
                StatusCode::UNAUTHORIZED,
                "UnauthorizedException",
                format!("missing or wrong header {name}"),
            );
        }
    }
    next.run(req).await
}

pub(crate) async fn ping(State(s): State<Arc<Server>>) -> Response {
    let status = if s.started.elapsed() < s.cfg.unhealthy_for {
        "Unhealthy"
    } else if s.replicas.iter().any(|w| w.loading()) {
        "Healthy (workers loading on first request)"
    } else {
        "Healthy"
    };
    axum::Json(json!({ "status": status, "simulator": true, "note": SIMULATOR_NOTE }))
        .into_response()
}

fn error(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Response {
    let message = message.into();
    let mut headers = HeaderMap::new();
    headers.insert("x-amzn-errortype", HeaderValue::from_static(kind));
    (
        status,
        headers,
        axum::Json(json!({ "__type": kind, "code": status.as_u16(), "message": message })),
    )
        .into_response()
}

struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Parses `{"inputs": [...] | single, "parameters": {...}}` as the HF inference toolkit does.
fn parse_hf(body: &[u8]) -> Result<(Vec<Input>, Value), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("body is not JSON: {e}"))?;
    let inputs = v.get("inputs").ok_or("missing \"inputs\"")?;
    let list = match inputs {
        Value::Array(a) => a.clone(),
        one => vec![one.clone()],
    };
    let inputs = list
        .into_iter()
        .map(|i| {
            serde_json::from_value::<Input>(i)
                .map_err(|_| "each input must be a string or {text, text_pair}".to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    if inputs.is_empty() {
        return Err("\"inputs\" is empty".into());
    }
    Ok((inputs, v.get("parameters").cloned().unwrap_or(Value::Null)))
}

pub(crate) async fn invocations(State(s): State<Arc<Server>>, body: Bytes) -> Response {
    match s.infer(&body, true).await {
        Ok(out) => axum::Json(Value::Array(out)).into_response(),
        Err(Fault::Throttled(m)) => error(StatusCode::BAD_REQUEST, "ThrottlingException", m),
        Err(Fault::Invalid(m)) => error(StatusCode::BAD_REQUEST, "ValidationError", m),
        Err(Fault::ModelError) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "ModelError",
            "simulated model error",
        ),
        Err(Fault::NotReady) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            "model loading",
        ),
    }
}

async fn counters(State(s): State<Arc<Server>>) -> Response {
    let c = &s.counters;
    let routing = c
        .last_routing
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    axum::Json(json!({
        "invocations": c.invocations.load(Ordering::Relaxed),
        "throttled": c.throttled.load(Ordering::Relaxed),
        "mangled": c.mangled.load(Ordering::Relaxed),
        "burst_errors": c.burst_errors.load(Ordering::Relaxed),
        "rate_errors": c.rate_errors.load(Ordering::Relaxed),
        "unauthorized": c.unauthorized.load(Ordering::Relaxed),
        "last_routing": routing,
        "routed": c.routed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone(),
        "last_tensors": c.last_tensors.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone(),
        "last_vllm": c.last_vllm.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone(),
        "tei_sent": c.tei_sent.json(),
        "arrival_gaps": c.arrival_gaps.json(),
        "input_tokens": s.lengths.seen(),
    }))
    .into_response()
}
