//! The command line as a newcomer and a script meet it, through the real binary: clap's
//! own help on a mistake, how to start when no target is named, conflicting flags refused,
//! times with units, the short flags of hey and oha, `-o -` for JSON on stdout, shell
//! completions, the man page and a version that names its commit.

use crate::common::{Ran, Serve, run_env, run_export, stderr, stdout, tmp_path};
use serde_json::Value;

/// A bad command line: exit 2, and stderr, which must hold each of `want`.
fn refused(args: &[&str], want: &[&str]) -> String {
    let out = run_env(args, &[]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: want {w:?} in:\n{err}");
    }
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

#[test]
fn a_typo_gets_clap_s_suggestion_usage_line_and_pointer_to_help() {
    for (args, similar) in [
        (
            &["--concurency", "4"][..],
            "a similar argument exists: '--concurrency'",
        ),
        (&["serv"][..], "a similar subcommand exists: 'serve'"),
        (&["--demo", "--sweep-bacth"][..], "'--sweep-batch'"),
    ] {
        refused(args, &[similar, "Usage: encbench-tui", "try '--help'"]);
    }
    // A value of a closed set lists the set.
    refused(
        &["--demo", "--engine", "onnx"],
        &[
            "'onnx' for '--engine",
            "[possible values: hf, triton, vllm, openai, tei, infinity, jina]",
        ],
    );
}

/// `--knee` is a batch efficiency (1 at batch 1 itself): a threshold above 1 would mark
/// batch 1 as past its own knee, and one of 0 nothing.
#[test]
fn a_knee_that_is_no_efficiency_is_refused() {
    for bad in ["2", "1.01", "0", "-0.5"] {
        refused(
            &["--demo", "--headless", "--knee", bad],
            &["--knee", "must be a batch efficiency above 0 and at most 1"],
        );
    }
}

/// `--repeat` takes 1 to 1000 repetitions, for a run and for `compare`, and `compare
/// --concurrency` a cap; a typo gets clap's suggestion.
#[test]
fn a_repeat_that_is_no_count_is_refused() {
    for bad in ["0", "1001", "x", "2.5"] {
        for head in [
            &["--demo", "--headless"][..],
            &["compare", "--demo", "--headless"],
        ] {
            let mut args = head.to_vec();
            args.extend(["--repeat", bad]);
            refused(
                &args,
                &["--repeat <K>", "must be a whole number from 1 to 1000"],
            );
        }
    }
    refused(
        &["compare", "--demo", "--headless", "--concurrency", "0"],
        &["--concurrency", "must be a whole number from 1 to 100000"],
    );
    refused(
        &["--demo", "--repet", "3"],
        &["a similar argument exists: '--repeat'"],
    );
}

#[test]
fn a_missing_argument_is_named_with_the_usage_line() {
    refused(
        &["report"],
        &[
            "the following required arguments were not provided",
            "<FILES>",
            "Usage: encbench-tui report <FILES>",
        ],
    );
    refused(
        &["report", "--merge", "a.json"],
        &["--output <OUTPUT>", "Usage: encbench-tui report"],
    );
    // -o without --merge or a page would be ignored: a report's output is its tables.
    refused(
        &["report", "a.json", "-o", "b.json"],
        &["-o", "--merge", "--format html"],
    );
    for flag in ["--batch-sizes", "--concurrency-levels"] {
        refused(
            &["--demo", "--sweep-batch", flag],
            &[
                &format!("a value is required for '{flag} <"),
                "try '--help'",
            ],
        );
    }
}

#[test]
fn no_target_says_how_to_start_instead_of_trying_a_default_address() {
    for args in [&[][..], &["-n", "50"], &["--headless", "-c", "4"]] {
        let err = refused(
            args,
            &[
                "no target given",
                "--demo",
                "--url URL",
                "--endpoint NAME",
                "--help",
            ],
        );
        assert!(!err.contains("unreachable"), "{args:?}: {err}");
    }
}

#[test]
fn encbench_url_names_the_target_only_when_the_command_line_names_none() {
    let s = Serve::one_ms(&[]);
    let env = [("ENCBENCH_URL", s.url.as_str())];
    let quick = [
        "--headless",
        "-n",
        "3",
        "--warmup",
        "0",
        "--no-accuracy",
        "-o",
        "-",
    ];
    let out = run_env(&quick, &env);
    assert!(out.status.success(), "{}", stderr(&out));
    let export = parsed(&out);
    assert_eq!(
        export["config"]["target"]["url"],
        s.url.as_str(),
        "{export}"
    );
    // --demo on the command line wins over the variable instead of conflicting with it.
    let demo = [&quick[..], &["--demo"]].concat();
    let out = run_env(&demo, &env);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_ne!(parsed(&out)["config"]["target"]["url"], s.url.as_str());
    let both = [
        ("ENCBENCH_URL", s.url.as_str()),
        ("ENCBENCH_ENDPOINT", "ep"),
    ];
    let out = run_env(&quick, &both);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("both set"), "{}", stderr(&out));
}

#[test]
fn conflicting_flags_are_refused_naming_both() {
    let cases: [(&[&str], [&str; 2]); 6] = [
        (
            &["--batch-size", "8", "--sweep-batch"],
            ["--batch-size", "--sweep-batch"],
        ),
        (
            &["--concurrency", "4", "--sweep-concurrency"],
            ["--concurrency", "--sweep-concurrency"],
        ),
        (
            &["--url", "http://127.0.0.1:9", "--endpoint", "ep"],
            ["--url", "--endpoint"],
        ),
        (
            &["--url", "http://127.0.0.1:9", "--demo"],
            ["--url", "--demo"],
        ),
        (&["--endpoint", "ep", "--demo"], ["--endpoint", "--demo"]),
        (&["-n", "10", "-z", "5s"], ["--requests", "--duration"]),
    ];
    for (args, [a, b]) in cases {
        let mut all = args.to_vec();
        if !all
            .iter()
            .any(|f| ["--url", "--endpoint", "--demo"].contains(f))
        {
            all.push("--demo");
        }
        all.push("--headless");
        refused(&all, &[a, b]);
    }
}

/// Beside both sweeps, --batch-size is the concurrency sweep's batch and --concurrency the
/// batch sweep's cap: used, so not refused.
#[test]
fn both_sweeps_take_the_fixed_batch_and_concurrency() {
    let (_, e) = run_env_export(&[
        "--demo",
        "--sweep-batch",
        "--batch-sizes",
        "1",
        "2",
        "--sweep-concurrency",
        "--concurrency-levels",
        "1",
        "3",
        "--batch-size",
        "2",
        "-c",
        "2",
        "-n",
        "3",
    ]);
    let phases: Vec<_> = e["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["kind"].as_str().unwrap(),
                p["batch_size"].clone(),
                p["concurrency"].clone(),
            )
        })
        .collect();
    let want = [
        ("batch", 1, 2),
        ("batch", 2, 2),
        ("concurrency", 2, 1),
        ("concurrency", 2, 3),
    ];
    let want: Vec<_> = want
        .iter()
        .map(|&(k, b, c)| (k, b.into(), c.into()))
        .collect();
    assert_eq!(phases, want);
}

#[test]
fn a_flag_this_run_ignores_is_one_note() {
    let s = Serve::one_ms(&[]);
    let (out, _) = run_env_export(&[
        "--url",
        &s.url,
        "-n",
        "3",
        "--batch-sizes",
        "1",
        "8",
        "--burstiness",
        "0.5",
        "--until-stable",
        "--output-name",
        "logits",
        "--pretokenize",
    ]);
    let err = stderr(&out);
    let notes = err.lines().filter(|l| l.starts_with("note: ")).count();
    assert_eq!(notes, 5, "one line per flag: {err}");
    assert!(
        err.contains("note: --pretokenize applies to token ids tokenized on the client"),
        "{err}"
    );
    assert!(
        err.contains("note: --batch-sizes is used by --sweep-batch"),
        "{err}"
    );
    assert!(
        err.contains("note: --burstiness shapes open-loop arrivals"),
        "{err}"
    );
    assert!(
        err.contains("note: --until-stable applies to sweep phases"),
        "{err}"
    );
    assert!(
        err.contains("note: --output-name applies to --engine triton"),
        "{err}"
    );
    // Where the flag is used, nothing is said.
    let (out, _) = run_env_export(&["--url", &s.url, "-n", "3", "-q", "50", "--burstiness", "2"]);
    assert!(!stderr(&out).contains("note:"), "{}", stderr(&out));
}

/// A headless run of the binary with `args` and `-o -`: how it ended and its export as
/// parsed from stdout.
fn run_env_export(args: &[&str]) -> (Ran, Value) {
    let mut all = vec!["--headless", "--no-accuracy", "--warmup", "0", "-o", "-"];
    all.extend_from_slice(args);
    let out = run_env(&all, &[]);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    let export = parsed(&out);
    (out, export)
}

/// stdout as one JSON document, whole: nothing else may be on it.
fn parsed(out: &Ran) -> Value {
    serde_json::from_str(&stdout(out))
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}):\n{}", stdout(out)))
}

#[test]
fn short_flags_and_a_duration_with_units_on_a_demo_run_exported_to_stdout() {
    let (out, export) = run_env_export(&["--demo", "-z", "2s", "-q", "20", "-c", "2"]);
    let config = &export["config"];
    assert_eq!(config["duration_s"], 2.0, "{config}");
    assert_eq!(config["request_rate"], 20.0, "{config}");
    assert_eq!(config["concurrency"], 2, "{config}");
    let phase = &export["phases"][0];
    // 2 s at 20 req/s: exactly 40 requests due, Poisson or not (the demo may fall behind:
    // what it could not send is counted as unsent).
    let due = phase["sent"].as_u64().unwrap() + phase["unsent"].as_u64().unwrap();
    assert_eq!(due, 40, "{phase}");
    assert_eq!(phase["offered_per_s"], 20.0, "{phase}");
    assert!(crate::common::schema_violations(&export).is_empty());
    // The tables went to stderr, beside nothing on stdout but the JSON.
    assert!(
        stderr(&out).contains("Latency breakdown"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("results written to"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn report_merge_to_stdout_is_the_merged_export() {
    let s = Serve::one_ms(&[]);
    let run = |seed: &str| {
        let quick = ["-n", "5", "--warmup", "0", "--no-accuracy", "--seed", seed];
        let (_, e) = run_export(&s.url, &quick);
        let path = tmp_path("host.json");
        std::fs::write(&path, e.to_string()).unwrap();
        path
    };
    let (a, b) = (run("1"), run("2"));
    let out = run_env(
        &[
            "report",
            "--merge",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            "-",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let merged = parsed(&out);
    assert_eq!(merged["phases"][0]["n"], 10, "{merged}");
    assert!(
        stderr(&out).contains("merged 2 exports into stdout"),
        "{}",
        stderr(&out)
    );
    assert!(!std::path::Path::new("-").exists(), "no file named -");
}

#[test]
fn the_reference_endpoint_takes_times_with_units() {
    let s = Serve::start(&["--base-ms", "20ms", "--per-token-ms", "0"]);
    let (_, e) = run_export(
        &s.url,
        &[
            "-n",
            "3",
            "--warmup",
            "0",
            "--no-accuracy",
            "--timeout",
            "5s",
        ],
    );
    let p50 = crate::common::f(&e["phases"][0]["latency_ms"]["p50"]);
    assert!(
        (20.0..60.0).contains(&p50),
        "p50 {p50} ms against 20 ms of service"
    );
    assert_eq!(e["config"]["timeout_s"], 5.0);
    refused(
        &["--demo", "--timeout", "5 parsecs"],
        &[
            "--timeout",
            "must be a duration > 0 and at most 31 days, such as 30s, 5m or 1.5",
        ],
    );
}

#[test]
fn completions_man_page_version_and_help() {
    let ok = |args: &[&str]| {
        let out = run_env(args, &[]);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let bash = ok(&["completions", "bash"]);
    assert!(
        bash.contains("complete -F _encbench__tui") && bash.contains("--concurrency"),
        "{bash}"
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        assert!(
            ok(&["completions", shell]).contains("encbench-tui"),
            "{shell}"
        );
    }
    let man = ok(&["man"]);
    assert!(
        man.starts_with(".ie") || man.contains(".TH encbench-tui"),
        "{man}"
    );
    assert!(man.contains("\\-\\-concurrency"), "{man}");

    // encbench-tui 0.1.0 (248067c 2026-12-01)
    let version = ok(&["--version"]);
    let commit = version
        .split(['(', ' '])
        .find(|w| w.len() >= 7 && w.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(commit.is_some(), "no commit in {version:?}");

    let help = ok(&["--help"]);
    for want in [
        "Examples:",
        "-z 1m",
        "-o -",
        "[env: ENCBENCH_URL",
        "[env: ENCBENCH_MODEL",
        "[env: AWS_REGION",
    ] {
        assert!(help.contains(want), "--help has no {want:?}");
    }

    // compare's help names only what compare has: no run-only flag, no live-screen key of
    // a run, and the capacity search it does with --slo is said.
    let compare = ok(&["compare", "--help"]);
    for absent in [
        "--sweep-batch",
        "--sweep-concurrency",
        "--find-capacity",
        "--until-stable",
        "key f",
        "key b",
        "key s",
    ] {
        assert!(!compare.contains(absent), "compare --help has {absent:?}");
    }
    assert!(
        compare.contains(
            "With --slo, every phase is judged against it and each target's capacity is searched"
        ),
        "{compare}"
    );
    refused(
        &["compare", "--demo", "--slo", "p99=1s", "--find-capacity"],
        &["unexpected argument '--find-capacity'"],
    );
}

#[test]
fn compare_and_cold_start_export_to_stdout_too() {
    let (a, b) = (Serve::one_ms(&[]), Serve::one_ms(&[]));
    let out = run_env(
        &[
            "compare",
            "--headless",
            "--target",
            &format!("name=a,url={}", a.url),
            "--target",
            &format!("name=b,url={}", b.url),
            "--batch-sizes",
            "1",
            "--no-concurrency",
            "-n",
            "3",
            "--no-accuracy",
            "--timeout",
            "10s",
            "-o",
            "-",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let export = parsed(&out);
    assert_eq!(
        export["compare"]["targets"].as_array().map(Vec::len),
        Some(2),
        "{export}"
    );
    assert_eq!(
        export["phases"].as_array().map(Vec::len),
        Some(2),
        "{export}"
    );
    assert!(
        stderr(&out).contains("p50"),
        "the tables on stderr: {}",
        stderr(&out)
    );

    // The reference endpoint's SageMaker runtime API, signed as the SDK signs.
    let (key, secret) = ("AKIDENCBENCHTEST", "reference-endpoint-secret");
    let sm = Serve::start(&[
        "--access-key",
        key,
        "--secret-key",
        secret,
        "--base-ms",
        "2",
    ]);
    let creds = [
        ("AWS_ACCESS_KEY_ID", key),
        ("AWS_SECRET_ACCESS_KEY", secret),
        ("AWS_REGION", "us-east-1"),
    ];
    let out = run_env(
        &[
            "cold-start",
            "--endpoint",
            "ep",
            "--endpoint-url",
            &sm.url,
            "--retry-interval",
            "200ms",
            "--give-up",
            "1m",
            "-n",
            "3",
            "-o",
            "-",
        ],
        &creds,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let export = parsed(&out);
    assert!(
        export["cold_start"]["first_success"].is_number(),
        "{export}"
    );
    assert!(
        stderr(&out).contains("time to first success"),
        "{}",
        stderr(&out)
    );
}
