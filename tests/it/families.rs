//! Any encoder server on the first try: the reference endpoint playing one API family at a
//! time as its server answers (`serve --only`, emulated from each server's sources and API
//! documents), found from `--url` alone, loaded, and its model's verdicts read back in the
//! family's own shapes; a server that matches nothing named in one line; a batch over the
//! server's own limit refused; a route that does not exist said as such; a body the server
//! refuses sent in its other form; TEI's timing headers read as the server wrote them.

use crate::common::{Serve, counters, f, run_env, run_export, schema_violations, tmp_path};
use serde_json::{Value, json};

/// One family as `serve --only` plays it, and what a run against it must find and check.
struct Case {
    serve: &'static [&'static str],
    engine: &'static str,
    api: Option<&'static str>,
    kind: Option<&'static str>,
    output: &'static str,
    verdicts: u64,
}

const CASES: &[Case] = &[
    Case {
        serve: &["--only", "hf"],
        engine: "hf",
        api: None,
        kind: None,
        output: "labels",
        verdicts: 4,
    },
    Case {
        serve: &["--only", "triton"],
        engine: "triton",
        api: None,
        kind: None,
        output: "labels",
        verdicts: 4,
    },
    Case {
        serve: &["--only", "kserve"],
        engine: "triton",
        api: None,
        kind: None,
        output: "labels",
        verdicts: 4,
    },
    Case {
        serve: &["--only", "vllm"],
        engine: "vllm",
        api: Some("classify"),
        kind: Some("classifier"),
        output: "labels",
        verdicts: 4,
    },
    Case {
        serve: &["--only", "vllm", "--model-kind", "embedding"],
        engine: "vllm",
        api: Some("embed"),
        kind: Some("embedder"),
        output: "vectors",
        verdicts: 10,
    },
    Case {
        serve: &["--only", "vllm", "--model-kind", "reranker"],
        engine: "vllm",
        api: Some("rerank"),
        kind: Some("reranker"),
        output: "rankings",
        verdicts: 24,
    },
    Case {
        serve: &["--only", "openai"],
        engine: "openai",
        api: Some("embed"),
        kind: Some("embedder"),
        output: "vectors",
        verdicts: 10,
    },
    Case {
        serve: &["--only", "tei"],
        engine: "tei",
        api: Some("embed"),
        kind: Some("embedder"),
        output: "vectors",
        verdicts: 10,
    },
    Case {
        serve: &["--only", "tei", "--model-kind", "classifier"],
        engine: "tei",
        api: Some("classify"),
        kind: Some("classifier"),
        output: "labels",
        verdicts: 4,
    },
    Case {
        serve: &["--only", "tei", "--model-kind", "reranker"],
        engine: "tei",
        api: Some("rerank"),
        kind: Some("reranker"),
        output: "rankings",
        verdicts: 24,
    },
    Case {
        serve: &["--only", "infinity"],
        engine: "infinity",
        api: Some("embed"),
        kind: Some("embedder"),
        output: "vectors",
        verdicts: 10,
    },
    Case {
        serve: &["--only", "infinity", "--model-kind", "classifier"],
        engine: "infinity",
        api: Some("classify"),
        kind: Some("classifier"),
        output: "labels",
        verdicts: 4,
    },
    Case {
        serve: &["--only", "infinity", "--model-kind", "reranker"],
        engine: "infinity",
        api: Some("rerank"),
        kind: Some("reranker"),
        output: "rankings",
        verdicts: 24,
    },
];

#[test]
fn url_alone_finds_each_family_loads_it_and_reads_its_verdicts() {
    for c in CASES {
        let s = Serve::one_ms(c.serve);
        // Batches of two: each family's batch form (TEI's nested pairs, a query with two
        // documents) is read back whole.
        let (out, e) = run_export(&s.url, &["-n", "4", "--warmup", "1", "--batch-size", "2"]);
        let at = format!("{:?}", c.serve);
        assert_eq!(out.status.code(), Some(0), "{at}: {}", out.stderr);
        assert_eq!(schema_violations(&e), Vec::<String>::new(), "{at}");
        let target = &e["config"]["target"];
        let detected = &target["detected"];
        assert_eq!(target["engine"], c.engine, "{at}: {target}");
        assert_eq!(detected["engine"], c.engine, "{at}: {detected}");
        assert_eq!(target["api"].as_str(), c.api, "{at}: {target}");
        assert_eq!(detected["kind"].as_str(), c.kind, "{at}: {detected}");
        assert!(!detected["tried"].as_array().unwrap().is_empty(), "{at}");
        let p = &e["phases"][0];
        assert_eq!(
            (p["ok"].as_u64(), p["sent"].as_u64()),
            (Some(4), Some(4)),
            "{at}: {p}"
        );
        let a = &e["accuracy"];
        assert_eq!(a["output"]["kind"], c.output, "{at}: {a}");
        assert_eq!(
            (
                a["passed"].as_u64(),
                a["total"].as_u64(),
                a["before"]["passed"].as_u64()
            ),
            (Some(c.verdicts), Some(c.verdicts), Some(c.verdicts)),
            "{at}: {a}"
        );
        if c.output == "rankings" {
            crate::rerank::assert_ranked(&e, 2, &at);
        }
        // Every TEI reply carries its timing headers: read back per phase.
        let replies = p["server_time_ms"]["replies"].as_u64();
        assert_eq!(replies, (c.engine == "tei").then_some(4), "{at}: {p}");
    }
}

#[test]
fn a_server_nobody_finds_is_one_line_and_a_named_family_loads_it() {
    let s = Serve::one_ms(&["--only", "jina"]);
    let out = run_env(&["--headless", "--url", &s.url, "-n", "2"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    let line = out.stderr.trim();
    assert!(!line.contains('\n'), "one line: {line}");
    for want in [
        "no API this tool knows answered (GET /info 404, GET /v2 404, GET /v1/models 404, GET /models 404, GET /v2/health/ready 404, GET /ping 404)",
        "--engine (hf, triton, vllm, openai, tei, infinity, jina)",
        "--path",
    ] {
        assert!(line.contains(want), "{want}: {line}");
    }
    assert_eq!(counters(&s)["invocations"], 0, "nothing was loaded");
    // The Jina/Cohere rerank API named: a query and its documents, ranked.
    let (_, e) = run_export(
        &s.url,
        &["--engine", "cohere", "-n", "3", "--batch-size", "4"],
    );
    assert_eq!(e["config"]["target"]["engine"], "jina");
    assert_eq!(e["config"]["target"]["path"], "/v1/rerank");
    assert_eq!(
        e["config"]["target"].get("detected"),
        None,
        "nothing discovered"
    );
    assert_eq!(e["phases"][0]["ok"], 3);
    assert_eq!(e["accuracy"]["output"], json!({"kind": "rankings"}));
    assert_eq!(
        (
            e["accuracy"]["passed"].as_u64(),
            e["accuracy"]["total"].as_u64()
        ),
        (Some(24), Some(24))
    );
}

#[test]
fn what_was_found_is_said_and_the_servers_batch_limit_holds() {
    let s = Serve::one_ms(&[
        "--only",
        "tei",
        "--model-kind",
        "reranker",
        "--served-model-name",
        "BAAI/bge-reranker-base",
    ]);
    let out = run_env(
        &["--headless", "--url", &s.url, "-n", "2", "--no-accuracy"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(
        out.stderr.lines().any(|l| l == "found TEI 1.9.3 (--engine tei): model BAAI/bge-reranker-base, a reranker; max client batch 32"),
        "{}",
        out.stderr
    );
    let out = run_env(
        &[
            "--headless",
            "--url",
            &s.url,
            "--sweep-batch",
            "--batch-sizes",
            "8",
            "64",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert_eq!(
        out.stderr.trim(),
        "error: --batch-sizes: 64 is over the server's max client batch size of 32 (its metadata says so): give at most 32"
    );
}

#[test]
fn a_route_that_does_not_exist_is_said_as_such_not_blamed_on_labels() {
    // TEI's routes against vLLM, whose server registers no /embed.
    let s = Serve::one_ms(&["--only", "vllm"]);
    let export = tmp_path("no-route.json");
    let out = run_env(
        &[
            "--headless",
            "--url",
            &s.url,
            "--engine",
            "tei",
            "-n",
            "3",
            "-o",
            export.to_str().unwrap(),
        ],
        &[],
    );
    // Found by the check before the load: no load follows (it would send 3 requests to
    // the same 404), and the flags are to blame: exit 2.
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    let hint = "POST /embed is not a route of this server: name its API with --engine (hf, triton, vllm, openai, tei, infinity, jina), its model with --model, or the route with --path";
    assert!(
        out.stderr
            .trim_end()
            .ends_with(&format!("error: --url: {hint}; no load was sent")),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains(hint),
        "the accuracy table says it: {}",
        out.stdout
    );
    assert!(!out.stdout.contains("label mapping"), "{}", out.stdout);
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    assert_eq!(e["phases"].as_array().map(Vec::len), Some(0), "no load ran");
    assert_eq!(e["accuracy"]["note"], hint);
    let events = e["timeline"].to_string();
    assert!(
        events.contains("the route is none of the server's: no load ran"),
        "{events}"
    );
}

#[test]
fn a_body_the_server_refuses_is_sent_once_in_its_other_form() {
    // vLLM's payloads at Infinity's route: pairs as token ids, which Infinity refuses.
    let s = Serve::one_ms(&["--only", "infinity"]);
    let args = [
        "--engine",
        "vllm",
        "--api",
        "embed",
        "--path",
        "/embeddings",
        "-n",
        "5",
    ];
    let (_, e) = run_export(&s.url, &args);
    let switched = e["accuracy"]["switched"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", e["accuracy"]));
    assert!(
        switched.starts_with("the server refused pairs as token ids (HTTP 422: {\"detail\":[{\"type\":\"string_type\",\"loc\":[\"body\",\"input\",0],\"msg\":\"Input should be a valid string\"")
            && switched.ends_with("): sending strings from now on"),
        "{switched}"
    );
    assert!(
        e["notices"]
            .to_string()
            .contains("sending strings from now on")
    );
    assert_eq!(
        (
            e["phases"][0]["ok"].as_u64(),
            e["phases"][0]["errors"]
                .as_object()
                .map(serde_json::Map::len)
        ),
        (Some(5), Some(0))
    );
    assert_eq!(e["accuracy"]["passed"], 10);
    // Without the check nothing is switched: every request gets the server's words.
    let (_, e) = run_export(&s.url, &[&args[..], &["--no-accuracy"]].concat());
    assert_eq!(e["phases"][0]["errors"]["HTTP 422"], 5);
    let words = e["phases"][0]["error_bodies"]["HTTP 422"].as_str().unwrap();
    assert!(words.contains("Input should be a valid string"), "{words}");
}

/// The value at quantile `q` of `values` by nearest rank, as HdrHistogram reads it.
fn at_quantile(values: &[f64], q: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

#[test]
fn teis_timing_headers_are_read_as_the_server_wrote_them() {
    // One worker of 5 ms and four clients: each request queues behind the others.
    let s = Serve::fixed(5, 1, &["--only", "tei"]);
    let (_, e) = run_export(
        &s.url,
        &[
            "-n",
            "120",
            "--warmup",
            "0",
            "--no-accuracy",
            "--concurrency",
            "4",
        ],
    );
    let p = &e["phases"][0];
    assert_eq!(p["ok"], 120, "{p}");
    let t = &p["server_time_ms"];
    assert_eq!(t["replies"], 120, "{t}");
    let sent = counters(&s)["tei_sent"].clone();
    for (field, column) in [
        ("queue", "queue_ms"),
        ("inference", "inference_ms"),
        ("tokenization", "tokenization_ms"),
    ] {
        let values: Vec<f64> = sent[column].as_array().unwrap().iter().map(f).collect();
        assert_eq!(values.len(), 120, "{column}");
        for (q, key) in [(0.5, "p50"), (0.99, "p99"), (1.0, "max")] {
            let want = at_quantile(&values, q);
            let got = f(&t[field][key]);
            // HdrHistogram keeps three significant figures.
            assert!(
                (got - want).abs() <= want * 0.002 + 0.002,
                "{field} {key}: {got} read, {want} sent"
            );
        }
    }
    assert_eq!(f(&t["inference"]["p50"]).round(), 5.0, "{t}");
    assert!(
        f(&t["queue"]["p50"]) >= 10.0,
        "queued behind three others: {t}"
    );
}

#[test]
fn a_named_route_and_readiness_route_are_used_and_a_wrong_one_is_said() {
    // A gateway in front of vLLM's reranker: the Jina shape at vLLM's /rerank, ready on its
    // /health.
    let s = Serve::one_ms(&["--only", "vllm", "--model-kind", "reranker"]);
    let named = [
        "--engine",
        "jina",
        "--path",
        "/rerank",
        "--ready-path",
        "/health",
    ];
    let (_, e) = run_export(
        &s.url,
        &[&named[..], &["-n", "3", "--batch-size", "3"]].concat(),
    );
    assert_eq!(e["config"]["target"]["path"], "/rerank");
    assert_eq!(e["phases"][0]["ok"], 3, "{}", e["phases"][0]);
    assert_eq!(e["accuracy"]["passed"], 24);
    let wrong = [
        "--engine",
        "jina",
        "--ready-path",
        "/ready",
        "--ready-timeout",
        "1",
    ];
    let out = run_env(
        &[&["--headless", "--url", &s.url][..], &wrong].concat(),
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("not healthy (GET /ready answered 404 Not Found (no such route here? --ready-path names the server's readiness route), still after 1 s)"),
        "{}",
        out.stderr
    );
}

#[test]
fn compare_puts_each_targets_server_time_side_by_side() {
    let fast = Serve::fixed(2, 2, &["--only", "tei"]);
    let slow = Serve::fixed(6, 1, &["--only", "tei"]);
    let export = tmp_path("tei-compare.json");
    let (a, b) = (
        format!("name=fast,url={}", fast.url),
        format!("name=slow,url={}", slow.url),
    );
    let out = crate::common::run(&[
        "compare",
        "--headless",
        "--target",
        &a,
        "--target",
        &b,
        "--batch-sizes",
        "1",
        "--no-concurrency",
        "-n",
        "8",
        "--no-accuracy",
        "-o",
        export.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let text = &out.stdout;
    assert!(text.contains("engine tei"), "{text}");
    // A row per target and figure, the targets' rows of one phase next to each other.
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Server time from its replies' headers"))
        .skip(2)
        .take_while(|l| l.starts_with("fast") || l.starts_with("slow"))
        .collect();
    let targets: Vec<&str> = table.iter().map(|l| &l[..4]).collect();
    assert_eq!(
        targets,
        [
            "fast", "fast", "fast", "fast", "slow", "slow", "slow", "slow"
        ],
        "{text}"
    );
    assert!(table[2].contains("inference"), "{text}");
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    let inference = |t: &str| {
        let p = e["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["target"] == t)
            .unwrap();
        f(&p["server_time_ms"]["inference"]["p50"])
    };
    assert_eq!(
        (inference("fast").round(), inference("slow").round()),
        (2.0, 6.0)
    );
}
