//! A run's flags (the command line without a subcommand), and the groups of flags that
//! `compare` and `cold-start` share with it.
// Doc comments here are `--help` text, read in a terminal: no Markdown in them.
#![allow(clippy::doc_markdown)]

use super::choices;
use super::values::{
    Rate, batch, concurrency, connections, count, efficiency, objective, parse_burstiness,
    parse_rate, positive, positive_secs, ramp_rates, repetitions, replay_scale, replay_speed,
    route, screen_setting, share, slice_secs, threads, tokens, warmup_count, window_secs,
};
use clap::Args;
use encbench_core::choice::Choice;
use encbench_core::ramp::{Ramp, RampShape};
use encbench_wire::payload::{Api, PayloadFormat, Pooling};
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    // Target selection
    /// SageMaker endpoint to invoke through the AWS SDK (standard credential chain)
    /// [env: ENCBENCH_ENDPOINT, read when the command line names no target]
    #[arg(long, conflicts_with_all = ["demo", "url"], help_heading = "Target")]
    pub endpoint: Option<String>,
    /// A server on a URL, such as http://localhost:8080: its API (TEI, KServe v2, vLLM,
    /// Infinity, an OpenAI-compatible one, the SageMaker container contract) is found from
    /// its metadata routes unless --engine names it; grpc://HOST:PORT (grpcs:// with TLS)
    /// for KServe v2's gRPC service (Triton's port 8001)
    /// [env: ENCBENCH_URL, read when the command line names no target]
    #[arg(long, conflicts_with = "demo", help_heading = "Target")]
    pub url: Option<String>,
    #[command(flatten)]
    pub sagemaker: SageMakerArgs,
    #[command(flatten)]
    pub http: HttpArgs,
    /// Model name (triton: the KServe model; the JSON APIs: the served model). Default: the
    /// server's only model, where it lists its models.
    #[arg(long, env = "ENCBENCH_MODEL", help_heading = "Target")]
    pub model: Option<String>,
    /// Triton: send tensors with the binary tensor extension instead of JSON.
    #[arg(long, help_heading = "Target")]
    pub binary: bool,
    /// A grpc:// URL: HTTP/2 connections per client thread (default 1), the streams in
    /// flight spread over them.
    #[arg(long, value_name = "N", value_parser = connections, help_heading = "Target")]
    pub grpc_connections: Option<usize>,
    /// Engines that send token ids (triton, vllm, and openai or tei when the server takes
    /// ids): tokenize each phase's inputs before the phase starts, so the client's
    /// tokenization is not in the latency (the server's capacity alone).
    #[arg(long, help_heading = "Target")]
    pub pretokenize: bool,
    /// Triton: send raw text as one BYTES tensor of this name (a model that tokenizes on
    /// the server, such as an ensemble) instead of client-side token tensors.
    #[arg(long, help_heading = "Target")]
    pub text_input: Option<String>,
    /// Triton: the token ids input's name (default: what the server declares in
    /// GET /v2/models/M or /config, else input_ids).
    #[arg(long, help_heading = "Target")]
    pub input_ids_name: Option<String>,
    /// Triton: the attention mask input's name (default: what the server declares, else
    /// attention_mask).
    #[arg(long, help_heading = "Target")]
    pub attention_mask_name: Option<String>,
    /// Triton: the model takes token type ids under this name.
    #[arg(long, help_heading = "Target")]
    pub token_type_ids_name: Option<String>,
    /// Triton: the output tensor to read (default: what the server declares, else the
    /// first output of the first reply).
    #[arg(long, help_heading = "Target")]
    pub output_name: Option<String>,
    /// The API family: hf (SageMaker and Hugging Face containers), triton (KServe v2, also
    /// named kserve), vllm, openai (/v1/embeddings), tei (text-embeddings-inference),
    /// infinity, jina (the Jina/Cohere /v1/rerank). Default: found from the server at
    /// --url (said before the load), hf for --endpoint and --demo.
    #[arg(long, value_parser = choices::engine(), env = "ENCBENCH_ENGINE", help_heading = "Target")]
    pub engine: Option<PayloadFormat>,
    /// The task, for families with a route per task (vllm, tei, infinity): embed, classify,
    /// rerank, score (vllm) or pooling (vllm). Default: what the server says of its model,
    /// else classify for vllm and embed for the others.
    #[arg(long, visible_alias = "vllm-api", value_parser = choices::api(), help_heading = "Target")]
    pub api: Option<Api>,
    /// The invocation's route instead of the family's (/embeddings, /v1/rerank), as on a
    /// gateway or a server started with a prefix.
    #[arg(long, value_name = "ROUTE", value_parser = route, help_heading = "Target")]
    pub path: Option<String>,
    /// The route that answers once the model can serve, instead of the family's (/ping,
    /// /health, /v2/models/M/ready).
    #[arg(long, value_name = "ROUTE", value_parser = route, help_heading = "Target")]
    pub ready_path: Option<String>,
    /// Start the built-in reference endpoint on 127.0.0.1 and run against it.
    #[arg(long, help_heading = "Target")]
    pub demo: bool,

    // Workload
    /// Measured requests per phase.
    #[arg(short = 'n', long = "requests", default_value_t = 100, value_parser = count, help_heading = "Workload")]
    pub n: u64,
    /// Requests sent before measuring, per phase (excluded from results).
    #[arg(long, default_value_t = 3, value_parser = warmup_count, help_heading = "Workload")]
    pub warmup: u64,
    /// Per-request timeout of warmup requests: a new batch shape can take long the first
    /// time (TensorRT compiles it).
    /// Units accepted (10m, 90s); a bare number is seconds.
    #[arg(long, default_value = "600", value_parser = positive_secs, allow_hyphen_values = true, help_heading = "Workload")]
    pub warmup_timeout: f64,
    /// Measure each phase for this long instead of -n requests (30s, 5m, 1h; a bare number
    /// is seconds).
    #[arg(short = 'z', long, value_parser = positive_secs, allow_hyphen_values = true, conflicts_with = "n", help_heading = "Workload")]
    pub duration: Option<f64>,
    /// Inputs per request (with --sweep-batch alone: refused, the sweep sends each of
    /// --batch-sizes).
    #[arg(long, default_value_t = 1, value_parser = batch, help_heading = "Workload")]
    pub batch_size: usize,
    /// Run one phase per --batch-sizes entry.
    #[arg(long, help_heading = "Workload")]
    pub sweep_batch: bool,
    /// Batch sizes of --sweep-batch, of the live screen's batch sweep (key b) and of
    /// --find-capacity.
    #[arg(long, num_args = 1.., default_values_t = [1usize, 8, 32], value_parser = batch, help_heading = "Workload")]
    pub batch_sizes: Vec<usize>,
    /// What a request is made of: inputs (a batch of texts or pairs), or rerank (one query
    /// with --docs-per-query documents, a score per document). Default: rerank where the
    /// route ranks (a reranker found, --engine jina, --api rerank or score), inputs
    /// otherwise; rerank on a classifier route reads a cross-encoder's score per pair.
    #[arg(long, value_parser = choices::task(), help_heading = "Workload")]
    pub task: Option<encbench_core::input::Task>,
    /// Documents per query of a rerank task (default 8): its batch size.
    #[arg(long, value_name = "D", value_parser = batch, conflicts_with = "batch_size", help_heading = "Workload")]
    pub docs_per_query: Option<usize>,
    /// A rerank task's sweep: one phase per documents-per-query value (like --sweep-batch
    /// with --batch-sizes), under the live screen's key b too.
    #[arg(long, value_name = "D", num_args = 1.., value_parser = batch, conflicts_with_all = ["sweep_batch", "batch_sizes"], help_heading = "Workload")]
    pub sweep_docs: Vec<usize>,
    /// A rerank request's top_n: the server returns the scores of the best N of the D
    /// documents (the Jina/Cohere shape: jina, or vllm or infinity with --api rerank).
    /// Default: every document's. The accuracy check always asks for all.
    #[arg(long, value_name = "N", value_parser = batch, help_heading = "Workload")]
    pub top_n: Option<usize>,
    /// A rerank request's return_documents (TEI's return_text): true has the server send
    /// each document's text back with its score. Default: not sent (the server's default).
    #[arg(long, value_name = "BOOL", value_parser = clap::builder::BoolishValueParser::new(), help_heading = "Workload")]
    pub return_documents: Option<bool>,
    /// A reranker's known answers: JSONL of {"query", "documents", "relevant": [indices]}
    /// (default: the shipped set of 24 queries with hard negatives).
    #[arg(long, value_name = "FILE", help_heading = "Accuracy, cost, output")]
    pub rerank_samples: Option<PathBuf>,
    /// Most requests in flight at once (with --sweep-concurrency alone: refused, the sweep
    /// runs each of --concurrency-levels). Default: 1 in a closed loop (--request-rate inf);
    /// 1024 in an open loop (a finite rate, a capacity search's probes), so a rate is not
    /// capped at one connection. A given value holds at every pace.
    #[arg(short = 'c', long, value_parser = concurrency, help_heading = "Workload")]
    pub concurrency: Option<usize>,
    /// Run one phase per --concurrency-levels entry.
    #[arg(long, help_heading = "Workload")]
    pub sweep_concurrency: bool,
    /// Run every phase (and every capacity search) K times with fresh seeds, the phases
    /// taking turns (1 8 32 1 8 32 …): the tables report each phase pooled, and the mean of
    /// p50, p99, req/s, samples/s and $/1M across the repetitions with a 95 % interval.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = repetitions, help_heading = "Workload")]
    pub repeat: u32,
    /// Concurrency caps of --sweep-concurrency and of the live screen's concurrency sweep
    /// (key s).
    #[arg(long, num_args = 1.., default_values_t = [1usize, 2, 4, 8, 16], value_parser = concurrency, help_heading = "Workload")]
    pub concurrency_levels: Vec<usize>,
    /// Requests per second; inf means closed loop at the concurrency cap.
    #[arg(short = 'q', long, default_value = "inf", value_parser = parse_rate, help_heading = "Workload")]
    pub request_rate: Rate,
    /// Gamma shape of the gaps between sends: 1.0 Poisson, <1 burstier, inf fixed interval.
    #[arg(long, default_value = "1.0", value_parser = parse_burstiness, help_heading = "Workload")]
    pub burstiness: f64,
    /// Move the request rate from FROM to TO requests per second over each phase's
    /// --duration (20..400, two dots), so one run crosses the knee; the arrivals keep
    /// --burstiness. Not with -n or --replay, whose phases a ramp cannot shape. With --slice
    /// and --slo the run says where each objective first broke.
    #[arg(long, value_name = "FROM..TO", value_parser = ramp_rates, requires = "duration", conflicts_with_all = ["request_rate", "find_capacity", "until_stable"], help_heading = "Workload")]
    pub ramp: Option<(f64, f64)>,
    /// The ramp's shape: linear, or exp (the rate grows by the same factor every second).
    #[arg(long, value_parser = choices::ramp_shape(), default_value = RampShape::Linear.name(), requires = "ramp", help_heading = "Workload")]
    pub ramp_shape: RampShape,
    /// Cut every phase into time slices this long (10s, 500ms), each with its own
    /// percentiles, req/s, errors and offered rate, by each request's intended send time.
    #[arg(long, value_name = "DURATION", value_parser = slice_secs, allow_hyphen_values = true, help_heading = "Workload")]
    pub slice: Option<f64>,
    /// Ask the endpoint to pad every input to --max-len tokens (the RAG-chunk condition).
    #[arg(long, help_heading = "Workload")]
    pub pad_to_max: bool,
    /// Tokens every input is padded (and truncated) to with --pad-to-max; at most the
    /// tokenizer's model length.
    #[arg(long, default_value_t = 512, value_parser = tokens, help_heading = "Workload")]
    pub max_len: usize,
    /// Input texts: JSONL of {"premise","hypothesis"} pairs or strings (default: shipped samples).
    #[arg(long, help_heading = "Workload")]
    pub texts: Option<PathBuf>,
    /// tokenizer.json for token counts (default: shipped BERT WordPiece).
    #[arg(long, help_heading = "Workload")]
    pub tokenizer: Option<PathBuf>,
    /// Input lengths drawn (seeded) from a normal distribution of MEAN tokens (STDDEV 0 by
    /// default), clipped to the shortest pair and --max-len: 1024 pairs built from the
    /// shipped corpus to exactly their drawn length by the tokenizer, special tokens counted.
    /// MEAN:STDDEV:lognormal draws a right-skewed mix of the same mean and spread instead.
    #[arg(long, value_name = "MEAN[:STDDEV]", value_parser = encbench_core::lengths::LengthMix::parse, conflicts_with_all = ["texts", "pad_to_max"], help_heading = "Workload")]
    pub input_tokens: Option<encbench_core::lengths::LengthMix>,
    /// Per-request timeout (70s, 2m; a bare number is seconds).
    #[arg(long, default_value = "70", value_parser = positive_secs, allow_hyphen_values = true, help_heading = "Workload")]
    pub timeout: f64,
    /// How long to wait for a local server's /ping to say healthy before giving up (units
    /// accepted; a bare number is seconds).
    #[arg(long, default_value = "60", value_parser = positive_secs, allow_hyphen_values = true, help_heading = "Workload")]
    pub ready_timeout: f64,
    /// Seed for the arrival process (default: random, recorded in the export).
    #[arg(long, help_heading = "Workload")]
    pub seed: Option<u64>,
    /// Replay recorded traffic as the run's one phase: each request sent at its recorded
    /// time from the first. A JSONL trace of {"timestamp_ms", "texts": [...]} (the texts
    /// in the target's format, one batch) or {"timestamp_ms", "tokens", "batch_size"} (texts
    /// of exactly that many tokens), or SageMaker Data Capture records as an
    /// endpoint writes them to S3 (each body sent as captured, with its content type; a
    /// second's requests spread within it, its count kept). At most 64 MiB.
    #[arg(long, value_name = "FILE", help_heading = "Replay",
        conflicts_with_all = ["request_rate", "duration", "n", "sweep_batch", "sweep_concurrency",
            "sweep_docs", "find_capacity", "until_stable", "repeat", "texts", "shard", "shards",
            "start_at", "start_in", "burstiness"])]
    pub replay: Option<PathBuf>,
    /// How many times faster than recorded the replay runs: 2 sends a 20 s recording in
    /// 10 s, 0.5 in 40 s.
    #[arg(long, value_name = "X", default_value = "1", value_parser = replay_speed, requires = "replay", help_heading = "Replay")]
    pub replay_speed: f64,
    /// Sends per recorded request: a capture sampled at 20 % replays at 5.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = replay_scale, requires = "replay", help_heading = "Replay")]
    pub replay_scale: u32,
    /// Threads that send requests (default: one per core). One dispatcher keeps the
    /// schedule whatever the count; 1 runs everything on one thread.
    #[arg(long, value_parser = threads, help_heading = "Workload")]
    pub client_threads: Option<usize>,

    // Accuracy, cost, output
    /// NLI samples checked before and after the load (default: shipped samples).
    #[arg(long, help_heading = "Accuracy, cost, output")]
    pub accuracy_samples: Option<PathBuf>,
    /// Skip the accuracy check (endpoints that are not NLI classifiers).
    #[arg(long, help_heading = "Accuracy, cost, output")]
    pub no_accuracy: bool,
    /// Class names in id order, for LABEL_n responses.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "entailment,neutral,contradiction",
        help_heading = "Accuracy, cost, output"
    )]
    pub labels: Vec<String>,
    /// Price the run with this SageMaker instance type's hourly price.
    #[arg(
        long,
        env = "ENCBENCH_INSTANCE_TYPE",
        help_heading = "Accuracy, cost, output"
    )]
    pub instance_type: Option<String>,
    /// Hourly price in USD (overrides --instance-type's).
    #[arg(long, value_parser = positive, help_heading = "Accuracy, cost, output")]
    pub price_per_hour: Option<f64>,
    /// Write results as JSON here on exit (also on Ctrl-C and errors); - writes them to
    /// stdout, and the tables to stderr.
    #[arg(long, short = 'o', help_heading = "Accuracy, cost, output")]
    pub export: Option<PathBuf>,
    /// Write an HTML report (charts and tables, one self-contained file) here on exit, as
    /// --export is written (also on Ctrl-C and errors).
    #[arg(long, value_name = "FILE", help_heading = "Accuracy, cost, output")]
    pub report: Option<PathBuf>,
    /// Write one JSON line per request sent (warmup included) here: its times, status,
    /// error kind, batch size, tokens, bytes and --slice slice. A file appears whole at the
    /// end, as --export's does; a FIFO, or - (stdout, headless only), gets the lines as they
    /// come.
    #[arg(
        long,
        value_name = "FILE.jsonl",
        help_heading = "Accuracy, cost, output"
    )]
    pub records: Option<PathBuf>,
    /// Print tables instead of the live screen (automatic when stdout is not a terminal).
    #[arg(long, help_heading = "Accuracy, cost, output")]
    pub headless: bool,
    /// Batch efficiency (samples/s per sample against batch 1's) under which a batch size
    /// counts as past the knee: above 0, at most 1.
    #[arg(long, default_value = "0.8", value_parser = efficiency, help_heading = "Accuracy, cost, output")]
    pub knee: f64,

    #[command(flatten)]
    pub server: super::ServerArgs,
    #[command(flatten)]
    pub slo: SloArgs,
    // A run's own: `compare` searches every target's capacity whenever --slo is given, and
    // its phases have fixed counts.
    /// Search the highest offered rate that meets the SLO, per batch size (--batch-sizes
    /// with --sweep-batch), at the concurrency cap. The live screen's key f does the same.
    #[arg(long, requires = "objectives", help_heading = "SLO and capacity")]
    pub find_capacity: bool,
    /// Sweep phases run until stable (at least --min-probe-requests; at most
    /// --max-probe-secs) instead of a fixed -n.
    #[arg(long, help_heading = "SLO and capacity")]
    pub until_stable: bool,
    #[command(flatten)]
    pub fail_on: crate::cli::FailOnArgs,
    #[command(flatten)]
    pub hosts: super::hosts::HostsArgs,

    // Live screen
    /// Screen refreshes per second.
    #[arg(long, default_value_t = 10, value_parser = screen_setting, help_heading = "Live screen")]
    pub fps: u64,
    /// Seconds of history in the latency histogram's recent view.
    #[arg(long, default_value_t = 10, value_parser = window_secs, help_heading = "Live screen")]
    pub window: usize,

    /// The ids of the flags given on the command line (set by `parse`).
    #[arg(skip)]
    pub given: Vec<String>,
    /// `--batch-size` or `--docs-per-query` was given (a reranker otherwise sends 8).
    #[arg(skip)]
    pub batch_size_given: bool,
}

impl RunArgs {
    /// Whether the flag of this id was given on the command line.
    pub fn given(&self, id: &str) -> bool {
        self.given.iter().any(|g| g == id)
    }

    /// `--ramp` with its shape.
    pub fn ramp(&self) -> Option<Ramp> {
        self.ramp.map(|(from, to)| Ramp {
            from,
            to,
            shape: self.ramp_shape,
        })
    }

    /// The cap at the starting pace: `--concurrency`, or the default for the loop the
    /// run starts in (`plan::default_cap`).
    pub fn concurrency_cap(&self) -> usize {
        self.concurrency
            .unwrap_or_else(|| encbench_core::plan::default_cap(self.request_rate.0))
    }
}

/// What every HTTP request to a target carries, and how an embedder's replies are read.
#[derive(Args, Debug, Clone, Default)]
pub struct HttpArgs {
    /// A header for every request to a URL target (an API gateway's key, a Triton access
    /// token), as 'Name: value'; repeat for more. Values never reach the screen, a log or
    /// the export.
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = super::values::HeaderParser, help_heading = "Target")]
    pub headers: Vec<(String, String)>,
    /// Send 'Authorization: Bearer TOKEN' with the token read from this environment
    /// variable (a vLLM or TEI server started with --api-key), keeping it off the command
    /// line.
    #[arg(long, value_name = "VAR", help_heading = "Target")]
    pub bearer_token_env: Option<String>,
    /// How an embedder's vectors per token become one per input, where a reply holds them
    /// (mean: over the real tokens, as sentence-transformers pools).
    #[arg(long, value_parser = choices::pooling(), default_value = Pooling::Mean.name(), help_heading = "Target")]
    pub pooling: Pooling,
}

/// Service-level objectives and the capacity search (see `encbench_core::slo` and
/// `encbench_core::capacity`).
#[derive(Args, Debug, Clone, Default)]
pub struct SloArgs {
    /// An objective every phase is judged against, on scheduled latency: p50, p90, p95, p99
    /// or p999 = a time (p99=100ms, p999=1.5s), or errors = a share (errors=0.1%).
    /// Repeatable; an error or a request never sent counts as a latency miss.
    #[arg(long = "slo", value_name = "OBJECTIVE", value_parser = objective, help_heading = "SLO and capacity")]
    pub objectives: Vec<encbench_core::slo::Objective>,
    /// The search stops when the highest rate that met and the lowest that did not are
    /// this close and the answer's 95% interval is within ± this, or once it has run
    /// bisection's probes (6 at 5%) (5% or 0.05).
    #[arg(long, default_value = "5%", value_parser = share, help_heading = "SLO and capacity")]
    pub capacity_precision: f64,
    /// Requests a capacity probe measures at least; it plans more where its objective
    /// needs them (100 past the percentile: 10,000 for a p99).
    #[arg(long, default_value_t = 200, value_parser = count, help_heading = "SLO and capacity")]
    pub min_probe_requests: u64,
    /// Stable, for sweep phases run until stable and the search's closed-loop ceiling: the
    /// thirds of what a phase measured agree on p99 and throughput within this (10% or 0.1).
    #[arg(long, default_value = "10%", value_parser = share, help_heading = "SLO and capacity")]
    pub stability: f64,
    /// How long a capacity probe may run: it plans 10,000 requests or more for a p99 (100
    /// past the percentile), and under 83 req/s ends here with fewer, weighed by what it
    /// measured; also the bound of a sweep phase run until stable (units accepted; a bare
    /// number is seconds).
    #[arg(long, default_value_t = encbench_core::plan::DEFAULT_MAX_PROBE_SECS, value_parser = positive_secs, allow_hyphen_values = true, help_heading = "SLO and capacity")]
    pub max_probe_secs: f64,
}

impl SloArgs {
    pub fn slo(&self) -> encbench_core::slo::Slo {
        encbench_core::slo::Slo {
            objectives: self.objectives.clone(),
        }
    }

    pub fn probe_rule(&self) -> encbench_core::plan::ProbeRule {
        encbench_core::plan::ProbeRule {
            min_requests: self.min_probe_requests,
            stability: self.stability,
            max: std::time::Duration::from_secs_f64(self.max_probe_secs),
            throughput_only: false,
            requests: None,
        }
    }
}

/// Where a SageMaker endpoint is and how requests are routed inside it.
#[derive(Args, Debug, Clone, Default)]
pub struct SageMakerArgs {
    /// AWS region (default: from the profile).
    #[arg(long, env = "AWS_REGION", help_heading = "SageMaker")]
    pub region: Option<String>,
    /// Named profile from ~/.aws/config.
    #[arg(long, env = "AWS_PROFILE", help_heading = "SageMaker")]
    pub profile: Option<String>,
    /// Runtime API URL override (also AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME).
    #[arg(long, help_heading = "SageMaker")]
    pub endpoint_url: Option<String>,
    /// Multi-container endpoint with direct invocation: the container's hostname.
    #[arg(long, help_heading = "SageMaker")]
    pub target_container: Option<String>,
    /// Inference component to invoke.
    #[arg(long, help_heading = "SageMaker")]
    pub inference_component: Option<String>,
    /// Multi-model endpoint: the model artefact to invoke.
    #[arg(long, help_heading = "SageMaker")]
    pub target_model: Option<String>,
    /// Production variant to invoke.
    #[arg(long, help_heading = "SageMaker")]
    pub target_variant: Option<String>,
}
