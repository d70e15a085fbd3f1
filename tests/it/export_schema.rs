//! The shipped JSON Schema (assets/export.schema.json) against real exports written by the
//! binary, and against exports broken on purpose.

use crate::common::{Serve, run, run_export, stderr, tmp_path};
use jsonschema::Validator;
use serde_json::{Value, json};

const SCHEMA_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/export.schema.json");
const TOKENIZER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/tokenizer.json");

fn schema() -> Value {
    let text = std::fs::read_to_string(SCHEMA_PATH).expect("read assets/export.schema.json");
    serde_json::from_str(&text).expect("the schema is JSON")
}

/// Draft 2020-12 (from `$schema`), with `format` asserted so timestamps are checked too.
fn validator() -> Validator {
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema())
        .unwrap_or_else(|e| panic!("the schema does not compile: {e}"))
}

/// Every violation as "instance path: message".
fn violations(v: &Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

fn assert_valid(instance: &Value, what: &str) {
    let errors = violations(&validator(), instance);
    assert!(
        errors.is_empty(),
        "{what}: export does not match the schema:\n  {}\nexport: {}",
        errors.join("\n  "),
        serde_json::to_string_pretty(instance).unwrap()
    );
}

fn reference_endpoint() -> Serve {
    Serve::fixed(2, 2, &[])
}

#[test]
fn schema_is_a_valid_draft_2020_12_schema() {
    let s = schema();
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    if let Err(e) = jsonschema::meta::validate(&s) {
        panic!("schema fails its meta-schema at {}: {e}", e.instance_path());
    }
}

/// `config` is open (an export may carry settings a later version adds), so validation
/// cannot catch a setting written but never described: this does, for a run and a compare.
#[test]
fn the_schema_describes_every_setting_a_run_and_a_compare_record() {
    let s = schema();
    let described = |v: &Value| -> Vec<String> {
        v["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    let config = &s["$defs"]["config"];
    let (keys, target_keys) = (
        described(config),
        described(&config["properties"]["target"]),
    );
    let server = reference_endpoint();
    let (_, plain) = run_export(
        &server.url,
        &[
            "-n",
            "3",
            "--instance-type",
            "ml.g5.xlarge",
            "--tokenizer",
            TOKENIZER,
        ],
    );
    let path = tmp_path("compare.json");
    let target = format!("url={}", server.url);
    let out = run(&[
        "compare",
        "--headless",
        "-n",
        "3",
        "--target",
        &target,
        "--target",
        &format!("name=again,{target}"),
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let compare: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for e in [&plain, &compare] {
        for (written, known, what) in [
            (&e["config"], &keys, "config"),
            (&e["config"]["target"], &target_keys, "config.target"),
        ] {
            for k in written.as_object().unwrap().keys() {
                assert!(
                    known.contains(k),
                    "{what}.{k} is written but not in the schema"
                );
            }
        }
    }
}

#[test]
fn batch_sweep_export_validates_and_keeps_the_contract() {
    let server = reference_endpoint();
    let (_, export) = run_export(
        &server.url,
        &[
            "--sweep-batch",
            "--batch-sizes",
            "1",
            "4",
            "-n",
            "20",
            "--warmup",
            "2",
            "--instance-type",
            "ml.g5.xlarge",
            "--seed",
            "3",
        ],
    );
    assert_valid(&export, "batch sweep");

    let phases = export["phases"].as_array().expect("phases is an array");
    assert_eq!(phases.len(), 2, "one phase per batch size");
    assert_eq!(phases[0]["batch_size"], 1);
    assert_eq!(phases[1]["batch_size"], 4);
    for p in phases {
        assert_eq!(p["kind"], "batch");
        assert_eq!(p["n"], 20);
        assert!(p["cost_per_1m_usd"].is_f64(), "priced run: {p}");
        // Every request of the phase, its warmup's too, shared the process's CPU time.
        let cpu = &p["client_cpu_ms_per_request"];
        assert_eq!(cpu["requests"], 22, "{cpu}");
        assert!(
            cpu["user"].as_f64().unwrap() + cpu["system"].as_f64().unwrap() > 0.0,
            "{cpu}"
        );
    }
    assert!(
        phases[1]["batch_efficiency"].is_f64(),
        "batch 4 has an efficiency against batch 1: {}",
        phases[1]
    );

    let acc = &export["accuracy"];
    assert_eq!(acc["total"], 4, "{acc}");
    assert_eq!(acc["passed"], 4, "{acc}");
    assert_eq!(acc["samples"].as_array().map(Vec::len), Some(4));

    let timeline = export["timeline"].as_array().expect("timeline is an array");
    assert!(
        timeline.iter().any(|e| e.get("event").is_some()),
        "the timeline logs at least one event: {timeline:?}"
    );

    assert_eq!(export["config"]["seed"], 3);
    assert_eq!(export["config"]["instance_type"], "ml.g5.xlarge");
    assert_eq!(export["stopped_early"], false);
    assert_eq!(export["error"], Value::Null);
}

#[test]
fn open_loop_export_validates() {
    let server = reference_endpoint();
    let (_, export) = run_export(
        &server.url,
        &[
            "--request-rate",
            "200",
            "--burstiness",
            "inf",
            "-n",
            "30",
            "--concurrency",
            "2",
        ],
    );
    assert_valid(&export, "open loop");
    let p = &export["phases"][0];
    assert_eq!(p["request_rate"], 200.0);
    assert_eq!(p["burstiness"], Value::Null, "inf burstiness is null");
    assert_eq!(p["closed_loop"], false);
    assert_eq!(export["config"]["burstiness"], Value::Null);
}

/// The short runs above end inside their first second; this one lasts about 1.6 s so the
/// timeline holds per-second points as well as events.
#[test]
fn timeline_points_validate() {
    let server = reference_endpoint();
    let (_, export) = run_export(
        &server.url,
        &[
            "--request-rate",
            "25",
            "--burstiness",
            "inf",
            "-n",
            "40",
            "--warmup",
            "0",
            "--no-accuracy",
        ],
    );
    assert_valid(&export, "run with per-second points");
    let timeline = export["timeline"].as_array().expect("timeline is an array");
    let points: Vec<&Value> = timeline
        .iter()
        .filter(|e| e.get("req_per_s").is_some())
        .collect();
    assert!(
        !points.is_empty(),
        "a 1.6 s run has per-second points: {timeline:?}"
    );
    assert!(points.iter().all(|p| p["p50_ms"].is_f64()), "{points:?}");
}

#[test]
fn export_without_accuracy_validates() {
    let server = reference_endpoint();
    let (_, export) = run_export(&server.url, &["--no-accuracy", "-n", "10"]);
    assert_valid(&export, "--no-accuracy");
    assert_eq!(export["accuracy"], Value::Null);
    assert_eq!(export["config"]["accuracy_check"], false);
    assert_eq!(
        export["phases"][0]["request_rate"],
        Value::Null,
        "the default rate is inf: null"
    );
}

#[test]
fn export_of_an_unreachable_endpoint_validates_and_carries_the_error() {
    let path = tmp_path("unreachable.json");
    let out = run(&[
        "--headless",
        "--url",
        "http://127.0.0.1:9",
        "--export",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(&out));
    let text = std::fs::read_to_string(&path).expect("the export is written even on failure");
    let export: Value = serde_json::from_str(&text).expect("export is JSON");
    assert_valid(&export, "unreachable endpoint");
    assert!(
        export["error"].as_str().is_some_and(|e| !e.is_empty()),
        "error is set: {}",
        export["error"]
    );
    assert_eq!(export["phases"], json!([]));
    assert_eq!(export["stopped_early"], true);
}

#[test]
fn fail_on_outcomes_and_short_phases_validate() {
    let server = reference_endpoint();
    let path = tmp_path("fail-on.json");
    let p = path.to_str().unwrap();
    let out = run(&[
        "--headless",
        "--url",
        &server.url,
        "--no-accuracy",
        "-n",
        "2",
        "--concurrency",
        "4",
        "--fail-on",
        "p99>1us",
        "--fail-on",
        "errors>0",
        "--slo",
        "p99=1s",
        "--fail-on",
        "slo",
        "-o",
        p,
    ]);
    assert_eq!(out.status.code(), Some(3), "stderr: {}", stderr(&out));
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_valid(&export, "--fail-on");
    let breached: Vec<&Value> = export["fail_on"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["breached"])
        .collect();
    assert_eq!(breached, [&json!(true), &json!(false), &json!(false)]);
    assert_eq!(
        export["config"]["fail_on"],
        json!(["p99>0.001ms", "errors>0%", "slo"])
    );
    assert_eq!(export["phases"][0]["rate_not_meaningful"], true);
}

#[test]
fn schema_rejects_broken_exports() {
    type Mutation = fn(&mut Value);
    let server = reference_endpoint();
    let (_, good) = run_export(&server.url, &["--no-accuracy", "-n", "5", "--warmup", "0"]);
    let v = validator();
    assert!(
        violations(&v, &good).is_empty(),
        "the base export is valid: {:?}",
        violations(&v, &good)
    );

    // Each mutation, the path of the violation it must produce.
    let cases: [(&str, Mutation, &str); 11] = [
        (
            "p99 missing from a latency summary",
            |e| {
                e["phases"][0]["latency_ms"]
                    .as_object_mut()
                    .unwrap()
                    .remove("p99");
            },
            "/phases/0/latency_ms",
        ),
        (
            "schema_version 2",
            |e| e["schema_version"] = json!(2),
            "/schema_version",
        ),
        (
            "negative latency",
            |e| e["phases"][0]["service_ms"]["p50"] = json!(-1.0),
            "/phases/0/service_ms/p50",
        ),
        (
            "unknown phase kind",
            |e| e["phases"][0]["kind"] = json!("warmup"),
            "/phases/0/kind",
        ),
        (
            "infinite rate spelled as a string instead of null",
            |e| e["phases"][0]["request_rate"] = json!("inf"),
            "/phases/0/request_rate",
        ),
        (
            "histogram that is not base64",
            |e| e["phases"][0]["histogram_hdr_b64"] = json!("not base64!"),
            "/phases/0/histogram_hdr_b64",
        ),
        (
            "credentials in the target URL",
            |e| e["config"]["target"]["url"] = json!("http://user:secret@127.0.0.1:8080"),
            "/config/target/url",
        ),
        (
            "a timeline entry that is both a point and an event",
            |e| e["timeline"] = json!([{ "t_s": 1.0, "event": "x", "errors": 0 }]),
            "/timeline/0",
        ),
        (
            "a --fail-on outcome without its verdict",
            |e| {
                e["fail_on"] =
                    json!([{ "threshold": "p99>5ms", "measured": 1.0, "phase": 0, "summary": "" }]);
            },
            "/fail_on/0",
        ),
        (
            "a --fail-on threshold the tool cannot read",
            |e| {
                e["fail_on"] = json!([{ "threshold": "p99<5ms", "breached": false, "measured": 1.0, "phase": 0, "summary": "" }]);
            },
            "/fail_on/0/threshold",
        ),
        (
            "started_at that is not an RFC 3339 date-time",
            |e| e["started_at"] = json!("yesterday"),
            "/started_at",
        ),
    ];
    for (what, mutate, path) in cases {
        let mut bad = good.clone();
        mutate(&mut bad);
        let errors = violations(&v, &bad);
        assert!(
            errors.iter().any(|e| e.starts_with(&format!("{path}: "))),
            "{what}: expected a violation at {path}, got {errors:?}"
        );
    }
}

/// The run's config is a type: every field it has, each filled in (a field added later
/// must be filled in here to compile), is described by the schema and valid under it.
#[test]
fn every_field_of_a_runs_config_is_described_and_valid() {
    use encbench_core::export::{RunConfig, TargetConfig};
    use encbench_core::shard::Shard;
    let some = |s: &str| Some(s.to_string());
    let config = RunConfig {
        target: TargetConfig {
            url: some("http://127.0.0.1:8080"),
            engine: "tei".into(),
            api: some("rerank"),
            path: some("/rerank"),
            top_n: Some(10),
            return_documents: Some(false),
            model: some("BAAI/bge-reranker-base"),
            detected: Some(encbench_core::export::Detected {
                engine: "tei".into(),
                server: "TEI 1.9.3".into(),
                model: some("BAAI/bge-reranker-base"),
                kind: some("reranker"),
                max_client_batch: Some(32),
                tried: vec!["GET /info 200".into()],
            }),
            demo: false,
            endpoint: some("nli-ep"),
            region: some("us-east-1"),
            profile: some("ops"),
            endpoint_url: some("http://127.0.0.1:5000"),
            target_container: some("c1"),
            inference_component: some("ic-1"),
            target_model: some("m.tar.gz"),
            target_variant: some("AllTraffic"),
            headers: vec!["X-Api-Key".into()],
            wire: some("grpc"),
            grpc_connections: Some(2),
        },
        n: 100,
        warmup: 3,
        duration_s: Some(60.0),
        task: encbench_core::input::Task::Rerank,
        batch_size: 8,
        sweep_batch: true,
        batch_sizes: vec![1, 8],
        concurrency: 4,
        concurrency_default: true,
        sweep_concurrency: false,
        concurrency_levels: vec![1, 4],
        request_rate: Some(50.0),
        burstiness: Some(0.5),
        closed_loop: false,
        pad_to_max: true,
        max_len: 512,
        pretokenize: true,
        natural_tokens_per_input: 17.3,
        input_tokens: Some(encbench_core::lengths::LengthMix {
            mean: 128.0,
            stddev: 32.0,
            shape: encbench_core::lengths::LengthShape::Lognormal,
        }),
        texts: some("texts.jsonl"),
        tokenizer: some("tokenizer.json"),
        timeout_s: 30.0,
        client_threads: 2,
        seed: 7,
        accuracy_samples: some("samples.jsonl"),
        rerank_samples: some("rerank.jsonl"),
        accuracy_check: true,
        labels: vec![
            "entailment".into(),
            "neutral".into(),
            "contradiction".into(),
        ],
        instance_type: some("ml.g5.xlarge"),
        price_per_hour_usd: Some(1.408),
        knee: 0.8,
        slo: vec!["p99=100ms".into()],
        find_capacity: true,
        capacity_precision: 0.05,
        min_probe_requests: 200,
        stability: 0.1,
        max_probe_secs: 30.0,
        until_stable: true,
        repeat: 3,
        metrics_url: some("http://127.0.0.1:8002/metrics"),
        metrics: vec!["nv_inference_count".into()],
        cloudwatch_wait_s: Some(180.0),
        fail_on: vec!["p99>200ms".into()],
        shard: Some(Shard { index: 1, count: 4 }),
        start_at: some("2026-12-03T12:00:00Z"),
        ramp: Some(encbench_core::ramp::Ramp {
            from: 20.0,
            to: 400.0,
            shape: encbench_core::ramp::RampShape::Exp,
        }),
        slice_s: Some(2.0),
        replay: Some(encbench_core::export::ReplayConfig {
            file: "capture.jsonl".into(),
            format: "data-capture".into(),
            speed: 2.0,
            scale: 5,
            records: 300,
            requests: 1500,
            recorded_s: 20.0,
            duration_s: 10.0,
            spread_within_seconds: true,
            batch_sizes: encbench_core::export::ReplayBatches {
                min: 1,
                max: 4,
                mean: 1.75,
            },
        }),
    };
    let config = serde_json::to_value(&config).unwrap();
    let s = schema();
    let defs = &s["$defs"]["config"];
    for (written, known, what) in [
        (&config, &defs["properties"], "config"),
        (
            &config["target"],
            &defs["properties"]["target"]["properties"],
            "config.target",
        ),
    ] {
        for (k, v) in written.as_object().unwrap() {
            assert!(known.get(k).is_some(), "{what}.{k} is not in the schema");
            assert!(!v.is_null(), "{what}.{k} is filled in");
        }
    }
    let server = reference_endpoint();
    let (_, mut export) = run_export(&server.url, &["--no-accuracy", "-n", "2", "--warmup", "0"]);
    export["config"] = config;
    assert_valid(&export, "a run's config with every field filled in");
}
