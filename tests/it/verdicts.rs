//! Replies that hold fewer verdicts than inputs (an empty list, rows without scores) are no
//! answer: a `BadResponse` on the load path, a failed sample in the accuracy check, and never
//! an index panic, in a plain run as in `compare`. Hostile servers on 127.0.0.1.

use crate::common::hostile::{Hostile, Reply};
use crate::common::{assert_phase_accounted, run_env, schema_violations, stderr, tmp_path};
use serde_json::Value;

/// A server whose every inference answers `body`; health checks, readiness and model
/// configs answer `{}` (a Triton model without a config gets the default tensor names).
fn answering(body: &'static str) -> Hostile {
    Hostile::start(move |r| {
        let inference =
            r.path == "/invocations" || r.path == "/classify" || r.path.ends_with("/infer");
        Reply::json(200, if inference { body } else { "{}" })
    })
}

/// A headless run (or `compare` when `args` start with it) and its export; the run must end
/// normally whatever the endpoint answered.
fn run_whole(args: &[&str]) -> Value {
    let path = tmp_path("verdicts.json");
    let (sub, rest) = match args.first() {
        Some(&"compare") => (vec!["compare"], &args[1..]),
        _ => (vec![], args),
    };
    let mut all = sub;
    all.extend(["--headless", "--export", path.to_str().unwrap()]);
    all.extend_from_slice(rest);
    let out = run_env(&all, &[]);
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Exit 4 exactly when no measured request of any phase succeeded.
    let none_ok = e["phases"].as_array().unwrap().iter().all(|p| p["ok"] == 0);
    let code = if none_ok { 4 } else { 0 };
    assert_eq!(out.status.code(), Some(code), "{all:?}: {err}");
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );
    e
}

fn assert_all_bad(p: &Value, n: u64) {
    assert_phase_accounted(p);
    assert_eq!(p["ok"], 0, "{p}");
    assert_eq!(p["errors"]["BadResponse"], n, "{p}");
}

fn assert_no_verdicts(accuracy: &Value, why: &str) {
    assert_eq!(accuracy["passed"], 0, "{accuracy}");
    let samples = accuracy["samples"].as_array().unwrap();
    assert!(!samples.is_empty());
    for s in samples {
        assert!(s["predicted"].is_null(), "{s}");
        assert!(s["error"].as_str().unwrap().contains(why), "{s}");
    }
}

#[test]
fn an_empty_verdict_list_is_a_bad_response_in_the_load_and_a_failed_sample() {
    let s = answering("[]");
    let e = run_whole(&["--url", &s.url, "-n", "10", "--warmup", "0"]);
    assert_all_bad(&e["phases"][0], 10);
    assert_no_verdicts(&e["accuracy"], "no label");
    assert!(
        e["accuracy"]["before"].is_object(),
        "checked before and after"
    );
}

/// A batch of 4 answered with one verdict is no answer for the other three.
#[test]
fn fewer_verdicts_than_inputs_is_a_bad_response() {
    let s = answering(r#"[{"label": "entailment", "score": 0.9}]"#);
    let e = run_whole(&[
        "--url",
        &s.url,
        "-n",
        "6",
        "--warmup",
        "0",
        "--batch-size",
        "4",
        "--no-accuracy",
    ]);
    assert_all_bad(&e["phases"][0], 6);
}

/// vLLM's classify answer with an empty `probs` row (or an empty `data`) has no verdict:
/// class 0 would otherwise pass whenever it was the expected one.
#[test]
fn vllm_rows_without_scores_are_no_verdict() {
    for body in [
        r#"{"data": [{"index": 0, "probs": []}]}"#,
        r#"{"data": []}"#,
    ] {
        let s = answering(body);
        let e = run_whole(&[
            "--url", &s.url, "--engine", "vllm", "--model", "nli", "-n", "5", "--warmup", "0",
        ]);
        assert_all_bad(&e["phases"][0], 5);
        let why = if body.contains("probs") {
            "no scores"
        } else {
            "no verdict"
        };
        assert_no_verdicts(&e["accuracy"], why);
    }
}

/// An HF container that answers every input of a batch.
fn honest() -> Hostile {
    Hostile::start(|r| {
        if r.path == "/ping" {
            return Reply::json(200, "{}");
        }
        let req: Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let n = req["inputs"].as_array().map_or(1, Vec::len);
        let one = serde_json::json!({ "label": "entailment", "score": 0.9 });
        Reply::json(200, &Value::Array(vec![one; n]).to_string())
    })
}

/// Triton logits of shape [1, 0]: a row without scores, not class 0.
#[test]
fn triton_logits_without_columns_are_no_verdict() {
    let s = answering(
        r#"{"outputs": [{"name": "logits", "datatype": "FP32", "shape": [1, 0], "data": []}]}"#,
    );
    let e = run_whole(&[
        "--url", &s.url, "--engine", "triton", "--model", "nli", "-n", "5", "--warmup", "0",
    ]);
    assert_all_bad(&e["phases"][0], 5);
    assert_no_verdicts(&e["accuracy"], "no scores");
}

#[test]
fn compare_counts_an_empty_verdict_list_and_keeps_its_export() {
    let (good, empty) = (honest(), answering("[]"));
    let (a, b) = (
        format!("name=good,url={}", good.url),
        format!("name=empty,url={}", empty.url),
    );
    let e = run_whole(&[
        "compare", "--target", &a, "--target", &b, "-n", "5", "--warmup", "0",
    ]);
    let phases = e["phases"].as_array().unwrap();
    let of = |t: &'static str| phases.iter().filter(move |p| p["target"] == t);
    assert!(of("empty").count() > 0);
    for p in of("empty") {
        assert_all_bad(p, 5);
    }
    for p in of("good") {
        assert_phase_accounted(p);
        assert_eq!(p["errors"].as_object().unwrap().len(), 0, "{p}");
    }
}
