//! The triton (KServe v2) and vllm engines against the reference endpoint, which reports what
//! it received: tensor names, dtypes and shapes; token counts; its own statistics.

use crate::common;

use crate::common::{Args, Serve, args, counters, f, run_export};
use serde_json::Value;

fn triton_run(s: &Serve, extra: &[&str]) -> Value {
    triton_run_n(s, 12, extra)
}

fn triton_run_n(s: &Serve, n: u64, extra: &[&str]) -> Value {
    let a = args()
        .engine("triton", "encoder")
        .arg("--pad-to-max")
        .opt("--batch-size", 8)
        .n(n)
        .opt("--warmup", 2)
        .and_all(extra);
    run_export(&s.url, &a.strs()).1
}

fn vllm(model: &str) -> Args {
    args().engine("vllm", model)
}

#[test]
fn triton_json_tensors_arrive_with_names_dtype_and_shape() {
    let s = Serve::one_ms(&[]);
    let e = triton_run(&s, &[]);
    let seen = counters(&s)["last_tensors"].clone();
    assert_eq!(seen["binary"], false);
    let tensors = seen["tensors"].as_array().unwrap();
    let names: Vec<&str> = tensors
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // token_type_ids is sent because the model's /config lists it.
    assert_eq!(names, ["input_ids", "attention_mask", "token_type_ids"]);
    assert!(tensors.iter().all(|t| t["datatype"] == "INT64"));
    // The last request was the accuracy check (b=1); the load used [8, 512], as the stats show.
    assert!(
        tensors
            .iter()
            .all(|t| t["shape"] == serde_json::json!([1, 512]))
    );
    let p = &e["phases"][0];
    assert_eq!(p["ok"], 12);
    assert!(
        f(&p["tokenize_ms"]["p50"]) > 0.0,
        "tokenization is reported on its own"
    );
    assert_eq!(common::schema_violations(&e), Vec::<String>::new());
    assert_eq!(
        e["accuracy"]["passed"], 4,
        "verdicts from logits via LABEL_n and --labels"
    );
}

#[test]
fn pretokenize_sends_the_same_tensors_with_no_tokenization_in_the_requests() {
    let s = Serve::one_ms(&[]);
    let (ran, e) = run_export(
        &s.url,
        &args()
            .engine("triton", "encoder")
            .arg("--pad-to-max")
            .opt("--batch-size", 8)
            .n(12)
            .opt("--warmup", 2)
            .arg("--pretokenize")
            .strs(),
    );
    let p = &e["phases"][0];
    assert_eq!(p["ok"], 12, "{p}");
    assert!(
        p.get("tokenize_ms").is_none(),
        "tokenized before the phase: {p}"
    );
    assert_eq!(e["config"]["pretokenize"], true);
    // The same requests as without it: 8 × 512 token ids, the model's verdicts.
    assert_eq!(p["server"]["inference_count"], 14 * 8, "{p}");
    let tensors = counters(&s)["last_tensors"]["tensors"].clone();
    assert_eq!(tensors[0]["name"], "input_ids");
    assert_eq!(tensors[0]["datatype"], "INT64");
    assert_eq!(e["accuracy"]["passed"], 4);
    assert!(
        common::stdout(&ran).contains("before each phase (--pretokenize)"),
        "the header says so: {}",
        common::stdout(&ran)
    );
    assert_eq!(common::schema_violations(&e), Vec::<String>::new());
}

#[test]
fn triton_stats_diff_and_batch_factor_match_what_the_endpoint_counted() {
    let s = Serve::one_ms(&[]);
    let e = triton_run(&s, &["--no-accuracy"]);
    let server = &e["phases"][0]["server"];
    // 2 warmup + 12 measured requests of 8 rows each, one execution per request.
    assert_eq!(server["execution_count"], 14, "{server}");
    assert_eq!(server["inference_count"], 14 * 8);
    assert_eq!(f(&server["batch_factor"]), 8.0);
    assert_eq!(common::schema_violations(&e), Vec::<String>::new());
    assert!(f(&server["compute_infer_ms"]) >= 1.0);
}

#[test]
fn triton_binary_mode_round_trips() {
    let s = Serve::one_ms(&[]);
    let e = triton_run(&s, &["--binary"]);
    assert_eq!(counters(&s)["last_tensors"]["binary"], true);
    assert_eq!(e["phases"][0]["ok"], 12);
    assert_eq!(e["accuracy"]["passed"], 4);
}

#[test]
fn triton_accuracy_mismatch_and_label_order() {
    let s = Serve::one_ms(&["--flip-labels"]);
    let e = triton_run_n(&s, 2, &[]);
    assert_eq!(e["accuracy"]["passed"], 0);
    let s = Serve::one_ms(&[]);
    let e = triton_run_n(&s, 2, &["--labels", "contradiction,neutral,entailment"]);
    assert!(
        e["accuracy"]["passed"].as_u64().unwrap() < 4,
        "a wrong id2label order shows"
    );
}

#[test]
fn vllm_classify_round_trips_with_exact_length_inputs() {
    let s = Serve::one_ms(&[]);
    let load = vllm("nli").arg("--pad-to-max").opt("--batch-size", 4).n(8);
    let (_, e) = run_export(&s.url, &load.strs());
    assert_eq!(e["phases"][0]["ok"], 8);
    assert_eq!(e["accuracy"]["passed"], 4);
    assert!(f(&e["phases"][0]["tokenize_ms"]["p50"]) > 0.0);
    // vLLM cannot pad: each input was built to exactly --max-len tokens.
    let counts = counters(&s)["last_vllm"]["token_counts"].clone();
    assert_eq!(counts, serde_json::json!([512]));
    let (_, e) = run_export(&s.url, &vllm("nli").n(4).no_accuracy().strs());
    assert_eq!(e["phases"][0]["ok"], 4);
    let natural = counters(&s)["last_vllm"]["token_counts"][0]
        .as_u64()
        .unwrap();
    assert!(
        (48..=64).contains(&natural),
        "a pair at its natural length: {natural}"
    );
}

#[test]
fn vllm_embeddings_api() {
    let s = Serve::one_ms(&[]);
    let load = vllm("minilm")
        .opt("--vllm-api", "embeddings")
        .n(6)
        .no_accuracy();
    let (_, e) = run_export(&s.url, &load.strs());
    assert_eq!(e["phases"][0]["ok"], 6);
    assert_eq!(e["config"]["target"]["engine"], "vllm");
}

/// The reference endpoint's embeddings know the shipped retrieval items: an embedder is
/// found out by its first answer and checked on them, as text and as exact-length ids; a
/// flipped one fails them, and `compare` flags it in both the verdict diff and the vector
/// agreement.
#[test]
fn vllm_embeddings_are_checked_on_the_retrieval_items() {
    let s = Serve::one_ms(&[]);
    for pad in [&[][..], &["--pad-to-max", "--max-len", "64"][..]] {
        let load = vllm("minilm")
            .opt("--vllm-api", "embeddings")
            .n(4)
            .and_all(pad);
        let (_, e) = run_export(&s.url, &load.strs());
        let a = &e["accuracy"];
        assert_eq!(
            a["output"],
            serde_json::json!({"kind": "vectors", "dim": 384}),
            "{a}"
        );
        assert_eq!(
            (a["passed"].as_u64(), a["total"].as_u64()),
            (Some(10), Some(10)),
            "{pad:?}: {a}"
        );
        assert_eq!(
            a["samples"][0]["candidates"].as_array().map(Vec::len),
            Some(3)
        );
    }

    let flipped = Serve::one_ms(&["--flip-labels"]);
    let (a, b) = (
        format!("name=good,url={},engine=vllm,model=minilm", s.url),
        format!("name=flipped,url={},engine=vllm,model=minilm", flipped.url),
    );
    let path = common::tmp_path("embed-compare.json");
    let out = common::run(&[
        "compare",
        "--headless",
        "--export",
        path.to_str().unwrap(),
        "--vllm-api",
        "embeddings",
        "-n",
        "3",
        "--batch-sizes",
        "1",
        "--no-concurrency",
        "--no-pad-to-max",
        "--target",
        &a,
        "--target",
        &b,
    ]);
    assert!(out.status.success(), "{}", out.stderr);
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(common::schema_violations(&e), Vec::<String>::new());
    let diff = e["compare"]["verdict_diff"].as_array().unwrap();
    assert_eq!(diff.len(), 1, "{diff:?}");
    assert_eq!(diff[0]["target"], "flipped");
    let agreement = &e["compare"]["vector_agreement"][0];
    assert_eq!(agreement["ok"], false, "{agreement}");
    assert!(
        out.stdout.contains("good and flipped differ"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_kserve_model_is_named_or_read_from_the_servers_list() {
    // Nothing lists a model: --model is named.
    let out = common::run(&[
        "--headless",
        "--url",
        "http://127.0.0.1:9",
        "--engine",
        "triton",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        common::stderr(&out).contains("--model: required with --engine triton"),
        "{}",
        common::stderr(&out)
    );
    // Triton's repository index lists one: it is taken, and said in the export.
    let s = Serve::one_ms(&["--only", "triton", "--served-model-name", "nli"]);
    let (_, e) = run_export(&s.url, &["--engine", "triton", "-n", "2"]);
    assert_eq!(e["config"]["target"]["model"], "nli");
    assert_eq!(e["config"]["target"]["path"], "/v2/models/nli/infer");
    assert_eq!(e["phases"][0]["ok"], 2);
}

#[test]
fn triton_text_input_sends_raw_text_as_one_bytes_tensor() {
    let s = Serve::one_ms(&[]);
    let load = args()
        .engine("triton", "ensemble")
        .opt("--text-input", "TEXT")
        .opt("--batch-size", 4)
        .n(6);
    let (_, e) = run_export(&s.url, &load.strs());
    let seen = counters(&s)["last_tensors"].clone();
    assert_eq!(seen["tensors"][0]["datatype"], "BYTES");
    assert_eq!(seen["tensors"][0]["name"], "TEXT");
    assert_eq!(
        seen["tensors"][0]["shape"],
        serde_json::json!([1, 2]),
        "pairs as [batch, 2]"
    );
    assert_eq!(e["phases"][0]["ok"], 6);
    assert!(
        e["phases"][0].get("tokenize_ms").is_none(),
        "the server tokenizes: nothing to time here"
    );
    assert_eq!(e["accuracy"]["passed"], 4);
}

/// The tensors as the server declares them on the standard metadata route
/// (`GET /v2/models/{m}`): an output that is not `logits`, INT32 ids, in JSON and binary.
#[test]
fn triton_takes_the_output_name_and_int32_ids_from_metadata() {
    let s = Serve::one_ms(&["--v2-output-name", "scores", "--v2-ids-datatype", "INT32"]);
    for binary in [false, true] {
        let extra: &[&str] = if binary { &["--binary"] } else { &[] };
        let e = triton_run_n(&s, 4, extra);
        assert_eq!(e["phases"][0]["ok"], 4, "{}", e["phases"][0]);
        assert_eq!(e["accuracy"]["passed"], 4, "{}", e["accuracy"]);
        let seen = counters(&s)["last_tensors"].clone();
        assert_eq!(seen["binary"], binary);
        let tensors = seen["tensors"].as_array().unwrap();
        assert_eq!(tensors.len(), 3, "{seen}");
        assert!(tensors.iter().all(|t| t["datatype"] == "INT32"), "{seen}");
    }
}

/// A server that declares nothing (KServe's empty metadata and no `/config`): BERT's three
/// inputs go, the output is read from the first reply. A wrong `--output-name` is still
/// the user's, and the check and the errors name the output that came back.
#[test]
fn triton_reads_an_undeclared_output_from_the_first_reply() {
    let s = Serve::one_ms(&["--v2-no-metadata", "--v2-output-name", "scores"]);
    let e = triton_run_n(&s, 4, &[]);
    assert_eq!(e["phases"][0]["ok"], 4, "{}", e["phases"][0]);
    assert_eq!(e["accuracy"]["passed"], 4, "{}", e["accuracy"]);
    let tensors = counters(&s)["last_tensors"]["tensors"].clone();
    let names: Vec<&str> = tensors
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["input_ids", "attention_mask", "token_type_ids"]);

    let path = common::tmp_path("wrong-output.json");
    let load = args()
        .arg("--headless")
        .opt("--url", &s.url)
        .engine("triton", "encoder")
        .opt("--output-name", "logits")
        .n(2)
        .opt("--warmup", 0)
        .opt("--export", path.display());
    let out = common::run(&load.strs());
    assert_eq!(out.status.code(), Some(4), "{}", out.stderr);
    let said = "no output 'logits'; the server sent: scores [1, 3] FP32";
    // The verdicts table cuts it to its column; the export keeps all of it.
    assert!(out.stdout.contains(&said[..43]), "{}", out.stdout);
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        e["accuracy"]["samples"][0]["error"].as_str(),
        Some(said),
        "{}",
        e["accuracy"]
    );
    let words = e["phases"][0]["error_bodies"]["BadResponse"]
        .as_str()
        .unwrap();
    assert!(words.contains(r#""name":"scores""#), "{words}");
}
