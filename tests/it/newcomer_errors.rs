//! What a newcomer meets, through the real binary: errors that name the cause and the fix
//! (a URL without a scheme, no AWS region, no credentials, an unpriced instance type),
//! `--fail-on` thresholds that set exit code 3 for CI, the warning when most requests
//! failed, and phases too short for a rate (`n<c`).

use crate::common::{Ran, Serve, counters, f, run_env, schema_violations, tmp_path};
use serde_json::Value;

/// The binary's one-line error: exit 2, one line on stderr, nothing sent to `s`.
fn refused_before_sending(out: &Ran, s: &Serve) -> String {
    let err = out.stderr.trim_end().to_string();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(counters(s)["invocations"], 0, "nothing may be sent: {err}");
    err
}

#[test]
fn a_url_without_a_scheme_says_what_to_write() {
    let s = Serve::one_ms(&[]);
    let bare = s.url.trim_start_matches("http://").to_string();
    let out = run_env(&["--headless", "--url", &bare, "-n", "3"], &[]);
    let err = refused_before_sending(&out, &s);
    assert!(
        err.contains(&format!("--url: {bare}: no scheme: write http://{bare}")),
        "{err}"
    );
    let out = run_env(
        &["--headless", "--url", "ftp://127.0.0.1:21", "-n", "3"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("use http:// or https://"),
        "{}",
        out.stderr
    );
}

/// A port no request could reach is bad input at parse time in every URL flag, in a run,
/// `compare` and `cold-start` alike: never "unreachable", never retried until --give-up.
#[test]
fn a_port_out_of_range_is_bad_input_in_every_url_flag() {
    let bad = "http://127.0.0.1:99999";
    let target = format!("name=a,url={bad}");
    let cases: [(&[&str], &str); 5] = [
        (&["--headless", "--url", bad, "-n", "3"], "--url"),
        (
            &["--headless", "--demo", "--metrics-url", bad],
            "--metrics-url",
        ),
        (
            &["--headless", "--endpoint", "x", "--endpoint-url", bad],
            "--endpoint-url",
        ),
        (
            &[
                "compare",
                "--headless",
                "--target",
                &target,
                "--target",
                "url=http://h:1",
            ],
            "--target",
        ),
        // Retried every 5 s until --give-up before: this one says so in 3 s.
        (
            &[
                "cold-start",
                "--endpoint",
                "x",
                "--region",
                "us-east-1",
                "--give-up",
                "3s",
                "--endpoint-url",
                bad,
            ],
            "--endpoint-url",
        ),
    ];
    for (args, flag) in cases {
        let started = std::time::Instant::now();
        let out = run_env(
            args,
            &[
                ("AWS_ACCESS_KEY_ID", "AKID"),
                ("AWS_SECRET_ACCESS_KEY", "s"),
            ],
        );
        let err = out.stderr.trim_end();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("error: {flag}")),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("port 99999 is out of range: a port is 1 to 65535"),
            "{err}"
        );
        assert!(!err.contains("unreachable"), "{err}");
        assert!(
            started.elapsed().as_secs() < 4,
            "{args:?} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn no_aws_region_says_where_a_region_comes_from() {
    let s = Serve::one_ms(&[]);
    let keys = [
        ("AWS_ACCESS_KEY_ID", "AKIDNEWCOMER"),
        ("AWS_SECRET_ACCESS_KEY", "newcomer-secret"),
    ];
    let args = [
        "--headless",
        "--endpoint",
        "x",
        "--endpoint-url",
        &s.url,
        "-n",
        "3",
    ];
    let err = refused_before_sending(&run_env(&args, &keys), &s);
    assert!(
        err.contains("--endpoint: sagemaker:x: no AWS region found"),
        "{err}"
    );
    for way in ["--region us-east-1", "AWS_REGION", "profile 'default'"] {
        assert!(err.contains(way), "{way}: {err}");
    }
    assert!(!err.contains("missing signing region"), "{err}");
}

#[test]
fn no_aws_credentials_names_every_source_tried() {
    let s = Serve::one_ms(&[]);
    let args = [
        "--headless",
        "--endpoint",
        "x",
        "--region",
        "us-east-1",
        "--endpoint-url",
        &s.url,
        "-n",
        "3",
    ];
    // run_env: HOME is an empty folder, no AWS_* variables, instance metadata off.
    let err = refused_before_sending(&run_env(&args, &[]), &s);
    assert!(err.contains("no AWS credentials found"), "{err}");
    for source in [
        "AWS_ACCESS_KEY_ID",
        "profile 'default' in ~/.aws/credentials and ~/.aws/config",
        "SSO",
        "web identity",
        "container credentials",
        "EC2 instance metadata (off: AWS_EC2_METADATA_DISABLED)",
        "--profile NAME",
    ] {
        assert!(err.contains(source), "{source}: {err}");
    }
    assert!(!err.contains("was not enabled"), "{err}");
    // Instance metadata that refuses (403, as a proxy or a locked-down host answers): the
    // same list, with its refusal in words, not the SDK's thousand-character Debug dump.
    let imds = crate::common::hostile::Hostile::start(|_| {
        crate::common::hostile::Reply::json(403, "Forbidden")
    });
    let refused = [
        ("AWS_EC2_METADATA_DISABLED", "false"),
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url.as_str()),
    ];
    let cold_start = [
        "cold-start",
        "--endpoint",
        "x",
        "--region",
        "us-east-1",
        "--endpoint-url",
        &s.url,
    ];
    for command in [&args[..], &cold_start[..]] {
        let err = refused_before_sending(&run_env(command, &refused), &s);
        assert!(err.contains("no AWS credentials found"), "{err}");
        assert!(
            err.contains("EC2 instance metadata (which refused: failed to load IMDS session token"),
            "{err}"
        );
        assert!(err.contains("--profile NAME"), "{err}");
        assert!(
            err.len() < 800 && !err.contains("ProviderError") && !err.contains("headers:"),
            "{err}"
        );
    }
    // The profile named is the one the SDK reads.
    let mut named = args.to_vec();
    named.extend(["--profile", "ci"]);
    let err = refused_before_sending(&run_env(&named, &[]), &s);
    assert!(err.contains("profile 'ci'"), "{err}");
}

/// `cold-start` says the same before its first attempt, instead of retrying in the SDK's
/// words until --give-up.
#[test]
fn cold_start_names_a_missing_region_or_credentials_before_its_first_attempt() {
    let s = Serve::one_ms(&[]);
    let keys = [
        ("AWS_ACCESS_KEY_ID", "AKIDNEWCOMER"),
        ("AWS_SECRET_ACCESS_KEY", "newcomer-secret"),
    ];
    let args = ["cold-start", "--endpoint", "x", "--endpoint-url", &s.url];
    let err = refused_before_sending(&run_env(&args, &keys), &s);
    assert!(err.contains("no AWS region found"), "{err}");
    let mut with_region = args.to_vec();
    with_region.extend(["--region", "us-east-1"]);
    let err = refused_before_sending(&run_env(&with_region, &[]), &s);
    assert!(err.contains("no AWS credentials found"), "{err}");
}

#[test]
fn an_unpriced_instance_type_is_one_line_naming_what_is_priced_and_the_flag() {
    for (t, known) in [
        (
            "ml.g5.16xlarge",
            "ml.g5 sizes priced: ml.g5.xlarge, ml.g5.2xlarge,",
        ),
        (
            "ml.nope.large",
            "families priced: ml.c5, ml.c6i, ml.c7i, ml.g4dn, ml.g5",
        ),
    ] {
        let out = run_env(
            &["--headless", "--demo", "--instance-type", t, "-n", "3"],
            &[],
        );
        let err = out.stderr.trim_end();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("--instance-type: no shipped price for '{t}'")),
            "{err}"
        );
        assert!(
            err.contains(known) && err.contains("give --price-per-hour"),
            "{err}"
        );
    }
}

/// A headless run of the binary against `s`, and its export.
fn run_against(s: &Serve, extra: &[&str]) -> (Ran, Value) {
    let path = tmp_path("newcomer.json");
    let mut args = vec![
        "--headless",
        "--url",
        &s.url,
        "--no-accuracy",
        "-o",
        path.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = run_env(&args, &[]);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no export ({e}): {}", out.stderr));
    (out, serde_json::from_str(&text).unwrap())
}

#[test]
fn fail_on_errors_exits_3_against_an_erring_server_and_0_against_a_clean_one() {
    let erring = Serve::one_ms(&["--error-rate", "0.05", "--seed", "7"]);
    let (out, e) = run_against(&erring, &["-n", "400", "--fail-on", "errors>1%"]);
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
    assert!(
        out.stdout.contains("Errors by kind"),
        "the tables come first"
    );
    let breach: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("fail-on "))
        .collect();
    assert_eq!(breach.len(), 1, "{}", out.stderr);
    assert!(
        breach[0].starts_with("fail-on errors>1%: breached: errors ")
            && breach[0].contains("in phase 1"),
        "{}",
        breach[0]
    );
    assert!(
        out.stderr
            .contains("error: --fail-on: 1 of 1 thresholds breached")
    );
    let o = &e["fail_on"][0];
    assert_eq!(
        (o["threshold"].as_str(), o["breached"].as_bool()),
        (Some("errors>1%"), Some(true))
    );
    let share = f(&o["measured"]);
    assert!((0.02..0.09).contains(&share), "{share}");
    assert_eq!(e["config"]["fail_on"], serde_json::json!(["errors>1%"]));
    assert_eq!(schema_violations(&e), Vec::<String>::new());

    let clean = Serve::one_ms(&[]);
    let (out, e) = run_against(
        &clean,
        &["-n", "50", "--fail-on", "errors>1%", "--fail-on", "p99>10s"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(!out.stderr.contains("fail-on"), "{}", out.stderr);
    let outcomes = e["fail_on"].as_array().unwrap();
    assert_eq!(outcomes.len(), 2);
    assert!(
        outcomes.iter().all(|o| o["breached"] == false),
        "{outcomes:?}"
    );
    assert_eq!(f(&outcomes[0]["measured"]), 0.0);
    assert_eq!(schema_violations(&e), Vec::<String>::new());
}

#[test]
fn fail_on_a_percentile_names_the_measured_latency() {
    let slow = Serve::fixed(20, 1, &[]);
    let (out, e) = run_against(
        &slow,
        &["-n", "10", "--fail-on", "p99>5ms", "--fail-on", "p50>1s"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("fail-on p99>5ms: breached: p99 "))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    let ms: f64 = line["fail-on p99>5ms: breached: p99 ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(ms >= 20.0, "{line}");
    assert!(!out.stderr.contains("fail-on p50>1000ms"), "met: no line");
    assert!(
        out.stderr.contains("1 of 2 thresholds breached"),
        "{}",
        out.stderr
    );
    assert!(f(&e["fail_on"][0]["measured"]) >= 20.0);
    assert_eq!(e["fail_on"][1]["breached"], false);
}

#[test]
fn a_bad_threshold_is_exit_2_naming_fail_on() {
    for bad in [
        vec!["--fail-on", "p99<200ms"],
        vec!["--fail-on", "errors>150%"],
        vec!["--fail-on", "latency"],
        vec!["--fail-on", "slo"],
    ] {
        let mut args = vec!["--headless", "--demo", "-n", "3"];
        args.extend(bad.iter().copied());
        let out = run_env(&args, &[]);
        let err = out.stderr.trim_end();
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{bad:?}: {err}");
        assert!(err.contains("--fail-on"), "{bad:?}: {err}");
    }
}

#[test]
fn a_run_where_every_request_failed_says_so_loudly() {
    let broken = Serve::one_ms(&["--error-rate", "1"]);
    let (out, e) = run_against(&broken, &["-n", "20"]);
    // Nothing of the model was measured: exit 4, so no script takes the figures for a
    // result, with the export and tables written all the same.
    assert_eq!(out.status.code(), Some(4), "{}", out.stderr);
    assert!(
        out.stderr.trim_end().ends_with(
            "error: all 20 measured requests failed (ModelError(500) 20): the figures above describe failures, not the model"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(e["phases"][0]["ok"], 0);

    // Before a breach's 3: the breach is said, the exit code says nothing was measured.
    let (out, _) = run_against(&broken, &["-n", "20", "--fail-on", "errors>50%"]);
    assert_eq!(out.status.code(), Some(4), "{}", out.stderr);
    assert!(
        out.stderr.contains("fail-on errors>50%: breached"),
        "{}",
        out.stderr
    );

    // Most but not all failed: the warning, and exit 0 (--fail-on is how CI fails on it).
    let (out, _) = run_against(&Serve::one_ms(&["--error-rate", "0.8"]), &["-n", "40"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(
        out.stderr.contains("measured requests failed"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("warning: "), "{}", out.stderr);

    let (out, _) = run_against(&Serve::one_ms(&[]), &["-n", "20"]);
    assert!(!out.stderr.contains("warning:"), "{}", out.stderr);
}

#[test]
fn a_phase_shorter_than_its_concurrency_says_its_rate_is_not_meaningful() {
    let s = Serve::fixed(20, 16, &[]);
    let (out, e) = run_against(&s, &["-n", "3", "--concurrency", "16"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    let p = &e["phases"][0];
    assert_eq!(p["rate_not_meaningful"], true, "{p}");
    let row = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Batch"))
        .nth(2)
        .unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(
        row.contains("n<c") && !row.contains(&format!("{:.1}", f(&p["req_per_s"]))),
        "{row}"
    );
    assert!(
        out.stdout
            .contains("n<c: fewer measured requests than the concurrency cap")
    );
    assert_eq!(schema_violations(&e), Vec::<String>::new());

    let path = tmp_path("nc.json");
    std::fs::write(&path, e.to_string()).unwrap();
    let p = path.to_str().unwrap();
    let md = run_env(&["report", p, "--format", "markdown"], &[]);
    assert!(
        md.stdout.contains("| n<c |") && md.stdout.contains("n<c: fewer"),
        "{}",
        md.stdout
    );
    let csv = run_env(&["report", p, "--format", "csv"], &[]);
    let mut lines = csv.stdout.lines();
    assert!(lines.next().unwrap().ends_with(",rate_not_meaningful"));
    assert!(lines.next().unwrap().ends_with(",true"), "{}", csv.stdout);

    let (_, e) = run_against(&s, &["-n", "32", "--concurrency", "16"]);
    assert_eq!(e["phases"][0]["rate_not_meaningful"], false);
}

#[test]
fn compare_fails_on_a_threshold_naming_the_target_that_broke_it() {
    let (good, bad) = (Serve::one_ms(&[]), Serve::one_ms(&["--error-rate", "1"]));
    let path = tmp_path("compare-fail-on.json");
    let (a, b) = (
        format!("name=good,url={}", good.url),
        format!("name=bad,url={}", bad.url),
    );
    let out = run_env(
        &[
            "compare",
            "--headless",
            "--no-accuracy",
            "-n",
            "10",
            "--target",
            &a,
            "--target",
            &b,
            "--fail-on",
            "errors>1%",
            "-o",
            path.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(3), "{}", out.stderr);
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("fail-on errors>1%: breached"));
    assert!(
        line.is_some_and(|l| l.contains("errors 100.00% in phase") && l.contains("(bad kind")),
        "{}",
        out.stderr
    );
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(e["fail_on"][0]["breached"], true);
    assert_eq!(schema_violations(&e), Vec::<String>::new());
}

/// Takes the immutable flag off again, whatever the test's end.
struct Immutable(std::path::PathBuf);

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
    }
}

/// An immutable export target (`chattr +i`) takes no rename: the run is refused at its
/// start, not lost at its end.
#[test]
fn an_immutable_export_target_is_refused_before_the_run() {
    let s = Serve::one_ms(&[]);
    let path = tmp_path("immutable.json");
    std::fs::write(&path, "{}").unwrap();
    let set = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&path)
        .output();
    let _undo = Immutable(path.clone());
    match set {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            // Not root, or a filesystem without the flag: nothing here can be made immutable.
            eprintln!(
                "SKIPPED the immutable-target assertion: chattr +i failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            return;
        }
        Err(e) => {
            eprintln!("SKIPPED the immutable-target assertion: no chattr ({e})");
            return;
        }
    }
    let p = path.to_str().unwrap();
    let out = run_env(&["--headless", "--url", &s.url, "-n", "3", "-o", p], &[]);
    let err = refused_before_sending(&out, &s);
    assert!(
        err.starts_with(&format!("error: --export: {p}: cannot write")),
        "{err}"
    );
    assert!(err.contains("immutable"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
}

/// Each message names the real cause and the flag that fixes it, as the user wrote them: a
/// negative duration (was `unexpected argument '-1' found`), a ramp to `inf` quoted whole (was
/// `inf: must be between … or inf`), a tune placeholder that names no parameter (was the
/// parameter it meant called unused), a reranker's documents over the server's batch limit
/// under `--docs-per-query` and `--sweep-docs` (was `--batch-size`), `--engine triton` where
/// no KServe v2 route exists (was "lists no model"), a model the server's list lacks (was
/// taken). One line, exit 2.
#[test]
fn each_message_names_the_cause_and_the_flag_as_given() {
    let tei = Serve::one_ms(&["--only", "tei", "--model-kind", "reranker"]);
    let hf = Serve::one_ms(&["--only", "hf"]);
    let trace = tmp_path("long.jsonl");
    std::fs::write(
        &trace,
        "{\"timestamp_ms\": 0, \"texts\": [\"a\"]}\n{\"timestamp_ms\": 100000, \"texts\": [\"b\"]}\n",
    )
    .unwrap();
    let infinity = Serve::one_ms(&["--only", "infinity"]);
    let cases: [(&[&str], &str); 10] = [
        // Was "name the family's rerank route (--api rerank)", which sent 400s to an embedder.
        (
            &[
                "--headless",
                "--url",
                &infinity.url,
                "--task",
                "rerank",
                "-n",
                "2",
            ],
            "and the server says its model is an embedder: give --url a reranker's server, or drop --task rerank",
        ),
        // Was taken as the model (and recorded as found) although the list lacked it.
        (
            &[
                "--headless",
                "--url",
                &infinity.url,
                "--model",
                "nosuch",
                "-n",
                "2",
            ],
            "error: --model: 'nosuch' is not among the models the server lists (GET /models: encbench-reference)",
        ),
        // Was planned: 100 s played over 23,148 days, where every time stops at 31 days.
        (
            &[
                "--demo",
                "--headless",
                "--replay",
                trace.to_str().unwrap(),
                "--replay-speed",
                "0.0000001",
            ],
            "error: --replay-speed: 0.0000001 plays the 100.0 s recorded in 23148 days; a run lasts 31 days at most",
        ),
        // Was "lists no model: name it with --model", and naming one waited 60 s.
        (
            &[
                "--headless",
                "--url",
                &hf.url,
                "--engine",
                "triton",
                "-n",
                "2",
            ],
            "error: --engine: no KServe v2 route answered at",
        ),
        (
            &["--demo", "--headless", "--slice", "-1s"],
            "invalid value '-1s' for '--slice <DURATION>': must be a duration of at least 1ms",
        ),
        (
            &["--demo", "--headless", "--duration", "-5m"],
            "invalid value '-5m' for '--duration",
        ),
        (
            &[
                "--demo",
                "--headless",
                "--ramp",
                "20..inf",
                "--duration",
                "5",
            ],
            "20..inf: a ramp runs between two finite rates; for a closed loop use --request-rate inf",
        ),
        (
            &[
                "tune",
                "--serve",
                "x {threads}",
                "--param",
                "workers=1,2",
                "--url",
                "http://127.0.0.1:1",
            ],
            "error: --serve: {threads} names no --param (given: workers)",
        ),
        (
            &[
                "--headless",
                "--url",
                &tei.url,
                "--docs-per-query",
                "10000",
                "-n",
                "2",
            ],
            "error: --docs-per-query: 10000 documents a query is over the server's max client batch size of 32",
        ),
        (
            &[
                "--headless",
                "--url",
                &tei.url,
                "--sweep-docs",
                "1",
                "64",
                "-n",
                "2",
            ],
            "error: --sweep-docs: 64 documents a query is over the server's max client batch size of 32",
        ),
    ];
    for (args, says) in cases {
        let out = run_env(args, &[]);
        let err = out.stderr.trim_end();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("internal failure"), "{err}");
    }
    assert_eq!(counters(&tei)["invocations"], 0, "refused before any load");
    assert_eq!(counters(&hf)["invocations"], 0, "refused before any load");

    // A route that is none of the server's, found by the check before the load: no load
    // (was 50 requests, each the same 404), the export says what was asked.
    let export = tmp_path("no-route.json");
    let out = run_env(
        &[
            "--headless",
            "--url",
            &infinity.url,
            "--engine",
            "tei",
            "-n",
            "50",
            "--export",
            export.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.trim_end().ends_with(
            "error: --url: POST /embed is not a route of this server: name its API with --engine (hf, triton, vllm, openai, tei, infinity, jina), its model with --model, or the route with --path; no load was sent"
        ),
        "{}",
        out.stderr
    );
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&export).unwrap()).unwrap();
    assert_eq!(e["phases"].as_array().map(Vec::len), Some(0), "{e}");
    assert!(
        schema_violations(&e).is_empty(),
        "{:?}",
        schema_violations(&e)
    );

    // A trace whose times go back is played in time order, and says so (was silent).
    std::fs::write(
        &trace,
        "{\"timestamp_ms\": 500, \"texts\": [\"a\"]}\n{\"timestamp_ms\": 100, \"texts\": [\"b\"]}\n",
    )
    .unwrap();
    let out = run_env(
        &[
            "--demo",
            "--headless",
            "--no-accuracy",
            "--replay",
            trace.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the trace's times go back at record 2 (0.400 s before the one above it)"),
        "{}",
        out.stderr
    );
}
