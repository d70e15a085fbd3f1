//! KServe v2 over gRPC against the reference endpoint, which answers gRPC on its HTTP port:
//! a `grpc://` run is its HTTP twin's (sweeps, statistics, `--pretokenize`, `--text-input`,
//! the verdicts), the protocol is a compared variable, failures count by kind with the
//! server's words, a server stopped mid-run is used again on its return, metadata reaches
//! the server and shows nowhere, replies are capped, and bad input is one line.
//! Real Triton and KServe over gRPC: `real_model.rs`.

use crate::common::hostile_grpc::Hostile;
use crate::common::{
    BIN, Serve, counters, f, run, run_env, run_export, schema_violations, stderr, stdout, tmp_path,
};
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn grpc(s: &Serve) -> String {
    s.url.replace("http://", "grpc://")
}

fn errors(p: &Value, kind: &str) -> u64 {
    p["errors"][kind].as_u64().unwrap_or(0)
}

#[test]
fn a_grpc_run_is_its_http_twins_run() {
    let s = Serve::one_ms(&[]);
    let url = grpc(&s);
    // No engine, no model: found over gRPC. A sweep at 128 tokens, four streams in flight
    // over two connections per client thread.
    let (out, e) = run_export(
        &url,
        &[
            "--sweep-batch",
            "--batch-sizes",
            "1",
            "8",
            "-n",
            "30",
            "--pad-to-max",
            "--max-len",
            "128",
            "-c",
            "4",
            "--grpc-connections",
            "2",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    let t = &e["config"]["target"];
    assert_eq!(
        (
            &t["engine"],
            &t["wire"],
            &t["grpc_connections"],
            &t["model"]
        ),
        (
            &json!("triton"),
            &json!("grpc"),
            &json!(2),
            &json!("encbench-reference")
        ),
        "{t}"
    );
    assert_eq!(t["path"], "/inference.GRPCInferenceService/ModelInfer");
    assert!(
        t["detected"]["server"]
            .as_str()
            .unwrap()
            .starts_with("KServe v2 over gRPC (triton 2.51.0)"),
        "{t}"
    );
    for (p, b) in e["phases"].as_array().unwrap().iter().zip([1u64, 8]) {
        assert_eq!(
            (p["batch_size"].as_u64(), p["ok"].as_u64()),
            (Some(b), Some(30)),
            "{p}"
        );
        // Triton's statistics over gRPC, diffed around the phase: its 33 requests (3 of
        // warmup), each one execution of b rows.
        let server = &p["server"];
        assert_eq!(
            (
                server["execution_count"].as_u64(),
                server["inference_count"].as_u64()
            ),
            (Some(33), Some(33 * b)),
            "{server}"
        );
        assert_eq!(f(&server["batch_factor"]), b as f64, "{server}");
        assert_eq!(p["client_cpu_ms_per_request"]["requests"], 33, "{p}");
    }
    let a = &e["accuracy"];
    assert_eq!(
        (&a["passed"], &a["before"]["passed"]),
        (&json!(4), &json!(4)),
        "{a}"
    );
    let seen = &counters(&s)["last_tensors"];
    assert_eq!(seen["grpc"], true, "{seen}");
    let names: Vec<&str> = seen["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["input_ids", "attention_mask", "token_type_ids"]);

    // Tokenized before each phase, or not at all (a BYTES tensor of the texts).
    let (_, e) = run_export(&url, &["-n", "10", "--pretokenize"]);
    assert_eq!(e["phases"][0]["ok"], 10);
    assert!(
        e["phases"][0].get("tokenize_ms").is_none(),
        "{}",
        e["phases"][0]
    );
    let (_, e) = run_export(&url, &["-n", "10", "--text-input", "TEXT"]);
    assert_eq!(e["phases"][0]["ok"], 10);
    assert_eq!(e["accuracy"]["passed"], 4, "{}", e["accuracy"]);
    let seen = &counters(&s)["last_tensors"]["tensors"][0];
    assert_eq!(
        (&seen["name"], &seen["datatype"], &seen["shape"]),
        (&json!("TEXT"), &json!("BYTES"), &json!([1, 2])),
        "{seen}"
    );
}

/// The same server as JSON, binary and gRPC in one command: every target answered, and each
/// row says what a request cost the client.
#[test]
fn the_protocol_is_a_compared_variable() {
    let s = Serve::one_ms(&[]);
    let http = format!("url={},engine=triton,model=encbench-reference", s.url);
    let targets = [
        format!("name=json,{http}"),
        format!("name=binary,{http},binary"),
        format!("name=grpc,url={}", grpc(&s)),
    ];
    let path = tmp_path("protocols.json");
    let mut args = vec!["compare", "--headless", "-o", path.to_str().unwrap()];
    args.extend(["--batch-sizes", "1", "8", "-n", "40", "--no-concurrency"]);
    for t in &targets {
        args.extend(["--target", t]);
    }
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    let phases = e["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 6);
    for p in phases {
        assert_eq!(p["ok"], 40, "{p}");
        let cpu = &p["client_cpu_ms_per_request"];
        assert!(f(&cpu["user"]) + f(&cpu["system"]) > 0.0, "{p}");
    }
    let wires: Vec<&Value> = e["compare"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["target"]["wire"])
        .collect();
    assert_eq!(wires, [&json!("json"), &json!("binary"), &json!("grpc")]);
    assert_eq!(e["compare"]["verdict_diff"], json!([]));
    let text = stdout(&out);
    let header = text
        .lines()
        .find(|l| l.starts_with("target") && l.contains("cpu ms/req"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(header.contains("user/sys"), "{header}");
    for name in ["json", "binary", "grpc"] {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name}: {text}"));
        assert!(!row.contains(" - "), "a figure for every column: {row}");
    }
}

/// Each failure under its kind, the server's words kept, and the run carried on: every
/// request counted, the export written.
#[test]
fn grpc_failures_count_by_kind_with_the_servers_words() {
    let s = Serve::one_ms(&[]);
    let url = grpc(&s);
    let quiet = [
        "-n",
        "5",
        "--warmup",
        "0",
        "--no-accuracy",
        "--engine",
        "triton",
    ];
    let case = |more: &[&str], kind: &str, words: &str| {
        let mut a = quiet.to_vec();
        a.extend_from_slice(more);
        let (out, e) = run_export(&url, &a);
        let p = &e["phases"][0];
        assert_eq!((errors(p, kind), p["ok"].as_u64()), (5, Some(0)), "{p}");
        let said = p["error_bodies"][kind].as_str().unwrap_or_default();
        assert!(said.contains(words), "{kind}: {said}");
        assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    };
    case(
        &["--model", "nosuch"],
        "gRPC NOT_FOUND",
        "Request for unknown model: 'nosuch' is not found",
    );
    case(
        &[
            "--model",
            "encbench-reference",
            "--input-ids-name",
            "input_idz",
        ],
        "ValidationError",
        "unexpected inference input 'input_idz' for model 'encbench-reference'",
    );
    case(
        &["--model", "encbench-reference", "--output-name", "scores"],
        "ValidationError",
        "unexpected inference output 'scores'",
    );

    // A deadline shorter than the service: each request a Timeout at its deadline.
    let slow = Serve::fixed(400, 4, &[]);
    let started = Instant::now();
    let (_, e) = run_export(
        &grpc(&slow),
        &[
            "-n",
            "4",
            "--warmup",
            "0",
            "--no-accuracy",
            "--timeout",
            "100ms",
        ],
    );
    assert_eq!(errors(&e["phases"][0], "Timeout"), 4, "{}", e["phases"][0]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    // Throttled and failed requests among successes: each kind with its words.
    // Open loop at 60/s of 40 ms: 2.4 in flight on average, over 2 at times.
    let busy = Serve::fixed(40, 4, &["--throttle-above", "2", "--error-rate", "0.3"]);
    let (_, e) = run_export(
        &grpc(&busy),
        &[
            "-n",
            "60",
            "--request-rate",
            "60",
            "-c",
            "8",
            "--warmup",
            "0",
            "--no-accuracy",
            "--seed",
            "3",
        ],
    );
    let p = &e["phases"][0];
    let throttled = errors(p, "ThrottlingException");
    assert_eq!(
        throttled,
        counters(&busy)["throttled"].as_u64().unwrap(),
        "{p}"
    );
    assert!(
        throttled > 0 && errors(p, "ModelError") > 0 && p["ok"].as_u64() > Some(0),
        "{p}"
    );
    assert!(
        p["error_bodies"]["ThrottlingException"]
            .as_str()
            .unwrap()
            .contains("requests in flight, limit 2"),
        "{p}"
    );
    assert_eq!(
        p["error_bodies"]["ModelError"], "simulated model error",
        "{p}"
    );
    crate::faults::assert_nothing_lost(&e);
}

#[test]
fn a_grpc_server_stopped_mid_run_is_used_again_on_its_return() {
    let _turn = crate::common::load();
    let (mut first, port) = crate::faults::serve_on(0);
    let http = format!("http://127.0.0.1:{port}");
    let path = tmp_path("grpc-killed.json");
    let mut load = Command::new(BIN)
        .args(["--headless", "--url", &format!("grpc://127.0.0.1:{port}")])
        .args(["--export", path.to_str().unwrap(), "--duration", "8"])
        .args([
            "--request-rate",
            "40",
            "--concurrency",
            "4",
            "--timeout",
            "2",
        ])
        .args(["--warmup", "0", "--no-accuracy", "--seed", "5"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    crate::common::wait_until("requests before the stop", 30, || {
        crate::faults::seen(&http) >= 20
    });
    first.kill().unwrap();
    first.wait().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let (mut second, again) = crate::faults::serve_on(port);
    assert_eq!(again, port);
    let status = load.wait().unwrap();
    let after = crate::faults::seen(&http);
    second.kill().unwrap();
    second.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut load.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    crate::faults::assert_nothing_lost(&e);
    let p = &e["phases"][0];
    assert!(errors(p, "ConnectionError") > 0, "refused while down: {p}");
    assert!(
        after > 0,
        "the connection is opened again on the server's return"
    );
    assert!(p["ok"].as_u64().unwrap() > after.saturating_sub(4), "{p}");
}

/// `--header` travels as gRPC metadata: a server that requires it serves every request,
/// one that is not given it refuses at once; its value is in no output.
#[test]
fn grpc_metadata_reaches_the_server_and_never_shows() {
    const KEY: &str = "tenant-key-9c3e71-MUST-NOT-LEAK";
    let s = Serve::one_ms(&["--require-header", &format!("x-tenant-key: {KEY}")]);
    let url = grpc(&s);
    let path = tmp_path("grpc-header.json");
    let header = format!("X-Tenant-Key: {KEY}");
    let args = [
        "--headless",
        "-o",
        path.to_str().unwrap(),
        "--url",
        &url,
        "-n",
        "6",
    ];
    let out = run_env(&[&args[..], &["--header", &header]].concat(), &[]);
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for text in [stdout(&out), stderr(&out), written.clone()] {
        assert!(!text.contains(KEY), "{text}");
    }
    let e: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(e["phases"][0]["ok"], 6);
    assert_eq!(e["config"]["target"]["headers"], json!(["x-tenant-key"]));
    assert_eq!(counters(&s)["unauthorized"], 0);

    let out = run_env(&args, &[]);
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("credentials") && text.contains("--header"),
        "{text}"
    );
    assert!(!text.contains(KEY), "{text}");
}

/// Every way to misname a gRPC target is one line and exit 2, before anything is sent.
#[test]
fn bad_grpc_input_is_one_line_and_exit_2() {
    let s = Serve::one_ms(&[]);
    let url = grpc(&s);
    // An HTTP port behind grpc://: HTTP/1 only (was "frame with invalid size", and without
    // --model an internal failure), and HTTP/2 without the gRPC service (was waited on as
    // "not live" for a minute).
    let http1 =
        crate::common::hostile::Hostile::start(|_| crate::common::hostile::Reply::json(400, "{}"));
    let http1 = http1.url.replace("http://", "grpc://");
    let no_grpc = Serve::one_ms(&["--only", "hf"]);
    let no_grpc = grpc(&no_grpc);
    for (args, says) in [
        (
            vec!["--url", &http1, "--model", "m", "-n", "2"],
            "it does not speak HTTP/2, so no gRPC",
        ),
        (vec!["--url", &http1, "-n", "2"], "ServerMetadata failed"),
        (
            vec!["--url", &no_grpc, "--model", "m", "-n", "2"],
            "KServe v2's gRPC service is not on this port",
        ),
        (
            vec!["--url", &url, "--grpc-connections", "0"],
            "--grpc-connections",
        ),
        (
            vec!["--url", &url, "--grpc-connections", "x"],
            "--grpc-connections",
        ),
        (
            vec!["--url", &s.url, "--grpc-connections", "2"],
            "applies to a grpc:// URL",
        ),
        (
            vec!["--url", &url, "--binary"],
            "gRPC always carries the tensors raw",
        ),
        (
            vec!["--url", &url, "--engine", "tei"],
            "give --engine triton (or kserve)",
        ),
        (
            vec!["--url", &url, "--path", "/v2/models/m/infer"],
            "--path: applies to HTTP",
        ),
        (
            vec!["--url", &url, "--header", "grpc-timeout: 1S"],
            "the gRPC protocol's own header",
        ),
        (
            vec!["--url", "grpc://127.0.0.1"],
            "no port: write grpc://HOST:PORT",
        ),
        (
            vec!["--url", "grpc://127.0.0.1:8001/v2"],
            "no path or query",
        ),
        (
            vec!["--metrics-url", "grpc://127.0.0.1:8002", "--url", &url],
            "--metrics-url",
        ),
        (
            vec![
                "--url",
                &url,
                "--engine",
                "triton",
                "--model",
                "nosuch",
                "--grpc-conections",
                "2",
            ],
            "--grpc-connections",
        ),
    ] {
        let out = run(&args);
        let text = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains(says), "{args:?}: {text}");
        // clap's report of a misspelt flag has its suggestion and usage lines; ours is one.
        if !args.contains(&"--grpc-conections") {
            assert_eq!(text.trim_end().lines().count(), 1, "{args:?}: {text}");
        }
    }
    // compare's keys, under the flag that gave them.
    let out = run(&[
        "compare",
        "--target",
        &format!("url={url},grpc-connections=0"),
        "--target",
        &format!("url={},binary=maybe", s.url),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("grpc-connections '0' must be 1 to 256"),
        "{}",
        stderr(&out)
    );
}

/// A server with no model of that name over gRPC: said at once from its own words, never
/// waited on (the reference endpoint playing KServe's server, which says so in `ModelReady`).
#[test]
fn an_unknown_model_is_refused_at_once_in_the_servers_words() {
    let s = Serve::one_ms(&["--only", "kserve"]);
    let started = Instant::now();
    let out = run(&["--url", &grpc(&s), "--model", "nosuch", "-n", "2"]);
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("the server has no model 'nosuch'")
            && text.contains("Request for unknown model: 'nosuch' is not found")
            && text.contains("--model"),
        "{text}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_grpc_reply_over_the_cap_or_without_a_status_is_a_bad_response() {
    let _turn = crate::common::load();
    let h = Hostile::start();
    let (out, e) = run_export(
        &h.url,
        &[
            "--engine",
            "triton",
            "--model",
            "m",
            "--output-name",
            "logits",
            "-n",
            "6",
            "--warmup",
            "0",
            "--no-accuracy",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let p = &e["phases"][0];
    assert_eq!(
        (p["ok"].as_u64(), errors(p, "BadResponse")),
        (Some(2), 4),
        "{p}"
    );
    // Two endless replies stopped at the 64 MiB cap, and what the windows let through
    // before the stream was reset; reading on would pass 2 GiB.
    let sent = h.sent();
    assert!(
        sent < 256 << 20,
        "{sent} bytes sent: the client kept reading"
    );

    // TLS asked of a server that has none: one line, at once.
    let out = run(&[
        "--url",
        &h.url.replace("grpc://", "grpcs://"),
        "--model",
        "m",
    ]);
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("unreachable") && text.contains("TLS"),
        "{text}"
    );
}
