//! The flags of the subcommands: compare, report, cold-start, serve, completions.
// Doc comments here are `--help` text, read in a terminal: no Markdown in them.
#![allow(clippy::doc_markdown)]

use super::choices;
use super::run::{HttpArgs, SageMakerArgs, SloArgs};
use super::values::{
    batch, concurrency, count, non_negative_secs, positive_secs, probability, repetitions, sim_ms,
    threads, tokens, warmup_count,
};
use clap::Args;
use encbench_core::choice::Choice;
use encbench_core::export::CompareOrder;
use encbench_report::ReportFormat;
use encbench_wire::payload::{Api, PayloadFormat};
use std::path::PathBuf;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "A --target is comma-separated key=value pairs: name, url | endpoint, engine, model, \
container, component, target-model, variant, endpoint-url, instance, price, metrics-url (its \
server's Prometheus metrics, as --metrics-url of a run). Example: \
--target name=cpu,url=http://127.0.0.1:8080,instance=ml.c6i.2xlarge

With --slo, every phase is judged against it and each target's capacity is searched too, \
at the highest --concurrency-levels cap over --batch-sizes, and the cheapest target meeting \
the SLO named."
)]
pub struct CompareArgs {
    /// A target to compare (see below); repeat for each.
    #[arg(long = "target", value_name = "KEY=VALUE,...")]
    pub targets: Vec<String>,
    /// Multi-container endpoint, direct invocation of one container.
    #[arg(long, value_name = "ENDPOINT:CONTAINER[@INSTANCE]")]
    pub mc: Vec<String>,
    /// Inference component on a shared endpoint.
    #[arg(long, value_name = "ENDPOINT:COMPONENT[@INSTANCE]")]
    pub ic: Vec<String>,
    /// LMI multi-model endpoint: one target model.
    #[arg(long, value_name = "ENDPOINT:MODEL[@INSTANCE]")]
    pub lmi: Vec<String>,
    /// Compare three simulated endpoints on 127.0.0.1 modelled on measured co-hosting
    /// deployments (CPU multi-container, GPU inference component, GPU LMI) with their prices.
    #[arg(long)]
    pub demo: bool,
    /// Batch sizes measured closed loop at concurrency 1 (latency and throughput tables).
    #[arg(long, num_args = 1.., default_values_t = [1usize, 8], value_parser = batch)]
    pub batch_sizes: Vec<usize>,
    /// Requests in flight in the batch phases (closed loop): 1 measures latency with nothing
    /// queued; more measures each batch size under load.
    #[arg(short = 'c', long, default_value_t = 1, value_parser = concurrency)]
    pub concurrency: usize,
    /// Run every phase K times with fresh seeds, the targets taking turns in each (A B A B
    /// …): each difference between two targets then gets its 95 % interval from the
    /// repetitions (3 or more), which sees the drift between runs that one run cannot.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = repetitions)]
    pub repeat: u32,
    /// Concurrency levels measured at batch 1 (the concurrency table).
    #[arg(long, num_args = 1.., default_values_t = [8usize], value_parser = concurrency)]
    pub concurrency_levels: Vec<usize>,
    /// Skip the concurrency table.
    #[arg(long)]
    pub no_concurrency: bool,
    /// Measured requests per target and phase.
    #[arg(short = 'n', long = "requests", default_value_t = 100, value_parser = count)]
    pub n: u64,
    /// Requests sent before measuring each phase (excluded from results).
    #[arg(long, default_value_t = 3, value_parser = warmup_count)]
    pub warmup: u64,
    /// Keep inputs at their natural length (compare pads to --max-len by default: the
    /// production condition for RAG-chunk NLI).
    #[arg(long)]
    pub no_pad_to_max: bool,
    /// Tokens every input is padded to.
    #[arg(long, default_value_t = 512, value_parser = tokens)]
    pub max_len: usize,
    /// Run every target through one phase before the next phase (interleaved), or each
    /// target through all phases in turn (sequential).
    #[arg(long, value_parser = choices::order(), default_value = CompareOrder::Interleaved.name())]
    pub order: CompareOrder,
    /// Default API family of targets that do not name one (default: found from each URL
    /// target's server, hf for SageMaker endpoints).
    #[arg(long, value_parser = choices::engine(), env = "ENCBENCH_ENGINE")]
    pub engine: Option<PayloadFormat>,
    /// Default model name (triton, the JSON APIs) of targets that do not name one.
    #[arg(long, env = "ENCBENCH_MODEL")]
    pub model: Option<String>,
    /// Default task of targets whose family has a route per task (vllm, tei, infinity).
    #[arg(long, visible_alias = "vllm-api", value_parser = choices::api())]
    pub api: Option<Api>,
    /// What a request is made of: inputs, or rerank (a query with --batch-sizes documents);
    /// default: rerank where a target's route ranks.
    #[arg(long, value_parser = choices::task())]
    pub task: Option<encbench_core::input::Task>,
    /// A reranker's known answers: JSONL of {"query", "documents", "relevant": [indices]}
    /// (default: the shipped set).
    #[arg(long, value_name = "FILE")]
    pub rerank_samples: Option<PathBuf>,
    /// The least Kendall's tau two targets' rankings of a query's documents may have
    /// before they are flagged as ranking apart.
    #[arg(long, default_value = "0.99", value_parser = super::values::tau)]
    pub min_tau: f64,
    /// Default instance type (price) of targets that do not name one.
    #[arg(long, env = "ENCBENCH_INSTANCE_TYPE")]
    pub instance_type: Option<String>,
    /// Input texts: JSONL of {"premise","hypothesis"} pairs or strings (default: shipped samples).
    #[arg(long)]
    pub texts: Option<PathBuf>,
    /// tokenizer.json for token counts and client-side tokenization (default: shipped).
    #[arg(long)]
    pub tokenizer: Option<PathBuf>,
    /// Per-request timeout (70s, 2m; a bare number is seconds).
    #[arg(long, default_value = "70", value_parser = positive_secs, allow_hyphen_values = true)]
    pub timeout: f64,
    /// Per-request timeout of warmup requests (a new batch shape can compile first); units
    /// accepted, a bare number is seconds.
    #[arg(long, default_value = "600", value_parser = positive_secs, allow_hyphen_values = true)]
    pub warmup_timeout: f64,
    /// How long to wait for each local target's /ping to say healthy (units accepted; a
    /// bare number is seconds).
    #[arg(long, default_value = "60", value_parser = positive_secs, allow_hyphen_values = true)]
    pub ready_timeout: f64,
    /// Seed shared by every target (default: random, recorded in the export).
    #[arg(long)]
    pub seed: Option<u64>,
    /// NLI samples every target answers before and after its load (the verdict diff).
    #[arg(long)]
    pub accuracy_samples: Option<PathBuf>,
    /// Skip the known-answer check and the verdict diff.
    #[arg(long)]
    pub no_accuracy: bool,
    /// Class names in id order, for LABEL_n responses.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "entailment,neutral,contradiction"
    )]
    pub labels: Vec<String>,
    /// AWS region of SageMaker targets.
    #[arg(long, env = "AWS_REGION")]
    pub region: Option<String>,
    /// Named AWS profile of SageMaker targets.
    #[arg(long, env = "AWS_PROFILE")]
    pub profile: Option<String>,
    /// Runtime API URL of SageMaker targets that do not name one.
    #[arg(long)]
    pub endpoint_url: Option<String>,
    /// The SLO; with it, each target's capacity is searched (see the text after the flags).
    #[command(flatten)]
    pub slo: SloArgs,
    #[command(flatten)]
    pub fail_on: crate::cli::FailOnArgs,
    #[command(flatten)]
    pub http: HttpArgs,
    /// Write the comparison as JSON here (also on Ctrl-C); - writes it to stdout, and the
    /// tables to stderr.
    #[arg(long, short = 'o')]
    pub export: Option<PathBuf>,
    /// Write an HTML report (the targets' curves side by side, and the tables) here on exit,
    /// as --export is written.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Print tables instead of the live screen (automatic when stdout is not a terminal).
    #[arg(long)]
    pub headless: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Exports written with --export (runs or comparisons).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Terminal tables, Markdown pipe tables, CSV (one row per phase of every file), or one
    /// self-contained HTML page with charts (the files' curves overlaid; -o names the page).
    #[arg(long, value_parser = choices::report_format(), default_value = ReportFormat::Terminal.name())]
    pub format: ReportFormat,
    /// With --format html: the name of each file's curves, in the order of the files
    /// (default: the file's name); repeat for each.
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
    /// Merge exports of one workload (for example from several hosts) into one, with exact
    /// combined percentiles; needs -o.
    #[arg(long, requires = "output")]
    pub merge: bool,
    /// Where --merge writes the merged export (- writes it to stdout, and the tables to
    /// stderr), or where --format html writes its page (written atomically). Only with one
    /// of those: the tables of a plain report are its output.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ColdStartArgs {
    /// SageMaker endpoint to probe.
    #[arg(long, env = "ENCBENCH_ENDPOINT")]
    pub endpoint: String,
    #[command(flatten)]
    pub sagemaker: SageMakerArgs,
    /// How long to leave the endpoint idle before the first request (scale-to-zero needs
    /// its idle period to pass): 15m, 90s; a bare number is seconds.
    #[arg(long, default_value = "0", value_parser = non_negative_secs, allow_hyphen_values = true)]
    pub idle_wait: f64,
    /// Time between attempts while the endpoint is not ready (units accepted; a bare
    /// number is seconds).
    #[arg(long, default_value = "5", value_parser = positive_secs, allow_hyphen_values = true)]
    pub retry_interval: f64,
    /// Stop retrying after this long (15m; a bare number is seconds).
    #[arg(long, default_value = "900", value_parser = positive_secs, allow_hyphen_values = true)]
    pub give_up: f64,
    /// Requests after the first success that give the steady-state p50.
    #[arg(short = 'n', long = "requests", default_value_t = 20, value_parser = count)]
    pub n: u64,
    /// Per-request timeout (a cold start can take minutes): 70s, 5m; a bare number is
    /// seconds.
    #[arg(long, default_value = "70", value_parser = positive_secs, allow_hyphen_values = true)]
    pub timeout: f64,
    /// Ask the endpoint to pad the input to --max-len tokens.
    #[arg(long)]
    pub pad_to_max: bool,
    /// Tokens the input is padded (and truncated) to with --pad-to-max.
    #[arg(long, default_value_t = 512, value_parser = tokens)]
    pub max_len: usize,
    /// After the probe, wait this long (a countdown; Ctrl-C reads at once), then read
    /// SageMaker's CloudWatch metrics over the attempts (ModelSetupTime of a serverless
    /// cold start, ModelLatency, OverheadLatency): 90s is a safe wait. Units accepted.
    #[arg(long, value_name = "SECS", value_parser = non_negative_secs, allow_hyphen_values = true)]
    pub cloudwatch_wait: Option<f64>,
    /// Write the result as JSON here; - writes it to stdout, and the table to stderr.
    #[arg(long, short = 'o')]
    pub export: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Port on 127.0.0.1; 0 picks a free one and prints it. It answers HTTP and KServe v2
    /// over gRPC alike (`--url grpc://127.0.0.1:PORT`).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Requests served at once, like container workers; the rest queue.
    #[arg(long, default_value_t = 1, value_parser = threads)]
    pub workers: usize,
    /// Each worker loads the model on its first request, one worker after another, taking
    /// this long (units accepted; a bare number is milliseconds).
    #[arg(long, default_value = "0", value_parser = sim_ms, allow_hyphen_values = true)]
    pub model_load_ms: f64,
    /// Service time = base + per-token × max(batch × len, saturation); this is the base
    /// (units accepted; a bare number is milliseconds).
    #[arg(long, default_value = "14.8", value_parser = sim_ms, allow_hyphen_values = true)]
    pub base_ms: f64,
    /// Service time added per token of the batch (batch × padded length) past the
    /// saturation point (units accepted; a bare number is milliseconds).
    #[arg(long, default_value = "0.0215", value_parser = sim_ms, allow_hyphen_values = true)]
    pub per_token_ms: f64,
    /// Tokens per forward pass below which the simulated accelerator is not yet busy: a
    /// smaller batch costs as much as this many tokens.
    #[arg(long, default_value_t = 512)]
    pub saturation_tokens: usize,
    /// fixed: every request takes the service time; exp: drawn from an exponential with
    /// that mean (with one worker and Poisson arrivals an M/M/1 queue).
    #[arg(long, value_parser = choices::service_dist(), default_value = encbench_serve::ServiceDist::Fixed.name())]
    pub service_dist: encbench_serve::ServiceDist,
    /// per-worker: a queue at each worker, requests dealt round-robin; shared: one queue,
    /// served by the first worker free (with --service-dist exp an M/M/c queue).
    #[arg(long, value_parser = choices::queue(), default_value = encbench_serve::Queue::PerWorker.name())]
    pub queue: encbench_serve::Queue,
    /// Independent copies of the --workers, each request routed to one at random, as
    /// SageMaker routes across instances.
    #[arg(long, default_value_t = 1, value_parser = threads)]
    pub replicas: usize,
    /// Refuse with 401 any request without this header, as 'Name: value' (an API gateway,
    /// a server started with --api-key: 'Authorization: Bearer TOKEN'); repeatable.
    #[arg(long = "require-header", value_name = "NAME: VALUE", value_parser = super::values::HeaderParser)]
    pub require_headers: Vec<(String, String)>,
    /// Fraction of requests that fail with a 500 ModelError.
    #[arg(long, default_value = "0", value_parser = probability)]
    pub error_rate: f64,
    /// Requests beyond this many in flight get ThrottlingException.
    #[arg(long, value_parser = concurrency)]
    pub throttle_above: Option<usize>,
    /// How long after the first request the server freezes once (units accepted; a bare
    /// number is seconds).
    #[arg(long, value_parser = non_negative_secs, allow_hyphen_values = true, requires = "stall_ms")]
    pub stall_at: Option<f64>,
    /// How long the freeze lasts (units accepted; a bare number is milliseconds).
    #[arg(long, value_parser = sim_ms, allow_hyphen_values = true, requires = "stall_at")]
    pub stall_ms: Option<f64>,
    /// How long after the first request every request starts failing with a 500
    /// ModelError for --error-burst-ms, a model reload (units accepted; a bare number is
    /// seconds).
    #[arg(long, value_parser = non_negative_secs, allow_hyphen_values = true, requires = "error_burst_ms")]
    pub error_burst_at: Option<f64>,
    /// How long the error burst lasts (units accepted; a bare number is milliseconds).
    #[arg(long, value_parser = sim_ms, allow_hyphen_values = true, requires = "error_burst_at")]
    pub error_burst_ms: Option<f64>,
    /// Fraction of successful replies cut off half-way, the connection closed.
    #[arg(long, default_value = "0", value_parser = probability)]
    pub reset_rate: f64,
    /// Fraction of successful replies whose 200 body is not a response: plain text,
    /// truncated JSON or an HTML page, in turn.
    #[arg(long, default_value = "0", value_parser = probability)]
    pub garbage_rate: f64,
    /// Successful replies carry Content-Type text/html (the body stays JSON).
    #[arg(long)]
    pub wrong_content_type: bool,
    /// /ping answers 200 {"status": "Unhealthy"} for this long after start, as
    /// multi-model-server does while its workers come up (units accepted; a bare number is
    /// milliseconds).
    #[arg(long, default_value = "0", value_parser = sim_ms, allow_hyphen_values = true)]
    pub unhealthy_for_ms: f64,
    /// Give wrong verdicts, to show an accuracy mismatch.
    #[arg(long)]
    pub flip_labels: bool,
    /// Answer LABEL_n instead of class names.
    #[arg(long)]
    pub label_ids: bool,
    /// tokenizer.json for token counts (default: shipped).
    #[arg(long)]
    pub tokenizer: Option<PathBuf>,
    /// Access key id SageMaker-API requests must be signed with (SigV4 is then verified).
    #[arg(long, requires = "secret_key", env = "ENCBENCH_SERVE_ACCESS_KEY")]
    pub access_key: Option<String>,
    /// The secret that goes with --access-key.
    #[arg(
        long,
        requires = "access_key",
        env = "ENCBENCH_SERVE_SECRET_KEY",
        hide_env_values = true
    )]
    pub secret_key: Option<String>,
    /// Seed for the error-rate draws.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// KServe v2: the output tensor's name in metadata, /config and replies.
    #[arg(long, default_value = "logits", value_parser = tensor_name, help_heading = "KServe v2")]
    pub v2_output_name: String,
    /// KServe v2: the token tensors' datatype, INT64 or INT32; the other is refused as
    /// Triton refuses it.
    #[arg(long, default_value = "INT64", value_parser = ids_datatype, help_heading = "KServe v2")]
    pub v2_ids_datatype: encbench_wire::payload::kserve::IdsType,
    /// KServe v2: declare no tensors, as a KServe Python model by default: metadata with
    /// empty inputs and outputs, and no /config (404).
    #[arg(long, help_heading = "KServe v2")]
    pub v2_no_metadata: bool,
    /// Answer only this family's routes, as its server does (its metadata, errors and 404s):
    /// hf, triton, kserve, vllm, openai, tei, infinity, jina. Without it every family's
    /// invocation routes answer, and only /ping of the discovery routes.
    #[arg(long, value_parser = choices::family(), value_name = "FAMILY", help_heading = "API families")]
    pub only: Option<encbench_serve::ApiFamily>,
    /// With --only: the kind of model the server serves (default: embedding for openai,
    /// tei and infinity, reranker for jina, classifier otherwise).
    #[arg(long, value_parser = choices::model_kind(), requires = "only", help_heading = "API families")]
    pub model_kind: Option<encbench_serve::ModelKind>,
    /// The model the server lists (GET /v1/models, /models, /info, /v2/models) and names in
    /// its replies.
    #[arg(long, default_value = "encbench-reference", value_parser = tensor_name, help_heading = "API families")]
    pub served_model_name: String,
    /// Append a JSON line per invocation to FILE as it arrives: at_us (microseconds since
    /// the server started), http (HTTP/1.1, HTTP/2.0), content_type and body_base64. For
    /// tests and replays: what arrived, how and when.
    #[arg(long, value_name = "FILE")]
    pub request_log: Option<std::path::PathBuf>,
    /// Serve HTTPS (and gRPC over TLS) with this PEM certificate chain, for `https://` and
    /// `grpcs://` targets; clients trust it through their roots (SSL_CERT_FILE).
    #[arg(long, value_name = "FILE", requires = "tls_key", help_heading = "TLS")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert", help_heading = "TLS")]
    pub tls_key: Option<std::path::PathBuf>,
}

fn tensor_name(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("must name the tensor".into())
    } else {
        Ok(s.to_string())
    }
}

fn ids_datatype(s: &str) -> Result<encbench_wire::payload::kserve::IdsType, String> {
    encbench_wire::payload::kserve::IdsType::parse(&s.to_ascii_uppercase())
        .filter(|_| !s.to_ascii_uppercase().starts_with("TYPE_"))
        .ok_or_else(|| "must be INT64 or INT32".into())
}

#[derive(Args, Debug, Clone)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
