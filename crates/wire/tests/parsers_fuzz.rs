//! Every parser of what an endpoint sends back, under arbitrary input: none may panic, since
//! one panicking reply would end a run with all its results. Pure parsers get arbitrary bytes
//! and arbitrary JSON; the error paths of the two clients (reqwest for --url, the AWS SDK for
//! --endpoint) get arbitrary statuses, error-type headers and bodies from a local server.
//! The accuracy check, the parsers' caller in load, has its own in
//! `crates/load/tests/accuracy_fuzz.rs`.
//!
//! CI runs a short pass; `ENCBENCH_FUZZ_CASES=100000 cargo test --release -p encbench-wire
//! --test parsers_fuzz` is the long one (docs/testing.md).

mod fuzz;

use encbench_core::input::Shape;
use encbench_core::input::{Input, parse_samples, parse_texts};
use encbench_core::server_metrics::stats::ServerStats;
use encbench_wire::client::Target;
use encbench_wire::payload::hf::hf_labels;
use encbench_wire::payload::kserve::{Declared, GivenNames, TensorNames, output_f32};
use encbench_wire::payload::{Format, HfFormat, Reply};
use fuzz::{body, cases, formats, json_value};
use proptest::prelude::*;
use serde_json::json;
use std::sync::{Arc, Mutex, OnceLock};

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn response_parsers_never_panic(body in body(), json_len in prop::option::of(0usize..300)) {
        let reply = Reply::new(body.clone(), json_len);
        for f in formats() {
            for inputs in [0, 1, 3] {
                let _ = f.check(&reply, inputs);
            }
            let _ = f.verdicts(&reply);
        }
        let _ = output_f32(&reply, "logits");
        let _ = hf_labels(&body);
    }

    #[test]
    fn a_valid_check_means_the_reply_holds_a_verdict_per_input(body in body(), inputs in 1usize..4) {
        let reply = Reply::new(body.clone(), None);
        // Every format, every family's every route: a check that passes means an answer per
        // input (a label, a vector, or a score per document of a ranking).
        for f in formats() {
            if f.check(&reply, inputs).is_ok() {
                let one = Input::pair("q", "x");
                let asked = vec![&one; inputs];
                prop_assert!(
                    f.answers(&reply, &asked).is_ok_and(|a| a.len() >= inputs),
                    "{} {}", f.name(), f.path()
                );
            }
        }
    }

    #[test]
    fn server_stats_and_input_files_never_panic(v in json_value(), text in ".{0,200}") {
        let _ = ServerStats::parse(&v);
        let declared = [Declared::from_metadata(&v), Declared::from_config(&v)];
        let _ = TensorNames::resolve(&GivenNames::default(), &declared);
        let _ = parse_texts(&text, "fuzz");
        let _ = parse_samples(&text, "fuzz");
    }
}

/// A Prometheus exposition as servers write it and as they get it wrong: histograms and
/// summaries with their `_sum` and `_count`, labels with escapes, commas, braces and
/// `le`/`quantile` values that are not numbers, timestamps, NaN and ±Inf, a name typed twice,
/// and lines that are no metric at all.
const PROMETHEUS_FIXTURE: &str = r#"# HELP nv_inference_count Number of inferences performed (does not include cached requests)
# TYPE nv_inference_count counter
nv_inference_count{model="encoder",version="1"} 40
nv_inference_count{model="other",version="1"} 1000
# TYPE nv_inference_exec_count counter
nv_inference_exec_count{model="encoder",version="1"} 10 1700000000000
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{path="/a,b",le="0.05"} 3
http_request_duration_seconds_bucket{path="/a,b",le="0.1"} 7
http_request_duration_seconds_bucket{path="/a,b",le="+Inf"} 8
http_request_duration_seconds_bucket{path="/c",le="not-a-number"} 1
http_request_duration_seconds_sum{path="/a,b"} 0.61
http_request_duration_seconds_count{path="/a,b"} 8
# TYPE rpc_seconds summary
rpc_seconds{quantile="0.5"} 0.02
rpc_seconds{quantile="0.99"} NaN
rpc_seconds_sum 1.5
rpc_seconds_count 60
# TYPE escaped gauge
escaped{msg="say "hi"\n",path="C:\dir"} 3
escaped{msg="a}b"} 4
escaped{msg="unterminated} 5
# TYPE nv_inference_count gauge
temperature_celsius -Inf
queue_depth +Inf
   leading_spaces 7
metric_without_value
{}
= 3
# a comment that is no HELP or TYPE
# TYPE
# HELP
garbage ∞ ☃ 1 2 3 4
"#;

#[test]
fn a_prometheus_fixture_with_every_kind_of_line_parses_or_skips_each() {
    use encbench_core::server_metrics::prometheus::Family;
    let e = encbench_wire::client::prometheus::parse(PROMETHEUS_FIXTURE, Some("encoder"));
    // The other model's series are left out; the second TYPE of a name changes nothing.
    assert_eq!(e.total("nv_inference_count"), Some(40.0));
    assert_eq!(e.total("nv_inference_exec_count"), Some(10.0));
    match &e.families["http_request_duration_seconds"] {
        Family::Histogram {
            buckets,
            sum,
            count,
        } => {
            assert_eq!(buckets.last(), Some(&(f64::INFINITY, 8.0)), "{buckets:?}");
            assert_eq!((*sum, *count), (0.61, 8.0));
        }
        other => panic!("not a histogram: {other:?}"),
    }
    assert_eq!(
        e.families["rpc_seconds"],
        Family::Summary {
            sum: 1.5,
            count: 60.0
        }
    );
    assert!(matches!(e.families["escaped"], Family::Gauge(_)));
    assert_eq!(e.total("leading_spaces"), Some(7.0));
    assert!(!e.families.contains_key("metric_without_value"));
    assert!(!e.families.contains_key("garbage"));
}

proptest! {
    #![proptest_config(cases(256))]

    /// Arbitrary text, and the fixture cut and spliced anywhere: parsed or skipped.
    #[test]
    fn prometheus_text_never_panics(
        text in ".{0,300}",
        cut in 0..PROMETHEUS_FIXTURE.len(),
        noise in "[a-z_{}=\",\\\\ #\n0-9.+-]{0,80}",
    ) {
        use encbench_wire::client::prometheus::parse;
        let _ = parse(&text, None);
        let cut = (0..=cut).rev().find(|&i| PROMETHEUS_FIXTURE.is_char_boundary(i)).unwrap_or(0);
        let spliced = format!("{}{noise}{}", &PROMETHEUS_FIXTURE[..cut], &PROMETHEUS_FIXTURE[cut..]);
        let before = parse(PROMETHEUS_FIXTURE, Some("encoder"));
        let after = parse(&spliced, Some("encoder"));
        let at = std::time::Instant::now();
        let names: Vec<String> = after.families.keys().cloned().collect();
        let _ = encbench_core::server_metrics::diff(
            &encbench_core::server_metrics::Reading { at, exposition: before },
            &encbench_core::server_metrics::Reading { at, exposition: after },
            &names,
        );
    }
}

/// What the local server answers next: status, x-amzn-errortype, body.
type Canned = Arc<Mutex<(u16, Option<String>, Vec<u8>)>>;

/// A server that answers every request with the canned reply, on a runtime of its own.
fn canned_server() -> (tokio::runtime::Runtime, String, Canned) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let canned: Canned = Arc::new(Mutex::new((200, None, vec![])));
    let c = canned.clone();
    let app = axum::Router::new().fallback(move || {
        let c = c.clone();
        async move {
            let (status, kind, body) = c.lock().unwrap().clone();
            let mut resp = axum::response::Response::new(axum::body::Body::from(body));
            *resp.status_mut() = axum::http::StatusCode::from_u16(status).unwrap();
            if let Some(k) = kind.and_then(|k| axum::http::HeaderValue::from_str(&k).ok()) {
                resp.headers_mut().insert("x-amzn-errortype", k);
            }
            resp
        }
    });
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    rt.spawn(async move { axum::serve(listener, app).await });
    (rt, url, canned)
}

fn error_type() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        Just("ThrottlingException".to_string()),
        Just("ModelError".to_string()),
        Just("ModelNotReadyException".to_string()),
        Just("ValidationError".to_string()),
        Just("InternalFailure".to_string()),
        Just("ServiceUnavailable".to_string()),
        Just("ThrottlingException:http://internal.amazon.com/coral/".to_string()),
        "[ -~]{0,40}",
    ])
}

fn error_body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        body(),
        (".{0,20}", ".{0,20}").prop_map(|(code, msg)| {
            format!("<ErrorResponse><Error><Code>{code}</Code><Message>{msg}</Message></Error></ErrorResponse>")
                .into_bytes()
        }),
        (".{0,20}", any::<i64>()).prop_map(|(t, s)| {
            serde_json::to_vec(&json!({"__type": t, "message": "m", "OriginalStatusCode": s})).unwrap()
        }),
    ]
}

proptest! {
    #![proptest_config(cases(64))]

    #[test]
    fn error_replies_through_both_clients_are_classified_without_panic(
        status in prop_oneof![200u16..=200, 400u16..600],
        kind in error_type(),
        body in error_body(),
    ) {
        static SERVER: OnceLock<(tokio::runtime::Runtime, String, Canned)> = OnceLock::new();
        let (rt, url, canned) = SERVER.get_or_init(canned_server);
        *canned.lock().unwrap() = (status, kind, body);

        let format = HfFormat::new(Shape { pad_to_max: false, max_len: 512 });
        let req = format.prepare(&[&Input::Text("x".into())]);
        let local = encbench_wire::client::url::UrlTarget::new(
            url, &format, 1, std::time::Duration::from_secs(5),
        );
        let result = rt.block_on(local.invoke(&req));
        // A 2xx is handed on as is (the body check comes after timing); others are errors.
        prop_assert_eq!(result.is_ok(), status == 200);

        let sdk = sdk_client(url);
        let e = rt.block_on(
            sdk.invoke_endpoint()
                .endpoint_name("fuzz")
                .content_type("application/json")
                .body(aws_sdk_sagemakerruntime::primitives::Blob::new(req.body.to_vec()))
                .send(),
        );
        if let Err(e) = e {
            let (kind, message) = encbench_wire::client::sagemaker::classify(&e);
            prop_assert!(!kind.key().is_empty());
            prop_assert!(!message.contains("fuzz-secret"));
        }
    }
}

fn sdk_client(url: &str) -> aws_sdk_sagemakerruntime::Client {
    let conf = aws_sdk_sagemakerruntime::Config::builder()
        .behavior_version_latest()
        .endpoint_url(url)
        .region(aws_sdk_sagemakerruntime::config::Region::new("us-east-1"))
        .credentials_provider(aws_credential_types::Credentials::new(
            "AKIDFUZZ",
            "fuzz-secret",
            None,
            None,
            "fuzz",
        ))
        // Retries would resend throttles and 5xx with back-off: slow, and not what a run does.
        .retry_config(aws_sdk_sagemakerruntime::config::retry::RetryConfig::disabled())
        .build();
    aws_sdk_sagemakerruntime::Client::from_conf(conf)
}
