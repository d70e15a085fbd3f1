//! Accuracy verdicts against the reference endpoint, and bad input: one line, exit code 2.

use crate::common::{Serve, f, run, run_export, stderr, stdout, tmp_path};

#[test]
fn accuracy_four_of_four_before_and_after_the_load() {
    let s = Serve::one_ms(&[]);
    let (out, e) = run_export(&s.url, &["-n", "10"]);
    assert_eq!(e["accuracy"]["passed"], 4);
    assert_eq!(e["accuracy"]["total"], 4);
    assert_eq!(e["accuracy"]["before"]["passed"], 4);
    for v in e["accuracy"]["samples"].as_array().unwrap() {
        assert_eq!(v["ok"], true);
        assert_eq!(v["expected"], v["predicted"]);
    }
    let text = stdout(&out);
    assert!(
        text.contains("before load 4/4") && text.contains("after load 4/4"),
        "{text}"
    );
}

#[test]
fn flipped_labels_are_each_reported_as_a_mismatch() {
    let s = Serve::one_ms(&["--flip-labels"]);
    let (out, e) = run_export(&s.url, &["-n", "5"]);
    assert_eq!(e["accuracy"]["passed"], 0);
    let samples = e["accuracy"]["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 4);
    for v in samples {
        assert_eq!(v["ok"], false);
        let (exp, pred) = (
            v["expected"].as_str().unwrap(),
            v["predicted"].as_str().unwrap(),
        );
        assert_ne!(exp, pred);
        assert!(["entailment", "neutral", "contradiction"].contains(&pred));
    }
    let text = stdout(&out);
    assert_eq!(text.matches("MISMATCH").count(), 4, "{text}");
    assert!(text.contains("check the label mapping"));
}

#[test]
fn label_ids_map_through_labels_flag() {
    let s = Serve::one_ms(&["--label-ids"]);
    let (_, e) = run_export(&s.url, &["-n", "3"]);
    assert_eq!(
        e["accuracy"]["passed"], 4,
        "LABEL_n maps to entailment,neutral,contradiction by default"
    );
    // A wrong order makes the check fail, which is the point of checking.
    let (_, e) = run_export(
        &s.url,
        &["-n", "3", "--labels", "contradiction,neutral,entailment"],
    );
    assert!(e["accuracy"]["passed"].as_u64().unwrap() < 4);
}

#[test]
fn model_errors_and_throttles_are_counted_by_kind_and_the_run_goes_on() {
    let s = Serve::fixed(
        5,
        8,
        &[
            "--error-rate",
            "0.3",
            "--seed",
            "5",
            "--throttle-above",
            "2",
        ],
    );
    // Open loop: a closed loop against a throttling endpoint turns into a storm of instant
    // throttles (correctly counted, but then nearly nothing succeeds).
    let (out, e) = run_export(
        &s.url,
        &[
            "-n",
            "200",
            "--request-rate",
            "300",
            "--concurrency",
            "6",
            "--no-accuracy",
            "--seed",
            "1",
        ],
    );
    let p = &e["phases"][0];
    let errors = p["errors"].as_object().unwrap();
    let model = errors
        .get("ModelError(500)")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    let throttled = errors
        .get("ThrottlingException")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    assert!(model > 0 && throttled > 0, "errors {errors:?}");
    assert_eq!(
        p["ok"].as_u64().unwrap() + model + throttled,
        p["n"].as_u64().unwrap()
    );
    assert_eq!(p["n"], 200);
    assert!(f(&p["latency_ms"]["p50"]) > 0.0);
    assert!(stdout(&out).contains("ThrottlingException"));
}

/// Each case: arguments, and the flag the one-line error must name.
#[test]
fn bad_input_gets_one_line_naming_the_flag_and_exit_code_2() {
    let missing = tmp_path("missing.json");
    let missing = missing.to_str().unwrap();
    let bad_tokenizer = tmp_path("tokenizer.json");
    std::fs::write(&bad_tokenizer, "{ not a tokenizer").unwrap();
    let bad_tokenizer = bad_tokenizer.to_str().unwrap();
    // A real tokenizer whose model takes 128 tokens, as its tokenizer_config.json says.
    let short_model = tmp_path("short-model");
    std::fs::create_dir_all(&short_model).unwrap();
    std::fs::write(
        short_model.join("tokenizer.json"),
        encbench_core::assets::TOKENIZER_JSON,
    )
    .unwrap();
    std::fs::write(
        short_model.join("tokenizer_config.json"),
        r#"{"model_max_length": 128}"#,
    )
    .unwrap();
    let short_tokenizer = short_model.join("tokenizer.json");
    let short_tokenizer = short_tokenizer.to_str().unwrap();
    let bad_samples = tmp_path("samples.jsonl");
    std::fs::write(&bad_samples, "{\"premise\": \"only\"}\n").unwrap();
    let bad_samples = bad_samples.to_str().unwrap();
    let bad_texts = tmp_path("texts.jsonl");
    std::fs::write(&bad_texts, "{\"x\": 1}\n").unwrap();
    let bad_texts = bad_texts.to_str().unwrap();
    // An object cut short on line 2: an error naming the line, never a plain text.
    let cut_texts = tmp_path("cut.jsonl");
    std::fs::write(&cut_texts, "a text\n{\"premise\": \"a\", \"hypothesis\":\n").unwrap();
    let cut_texts = cut_texts.to_str().unwrap();
    let cut_line = format!("{cut_texts} line 2: starts with {{ but is not JSON");
    let no_dir = tmp_path("no-such-dir");
    let unwritable = no_dir.join("out.json");
    let unwritable = unwritable.to_str().unwrap();
    let a_dir = tmp_path("a-dir");
    std::fs::create_dir_all(&a_dir).unwrap();
    let a_dir = a_dir.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--burstiness", "NaN"], "--burstiness"),
        (vec!["--burstiness=-inf"], "--burstiness"),
        (
            vec!["--sweep-batch", "--batch-sizes", "8", "0"],
            "--batch-sizes",
        ),
        (vec!["--tokenizer", bad_tokenizer], bad_tokenizer),
        (vec!["--accuracy-samples", missing], "--accuracy-samples"),
        (vec!["--accuracy-samples", bad_samples], bad_samples),
        (vec!["--texts", bad_texts], bad_texts),
        (vec!["--texts", cut_texts], &cut_line),
        (vec!["--export", unwritable], "--export"),
        (vec!["-o", a_dir], "--export"),
        (vec!["--max-len", "1024"], "--max-len"),
        (
            vec!["--tokenizer", short_tokenizer, "--max-len", "256"],
            "tokenizer_config.json",
        ),
        (vec!["--warmup", "-1"], "--warmup"),
        (vec!["-n", "0"], "--requests"),
        (vec!["--request-rate", "0"], "--request-rate"),
        (vec!["--request-rate", "-5"], "--request-rate"),
        (vec!["--request-rate", "fast"], "--request-rate"),
        (vec!["--burstiness", "0"], "--burstiness"),
        (vec!["--burstiness", "-1"], "--burstiness"),
        (vec!["--batch-size", "0"], "--batch-size"),
        (vec!["--concurrency", "0"], "--concurrency"),
        (vec!["--client-threads", "0"], "--client-threads"),
        (vec!["--timeout", "0"], "--timeout"),
        (vec!["--tokenizer", missing], "--tokenizer"),
        (vec!["--texts", missing], "--texts"),
        (vec!["--instance-type", "ml.nope.large"], "--instance-type"),
        (vec!["--url", "http://127.0.0.1:9"], "--url"),
        (vec!["serve", "--error-rate", "2"], "--error-rate"),
        (
            vec!["serve", "--v2-ids-datatype", "FP32"],
            "--v2-ids-datatype",
        ),
        (vec!["serve", "--v2-output-name", " "], "--v2-output-name"),
    ];
    for (args, flag) in cases {
        let mut all = args.clone();
        if all[0] != "serve" {
            all.push("--headless");
        }
        // A run names a target; the cases before the last fail before they reach it.
        if all[0] != "serve" && !all.contains(&"--url") {
            all.extend(["--url", "http://127.0.0.1:9"]);
        }
        let out = run(&all);
        let err = stderr(&out);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: exit {:?}, stderr {err}",
            out.status.code()
        );
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: not one line: {err}"
        );
        assert!(err.contains(flag), "{args:?}: {err} does not name {flag}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn unreadable_tokenizer_file_is_named() {
    let bad = tmp_path("tokenizer.json");
    std::fs::write(&bad, "{ not a tokenizer").unwrap();
    let bad = bad.to_str().unwrap();
    let out = run(&[
        "--headless",
        "--url",
        "http://127.0.0.1:9",
        "--tokenizer",
        bad,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(bad));
}

/// A samples file of one kind checks an endpoint of that kind; against the other kind the
/// check says what it needs instead of failing every sample.
#[test]
fn samples_of_either_kind_and_a_note_when_the_endpoint_needs_the_other() {
    let s = Serve::one_ms(&[]);
    let retrieval = tmp_path("retrieval.jsonl");
    std::fs::write(
        &retrieval,
        concat!(
            r#"{"query": "Which planet is closest to the Sun?", "candidates": ["#,
            r#""Mercury orbits nearest to the Sun, once every 88 days.", "#,
            r#""The museum opens at nine on weekdays."], "#,
            r#""expected": "Mercury orbits nearest to the Sun, once every 88 days."}"#,
            "\n"
        ),
    )
    .unwrap();
    let file = retrieval.to_str().unwrap();
    // The hf reference endpoint classifies: it needs NLI pairs.
    let (_, e) = run_export(&s.url, &["-n", "2", "--accuracy-samples", file]);
    let a = &e["accuracy"];
    assert_eq!(a["total"], 0, "{a}");
    assert_eq!(a["output"], serde_json::json!({"kind": "labels"}));
    assert!(
        a["note"].as_str().unwrap().contains("answers labels"),
        "{a}"
    );
    // Its vLLM embeddings know the item: 1/1.
    let (_, e) = run_export(
        &s.url,
        &[
            "-n",
            "2",
            "--engine",
            "vllm",
            "--model",
            "m",
            "--vllm-api",
            "embeddings",
            "--accuracy-samples",
            file,
        ],
    );
    assert_eq!(
        (
            e["accuracy"]["passed"].as_u64(),
            e["accuracy"]["total"].as_u64()
        ),
        (Some(1), Some(1)),
        "{}",
        e["accuracy"]
    );
    // An expected answer that is not among the candidates is bad input, named.
    let bad = tmp_path("bad-retrieval.jsonl");
    std::fs::write(
        &bad,
        r#"{"query": "q", "candidates": ["a", "b"], "expected": "c"}"#,
    )
    .unwrap();
    let out = run(&[
        "--headless",
        "--url",
        &s.url,
        "--accuracy-samples",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("line 1") && stderr(&out).contains("candidates"),
        "{}",
        stderr(&out)
    );
}
