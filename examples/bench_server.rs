//! The loopback server of the load-generator benchmark (`bench/run.sh`). It does as little as
//! a server can, so that the clients under test, not the server, set the pace: no parsing, no
//! tokenizing, one fixed reply. The reference endpoint (`encbench-tui serve`) tokenizes every
//! request to compute its service time, which would make it the bottleneck here.
//!
//! `cargo run --release --example bench_server -- [--port N] [--delay-us US] [--threads N]
//! [--save-body FILE]`
//! prints its URL on the first stdout line. `GET /_count` tells how many POSTs it answered,
//! so the harness can charge each client's CPU time per request it really got served.

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
        encbench::timing::sleep(s.delay).await;
    }
    s.count.fetch_add(1, Ordering::Relaxed);
    ([(header::CONTENT_TYPE, "application/json")], REPLY)
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
        .on_thread_start(encbench::timing::tighten_timer_slack)
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
