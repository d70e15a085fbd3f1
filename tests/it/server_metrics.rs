//! `--metrics-url` and `--metric` through the binary against the reference endpoint, whose
//! `/metrics` exposes the same counters as its KServe statistics in Triton's Prometheus
//! family: the two diffs of one phase must agree. A metrics endpoint that fails is one
//! warning, never a failed run; bad flags are one line and exit 2. (Real Triton: `peers`.)

use crate::common::{Serve, args, f, run, run_export_env, schema_violations, stderr, stdout};
use serde_json::Value;

fn triton_args(s: &Serve, extra: &[&str]) -> Vec<String> {
    let a = args()
        .opt("--url", &s.url)
        .engine("triton", "encoder")
        .no_accuracy()
        .opt("--batch-size", 4)
        .n(20)
        .opt("--warmup", 2)
        .and_all(extra);
    a.strs().iter().map(ToString::to_string).collect()
}

fn run_triton(s: &Serve, extra: &[&str]) -> (crate::common::Ran, Value) {
    let a = triton_args(s, extra);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    run_export_env(&a, &[])
}

#[test]
fn metrics_diff_agrees_with_the_statistics_api_and_is_shown_beside_the_client() {
    let s = Serve::one_ms(&["--workers", "2"]);
    let metrics = format!("{}/metrics", s.url);
    let (out, e) = run_triton(
        &s,
        &[
            "--metrics-url",
            &metrics,
            "--metric",
            "nv_inference_count",
            "-c",
            "2",
        ],
    );
    let p = &e["phases"][0];
    let (m, stats) = (&p["server_metrics"], &p["server"]);
    // 2 warmup + 20 measured requests of 4 rows, each its own execution.
    assert_eq!(m["requests"], 22, "{m}");
    assert_eq!(m["executions"], stats["execution_count"], "{m} {stats}");
    assert_eq!(f(&m["batch_factor"]), 4.0);
    assert_eq!(f(&m["metrics"]["nv_inference_count"]["increase"]), 88.0);
    assert_eq!(m["metrics"]["nv_inference_count"]["type"], "counter");
    let stats_total = f(&stats["queue_ms"])
        + f(&stats["compute_input_ms"])
        + f(&stats["compute_infer_ms"])
        + f(&stats["compute_output_ms"]);
    let metrics_total = f(&m["queue_ms_per_request"]) + f(&m["compute_ms_per_request"]);
    assert!(
        metrics_total >= 1.0 && (metrics_total / stats_total - 1.0).abs() < 0.05,
        "metrics {metrics_total} ms against statistics {stats_total} ms per request"
    );
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    assert_eq!(e["config"]["metrics_url"], metrics.as_str());
    let tables = stdout(&out);
    assert!(
        tables.contains("Client and server side by side")
            && tables.contains("Server metrics named with --metric"),
        "{tables}"
    );
    assert!(!stderr(&out).contains("--metrics-url"), "{}", stderr(&out));
}

#[test]
fn a_failing_metrics_endpoint_is_one_warning_and_the_run_goes_on() {
    let s = Serve::one_ms(&[]);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dead = format!("http://127.0.0.1:{port}/metrics");
    // Two phases: the endpoint fails four times, and is said once.
    let (out, e) = run_triton(
        &s,
        &[
            "--metrics-url",
            &dead,
            "--sweep-concurrency",
            "--concurrency-levels",
            "1",
            "2",
        ],
    );
    assert!(out.status.success());
    let phases = e["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    assert!(phases.iter().all(|p| p.get("server_metrics").is_none()));
    assert!(phases.iter().all(|p| p["ok"] == 20), "the run went on");
    // Said once: in the export, under the tables' heading, and at most once on stderr
    // (where progress lines are printed, every few seconds).
    let notices: Vec<&str> = e["notices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| n.contains("--metrics-url"))
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("cannot connect"), "{notices:?}");
    let tables = stdout(&out);
    assert_eq!(tables.matches("note: --metrics-url").count(), 1, "{tables}");
    assert!(stderr(&out).matches("--metrics-url").count() <= 1);
    assert_eq!(schema_violations(&e), Vec::<String>::new());
}

#[test]
fn a_metric_the_endpoint_lacks_is_said_and_the_others_are_kept() {
    let s = Serve::one_ms(&[]);
    let metrics = format!("{}/metrics", s.url);
    let (out, e) = run_triton(
        &s,
        &[
            "--metrics-url",
            &metrics,
            "--metric",
            "vllm:num_requests_running",
            "--metric",
            "nv_inference_exec_count",
        ],
    );
    let m = &e["phases"][0]["server_metrics"];
    assert_eq!(
        f(&m["metrics"]["nv_inference_exec_count"]["increase"]),
        22.0
    );
    assert!(
        m["metrics"].get("vllm:num_requests_running").is_none(),
        "{m}"
    );
    let said = "--metric vllm:num_requests_running: not among";
    assert!(stdout(&out).contains(said), "{}", stdout(&out));
    assert!(
        e["notices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(said))
    );
}

#[test]
fn bad_metrics_flags_are_one_line_naming_the_flag() {
    for (bad, flag) in [
        (
            &["--metrics-url", "ftp://127.0.0.1:8002/metrics"][..],
            "--metrics-url",
        ),
        (&["--metrics-url", "127.0.0.1:8002"][..], "--metrics-url"),
        (
            &[
                "--metrics-url",
                "http://127.0.0.1:8002/metrics",
                "--metric",
                "no spaces",
            ][..],
            "--metric",
        ),
        (&["--cloudwatch-wait", "5"][..], "--cloudwatch-wait"),
        (
            &["--endpoint", "ep", "--cloudwatch-wait", "-5"][..],
            "--cloudwatch-wait",
        ),
    ] {
        let mut a = vec!["--headless", "-n", "5"];
        if !bad.contains(&"--endpoint") {
            a.push("--demo");
        }
        a.extend_from_slice(bad);
        let out = run(&a);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", out.stderr);
        assert!(out.stderr.contains(flag), "{bad:?}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    }
}

/// The live screen at 80×24 shows the running phase's server figures (refreshed about once
/// a second, before the phase ends), both lines whole.
#[test]
fn the_live_screen_shows_the_server_lines_whole_at_80x24() {
    use crate::common::BIN;
    use crate::common::tmux::Tmux;
    let s = Serve::one_ms(&[]);
    let command = format!(
        "{BIN} --url {url} --engine triton --model encoder --no-accuracy --batch-size 4 \
         --request-rate 40 --metrics-url {url}/metrics",
        url = s.url
    );
    let tmux = Tmux::start("server-metrics", 80, 24, &command);
    let screen = tmux.wait_for("the server lines", 30, |s| {
        s.contains("  compute ") && s.contains("batch ×4.0")
    });
    // The panel's cells, between its borders: each line ends with its unit, not cut.
    let cells: Vec<&str> = screen.split('│').map(str::trim_end).collect();
    let server = cells.iter().find(|c| c.starts_with("server ")).unwrap();
    assert!(
        server.contains(" · queue ") && server.ends_with(" ms"),
        "{screen}"
    );
    let compute = cells.iter().find(|c| c.starts_with("  compute ")).unwrap();
    assert!(compute.ends_with("batch ×4.0"), "{screen}");
    tmux.keys("q");
    assert_eq!(tmux.wait_exit(15), 0);
}

/// A metrics URL's password is scrubbed as --url's is: from the export, the tables and the
/// warning when the endpoint fails.
#[test]
fn a_password_in_the_metrics_url_is_never_shown_or_exported() {
    const PASSWORD: &str = "metrics-password-4e7d21-MUST-NOT-LEAK";
    let s = Serve::one_ms(&[]);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let live = s.url.replace("http://", &format!("http://ops:{PASSWORD}@")) + "/metrics";
    let dead = format!("http://ops:{PASSWORD}@127.0.0.1:{port}/metrics");
    for url in [live, dead] {
        let (out, e) = run_triton(&s, &["--metrics-url", &url]);
        let all = format!("{}\n{}\n{e}", stdout(&out), stderr(&out));
        assert!(!all.contains(PASSWORD), "leaked:\n{all}");
        let shown = e["config"]["metrics_url"].as_str().unwrap();
        assert!(shown.starts_with("http://127.0.0.1:"), "{shown}");
    }
}

/// `compare`: a target's `metrics-url=` gives its phases the server's side, shown per target
/// beside the client's figures; a target without one has none.
#[test]
fn compare_shows_the_server_side_per_target() {
    use crate::common::{run_env, tmp_path};
    let fast = Serve::fixed(2, 2, &[]);
    let slow = Serve::fixed(8, 2, &[]);
    let path = tmp_path("compare-server.json");
    let with = format!(
        "name=fast,url={url},engine=triton,model=encoder,metrics-url={url}/metrics",
        url = fast.url
    );
    let without = format!("name=slow,url={},engine=triton,model=encoder", slow.url);
    let out = run_env(
        &[
            "compare",
            "--headless",
            "--export",
            path.to_str().unwrap(),
            "--target",
            &with,
            "--target",
            &without,
            "-n",
            "10",
            "--batch-sizes",
            "1",
            "--no-concurrency",
            "--no-accuracy",
        ],
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let e: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let phases = e["phases"].as_array().unwrap();
    let of = |name: &str| phases.iter().find(|p| p["target"] == name).unwrap();
    let m = &of("fast")["server_metrics"];
    assert_eq!(
        m["executions"],
        of("fast")["server"]["execution_count"],
        "{m}"
    );
    assert!(f(&m["compute_ms_per_request"]) >= 2.0, "{m}");
    assert!(of("slow").get("server_metrics").is_none());
    assert_eq!(schema_violations(&e), Vec::<String>::new());
    let tables = stdout(&out);
    let rows: Vec<&str> = tables
        .lines()
        .skip_while(|l| !l.starts_with("Server side per target"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("fast ") || l.starts_with("slow "))
        .collect();
    assert_eq!(rows.len(), 1, "{tables}");
    assert!(rows[0].starts_with("fast "), "{tables}");
}
