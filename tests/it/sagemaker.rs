//! SageMaker mode through the real AWS SDK against the reference endpoint's runtime API, with
//! SigV4 verified by the server.

use crate::common;

use crate::common::{
    Args, Ran, Serve, args, counters, f, run_env, run_export_env, stderr, stdout, tmp_path,
};
use serde_json::Value;

const KEY: &str = "AKIDENCBENCHTEST";
const SECRET: &str = "reference-endpoint-secret";

fn serve(extra: &[&str]) -> Serve {
    let mut args = vec![
        "--access-key",
        KEY,
        "--secret-key",
        SECRET,
        "--per-token-ms",
        "0",
    ];
    args.extend_from_slice(extra);
    Serve::start(&args)
}

fn creds(secret: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID", KEY.to_string()),
        ("AWS_SECRET_ACCESS_KEY", secret.to_string()),
        ("AWS_REGION", "us-east-1".to_string()),
    ]
}

fn env<'a>(c: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    c.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A headless run against endpoint `name` of the reference endpoint's runtime API.
fn headless(name: &str, s: &Serve) -> Args {
    args().arg("--headless").endpoint(name, &s.url)
}

/// A headless run against endpoint `name` of the reference endpoint's runtime API, signed
/// with the right secret, and its export.
fn sdk_run(s: &Serve, name: &str, load: &Args) -> (Ran, Value) {
    let a = args().endpoint(name, &s.url).and(load);
    let c = creds(SECRET);
    run_export_env(&a.strs(), &env(&c))
}

#[test]
fn run_through_the_sdk_with_verified_signatures() {
    let s = serve(&["--base-ms", "2", "--workers", "2"]);
    let (out, e) = sdk_run(&s, "nli-ep", &args().n(40));
    let p = &e["phases"][0];
    assert_eq!(p["ok"], 40);
    assert_eq!(
        p["variants"]["AllTraffic"], 40,
        "invoked production variant recorded"
    );
    assert_eq!(e["accuracy"]["passed"], 4);
    assert_eq!(e["config"]["target"]["endpoint"], "nli-ep");
    assert!(stdout(&out).contains("sagemaker:nli-ep"));
    let text = serde_json::to_string(&e).unwrap();
    assert!(
        !text.contains(SECRET),
        "the secret must never reach an export"
    );
    assert_eq!(common::schema_violations(&e), Vec::<String>::new());
}

#[test]
fn a_wrong_secret_ends_with_a_clear_authentication_error() {
    let s = serve(&["--base-ms", "1"]);
    let c = creds("not-the-secret");
    let out = run_env(&headless("nli-ep", &s).strs(), &env(&c));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("authentication failed") && err.contains("InvalidSignatureException"),
        "{err}"
    );
    assert!(!err.contains("not-the-secret"));
}

#[test]
fn no_credentials_at_all_is_a_clear_error() {
    let s = serve(&["--base-ms", "1"]);
    let out = run_env(
        &headless("nli-ep", &s).opt("--region", "us-east-1").strs(),
        &[],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no AWS credentials"), "{err}");
}

#[test]
fn each_routing_flag_arrives_as_its_header() {
    let s = serve(&["--base-ms", "1"]);
    let routing = args()
        .n(5)
        .no_accuracy()
        .opt("--target-container", "container-2")
        .opt("--inference-component", "ic-mdeberta")
        .opt("--target-model", "mdeberta.tar.gz")
        .opt("--target-variant", "canary");
    let (_, e) = sdk_run(&s, "multi", &routing);
    let seen = counters(&s);
    let r = &seen["last_routing"];
    assert_eq!(
        r["x-amzn-sagemaker-target-container-hostname"],
        "container-2"
    );
    assert_eq!(r["x-amzn-sagemaker-inference-component"], "ic-mdeberta");
    assert_eq!(r["x-amzn-sagemaker-target-model"], "mdeberta.tar.gz");
    assert_eq!(r["x-amzn-sagemaker-target-variant"], "canary");
    assert_eq!(e["phases"][0]["variants"]["canary"], 5);
    assert_eq!(e["config"]["target"]["inference_component"], "ic-mdeberta");
}

#[test]
fn throttles_are_counted_and_never_retried() {
    let s = serve(&["--base-ms", "5", "--workers", "8", "--throttle-above", "1"]);
    let load = args()
        .n(150)
        .opt("--warmup", 3)
        .opt("--concurrency", 6)
        .opt("--request-rate", 400)
        .opt("--seed", 3)
        .no_accuracy();
    let (_, e) = sdk_run(&s, "busy", &load);
    let p = &e["phases"][0];
    let throttled = p["errors"]["ThrottlingException"].as_u64().unwrap_or(0);
    assert!(throttled > 0, "{}", p["errors"]);
    assert_eq!(p["n"], 150);
    assert_eq!(p["ok"].as_u64().unwrap() + throttled, 150);
    let seen = counters(&s);
    // One pre-flight request, the warmup and the measured ones: nothing was sent twice.
    assert_eq!(seen["invocations"], 1 + 3 + 150, "server saw {seen}");
    assert!(seen["throttled"].as_u64().unwrap() >= throttled);
}

#[test]
fn model_error_424_is_parsed_with_its_original_status() {
    let s = serve(&["--base-ms", "1", "--error-rate", "1"]);
    let (out, e) = sdk_run(&s, "broken", &args().n(10).no_accuracy());
    let p = &e["phases"][0];
    assert_eq!(p["errors"]["ModelError(500)"], 10, "{}", p["errors"]);
    assert_eq!(p["ok"], 0);
    assert!(stdout(&out).contains("ModelError(500) 10"));
}

#[test]
fn cold_start_reports_attempts_and_time_to_first_success() {
    let _t = common::paired();
    let s = serve(&[
        "--base-ms",
        "3",
        "--workers",
        "1",
        "--model-load-ms",
        "1500",
    ]);
    let c = creds(SECRET);
    let path = tmp_path("cold.json");
    let out = run_env(
        &[
            "cold-start",
            "--endpoint",
            "scale-to-zero",
            "--endpoint-url",
            &s.url,
            "--retry-interval",
            "0.2",
            "--give-up",
            "20",
            "-n",
            "10",
            "--export",
            path.to_str().unwrap(),
        ],
        &env(&c),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("time to first success") && text.contains("ModelNotReadyException"),
        "{text}"
    );
    let e: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cs = &e["cold_start"];
    let first = f(&cs["first_success"]);
    assert!(
        (1.4..4.0).contains(&first),
        "first success after {first} s, model load is 1.5 s"
    );
    assert!(cs["attempts"].as_u64().unwrap() >= 5, "{cs}");
    assert_eq!(
        cs["failures"]["ModelNotReadyException"].as_u64().unwrap() + 1,
        cs["attempts"].as_u64().unwrap()
    );
    // 3 ms of service through the SDK (unoptimised in tests): 13 ms was seen on a busy host.
    let steady = f(&cs["steady_ms"]["p50"]);
    assert!((3.0..20.0).contains(&steady), "{steady}");
    assert!((f(&cs["ratio"]) - first * 1000.0 / steady).abs() < 1e-6);

    // `report` renders the probe's export as the probe printed it, and in the other formats.
    let p = path.to_str().unwrap();
    let again = common::run(&["report", p]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), text);
    let md = stdout(&common::run(&["report", p, "--format", "markdown"]));
    assert!(
        md.starts_with("## cold start") && md.contains("| time to first success |"),
        "{md}"
    );
    let csv = stdout(&common::run(&["report", p, "--format", "csv"]));
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 2, "{csv}");
    let cell = |name: &str| {
        let col = rows[0].split(',').position(|h| h == name).unwrap();
        rows[1].split(',').nth(col).unwrap().to_string()
    };
    assert_eq!(cell("attempts"), cs["attempts"].to_string());
    assert_eq!(cell("first_success_s").parse::<f64>().unwrap(), first);
}

#[test]
fn a_body_over_six_mib_is_refused_before_sending() {
    let s = serve(&["--base-ms", "1"]);
    let c = creds(SECRET);
    let big = headless("big", &s).opt("--batch-size", 40_000);
    let out = run_env(&big.strs(), &env(&c));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--batch-size") && err.contains("6 MiB"),
        "{err}"
    );
    assert_eq!(counters(&s)["invocations"], 0);
}

#[test]
fn triton_through_sagemaker_in_json_and_binary() {
    let s = serve(&["--base-ms", "1"]);
    for mode in [&[][..], &["--binary"][..]] {
        let load = args()
            .engine("triton", "encoder")
            .arg("--pad-to-max")
            .opt("--batch-size", 4)
            .n(6)
            .and_all(mode);
        let (_, e) = sdk_run(&s, "triton-ep", &load);
        assert_eq!(e["phases"][0]["ok"], 6, "{mode:?}");
        assert_eq!(
            e["accuracy"]["passed"], 4,
            "{mode:?}: verdicts from logits through SageMaker"
        );
        let seen = counters(&s);
        assert_eq!(seen["last_tensors"]["binary"], !mode.is_empty(), "{mode:?}");
    }
}

#[test]
fn warmup_requests_get_the_warmup_timeout_through_the_sdk() {
    let s = serve(&["--base-ms", "300", "--workers", "4"]);
    let load = args()
        .opt("--timeout", 0.15)
        .opt("--warmup-timeout", 5)
        .opt("--warmup", 2)
        .n(3)
        .no_accuracy();
    let (_, e) = sdk_run(&s, "slow", &load);
    assert_eq!(
        e["phases"][0]["errors"]["Timeout"], 3,
        "{}",
        e["phases"][0]["errors"]
    );
    let all: u64 = e["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["errors"].as_u64())
        .sum();
    assert_eq!(all, 3, "the two warmup requests were allowed to finish");
}

/// TEI's SageMaker container takes TEI's payloads at its invocations, bound to its model's
/// type: `--endpoint … --engine tei --api rerank` sends them, and a route its model does not
/// serve comes back as SageMaker wraps a container's error, in TEI's words.
#[test]
fn teis_container_on_sagemaker_takes_teis_payloads() {
    let s = serve(&[
        "--base-ms",
        "2",
        "--only",
        "tei",
        "--model-kind",
        "reranker",
    ]);
    let load = args()
        .opt("--engine", "tei")
        .opt("--api", "rerank")
        .opt("--batch-size", 4)
        .n(6);
    let (_, e) = sdk_run(&s, "tei-ep", &load);
    assert_eq!(e["config"]["target"]["engine"], "tei");
    assert_eq!(e["phases"][0]["ok"], 6, "{}", e["phases"][0]);
    assert_eq!(e["accuracy"]["output"]["kind"], "rankings");
    assert_eq!(e["accuracy"]["passed"], 24);
    assert_eq!(e["config"]["batch_size"], 4);
    let embed = args().opt("--engine", "tei").n(2).arg("--no-accuracy");
    let (_, e) = sdk_run(&s, "tei-ep", &embed);
    // Its invocations are the rerank route: an embed body does not deserialize there (axum's
    // 422), which SageMaker wraps.
    let p = &e["phases"][0];
    assert_eq!(p["errors"]["ModelError(422)"], 2, "{p}");
    let words = p["error_bodies"]["ModelError(422)"].as_str().unwrap();
    assert!(words.contains("missing field `query`"), "{words}");
}
