//! The command line. Parsing only: turning it into a run is `app`'s job.
// Doc comments here are `--help` text, read in a terminal: no Markdown in them.
#![allow(clippy::doc_markdown)]

use crate::export::CompareOrder;
use crate::payload::vllm::VllmApi;
use crate::payload::{PayloadFormat, Pooling};
use crate::report::ReportFormat;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "encbench-tui",
    version,
    // "-5" is a bad value to report, not an unknown flag.
    allow_negative_numbers = true,
    about = "Live load tester for encoder-model inference endpoints",
    long_about = "Sends open-loop traffic (Gamma arrivals, concurrency cap, batches) to an encoder endpoint and \
                  shows latency percentiles, throughput, errors, batch efficiency, cost and accuracy. \
                  Runs headless when stdout is not a terminal."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Sub>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Run the reference endpoint alone (a simulated encoder with a known service model).
    Serve(ServeArgs),
    /// First-request latency after idleness: retries until the first success, then the
    /// steady-state p50 and the ratio.
    ColdStart(ColdStartArgs),
    /// Several targets on one workload, side by side: latency at each batch size, throughput,
    /// a concurrency table, cost and a verdict diff (the co-hosting comparison).
    Compare(Box<CompareArgs>),
    /// Render exports as tables (terminal, Markdown, CSV), or merge exports of one workload.
    Report(ReportArgs),
}

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "A --target is comma-separated key=value pairs: name, url | endpoint, engine, model, \
container, component, target-model, variant, endpoint-url, instance, price. Example: \
--target name=cpu,url=http://127.0.0.1:8080,instance=ml.c6i.2xlarge"
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
    #[arg(long, value_enum, default_value_t = CompareOrder::Interleaved)]
    pub order: CompareOrder,
    /// Default payload format of targets that do not name one.
    #[arg(long, value_enum, default_value_t = PayloadFormat::Hf)]
    pub engine: PayloadFormat,
    /// Default model name (triton, vllm) of targets that do not name one.
    #[arg(long)]
    pub model: Option<String>,
    /// vLLM targets: which pooling API to call.
    #[arg(long, value_enum, default_value_t = VllmApi::Classify)]
    pub vllm_api: VllmApi,
    /// Default instance type (price) of targets that do not name one.
    #[arg(long)]
    pub instance_type: Option<String>,
    /// Input texts: JSONL of {"premise","hypothesis"} pairs or strings (default: shipped samples).
    #[arg(long)]
    pub texts: Option<PathBuf>,
    /// tokenizer.json for token counts and client-side tokenization (default: shipped).
    #[arg(long)]
    pub tokenizer: Option<PathBuf>,
    /// Per-request timeout in seconds.
    #[arg(long, default_value = "70", value_parser = positive_secs)]
    pub timeout: f64,
    /// Per-request timeout of warmup requests (a new batch shape can compile first).
    #[arg(long, default_value = "600", value_parser = positive_secs)]
    pub warmup_timeout: f64,
    /// Seconds to wait for each local target's /ping to say healthy.
    #[arg(long, default_value = "60", value_parser = positive_secs)]
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
    #[arg(long)]
    pub region: Option<String>,
    /// Named AWS profile of SageMaker targets.
    #[arg(long)]
    pub profile: Option<String>,
    /// Runtime API URL of SageMaker targets that do not name one.
    #[arg(long)]
    pub endpoint_url: Option<String>,
    /// With --slo: each target's capacity is searched too, at the highest
    /// --concurrency-levels cap over --batch-sizes, and the cheapest meeting the SLO named.
    #[command(flatten)]
    pub slo: SloArgs,
    #[command(flatten)]
    pub fail_on: crate::thresholds::FailOnArgs,
    #[command(flatten)]
    pub http: HttpArgs,
    /// Write the comparison as JSON here (also on Ctrl-C).
    #[arg(long, short = 'o')]
    pub export: Option<PathBuf>,
    /// Print tables instead of the live screen (automatic when stdout is not a terminal).
    #[arg(long)]
    pub headless: bool,
}

#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Exports written with --export (runs or comparisons).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Terminal tables, Markdown pipe tables, or CSV (one row per phase of every file).
    #[arg(long, value_enum, default_value_t = ReportFormat::Terminal)]
    pub format: ReportFormat,
    /// Merge exports of one workload (for example from several hosts) into one, with exact
    /// combined percentiles; needs -o.
    #[arg(long, requires = "output")]
    pub merge: bool,
    /// Where --merge writes the merged export.
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ColdStartArgs {
    /// SageMaker endpoint to probe.
    #[arg(long)]
    pub endpoint: String,
    #[command(flatten)]
    pub sagemaker: SageMakerArgs,
    /// Seconds to leave the endpoint idle before the first request (scale-to-zero needs
    /// its idle period to pass).
    #[arg(long, default_value = "0", value_parser = non_negative_secs)]
    pub idle_wait: f64,
    /// Seconds between attempts while the endpoint is not ready.
    #[arg(long, default_value = "5", value_parser = positive_secs)]
    pub retry_interval: f64,
    /// Stop retrying after this many seconds.
    #[arg(long, default_value = "900", value_parser = positive_secs)]
    pub give_up: f64,
    /// Requests after the first success that give the steady-state p50.
    #[arg(short = 'n', long = "requests", default_value_t = 20, value_parser = count)]
    pub n: u64,
    /// Per-request timeout in seconds (a cold start can take minutes).
    #[arg(long, default_value = "70", value_parser = positive_secs)]
    pub timeout: f64,
    #[arg(long)]
    pub pad_to_max: bool,
    #[arg(long, default_value_t = 512, value_parser = tokens)]
    pub max_len: usize,
    /// Write the result as JSON here.
    #[arg(long, short = 'o')]
    pub export: Option<PathBuf>,
}

/// A request rate; `None` is `inf` (closed loop).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate(pub Option<f64>);

fn parse_rate(s: &str) -> Result<Rate, String> {
    if s.eq_ignore_ascii_case("inf") {
        return Ok(Rate(None));
    }
    let r = s
        .parse::<f64>()
        .map_err(|_| "must be a number of requests per second, or inf".to_string())?;
    crate::arrival::check_rate(r).map(|r| Rate(Some(r)))
}

fn parse_burstiness(s: &str) -> Result<f64, String> {
    if s.eq_ignore_ascii_case("inf") {
        return Ok(f64::INFINITY);
    }
    let b = s
        .parse::<f64>()
        .map_err(|_| "must be a number, or inf (1.0 is Poisson)".to_string())?;
    crate::arrival::check_burstiness(b)
}

/// A finite number that `ok` accepts, or the error `why`.
fn number(s: &str, ok: fn(f64) -> bool, why: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && ok(v) => Ok(v),
        _ => Err(why.into()),
    }
}

/// The longest time any flag can ask for. Beyond it a time is a typo, and far beyond it
/// (1e20 s) no clock can represent the deadline.
const MAX_SECS: f64 = 31.0 * 24.0 * 3600.0;

fn positive_secs(s: &str) -> Result<f64, String> {
    number(
        s,
        |v| v > 0.0 && v <= MAX_SECS,
        "must be a number of seconds > 0 and at most 2678400 (31 days)",
    )
}

fn non_negative_secs(s: &str) -> Result<f64, String> {
    number(
        s,
        |v| (0.0..=MAX_SECS).contains(&v),
        "must be a number of seconds >= 0 and at most 2678400 (31 days)",
    )
}

/// Milliseconds of the reference endpoint's simulated service, stalls and outages.
fn sim_ms(s: &str) -> Result<f64, String> {
    number(
        s,
        |v| (0.0..=MAX_SECS * 1000.0).contains(&v),
        "must be a number of milliseconds >= 0 and at most 2678400000 (31 days)",
    )
}

fn positive(s: &str) -> Result<f64, String> {
    number(s, |v| v > 0.0, "must be a number > 0")
}

fn probability(s: &str) -> Result<f64, String> {
    number(
        s,
        |v| (0.0..=1.0).contains(&v),
        "must be a probability between 0 and 1",
    )
}

/// A whole number from `min` to `max`: counts, sizes and levels have ceilings because each
/// unit costs memory or a task, and a billion of them is a typo that would take the machine.
fn whole(s: &str, min: u64, max: u64) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        _ => Err(format!("must be a whole number from {min} to {max}")),
    }
}

/// Requests in a phase (or its warmup): at most a billion.
fn count(s: &str) -> Result<u64, String> {
    whole(s, 1, 1_000_000_000)
}

fn warmup_count(s: &str) -> Result<u64, String> {
    whole(s, 0, 1_000_000_000)
}

/// Requests in flight: each is a task and a connection.
fn concurrency(s: &str) -> Result<usize, String> {
    whole(s, 1, 100_000).map(|v| v as usize)
}

/// Tokens per input: the longest encoder contexts are 8192; 131072 leaves room.
fn tokens(s: &str) -> Result<usize, String> {
    whole(s, 1, 131_072).map(|v| v as usize)
}

/// Threads or server workers.
fn threads(s: &str) -> Result<usize, String> {
    whole(s, 1, 1024).map(|v| v as usize)
}

/// A batch size. How large a body may grow is checked against the target's body limit
/// before any is built; this only keeps the number itself sane.
fn batch(s: &str) -> Result<usize, String> {
    whole(s, 1, 1_000_000_000).map(|v| v as usize)
}

/// A small positive setting of the live screen (refresh rate, window seconds).
fn screen_setting(s: &str) -> Result<u64, String> {
    whole(s, 1, 3600)
}

fn window_secs(s: &str) -> Result<usize, String> {
    screen_setting(s).map(|v| v as usize)
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    // Target selection
    /// SageMaker endpoint to invoke through the AWS SDK (standard credential chain).
    #[arg(long, conflicts_with = "demo", help_heading = "Target")]
    pub endpoint: Option<String>,
    /// Local server speaking the SageMaker container contract (GET /ping, POST /invocations).
    #[arg(long, default_value = "http://localhost:8080", help_heading = "Target")]
    pub url: String,
    #[command(flatten)]
    pub sagemaker: SageMakerArgs,
    #[command(flatten)]
    pub http: HttpArgs,
    /// Model name (triton: the KServe model; vllm: the served model).
    #[arg(long, help_heading = "Target")]
    pub model: Option<String>,
    /// Triton: send tensors with the binary tensor extension instead of JSON.
    #[arg(long, help_heading = "Target")]
    pub binary: bool,
    /// Triton: send raw text as one BYTES tensor of this name (a model that tokenizes on
    /// the server, such as an ensemble) instead of client-side token tensors.
    #[arg(long, help_heading = "Target")]
    pub text_input: Option<String>,
    /// Triton: input tensor names when the server does not offer /config.
    #[arg(long, help_heading = "Target")]
    pub input_ids_name: Option<String>,
    #[arg(long, help_heading = "Target")]
    pub attention_mask_name: Option<String>,
    /// Triton: the model takes token type ids under this name.
    #[arg(long, help_heading = "Target")]
    pub token_type_ids_name: Option<String>,
    #[arg(long, help_heading = "Target")]
    pub output_name: Option<String>,
    /// vLLM: which pooling API to call.
    #[arg(long, value_enum, default_value_t = VllmApi::Classify, help_heading = "Target")]
    pub vllm_api: VllmApi,
    /// Payload format.
    #[arg(long, value_enum, default_value_t = PayloadFormat::Hf, help_heading = "Target")]
    pub engine: PayloadFormat,
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
    #[arg(long, default_value = "600", value_parser = positive_secs, help_heading = "Workload")]
    pub warmup_timeout: f64,
    /// Measure each phase for this many seconds instead of -n requests.
    #[arg(long, value_parser = positive_secs, help_heading = "Workload")]
    pub duration: Option<f64>,
    /// Inputs per request.
    #[arg(long, default_value_t = 1, value_parser = batch, help_heading = "Workload")]
    pub batch_size: usize,
    /// Run one phase per --batch-sizes entry.
    #[arg(long, help_heading = "Workload")]
    pub sweep_batch: bool,
    #[arg(long, num_args = 1.., default_values_t = [1usize, 8, 32], value_parser = batch, help_heading = "Workload")]
    pub batch_sizes: Vec<usize>,
    /// Most requests in flight at once.
    #[arg(long, default_value_t = 1, value_parser = concurrency, help_heading = "Workload")]
    pub concurrency: usize,
    /// Run one phase per --concurrency-levels entry.
    #[arg(long, help_heading = "Workload")]
    pub sweep_concurrency: bool,
    #[arg(long, num_args = 1.., default_values_t = [1usize, 2, 4, 8, 16], value_parser = concurrency, help_heading = "Workload")]
    pub concurrency_levels: Vec<usize>,
    /// Requests per second; inf means closed loop at the concurrency cap.
    #[arg(long, default_value = "inf", value_parser = parse_rate, help_heading = "Workload")]
    pub request_rate: Rate,
    /// Gamma shape of the gaps between sends: 1.0 Poisson, <1 burstier, inf fixed interval.
    #[arg(long, default_value = "1.0", value_parser = parse_burstiness, help_heading = "Workload")]
    pub burstiness: f64,
    /// Ask the endpoint to pad every input to --max-len tokens (the RAG-chunk condition).
    #[arg(long, help_heading = "Workload")]
    pub pad_to_max: bool,
    #[arg(long, default_value_t = 512, value_parser = tokens, help_heading = "Workload")]
    pub max_len: usize,
    /// Input texts: JSONL of {"premise","hypothesis"} pairs or strings (default: shipped samples).
    #[arg(long, help_heading = "Workload")]
    pub texts: Option<PathBuf>,
    /// tokenizer.json for token counts (default: shipped BERT WordPiece).
    #[arg(long, help_heading = "Workload")]
    pub tokenizer: Option<PathBuf>,
    /// Per-request timeout in seconds.
    #[arg(long, default_value = "70", value_parser = positive_secs, help_heading = "Workload")]
    pub timeout: f64,
    /// Seconds to wait for a local server's /ping to say healthy before giving up.
    #[arg(long, default_value = "60", value_parser = positive_secs, help_heading = "Workload")]
    pub ready_timeout: f64,
    /// Seed for the arrival process (default: random, recorded in the export).
    #[arg(long, help_heading = "Workload")]
    pub seed: Option<u64>,
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
    #[arg(long, help_heading = "Accuracy, cost, output")]
    pub instance_type: Option<String>,
    /// Hourly price in USD (overrides --instance-type's).
    #[arg(long, value_parser = positive, help_heading = "Accuracy, cost, output")]
    pub price_per_hour: Option<f64>,
    /// Write results as JSON here on exit (also on Ctrl-C and errors).
    #[arg(long, short = 'o', help_heading = "Accuracy, cost, output")]
    pub export: Option<PathBuf>,
    /// Print tables instead of the live screen (automatic when stdout is not a terminal).
    #[arg(long, help_heading = "Accuracy, cost, output")]
    pub headless: bool,
    /// Batch efficiency under which a batch size counts as past the knee.
    #[arg(long, default_value = "0.8", value_parser = positive, help_heading = "Accuracy, cost, output")]
    pub knee: f64,

    #[command(flatten)]
    pub slo: SloArgs,
    #[command(flatten)]
    pub fail_on: crate::thresholds::FailOnArgs,

    // Live screen
    /// Screen refreshes per second.
    #[arg(long, default_value_t = 10, value_parser = screen_setting, help_heading = "Live screen")]
    pub fps: u64,
    /// Seconds of history in the latency histogram's recent view.
    #[arg(long, default_value_t = 10, value_parser = window_secs, help_heading = "Live screen")]
    pub window: usize,
}

/// What every HTTP request to a target carries, and how an embedder's replies are read.
#[derive(Args, Debug, Clone, Default)]
pub struct HttpArgs {
    /// A header for every request to a URL target (an API gateway's key, a Triton access
    /// token), as 'Name: value'; repeat for more. Values never reach the screen, a log or
    /// the export.
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = crate::target::headers::parse_header, help_heading = "Target")]
    pub headers: Vec<(String, String)>,
    /// Send 'Authorization: Bearer TOKEN' with the token read from this environment
    /// variable (a vLLM or TEI server started with --api-key), keeping it off the command
    /// line.
    #[arg(long, value_name = "VAR", help_heading = "Target")]
    pub bearer_token_env: Option<String>,
    /// How an embedder's vectors per token become one per input, where a reply holds them
    /// (mean: over the real tokens, as sentence-transformers pools).
    #[arg(long, value_enum, default_value_t = Pooling::Mean, help_heading = "Target")]
    pub pooling: Pooling,
}

/// Service-level objectives and the capacity search (see `crate::slo`, `crate::capacity`).
#[derive(Args, Debug, Clone, Default)]
pub struct SloArgs {
    /// An objective every phase is judged against, on scheduled latency: p50, p90, p95, p99
    /// or p999 = a time (p99=100ms, p999=1.5s), or errors = a share (errors=0.1%).
    /// Repeatable; an error or a request never sent counts as a latency miss.
    #[arg(long = "slo", value_name = "OBJECTIVE", value_parser = objective, help_heading = "SLO and capacity")]
    pub objectives: Vec<crate::slo::Objective>,
    /// Search the highest offered rate that meets the SLO, per batch size (--batch-sizes
    /// with --sweep-batch), at the concurrency cap. The live screen's key f does the same.
    #[arg(long, requires = "objectives", help_heading = "SLO and capacity")]
    pub find_capacity: bool,
    /// The search stops when the highest rate that met and the lowest that did not are
    /// this close (5% or 0.05).
    #[arg(long, default_value = "5%", value_parser = share, help_heading = "SLO and capacity")]
    pub capacity_precision: f64,
    /// Requests a probe (or an --until-stable phase) measures at least.
    #[arg(long, default_value_t = 200, value_parser = count, help_heading = "SLO and capacity")]
    pub min_probe_requests: u64,
    /// Stable: the thirds of a probe agree on p99 and throughput within this (10% or 0.1).
    #[arg(long, default_value = "10%", value_parser = share, help_heading = "SLO and capacity")]
    pub stability: f64,
    /// Seconds a probe may run before it is judged unstable, on what it measured.
    #[arg(long, default_value = "30", value_parser = positive_secs, help_heading = "SLO and capacity")]
    pub max_probe_secs: f64,
    /// Sweep phases run until stable (or --max-probe-secs) instead of a fixed -n.
    #[arg(long, help_heading = "SLO and capacity")]
    pub until_stable: bool,
}

impl SloArgs {
    pub fn slo(&self) -> crate::slo::Slo {
        crate::slo::Slo {
            objectives: self.objectives.clone(),
        }
    }

    pub fn probe_rule(&self) -> crate::sweep::ProbeRule {
        crate::sweep::ProbeRule {
            min_requests: self.min_probe_requests,
            stability: self.stability,
            max: std::time::Duration::from_secs_f64(self.max_probe_secs),
            throughput_only: false,
        }
    }
}

fn objective(s: &str) -> Result<crate::slo::Objective, String> {
    s.parse()
}

/// A share: "5%" or 0.05, above 0 and at most 1.
fn share(s: &str) -> Result<f64, String> {
    let v = match s.trim().strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => s.trim().parse::<f64>(),
    };
    match v {
        Ok(x) if x > 0.0 && x <= 1.0 => Ok(x),
        _ => Err("must be a share above 0 and at most 1: 5% or 0.05".into()),
    }
}

/// Where a SageMaker endpoint is and how requests are routed inside it.
#[derive(Args, Debug, Clone, Default)]
pub struct SageMakerArgs {
    /// AWS region (default: from the environment or profile).
    #[arg(long, help_heading = "SageMaker")]
    pub region: Option<String>,
    /// Named profile from ~/.aws/config.
    #[arg(long, help_heading = "SageMaker")]
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

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Port on 127.0.0.1; 0 picks a free one and prints it.
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Requests served at once, like container workers; the rest queue.
    #[arg(long, default_value_t = 1, value_parser = threads)]
    pub workers: usize,
    /// Each worker loads the model on its first request, one worker after another.
    #[arg(long, default_value = "0", value_parser = sim_ms)]
    pub model_load_ms: f64,
    /// Service time = base + per-token × max(batch × len, saturation).
    #[arg(long, default_value = "14.8", value_parser = sim_ms)]
    pub base_ms: f64,
    #[arg(long, default_value = "0.0215", value_parser = sim_ms)]
    pub per_token_ms: f64,
    #[arg(long, default_value_t = 512)]
    pub saturation_tokens: usize,
    /// fixed: every request takes the service time; exp: drawn from an exponential with
    /// that mean (with one worker and Poisson arrivals an M/M/1 queue).
    #[arg(long, value_enum, default_value_t = crate::serve::ServiceDist::Fixed)]
    pub service_dist: crate::serve::ServiceDist,
    /// per-worker: a queue at each worker, requests dealt round-robin; shared: one queue,
    /// served by the first worker free (with --service-dist exp an M/M/c queue).
    #[arg(long, value_enum, default_value_t = crate::serve::Queue::PerWorker)]
    pub queue: crate::serve::Queue,
    /// Independent copies of the --workers, each request routed to one at random, as
    /// SageMaker routes across instances.
    #[arg(long, default_value_t = 1, value_parser = threads)]
    pub replicas: usize,
    /// Refuse with 401 any request without this header, as 'Name: value' (an API gateway,
    /// a server started with --api-key: 'Authorization: Bearer TOKEN'); repeatable.
    #[arg(long = "require-header", value_name = "NAME: VALUE", value_parser = crate::target::headers::parse_header)]
    pub require_headers: Vec<(String, String)>,
    /// Fraction of requests that fail with a 500 ModelError.
    #[arg(long, default_value = "0", value_parser = probability)]
    pub error_rate: f64,
    /// Requests beyond this many in flight get ThrottlingException.
    #[arg(long, value_parser = concurrency)]
    pub throttle_above: Option<usize>,
    /// Seconds after the first request at which the server freezes once.
    #[arg(long, value_parser = non_negative_secs, requires = "stall_ms")]
    pub stall_at: Option<f64>,
    /// How long the freeze lasts.
    #[arg(long, value_parser = sim_ms, requires = "stall_at")]
    pub stall_ms: Option<f64>,
    /// Seconds after the first request at which every request fails with a 500 ModelError
    /// for --error-burst-ms (a model reload).
    #[arg(long, value_parser = non_negative_secs, requires = "error_burst_ms")]
    pub error_burst_at: Option<f64>,
    /// How long the error burst lasts.
    #[arg(long, value_parser = sim_ms, requires = "error_burst_at")]
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
    /// multi-model-server does while its workers come up.
    #[arg(long, default_value = "0", value_parser = sim_ms)]
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_burstiness() {
        assert_eq!(parse_rate("inf").unwrap(), Rate(None));
        assert_eq!(parse_rate("12.5").unwrap(), Rate(Some(12.5)));
        assert!(parse_rate("0").is_err() && parse_rate("-1").is_err() && parse_rate("x").is_err());
        assert!(parse_burstiness("inf").unwrap().is_infinite());
        assert!(parse_burstiness("0").is_err() && parse_burstiness("-2").is_err());
    }

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
