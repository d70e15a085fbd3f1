//! Rerankers as a workload of their own, against the reference endpoint playing each rerank
//! family: a request is one query with D documents; documents per second, efficiency against
//! D = 1 and the cost per million documents follow the service model; the shipped queries'
//! rankings are checked before and after the load; a flipped reranker is caught by the
//! verdict diff and by the score agreement. (The rerank routes discovery finds, TEI's,
//! vLLM's and Infinity's `/rerank`, are loaded from `--url` alone in `families.rs`.)

use crate::common::{Serve, f, run_env, run_export, schema_violations, tmp_path};
use serde_json::{Value, json};

/// One rerank family as the reference endpoint plays it, and how a run names its route.
struct Case {
    serve: &'static [&'static str],
    run: &'static [&'static str],
    engine: &'static str,
    path: &'static str,
}

const CASES: &[Case] = &[
    // TEI's /predict with pairs: a cross-encoder's one label per pair.
    Case {
        serve: &["--only", "tei", "--model-kind", "reranker"],
        run: &["--api", "classify", "--task", "rerank"],
        engine: "tei",
        path: "/predict",
    },
    // TEI's /rerank on the same server, its texts asked back (return_text) and checked for.
    Case {
        serve: &["--only", "tei", "--model-kind", "reranker"],
        run: &["--api", "rerank", "--return-documents", "true"],
        engine: "tei",
        path: "/rerank",
    },
    Case {
        serve: &["--only", "vllm", "--model-kind", "reranker"],
        run: &["--api", "score"],
        engine: "vllm",
        path: "/score",
    },
    // Cut to the best 3 of 5, with their texts: the load's replies are checked for both, the
    // accuracy check still asks for every document.
    Case {
        serve: &["--only", "jina"],
        run: &[
            "--engine",
            "jina",
            "--top-n",
            "3",
            "--return-documents",
            "yes",
        ],
        engine: "jina",
        path: "/v1/rerank",
    },
    // A cross-encoder behind KServe v2 and the HF toolkit: pairs in, one logit or label each.
    Case {
        serve: &["--only", "triton", "--model-kind", "reranker"],
        run: &["--task", "rerank"],
        engine: "triton",
        path: "/v2/models/encbench-reference/infer",
    },
    Case {
        serve: &["--only", "kserve", "--model-kind", "reranker"],
        run: &["--task", "rerank", "--binary"],
        engine: "triton",
        path: "/v2/models/encbench-reference/infer",
    },
    Case {
        serve: &["--only", "hf", "--model-kind", "reranker"],
        run: &["--task", "rerank"],
        engine: "hf",
        path: "/invocations",
    },
];

#[test]
fn every_rerank_family_ranks_the_shipped_queries_in_its_own_shapes() {
    let mut server: Option<(&[&str], Serve)> = None;
    for c in CASES {
        if server.as_ref().is_none_or(|(args, _)| *args != c.serve) {
            server = Some((c.serve, Serve::one_ms(c.serve)));
        }
        let s = &server.as_ref().unwrap().1;
        let run = [
            c.run,
            &["-n", "4", "--warmup", "1", "--docs-per-query", "5"],
        ]
        .concat();
        let (out, e) = run_export(&s.url, &run);
        let at = format!("{:?} {:?}", c.serve, c.run);
        assert_eq!(out.status.code(), Some(0), "{at}: {}", out.stderr);
        assert_eq!(schema_violations(&e), Vec::<String>::new(), "{at}");
        let target = &e["config"]["target"];
        assert_eq!(
            (target["engine"].as_str(), target["path"].as_str()),
            (Some(c.engine), Some(c.path)),
            "{at}"
        );
        assert_ranked(&e, 5, &at);
        let given = |flag: &str| c.run.contains(&flag);
        let (top_n, texts) = (json!(3), json!(true));
        assert_eq!(
            (target.get("top_n"), target.get("return_documents")),
            (
                given("--top-n").then_some(&top_n),
                given("--return-documents").then_some(&texts)
            ),
            "{at}"
        );
        // The accuracy table shows each query's whole ordering.
        assert!(
            out.stdout.contains("query") && out.stdout.contains("order "),
            "{at}: {}",
            out.stdout
        );
    }

    // 2000 documents a query: preparing the phase is linear in D (it took 19 ms a document,
    // 40 s before the first request, when 256 requests' pairs were made and tokenized).
    // The goal is at most 1 ms a document; a loaded two-core machine runs 3-5× slower.
    let (_, hf) = server.as_ref().unwrap();
    let started = std::time::Instant::now();
    let (out, e) = run_export(
        &hf.url,
        &[
            "--task",
            "rerank",
            "--docs-per-query",
            "2000",
            "-n",
            "2",
            "--warmup",
            "0",
            "--no-accuracy",
        ],
    );
    let took = started.elapsed().as_secs_f64();
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(e["phases"][0]["ok"], 2, "{}", e["phases"][0]);
    eprintln!("rerank D = 2000: the whole run in {took:.2} s");
    assert!(took < 2000.0 * 1e-3 * 5.0, "{took:.1} s for D = 2000");
}

/// A reranker's run of four requests of `d` documents: documents per second are `d` times
/// the requests', every shipped query ranked, the top document the expected one.
pub(crate) fn assert_ranked(e: &Value, d: u64, at: &str) {
    assert_eq!(e["config"]["task"], "rerank", "{at}");
    let p = &e["phases"][0];
    assert_eq!(
        (p["ok"].as_u64(), p["batch_size"].as_u64()),
        (Some(4), Some(d)),
        "{at}: {p}"
    );
    assert!(
        (f(&p["samples_per_s"]) - d as f64 * f(&p["req_per_s"])).abs() < 1e-6,
        "{at}: {p}"
    );
    let a = &e["accuracy"];
    assert_eq!(a["output"], json!({"kind": "rankings"}), "{at}");
    assert_eq!(
        (a["passed"].as_u64(), a["total"].as_u64()),
        (Some(24), Some(24)),
        "{at}: {a}"
    );
    let first = &a["samples"][0];
    assert_eq!(
        first["ranking"][0],
        first["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .position(|d| *d == first["expected"])
            .unwrap(),
        "{at}"
    );
}

/// Documents per second at D: D over the service time of one forward pass over D pairs of
/// `len` tokens, base + per-token × max(D × len, saturation).
fn docs_per_s(d: f64, len: f64) -> f64 {
    let service_ms = 14.8 + 0.0215 * (d * len).max(512.0);
    d / service_ms * 1000.0
}

#[test]
fn a_docs_per_query_sweep_follows_the_service_model_and_padding_costs_what_it_should() {
    let _alone = crate::common::paired();
    let s = Serve::start(&[
        "--only",
        "tei",
        "--model-kind",
        "reranker",
        "--workers",
        "1",
    ]);
    // Every (query, document) pair padded to 64 tokens: one length, so one service time per D.
    let sweep = [
        "--sweep-docs",
        "1",
        "8",
        "32",
        "--pad-to-max",
        "--max-len",
        "64",
    ];
    let (out, e) = run_export(
        &s.url,
        &[
            &sweep[..],
            &[
                "-n",
                "40",
                "--warmup",
                "2",
                "--no-accuracy",
                "--instance-type",
                "ml.g5.xlarge",
            ],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let phases = e["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 3);
    let measured: Vec<f64> = phases.iter().map(|p| f(&p["samples_per_s"])).collect();
    for (p, want) in phases.iter().zip([
        docs_per_s(1.0, 64.0),
        docs_per_s(8.0, 64.0),
        docs_per_s(32.0, 64.0),
    ]) {
        // One query at a time waits out the machine's own round trip beside each service
        // time: 1.2-1.6 ms here when quiet (D=1 read 36.5 docs/s for the model's 38.7), up
        // to 3 ms loaded; the fixed service times themselves are never shorter.
        let got = f(&p["samples_per_s"]);
        let d = p["batch_size"].as_f64().unwrap();
        let service_ms = d / want * 1000.0;
        let slowest = want * service_ms / (service_ms + 3.0);
        assert!(
            slowest <= got && got <= 1.02 * want,
            "D={d}: {got:.1} docs/s, the model {want:.1} (with 3 ms of round trip {slowest:.1})"
        );
    }
    // Efficiency against D = 1, as the model gives it: 1.0 below saturation, 0.44 at 32.
    let eff = |i: usize| f(&phases[i]["batch_efficiency"]);
    let want32 = docs_per_s(32.0, 64.0) / (32.0 * docs_per_s(1.0, 64.0));
    assert!(
        (eff(1) - 1.0).abs() < 0.05 && (eff(2) - want32).abs() < 0.05,
        "{measured:?}"
    );
    // $/1M documents at ml.g5.xlarge's $1.408/h.
    let cost = f(&phases[2]["cost_per_1m_usd"]);
    assert!(
        (cost - 1.408 / (measured[2] * 3600.0) * 1e6).abs() < 1e-3,
        "{cost}"
    );
    assert!(
        out.stdout.contains("docs/s") && out.stdout.contains("$/1M docs"),
        "{}",
        out.stdout
    );

    // D = 8 padded to 512 tokens a pair is four forward passes' worth of tokens.
    let at = |pad: &[&str]| {
        let (_, e) = run_export(
            &s.url,
            &[
                pad,
                &[
                    "--docs-per-query",
                    "8",
                    "-n",
                    "12",
                    "--warmup",
                    "1",
                    "--no-accuracy",
                ],
            ]
            .concat(),
        );
        f(&e["phases"][0]["latency_ms"]["p50"])
    };
    let (natural, padded) = (at(&[]), at(&["--pad-to-max", "--max-len", "512"]));
    assert!(
        padded >= 3.0 * natural,
        "padded {padded} ms, natural {natural} ms"
    );

    // The question, on the same server: documents per second within the SLO at each
    // D, and what a million of them cost (short probes: the answer's shape, not its precision;
    // capacity.rs checks the search's answers against queueing theory).
    let (out, e) = run_export(
        &s.url,
        &[
            "--sweep-docs",
            "1",
            "8",
            "--find-capacity",
            "--slo",
            "p99=200ms",
            "--instance-type",
            "ml.g5.xlarge",
            "--no-accuracy",
            "--max-probe-secs",
            "1.5",
            "--min-probe-requests",
            "20",
            "--capacity-precision",
            "30%",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let capacity = e["capacity"].as_array().unwrap();
    assert_eq!(capacity.len(), 2, "{capacity:?}");
    for (c, d) in capacity.iter().zip([1.0, 8.0]) {
        let (rate, docs) = (f(&c["max_rate_per_s"]), f(&c["samples_per_s"]));
        assert!(rate > 0.0 && (docs - d * rate).abs() < 1e-3 * docs, "{c}");
        let cost = f(&c["cost_per_1m_usd"]);
        assert!(
            (cost - 1.408 / (docs * 3600.0) * 1e6).abs() < 1e-3 * cost,
            "{c}"
        );
    }
    let table = out
        .stdout
        .split("Capacity within p99")
        .nth(1)
        .unwrap_or_default();
    assert!(
        table.contains("docs/s") && table.contains("$/1M docs") && out.stdout.contains("docs/s at"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_flipped_reranker_is_caught_by_the_verdict_diff_and_the_score_agreement() {
    let a = Serve::one_ms(&["--only", "vllm", "--model-kind", "reranker"]);
    let b = Serve::one_ms(&["--only", "vllm", "--model-kind", "reranker"]);
    let flipped = Serve::one_ms(&[
        "--only",
        "vllm",
        "--model-kind",
        "reranker",
        "--flip-labels",
    ]);
    // On its own, a flipped reranker's run shows each wrong ordering and what to check.
    let (out, _) = run_export(&flipped.url, &["-n", "2", "--warmup", "0"]);
    assert_eq!(out.stdout.matches("MISMATCH").count(), 24, "{}", out.stdout);
    assert!(
        out.stdout.contains("another document is ranked first")
            && !out.stdout.contains("label mapping"),
        "{}",
        out.stdout
    );
    let export = tmp_path("rerank-compare.json");
    let targets: Vec<String> = [("a", &a), ("b", &b), ("flipped", &flipped)]
        .iter()
        .map(|(n, s)| format!("name={n},url={}", s.url))
        .collect();
    let out = crate::common::run(&[
        "compare",
        "--headless",
        "--target",
        &targets[0],
        "--target",
        &targets[1],
        "--target",
        &targets[2],
        "--batch-sizes",
        "6",
        "--no-concurrency",
        "-n",
        "3",
        "--warmup",
        "1",
        "-o",
        export.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    let cmp = &e["compare"];
    let diff = cmp["verdict_diff"].as_array().unwrap();
    assert_eq!(diff.len(), 1, "{diff:?}");
    assert_eq!(diff[0]["target"], "flipped");
    assert_eq!(diff[0]["samples"].as_array().unwrap().len(), 24);
    let agreement = cmp["score_agreement"].as_array().unwrap();
    let pair = |x: &str, y: &str| {
        agreement
            .iter()
            .find(|p| p["a"] == x && p["b"] == y)
            .unwrap()
    };
    assert_eq!(
        (
            pair("a", "b")["ok"].as_bool(),
            pair("a", "b")["min_tau"].as_f64()
        ),
        (Some(true), Some(1.0))
    );
    let apart = pair("a", "flipped");
    assert_eq!(
        (apart["ok"].as_bool(), apart["min_tau"].as_f64()),
        (Some(false), Some(-1.0)),
        "{apart}"
    );
    assert!(
        apart["hint"].as_str().unwrap().contains("tokenization"),
        "{apart}"
    );
    assert!(
        out.stdout.contains("Score agreement")
            && out.stdout.contains("a and flipped rank apart")
            && out.stdout.contains("order each query's documents alike"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_rerank_task_is_refused_where_it_cannot_run() {
    let s = Serve::one_ms(&["--only", "tei"]);
    for (args, want) in [
        (
            &["--task", "rerank"][..],
            "error: --task: rerank: tei /embed answers vectors, not a score per document, and the server says its model is an embedder: give --url a reranker's server, or drop --task rerank (--api rerank only if this model also ranks)",
        ),
        (
            &["--engine", "jina", "--task", "inputs"][..],
            "error: --task: inputs: jina /v1/rerank ranks a query's documents: drop --task, or name another --api",
        ),
    ] {
        let out = run_env(&[&["--headless", "--url", &s.url][..], args].concat(), &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.trim(), want, "{args:?}");
    }
    let nli = tmp_path("nli-only.jsonl");
    std::fs::write(
        &nli,
        "{\"premise\": \"a\", \"hypothesis\": \"b\", \"expected\": \"neutral\"}\n",
    )
    .unwrap();
    for (args, want) in [
        (
            vec!["--docs-per-query", "8", "--batch-size", "4"],
            "--docs-per-query",
        ),
        (
            vec!["--sweep-docs", "1", "8", "--sweep-batch"],
            "--sweep-docs",
        ),
        (vec!["--docs-per-query", "0"], "--docs-per-query"),
        (
            vec!["--top-n", "3"],
            "error: --top-n: tei /rerank takes no top_n (the Jina/Cohere rerank shape does: --engine jina, or vllm or infinity with --api rerank)",
        ),
        (vec!["--top-n", "0"], "--top-n"),
        (vec!["--return-documents", "maybe"], "--return-documents"),
        (
            vec!["--rerank-samples", nli.to_str().unwrap()],
            "--rerank-samples",
        ),
    ] {
        let out = run_env(
            &[
                &[
                    "--headless",
                    "--url",
                    &s.url,
                    "--engine",
                    "tei",
                    "--api",
                    "rerank",
                ][..],
                &args,
            ]
            .concat(),
            &[],
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains(want) && !out.stderr.contains("panicked"),
            "{args:?}: {}",
            out.stderr
        );
    }
    let out = run_env(&["compare", "--demo", "--min-tau", "2"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stderr.contains("--min-tau"), "{}", out.stderr);
}

/// `--demo --task rerank` plays a cross-encoder with the reranker's known answers, for a run
/// and for compare's three demo targets alike.
#[test]
fn the_demo_plays_a_reranker_for_a_rerank_task() {
    let path = tmp_path("demo-rerank.json");
    let out = run_env(
        &[
            "--demo",
            "--headless",
            "--task",
            "rerank",
            "-n",
            "3",
            "-o",
            path.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let a = &e["accuracy"];
    assert_eq!(a["output"], json!({"kind": "rankings"}), "{a}");
    assert_eq!(
        (a["passed"].as_u64(), a["total"].as_u64()),
        (Some(24), Some(24)),
        "{a}"
    );
    assert_eq!(e["phases"][0]["batch_size"], 8);
    // Two of the shipped queries: the demo's targets serve at their instances' speed.
    let two = tmp_path("two-rerank.jsonl");
    let shipped = encbench_core::assets::RERANK_SAMPLES;
    std::fs::write(&two, shipped.lines().take(2).collect::<Vec<_>>().join("\n")).unwrap();
    let out = run_env(
        &[
            "compare",
            "--demo",
            "--headless",
            "--task",
            "rerank",
            "--rerank-samples",
            two.to_str().unwrap(),
            "--batch-sizes",
            "4",
            "--no-concurrency",
            "-n",
            "2",
            "-o",
            path.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for t in e["compare"]["targets"].as_array().unwrap() {
        let a = &t["accuracy"];
        assert_eq!(
            (
                a["output"]["kind"].as_str(),
                a["passed"].as_u64(),
                a["total"].as_u64()
            ),
            (Some("rankings"), Some(2), Some(2)),
            "{t}"
        );
    }
    assert!(
        e["compare"]["score_agreement"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["ok"] == true),
        "{}",
        e["compare"]
    );
}
