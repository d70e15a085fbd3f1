//! The export's `config`: every setting that shaped a run, so that it can be repeated, and
//! never credentials. A run writes a `RunConfig`; `compare` and `report --merge` write their
//! own (the schema's `config` is open to settings a later version adds).

use crate::shard::Shard;
use serde::Serialize;

/// A run's settings (`config`), as `assets/export.schema.json` describes them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunConfig {
    pub target: TargetConfig,
    pub n: u64,
    pub warmup: u64,
    pub duration_s: Option<f64>,
    /// What a request is made of: inputs, or (rerank) one query with `batch_size` documents,
    /// whose samples are documents.
    pub task: crate::input::Task,
    pub batch_size: usize,
    pub sweep_batch: bool,
    pub batch_sizes: Vec<usize>,
    /// The cap at the starting pace, given or not.
    pub concurrency: usize,
    /// No `--concurrency` was given: the cap is the default for the pace (1 in a closed
    /// loop, `plan::OPEN_LOOP_CAP` in an open one) and follows it.
    pub concurrency_default: bool,
    pub sweep_concurrency: bool,
    pub concurrency_levels: Vec<usize>,
    /// `None`: a closed loop.
    pub request_rate: Option<f64>,
    /// `None`: arrivals at a fixed interval (burstiness inf).
    pub burstiness: Option<f64>,
    pub closed_loop: bool,
    pub pad_to_max: bool,
    pub max_len: usize,
    pub pretokenize: bool,
    /// Mean natural length of the inputs, in tokens, to a tenth.
    pub natural_tokens_per_input: f64,
    /// `--input-tokens`: the length mix the inputs were drawn from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<crate::lengths::LengthMix>,
    pub texts: Option<String>,
    pub tokenizer: Option<String>,
    pub timeout_s: f64,
    pub client_threads: usize,
    pub seed: u64,
    pub accuracy_samples: Option<String>,
    pub rerank_samples: Option<String>,
    pub accuracy_check: bool,
    pub labels: Vec<String>,
    pub instance_type: Option<String>,
    pub price_per_hour_usd: Option<f64>,
    pub knee: f64,
    /// `--slo` objectives as written (`p99=100ms`).
    pub slo: Vec<String>,
    pub find_capacity: bool,
    pub capacity_precision: f64,
    pub min_probe_requests: u64,
    pub stability: f64,
    pub max_probe_secs: f64,
    pub until_stable: bool,
    /// `--repeat`: each phase (and capacity search) this many times.
    pub repeat: u32,
    /// Without a user or password in it.
    pub metrics_url: Option<String>,
    pub metrics: Vec<String>,
    pub cloudwatch_wait_s: Option<f64>,
    /// `--fail-on` thresholds as written (`p99>200ms`).
    pub fail_on: Vec<String>,
    /// This host's part of a run over several hosts; every host's config is the same but
    /// for this, which `report --merge` checks.
    pub shard: Option<Shard>,
    /// The common start, RFC 3339.
    pub start_at: Option<String>,
    /// `--ramp`: every `--duration` phase's rate moved from `from_per_s` to `to_per_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp: Option<crate::ramp::Ramp>,
    /// `--slice`: every phase cut into slices this long, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slice_s: Option<f64>,
    /// `--replay`: the recorded traffic the run's phase sent; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayConfig>,
}

/// What a replay was (`config.replay`): the file, how it was played, and what it planned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayConfig {
    pub file: String,
    /// `trace` or `data-capture`.
    pub format: String,
    pub speed: f64,
    pub scale: u32,
    /// Records read from the file.
    pub records: usize,
    /// Requests planned: records × scale.
    pub requests: u64,
    /// The recording's span from its first record, in its own seconds (to the end of the
    /// last recorded second where times are whole seconds).
    pub recorded_s: f64,
    /// The phase's length: the recording's span over the speed.
    pub duration_s: f64,
    /// The times were whole seconds: each second's requests were spread within it by the
    /// seeded arrival process, its count kept.
    pub spread_within_seconds: bool,
    /// Inputs per request over the requests planned: the phase's batch size is their mean,
    /// rounded (the trace's own where every record has the same).
    pub batch_sizes: ReplayBatches,
}

/// The fewest, most and mean inputs per request of a replay.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReplayBatches {
    pub min: usize,
    pub max: usize,
    pub mean: f64,
}

impl From<(usize, usize, f64)> for ReplayBatches {
    fn from((min, max, mean): (usize, usize, f64)) -> ReplayBatches {
        ReplayBatches {
            min,
            max,
            mean: (mean * 1000.0).round() / 1000.0,
        }
    }
}

/// Where the requests went (`config.target`): a URL (the reference endpoint's with `demo`)
/// or a SageMaker endpoint with its routing. Never credentials: the URL has any
/// user:password removed, and of `--header` only the names are kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TargetConfig {
    pub url: Option<String>,
    /// The API family (`--engine`, or what discovery found): hf, triton, vllm, openai, tei,
    /// infinity or jina.
    pub engine: String,
    /// The task of families with several routes (`--api`): embed, classify, rerank, score or
    /// pooling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    /// The invocation's route on a URL target (`--path`, or the family's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A rerank request's `top_n` (`--top-n`; absent: every document's score).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_n: Option<usize>,
    /// A rerank request's `return_documents` (`--return-documents`; absent: not sent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_documents: Option<bool>,
    /// The model requests name (KServe's, or the served model of the JSON APIs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What `--url` alone was found to be, and how.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detected: Option<Detected>,
    pub demo: bool,
    pub endpoint: Option<String>,
    pub region: Option<String>,
    pub profile: Option<String>,
    pub endpoint_url: Option<String>,
    pub target_container: Option<String>,
    pub inference_component: Option<String>,
    pub target_model: Option<String>,
    pub target_variant: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    /// How KServe v2 tensors travel (triton): `json`, `binary` (the binary tensor
    /// extension) or `grpc`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wire: Option<String>,
    /// A `grpc://` target's HTTP/2 connections per client thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpc_connections: Option<usize>,
}

/// What discovery found at a URL given without `--engine` (`config.target.detected`), and
/// what a family's own metadata said of the model where `--engine` was given.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detected {
    /// The API family, as `--engine` names it.
    pub engine: String,
    /// The server as it names itself where it does: `TEI 1.9.3`, `triton 2.51.0`.
    pub server: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What kind of model it serves, where the server says: embedder, classifier, reranker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The most inputs a request may carry, where the server says (TEI's
    /// `max_client_batch_size`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_client_batch: Option<usize>,
    /// Each request discovery sent and its answer: `GET /info 404`.
    pub tried: Vec<String>,
}
