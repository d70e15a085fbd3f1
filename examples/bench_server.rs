//! The loopback server of the load-generator benchmark (`bench/run.sh`). It does as little as
//! a server can, so that the clients under test, not the server, set the pace: no parsing, no
//! tokenizing, one fixed reply. The reference endpoint (`encbench-tui serve`) tokenizes every
//! request to compute its service time, which would make it the bottleneck here.
//!
//! `cargo run --release --example bench_server -- [--port N] [--delay-us US] [--threads N]
//! [--save-body FILE]`
//! prints its URL on the first stdout line. `GET /_count` tells how many POSTs it answered,
//! so the harness can charge each client's CPU time per request it really got served.
//!
//! It also speaks just enough KServe v2 for `--engine triton` (model ready, config with the
//! tensor names, infer): the reply is fixed logits, one row per input, the rows read from the
//! first `"shape":[` of the request so the body is never parsed as JSON. The client tokenizes every
//! request, so this is where the client's tokenizing, not the server, is measured.

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const REPLY: &str = r#"[{"label":"entailment","score":0.97}]"#;

struct Server {
    count: AtomicU64,
    delay: Duration,
    /// Where to keep the first request body, so another client can send the same bytes.
    save_body: Option<std::path::PathBuf>,
    saved: AtomicBool,
}

async fn invocations(State(s): State<Arc<Server>>, body: Bytes) -> impl IntoResponse {
    if let Some(path) = &s.save_body
        && !s.saved.load(Ordering::Relaxed)
        && !s.saved.swap(true, Ordering::Relaxed)
    {
        let _ = std::fs::write(path, &body);
    }
    if !s.delay.is_zero() {
        // The project's timerfd sleep: tokio's own timer would round 1 ms up to about 2.
        encbench_wire::timing::sleep(s.delay).await;
    }
    s.count.fetch_add(1, Ordering::Relaxed);
    ([(header::CONTENT_TYPE, "application/json")], REPLY)
}

async fn infer(State(s): State<Arc<Server>>, body: Bytes) -> impl IntoResponse {
    let rows = batch_rows(&body);
    if !s.delay.is_zero() {
        encbench_wire::timing::sleep(s.delay).await;
    }
    s.count.fetch_add(1, Ordering::Relaxed);
    let data = vec!["4.0,0.0,0.0"; rows].join(",");
    (
        [(header::CONTENT_TYPE, "application/json")],
        format!(
            r#"{{"model_name":"bench","outputs":[{{"name":"logits","datatype":"FP32","shape":[{rows},3],"data":[{data}]}}]}}"#
        ),
    )
}

/// The batch size of a KServe v2 request: the first dimension of its first tensor's shape
/// (a client may write a tensor's data before its shape, so the whole body is searched).
fn batch_rows(head: &[u8]) -> usize {
    const SHAPE: &[u8] = b"\"shape\":[";
    head.windows(SHAPE.len())
        .position(|w| w == SHAPE)
        .map(|at| {
            head[at + SHAPE.len()..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .fold(0usize, |n, b| n * 10 + usize::from(b - b'0'))
        })
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

async fn model_config() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"name":"bench","max_batch_size":64,"input":[{"name":"input_ids","data_type":"TYPE_INT64","dims":[-1]},{"name":"attention_mask","data_type":"TYPE_INT64","dims":[-1]},{"name":"token_type_ids","data_type":"TYPE_INT64","dims":[-1]}],"output":[{"name":"logits","data_type":"TYPE_FP32","dims":[3]}]}"#,
    )
}

async fn ping() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        r#"{"status":"Healthy"}"#,
    )
}

async fn count(State(s): State<Arc<Server>>) -> String {
    s.count.load(Ordering::Relaxed).to_string()
}

fn arg(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} needs a whole number"))
        })
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let port = arg(&args, "--port", 0) as u16;
    let delay = Duration::from_micros(arg(&args, "--delay-us", 0));
    let threads = arg(&args, "--threads", 2).max(1) as usize;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .on_thread_start(encbench_wire::timing::tighten_timer_slack)
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Server {
            count: AtomicU64::new(0),
            delay,
            save_body: args
                .iter()
                .position(|a| a == "--save-body")
                .and_then(|i| args.get(i + 1))
                .map(std::path::PathBuf::from),
            saved: AtomicBool::new(false),
        });
        let app = Router::new()
            .route("/ping", get(ping))
            .route("/invocations", post(invocations))
            .route("/_count", get(count))
            .route("/v2/models/{model}/ready", get(|| async { "" }))
            .route("/v2/models/{model}/config", get(model_config))
            .route("/v2/models/{model}/infer", post(infer))
            .with_state(state);
        // Small replies must not wait on delayed ACKs.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let mut out = std::io::stdout();
        writeln!(out, "http://{addr}")?;
        out.flush()?;
        axum::serve(listener, app).await
    })
}
