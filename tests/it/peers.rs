//! Against real third-party servers: moto (the SageMaker runtime API, with SigV4 checked in
//! its IAM mode), the Hugging Face SageMaker inference toolkit on multi-model-server (the
//! container contract) and Triton (KServe v2); KServe's own `ModelServer` is in
//! `real_model.rs`. The peers are installed on first use by scripts/peers/install.sh into
//! target/peers (PyPI only; 1-4 minutes and 1.7 GB the first time).

use crate::common;

use crate::common::{
    args, assert_phase_accounted, f, post_json, run_env, run_export_env, stderr, tmp_path,
};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scripts/peers")
        .join(name)
}

/// Installs `peer` (scripts/peers/install.sh) once per test binary. A peer that cannot be
/// installed fails each test that needs it with the same one line (which peer, why, how to
/// retry), not with the first test's panic and a poisoned lock after it.
pub(crate) fn install(peer: &str) {
    static OUTCOMES: Mutex<Vec<(String, Result<(), String>)>> = Mutex::new(Vec::new());
    let outcome = {
        let mut done = OUTCOMES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, r)) = done.iter().find(|(p, _)| p == peer) {
            r.clone()
        } else {
            let r = match Command::new("bash")
                .arg(script("install.sh"))
                .arg(peer)
                .output()
            {
                Ok(out) if out.status.success() => Ok(()),
                Ok(out) => Err(String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("no output")
                    .to_string()),
                Err(e) => Err(format!("cannot run bash: {e}")),
            };
            done.push((peer.to_string(), r.clone()));
            r
        }
    };
    if let Err(why) = outcome {
        panic!(
            "peer {peer} could not be installed ({why}); retry with: bash scripts/peers/install.sh {peer} (log: {})",
            peers_home().join(format!("install-{peer}.log")).display()
        );
    }
}

/// A free port below 32768 (multi-model-server refuses higher ones: "Invalid port number")
/// with the two above it free too: Triton takes three. A peer still stopping in the
/// background may hold some of its ports a little longer than others, and keeps its pid
/// file until it is gone.
pub(crate) fn free_port() -> u16 {
    let start = 20_000 + (std::process::id() % 5_000) as u16;
    let home = peers_home();
    let stopping = |p: u16| {
        ["moto", "smhf", "triton", "kserve"]
            .iter()
            .any(|peer| home.join(format!("{peer}-{p}.pid")).exists())
    };
    let free = |p: u16| !stopping(p) && std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
    (start..32_000)
        .find(|&p| (p..p + 3).all(free))
        .expect("a free port")
}

/// A running peer, stopped on drop.
pub(crate) struct Peer {
    script: &'static str,
    pub(crate) port: u16,
}

/// One peer test at a time: two JVMs and several Python workers starting at once on two
/// cores time each other out. Beside tests of the reference endpoint they hold (their
/// assertions are on what the servers answer, not on how fast), with a shared turn.
pub(crate) struct PeerTurn {
    _peer: std::fs::File,
    _machine: common::Load,
}

pub(crate) fn one_at_a_time() -> PeerTurn {
    let peer = common::lock_file("peers.lock");
    peer.lock().expect("lock the peers");
    PeerTurn {
        _peer: peer,
        _machine: common::load(),
    }
}

impl Peer {
    pub(crate) fn start(script_name: &'static str, args: &[&str], env: &[(&str, &str)]) -> Peer {
        install(script_name.trim_end_matches(".sh"));
        // Each peer test holds the peers' lock for its whole life (`one_at_a_time`).
        let port = free_port();
        let out = Command::new("bash")
            .arg(script(script_name))
            .args(["start", &port.to_string()])
            .args(args)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{script_name} start failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Peer {
            script: script_name,
            port,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The v2 gRPC service: Triton's and KServe's peers serve it on the port after HTTP's.
    pub(crate) fn grpc_url(&self) -> String {
        format!("grpc://127.0.0.1:{}", self.port + 1)
    }
}

impl Drop for Peer {
    /// Stops the peer in the background: Triton takes 5-6 s to unload and multi-model-server
    /// 2 s, mostly waiting, and the next test needs none of it (it gets a port of its own).
    fn drop(&mut self) {
        let stop = Command::new("bash")
            .arg(script(self.script))
            .args(["stop", &self.port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if let Ok(mut stop) = stop {
            std::thread::spawn(move || stop.wait());
        }
    }
}

/// Real Triton with a 20 ms batching window, one instance for the tests that use it and
/// leave it as they found it (they read its statistics and metrics as differences over
/// their own phases): started by the first of them, stopped once this test binary has
/// exited. Each start took 3.3-4.6 s here, and each stop 4.4 s of Triton unloading in the
/// background of the next test.
fn shared_triton() -> &'static Peer {
    static TRITON: std::sync::OnceLock<Peer> = std::sync::OnceLock::new();
    TRITON.get_or_init(|| {
        let peer = Peer::start("triton.sh", &[], &[("QUEUE_DELAY_US", "20000")]);
        stop_after_this_binary(&peer);
        peer
    })
}

/// A static is never dropped: a watchdog stops `peer` once this process is gone.
fn stop_after_this_binary(peer: &Peer) {
    let watch = format!(
        "while kill -0 {} 2>/dev/null; do sleep 0.5; done; exec bash '{}' stop {}",
        std::process::id(),
        script(peer.script).display(),
        peer.port
    );
    let mut watchdog = Command::new("bash")
        .args(["-c", &watch])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the watchdog that stops a shared peer");
    std::thread::spawn(move || watchdog.wait());
}

fn peers_home() -> PathBuf {
    std::env::var_os("ENCBENCH_PEERS_HOME").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/peers"),
        PathBuf::from,
    )
}

#[test]
fn moto_runtime_api_through_the_sdk() {
    let _one = one_at_a_time();
    let moto = Peer::start("moto.sh", &[], &[]);
    let env = [
        ("AWS_ACCESS_KEY_ID", "AKIDMOTO"),
        ("AWS_SECRET_ACCESS_KEY", "anything"),
        ("AWS_REGION", "us-east-1"),
    ];
    // moto answers the literal body "body" unless replies are queued: each distinct request
    // takes the next one, a repeated request gets the one it got before. Three texts, so
    // three distinct requests: a real hf reply, an empty verdict list, and moto's
    // placeholder. A 2xx is checked as from any other target: only the first is a success.
    let texts = tmp_path("three.txt");
    std::fs::write(&texts, "first text\nsecond text\nthird text\n").unwrap();
    post_json(
        &format!("{}/moto-api/static/sagemaker/endpoint-results", moto.url()),
        &serde_json::json!({ "results": [
            { "Body": r#"[{"label": "entailment", "score": 0.9}]"#, "ContentType": "application/json" },
            { "Body": "[]", "ContentType": "application/json" },
        ]}),
    );
    let load = args()
        .endpoint("moto-ep", &moto.url())
        .n(30)
        .opt("--warmup", 0)
        .opt("--texts", texts.to_str().unwrap())
        .no_accuracy();
    let (_, e) = run_export_env(&load.strs(), &env);
    let p = &e["phases"][0];
    assert_phase_accounted(p);
    assert_eq!(p["ok"], 10, "{p}");
    assert_eq!(p["errors"]["BadResponse"], 20, "{p}");
    assert!(f(&p["latency_ms"]["p50"]) > 0.0);
}

#[test]
fn moto_iam_mode_refuses_a_wrong_secret_as_an_auth_error() {
    let _one = one_at_a_time();
    let moto = Peer::start("moto.sh", &["--auth"], &[]);
    let key: Value = serde_json::from_str(
        &std::fs::read_to_string(peers_home().join(format!("moto-{}-key.json", moto.port)))
            .unwrap(),
    )
    .unwrap();
    let id = key["AccessKeyId"].as_str().unwrap();
    let secret = key["SecretAccessKey"].as_str().unwrap();
    let good = [
        ("AWS_ACCESS_KEY_ID", id),
        ("AWS_SECRET_ACCESS_KEY", secret),
        ("AWS_REGION", "us-east-1"),
    ];
    // Signed requests that moto accepts; what they answer is the other test's business, so
    // a success or a BadResponse both prove the signature passed.
    let load = args().endpoint("moto-ep", &moto.url()).n(5).no_accuracy();
    let (_, e) = run_export_env(&load.strs(), &good);
    let p = &e["phases"][0];
    assert_eq!(
        p["ok"].as_u64().unwrap() + p["errors"]["BadResponse"].as_u64().unwrap_or(0),
        5,
        "{p}"
    );

    let bad = [
        ("AWS_ACCESS_KEY_ID", id),
        ("AWS_SECRET_ACCESS_KEY", "wrong-secret"),
        ("AWS_REGION", "us-east-1"),
    ];
    let out = run_env(
        &args()
            .arg("--headless")
            .endpoint("moto-ep", &moto.url())
            .strs(),
        &bad,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("authentication failed") && err.contains("SignatureDoesNotMatch"),
        "{err}"
    );
    assert!(!err.contains(secret) && !err.contains("wrong-secret"));
}

#[test]
fn hf_toolkit_accepts_batched_hf_payloads() {
    let _one = one_at_a_time();
    let smhf = Peer::start("smhf.sh", &[], &[("WORKERS", "1")]);
    let (out, e) = run_export_env(
        &["--url", &smhf.url(), "--batch-size", "4", "-n", "20"],
        &[],
    );
    // Found by its /ping: neither TEI's /info nor KServe's /v2 nor a model list answered.
    assert!(
        stderr(&out).contains("found the SageMaker container contract (--engine hf)"),
        "{}",
        stderr(&out)
    );
    let tried = e["config"]["target"]["detected"]["tried"].to_string();
    assert!(
        tried.contains("GET /ping 200") && tried.contains("GET /info 404"),
        "{tried}"
    );
    let p = &e["phases"][0];
    assert_eq!(p["ok"], 20, "{p}");
    assert_eq!(p["batch_size"], 4);
    // The toolkit's stand-in model gives its own verdicts; each must parse as a label.
    let acc = &e["accuracy"];
    assert_eq!(acc["total"], 4);
    for v in acc["samples"].as_array().unwrap() {
        let label = v["predicted"]
            .as_str()
            .unwrap_or_else(|| panic!("no verdict: {v}"));
        assert!(
            ["entailment", "neutral", "contradiction"].contains(&label),
            "{label}"
        );
    }
}

#[test]
fn hf_toolkit_overload_503s_are_counted_and_the_run_goes_on() {
    let _one = one_at_a_time();
    let smhf = Peer::start(
        "smhf.sh",
        &[],
        &[
            ("WORKERS", "1"),
            ("FAKE_DELAY_MS", "50"),
            ("QUEUE_SIZE", "2"),
        ],
    );
    let (_, e) = run_export_env(
        &[
            "--url",
            &smhf.url(),
            "-n",
            "80",
            "--warmup",
            "0",
            "--concurrency",
            "12",
            "--no-accuracy",
            "--timeout",
            "30",
        ],
        &[],
    );
    let p = &e["phases"][0];
    let errors = p["errors"].as_object().unwrap();
    let unavailable = errors
        .get("ServiceUnavailable")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let total_errors: u64 = errors.values().filter_map(Value::as_u64).sum();
    assert!(unavailable > 0, "expected 503s: {errors:?}");
    assert!(p["ok"].as_u64().unwrap() > 0);
    assert_eq!(
        p["ok"].as_u64().unwrap() + total_errors,
        80,
        "nothing lost: {p}"
    );
    assert_eq!(p["sent"], 80, "{p}");
}

/// A worker of multi-model-server killed mid-run: the frontend keeps the connections and
/// never answers the requests routed to it, so they end as timeouts; every one is counted.
#[test]
fn hf_toolkit_worker_killed_mid_run_times_out_its_requests_and_loses_none() {
    let _one = one_at_a_time();
    let smhf = Peer::start("smhf.sh", &[], &[("WORKERS", "1"), ("FAKE_DELAY_MS", "20")]);
    let export = common::tmp_path("smhf-killed.json");
    // The kill comes about 2 s in; what was routed to the dead worker hangs until the 5 s
    // timeout, well inside the 8 s run and its wait for requests in flight.
    let load = args()
        .arg("--headless")
        .opt("--url", smhf.url())
        .opt("--export", export.display())
        .opt("--duration", 8)
        .opt("--request-rate", 10)
        .opt("--concurrency", 4)
        .opt("--warmup", 0)
        .no_accuracy()
        .opt("--timeout", 5)
        .opt("--seed", 1);
    let load = Command::new(common::BIN)
        .args(load.strs())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The frontend logs a line per request it answered.
    let access_log = peers_home().join(format!("smhf-{}/logs/access_log.log", smhf.port));
    common::wait_until("requests answered before the kill", 60, || {
        std::fs::read_to_string(&access_log).is_ok_and(|l| l.lines().count() >= 20)
    });
    // The worker of this peer only (its socket path holds the port), by pid.
    let pattern = format!("smhf-{}/tmp/.mms.sock", smhf.port);
    let pids = Command::new("pgrep")
        .args(["-f", &pattern])
        .output()
        .unwrap();
    let pids = String::from_utf8_lossy(&pids.stdout).into_owned();
    assert!(!pids.trim().is_empty(), "no worker found");
    for pid in pids.split_whitespace() {
        let _ = Command::new("kill").args(["-KILL", pid]).status();
    }
    let out = load.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    let p = &e["phases"][0];
    let errors: u64 = p["errors"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(Value::as_u64)
        .sum();
    let ok = p["ok"].as_u64().unwrap();
    assert_eq!(ok + errors, p["n"].as_u64().unwrap(), "{p}");
    assert_eq!(p["n"], p["sent"], "{p}");
    assert!(
        p["errors"]["Timeout"].as_u64().unwrap_or(0) > 0,
        "the dead worker's requests time out: {p}"
    );
    assert!(ok > 0, "{p}");
}

#[test]
fn hf_toolkit_unhealthy_ping_is_not_ready() {
    let _one = one_at_a_time();
    let smhf = Peer::start("smhf.sh", &[], &[("WORKERS", "1")]);
    // Killing the worker leaves the frontend answering 200 {"status": "Unhealthy"}; the
    // frontend restarts it after a back-off, so keep killing it until the run is over (a
    // restarted worker once turned this test into 16 requests waiting out their timeouts).
    let pattern = format!("smhf-{}/tmp/.mms.sock", smhf.port);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let killer = {
        let done = done.clone();
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = Command::new("pkill")
                    .args(["-KILL", "-f", &pattern])
                    .status();
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        })
    };
    common::wait_until("/ping to say Unhealthy", 20, || {
        common::get_text(&format!("{}/ping", smhf.url())).contains("Unhealthy")
    });
    let out = run_env(
        &[
            "--headless",
            "--url",
            &smhf.url(),
            "--ready-timeout",
            "1.5",
            "--timeout",
            "5",
            "-n",
            "5",
        ],
        &[],
    );
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    killer.join().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not healthy") && err.contains("Unhealthy"),
        "{err}"
    );
}

fn triton_run(t: &Peer, extra: &[&str]) -> Value {
    let url = t.url();
    let mut args = vec![
        "--url",
        url.as_str(),
        "--engine",
        "triton",
        "--model",
        "encoder",
        "--no-accuracy",
    ];
    args.extend_from_slice(extra);
    run_export_env(&args, &[]).1
}

#[test]
fn real_triton_pad_to_max_b8_in_json_and_binary() {
    let _one = one_at_a_time();
    // The shared instance batches within 20 ms; one client at a time still gives it one
    // request per execution.
    let t = shared_triton();
    for mode in [&[][..], &["--binary"][..]] {
        let mut extra = vec!["--pad-to-max", "--batch-size", "8", "-n", "20"];
        extra.extend_from_slice(mode);
        let e = triton_run(t, &extra);
        let p = &e["phases"][0];
        assert_eq!(p["ok"], 20, "{mode:?}: {p}");
        assert_eq!(p["errors"], serde_json::json!({}));
        assert!(f(&p["tokenize_ms"]["p50"]) > 0.0);
        // One client at a time: every execution is exactly one request of 8 rows.
        assert_eq!(
            f(&p["server"]["batch_factor"]),
            8.0,
            "{mode:?}: {}",
            p["server"]
        );
        eprintln!(
            "real Triton b=8/512 {mode:?}: p50 {} ms, tokenize p50 {} ms, server {}",
            p["latency_ms"]["p50"], p["tokenize_ms"]["p50"], p["server"]
        );
    }
}

#[test]
fn real_triton_outputs_prove_the_client_tensors_and_dynamic_batching() {
    use encbench_core::input::Input;
    use encbench_wire::client::Target;
    use encbench_wire::client::url::UrlTarget;
    use encbench_wire::payload::Format;
    use encbench_wire::payload::kserve::{KServeFormat, TensorNames, Wire, output_f32};
    use encbench_wire::tokenize::TokenCounter;
    use std::sync::Arc;

    let _one = one_at_a_time();
    let t = shared_triton();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let counter = TokenCounter::shipped();
    for binary in [false, true] {
        let format = Arc::new(KServeFormat {
            model: "encoder".into(),
            names: TensorNames::default(),
            encoder: counter.encoder(512).unwrap(),
            pad_to_max: true,
            wire: if binary { Wire::Binary } else { Wire::Json },
            text_input: None,
            pooling: encbench_wire::payload::Pooling::Mean,
        });
        let target = Arc::new(UrlTarget::new(
            &t.url(),
            format.as_ref(),
            64,
            std::time::Duration::from_secs(30),
        ));
        let samples = encbench_core::input::shipped_samples();
        let inputs: Vec<Input> = samples
            .iter()
            .map(encbench_core::input::NliSample::input)
            .chain(samples.iter().map(encbench_core::input::NliSample::input))
            .collect();
        let refs: Vec<&Input> = inputs.iter().collect();
        let expected = counter.encoder(512).unwrap().encode(&refs, true);
        let prepared = format.prepare(&refs);
        let reply = rt.block_on(target.invoke(&prepared)).expect("b=8 infer");
        let (rows, cols, logits) = output_f32(&reply, "logits").unwrap();
        assert_eq!((rows, cols), (8, 3));
        for r in 0..8 {
            let span = r * 512..(r + 1) * 512;
            let mask_sum: i64 = expected.attention_mask[span.clone()].iter().sum();
            let ids_mean = expected.input_ids[span.clone()]
                .iter()
                .zip(&expected.attention_mask[span])
                .filter(|(_, m)| **m == 1)
                .map(|(i, _)| *i as f64)
                .sum::<f64>()
                / mask_sum as f64;
            assert_eq!(
                logits[r * 3] as i64,
                mask_sum,
                "row {r}: sum(mask) proves the mask (binary {binary})"
            );
            assert!(
                (f64::from(logits[r * 3 + 1]) - ids_mean).abs() < 0.05,
                "row {r}: mean(ids) proves the ids"
            );
        }

        // 32 clients at once with b=1: Triton's dynamic batcher merges them.
        let one = Arc::new(format.prepare(&[&inputs[0]]));
        let merged = rt.block_on(async {
            let mut set = tokio::task::JoinSet::new();
            for _ in 0..32 {
                let (target, one) = (target.clone(), one.clone());
                set.spawn(async move { target.invoke(&one).await });
            }
            let mut biggest = 0.0f32;
            while let Some(r) = set.join_next().await {
                let (_, _, l) = output_f32(&r.unwrap().unwrap(), "logits").unwrap();
                biggest = biggest.max(l[2]);
            }
            biggest
        });
        assert!(merged > 1.0, "third value shows the server batch: {merged}");
    }
    let mut extra = vec![
        "--batch-size",
        "1",
        "--concurrency",
        "16",
        "-n",
        "200",
        "--binary",
    ];
    extra.push("--warmup");
    extra.push("16");
    let e = triton_run(t, &extra);
    let factor = f(&e["phases"][0]["server"]["batch_factor"]);
    eprintln!(
        "real Triton b=1 x 16 clients: batch factor {factor}, {}",
        e["phases"][0]["server"]
    );
    assert!(
        factor > 1.0,
        "stats-derived batch factor shows dynamic batching: {factor}"
    );
}

/// `--metrics-url` on Triton's metrics port (PORT+2 here, 8002 by default): the phase's
/// queue and compute per request and the batch factor from the Prometheus counters agree
/// with the statistics API's diff of the same phase within 5 %, with dynamic batching on.
#[test]
fn real_triton_metrics_agree_with_its_statistics() {
    let _one = one_at_a_time();
    let t = shared_triton();
    let metrics = format!("http://127.0.0.1:{}/metrics", t.port + 2);
    let e = triton_run(
        t,
        &[
            "--binary",
            "--concurrency",
            "16",
            "-n",
            "200",
            "--warmup",
            "16",
            "--metrics-url",
            &metrics,
            "--metric",
            "nv_inference_request_duration_us",
        ],
    );
    let p = &e["phases"][0];
    let (m, s) = (&p["server_metrics"], &p["server"]);
    eprintln!("real Triton b=1 x 16: metrics {m}\nstatistics {s}");
    let close = |a: f64, b: f64, what: &str| {
        assert!(
            a > 0.0 && (a / b - 1.0).abs() <= 0.05,
            "{what}: metrics {a} against statistics {b}"
        );
    };
    let stats_compute =
        f(&s["compute_input_ms"]) + f(&s["compute_infer_ms"]) + f(&s["compute_output_ms"]);
    close(
        f(&m["queue_ms_per_request"]) + f(&m["compute_ms_per_request"]),
        f(&s["queue_ms"]) + stats_compute,
        "queue + compute ms per request",
    );
    close(f(&m["compute_ms_per_request"]), stats_compute, "compute ms");
    close(f(&m["batch_factor"]), f(&s["batch_factor"]), "batch factor");
    assert!(f(&m["batch_factor"]) > 1.0, "dynamic batching: {m}");
    assert_eq!(m["requests"], 216, "warmup and measured requests: {m}");
    assert_eq!(m["executions"], s["execution_count"]);
    let named = &m["metrics"]["nv_inference_request_duration_us"];
    assert_eq!(named["type"], "counter");
    assert_eq!(common::schema_violations(&e), Vec::<String>::new());
}

/// A CloudWatch client on moto, as SageMaker would publish its metrics.
fn moto_cloudwatch(url: &str) -> aws_sdk_cloudwatch::Client {
    use aws_sdk_cloudwatch::config::{BehaviorVersion, Credentials, Region};
    let http = aws_smithy_http_client::Builder::new()
        .tls_provider(encbench_wire::client::tls::sdk_provider())
        .build_https();
    let conf = aws_sdk_cloudwatch::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .endpoint_url(url)
        .credentials_provider(Credentials::new("AKIDMOTO", "anything", None, None, "test"))
        .http_client(http)
        .build();
    aws_sdk_cloudwatch::Client::from_conf(conf)
}

/// Now, early enough in its minute that a run started at once falls in the same minute.
fn early_in_a_minute() -> std::time::SystemTime {
    loop {
        let now = std::time::SystemTime::now();
        let secs = now.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        if secs % 60 < 45 {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// Datapoints as SageMaker publishes them for an endpoint's `AllTraffic` variant, early in
/// the current minute: (endpoint, metric, sample count, sum, maximum), in microseconds
/// (`Invocations`: a count).
fn put_sagemaker_metrics(url: &str, points: &[(&str, &str, f64, f64, f64)]) {
    use aws_sdk_cloudwatch::types::{Dimension, MetricDatum, StandardUnit, StatisticSet};
    let at = early_in_a_minute();
    let data = points
        .iter()
        .map(|&(endpoint, name, n, sum, max)| {
            let dims = [("EndpointName", endpoint), ("VariantName", "AllTraffic")]
                .map(|(k, v)| Dimension::builder().name(k).value(v).build());
            MetricDatum::builder()
                .metric_name(name)
                .set_dimensions(Some(dims.to_vec()))
                .timestamp(at.into())
                .statistic_values(
                    StatisticSet::builder()
                        .sample_count(n)
                        .sum(sum)
                        .minimum(0.0)
                        .maximum(max)
                        .build(),
                )
                .unit(if name == "Invocations" {
                    StandardUnit::None
                } else {
                    StandardUnit::Microseconds
                })
                .build()
        })
        .collect();
    common::runtime()
        .block_on(
            moto_cloudwatch(url)
                .put_metric_data()
                .namespace("AWS/SageMaker")
                .set_metric_data(Some(data))
                .send(),
        )
        .unwrap();
}

/// `--cloudwatch-wait` through moto's CloudWatch API: datapoints SageMaker would publish
/// for the endpoint's variant in the phase's minute (10 invocations, model 21.0 ms and
/// overhead 3.9 ms on average) come back beside the client's figures, and another
/// endpoint's are not mixed in.
#[test]
fn moto_cloudwatch_figures_are_read_back_beside_the_client_figures() {
    let _one = one_at_a_time();
    let moto = Peer::start("moto.sh", &[], &[]);
    post_json(
        &format!("{}/moto-api/static/sagemaker/endpoint-results", moto.url()),
        &serde_json::json!({ "results": [
            { "Body": r#"[{"label": "entailment", "score": 0.9}]"#, "ContentType": "application/json" },
        ]}),
    );
    put_sagemaker_metrics(
        &moto.url(),
        &[
            ("moto-ep", "ModelLatency", 10.0, 210_000.0, 40_000.0),
            ("moto-ep", "OverheadLatency", 10.0, 39_000.0, 6_000.0),
            ("moto-ep", "Invocations", 1.0, 10.0, 10.0),
            ("other-ep", "ModelLatency", 10.0, 9_000_000.0, 900_000.0),
        ],
    );
    let env = [
        ("AWS_ACCESS_KEY_ID", "AKIDMOTO"),
        ("AWS_SECRET_ACCESS_KEY", "anything"),
        ("AWS_REGION", "us-east-1"),
    ];
    // moto answers a queued reply to one distinct body only (the literal "body" to any
    // other): one text, so all ten requests are that one and all ten succeed.
    let one = tmp_path("one-cw.txt");
    std::fs::write(&one, "the one text\n").unwrap();
    let load = args()
        .endpoint("moto-ep", &moto.url())
        .n(10)
        .opt("--warmup", 0)
        .opt("--texts", one.to_str().unwrap())
        .opt("--cloudwatch-wait", "1s")
        .no_accuracy();
    let (out, e) = run_export_env(&load.strs(), &env);
    assert_eq!(e["phases"][0]["ok"], 10, "{}", e["phases"][0]);
    let c = &e["phases"][0]["cloudwatch"];
    assert_eq!(c["dimensions"]["EndpointName"], "moto-ep", "{c}");
    assert_eq!(c["dimensions"]["VariantName"], "AllTraffic");
    assert_eq!(c["period_s"], 60);
    let model = &c["metrics"]["ModelLatency"];
    assert_eq!(
        (f(&model["average"]), f(&model["max"])),
        (21.0, 40.0),
        "{c}"
    );
    assert_eq!(f(&model["sample_count"]), 10.0);
    assert_eq!(model["unit"], "ms");
    assert_eq!(f(&c["metrics"]["OverheadLatency"]["average"]), 3.9);
    assert_eq!(f(&c["metrics"]["Invocations"]["sum"]), 10.0);
    assert!(c["metrics"].get("ModelSetupTime").is_none(), "{c}");
    assert_eq!(common::schema_violations(&e), Vec::<String>::new());
    assert_eq!(e["config"]["cloudwatch_wait_s"], 1.0);
    // Beside the client's p50 and service time, in one row of one table.
    let tables = common::stdout(&out);
    let row = tables
        .lines()
        .skip_while(|l| !l.starts_with("SageMaker CloudWatch"))
        .nth(2)
        .unwrap_or_default()
        .to_string();
    let client_p50 = format!("{:.2}", f(&e["phases"][0]["latency_ms"]["p50"]));
    // Our own p50s beside their intervals (10 requests bound a median on both sides), the
    // intervals set aside to read one figure a column.
    assert!(row.contains(&format!("{client_p50} [")), "{tables}");
    let mut figures = String::new();
    let mut inside = false;
    for ch in row.chars() {
        match ch {
            '[' => inside = true,
            ']' => inside = false,
            c if !inside => figures.push(c),
            _ => {}
        }
    }
    let cells: Vec<&str> = figures.split_whitespace().collect();
    assert_eq!(cells.get(3), Some(&client_p50.as_str()), "{tables}");
    assert_eq!(&cells[5..9], ["21.00", "3.90", "40.00", "10"], "{tables}");
}

/// An identity that may invoke the endpoint but not read CloudWatch (moto in IAM mode): the
/// run completes with its figures and one note, and no CloudWatch figures.
#[test]
fn moto_cloudwatch_without_permission_is_one_note_and_the_run_goes_on() {
    let _one = one_at_a_time();
    let moto = Peer::start(
        "moto.sh",
        &["--auth"],
        &[("MOTO_POLICY_ACTIONS", "sagemaker:InvokeEndpoint")],
    );
    let key: Value = serde_json::from_str(
        &std::fs::read_to_string(peers_home().join(format!("moto-{}-key.json", moto.port)))
            .unwrap(),
    )
    .unwrap();
    let env = [
        ("AWS_ACCESS_KEY_ID", key["AccessKeyId"].as_str().unwrap()),
        (
            "AWS_SECRET_ACCESS_KEY",
            key["SecretAccessKey"].as_str().unwrap(),
        ),
        ("AWS_REGION", "us-east-1"),
    ];
    let load = args()
        .endpoint("moto-ep", &moto.url())
        .n(5)
        .opt("--cloudwatch-wait", "0")
        .arg("--sweep-concurrency")
        .opt("--concurrency-levels", "1")
        .arg("2")
        .no_accuracy();
    let (out, e) = run_export_env(&load.strs(), &env);
    let phases = e["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for p in phases {
        assert_phase_accounted(p);
        assert!(p.get("cloudwatch").is_none(), "{p}");
    }
    let notes: Vec<&str> = e["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| n.contains("CloudWatch"))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("AccessDenied") && notes[0].contains("cloudwatch:GetMetricData"),
        "{notes:?}"
    );
    let all = format!("{}{}", common::stdout(&out), stderr(&out));
    assert_eq!(all.matches("GetMetricData failed").count(), 1, "{all}");
    assert!(!all.contains(key["SecretAccessKey"].as_str().unwrap()));
}

/// `cold-start --cloudwatch-wait`: a serverless cold start's `ModelSetupTime` (13.7 s here)
/// and latencies, published for the endpoint over the attempts, come back in the export and
/// the table.
#[test]
fn moto_cloudwatch_figures_of_a_cold_start() {
    let _one = one_at_a_time();
    let moto = Peer::start("moto.sh", &[], &[]);
    post_json(
        &format!("{}/moto-api/static/sagemaker/endpoint-results", moto.url()),
        &serde_json::json!({ "results": [
            { "Body": r#"[{"label": "entailment", "score": 0.9}]"#, "ContentType": "application/json" },
        ]}),
    );
    put_sagemaker_metrics(
        &moto.url(),
        &[
            ("moto-ep", "ModelSetupTime", 1.0, 13_700_000.0, 13_700_000.0),
            ("moto-ep", "ModelLatency", 4.0, 100_000.0, 43_000.0),
        ],
    );
    let path = tmp_path("cold-cw.json");
    let out = run_env(
        &[
            "cold-start",
            "--endpoint",
            "moto-ep",
            "--endpoint-url",
            &moto.url(),
            "-n",
            "3",
            "--cloudwatch-wait",
            "0",
            "--export",
            path.to_str().unwrap(),
        ],
        &[
            ("AWS_ACCESS_KEY_ID", "AKIDMOTO"),
            ("AWS_SECRET_ACCESS_KEY", "anything"),
            ("AWS_REGION", "us-east-1"),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let m = &e["cloudwatch"]["metrics"];
    assert_eq!(f(&m["ModelSetupTime"]["average"]), 13_700.0, "{e}");
    assert_eq!(f(&m["ModelLatency"]["average"]), 25.0);
    let table = common::stdout(&out);
    assert!(
        table.contains("CloudWatch model setup") && table.contains("avg 13700.0"),
        "{table}"
    );
}
