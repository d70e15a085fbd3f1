//! Secrets stay secret: credentials, session tokens and URL passwords never reach an
//! export, the screen or a log; exports hold no request bodies; the reference endpoint
//! listens on loopback only.

use crate::common::{BIN, Serve, run_env, stderr, stdout, tmp_path};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const KEY: &str = "AKIDSECURITYTEST";
const SECRET: &str = "secret-3f9a1c-MUST-NOT-LEAK";
const TOKEN: &str = "session-token-77c2e1-MUST-NOT-LEAK";
const WRONG: &str = "wrong-secret-5d1b0e-MUST-NOT-LEAK";
const PASSWORD: &str = "url-password-91af4c-MUST-NOT-LEAK";

/// Runs the binary with backtraces on (what a panic would print, it prints) and returns
/// everything it wrote: stdout, stderr, and the export and HTML report if there are any.
fn everything(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let export = tmp_path("security.json");
    let report = tmp_path("security.html");
    let mut all = vec![
        "--headless",
        "--export",
        export.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let mut env = env.to_vec();
    env.push(("RUST_BACKTRACE", "1"));
    let out = run_env(&all, &env);
    let written = std::fs::read_to_string(&export).unwrap_or_default();
    let page = std::fs::read_to_string(&report).unwrap_or_default();
    let text = format!("{}\n{}\n{written}\n{page}", stdout(&out), stderr(&out));
    (out.status.code(), text)
}

fn assert_absent(text: &str, secrets: &[&str]) {
    for s in secrets {
        assert!(!text.contains(s), "{s} leaked:\n{text}");
    }
}

#[test]
fn credentials_and_session_tokens_never_reach_exports_or_output() {
    let _turn = crate::common::load();
    // The serve side gets its secret from the environment, as --help recommends, and
    // writes its own output where the test can read it.
    let log = tmp_path("serve.log");
    let mut serve = Command::new(BIN)
        .args([
            "serve",
            "--port",
            "0",
            "--base-ms",
            "1",
            "--per-token-ms",
            "0",
        ])
        .env("ENCBENCH_SERVE_ACCESS_KEY", KEY)
        .env("ENCBENCH_SERVE_SECRET_KEY", SECRET)
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.split_whitespace().last().unwrap().to_string();
    let aws = |secret: &'static str| {
        vec![
            ("AWS_ACCESS_KEY_ID", KEY),
            ("AWS_SECRET_ACCESS_KEY", secret),
            ("AWS_SESSION_TOKEN", TOKEN),
            ("AWS_REGION", "us-east-1"),
        ]
    };
    let sm = [
        "--endpoint",
        "nli-ep",
        "--endpoint-url",
        url.as_str(),
        "-n",
        "20",
    ];

    let (code, text) = everything(&sm, &aws(SECRET));
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("sagemaker:nli-ep"),
        "the run happened: {text}"
    );
    assert_absent(&text, &[SECRET, TOKEN]);

    // A refused signature is reported without echoing what was signed with.
    let (code, text) = everything(&sm, &aws(WRONG));
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("authentication failed"), "{text}");
    assert_absent(&text, &[WRONG, SECRET, TOKEN]);

    // The serve --help output names the variable but never shows its value.
    let help = Command::new(BIN)
        .args(["serve", "--help"])
        .env("ENCBENCH_SERVE_SECRET_KEY", SECRET)
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("ENCBENCH_SERVE_SECRET_KEY"), "{help}");
    assert_absent(&help, &[SECRET]);

    serve.kill().unwrap();
    serve.wait().unwrap();
    let served = format!("{line}{}", std::fs::read_to_string(&log).unwrap());
    assert_absent(&served, &[SECRET, TOKEN, WRONG]);
}

#[test]
fn a_password_in_the_url_is_never_shown_or_exported() {
    let s = Serve::one_ms(&[]);
    let with_password = s.url.replace("http://", &format!("http://ops:{PASSWORD}@"));
    let (code, text) = everything(&["--url", &with_password, "-n", "5"], &[]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains(&s.url), "the target is still named: {text}");
    assert_absent(&text, &[PASSWORD]);

    // Unreachable: the one-line error and the export carry the URL without it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dead = format!("http://ops:{PASSWORD}@127.0.0.1:{port}");
    let (code, text) = everything(&["--url", &dead], &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("unreachable"), "{text}");
    assert_absent(&text, &[PASSWORD]);
}

#[test]
fn exports_hold_no_request_bodies() {
    let s = Serve::one_ms(&[]);
    let marker = "confidential-customer-text-4e7d";
    let texts = tmp_path("texts.jsonl");
    std::fs::write(
        &texts,
        format!("{{\"premise\": \"{marker} one\", \"hypothesis\": \"{marker} two\"}}\n"),
    )
    .unwrap();
    let (code, text) = everything(
        &[
            "--url",
            &s.url,
            "--texts",
            texts.to_str().unwrap(),
            "-n",
            "10",
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("\"ok\": 10"), "the texts were sent: {text}");
    assert_absent(&text, &[marker]);
}

#[test]
fn the_reference_endpoint_listens_on_loopback_only() {
    let s = Serve::start(&["--base-ms", "1"]);
    assert!(s.url.starts_with("http://127.0.0.1:"), "{}", s.url);
    let port: u16 = s.url.rsplit(':').next().unwrap().parse().unwrap();
    // This host's address on its default route (no packet is sent to find it).
    let udp = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    let outside = udp
        .connect("192.0.2.1:9")
        .and_then(|()| udp.local_addr())
        .map(|a| a.ip())
        .ok()
        .filter(|ip| !ip.is_loopback() && !ip.is_unspecified());
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
        "reachable on loopback"
    );
    if let Some(ip) = outside {
        assert!(
            std::net::TcpStream::connect((ip, port)).is_err(),
            "reachable on {ip}: it must bind 127.0.0.1 only"
        );
    }
}

/// `--header` and `--bearer-token-env` reach a server that checks them (a gateway's key, a
/// vLLM/TEI `--api-key`), and their values are shown nowhere, also when refused.
#[test]
fn headers_reach_the_server_and_their_values_never_show() {
    const BEARER: &str = "bearer-8d2c41-MUST-NOT-LEAK";
    const API_KEY: &str = "api-key-6b0f93-MUST-NOT-LEAK";
    let s = Serve::one_ms(&[
        "--require-header",
        &format!("Authorization: Bearer {BEARER}"),
        "--require-header",
        &format!("X-Api-Key: {API_KEY}"),
    ]);
    let key = format!("X-Api-Key: {API_KEY}");
    let with = [
        "--url",
        &s.url,
        "-n",
        "6",
        "--header",
        &key,
        "--bearer-token-env",
        "ENCBENCH_TEST_BEARER",
    ];
    let path = tmp_path("headers.json");
    let mut all = vec!["--headless", "--export", path.to_str().unwrap()];
    all.extend_from_slice(&with);
    let out = run_env(&all, &[("ENCBENCH_TEST_BEARER", BEARER)]);
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_absent(
        &format!("{}{}{written}", stdout(&out), stderr(&out)),
        &[BEARER, API_KEY],
    );
    let export: serde_json::Value = serde_json::from_str(&written).unwrap();
    assert_eq!(export["phases"][0]["ok"], 6, "{}", export["phases"][0]);
    assert_eq!(export["accuracy"]["passed"], 4);
    assert_eq!(
        export["config"]["target"]["headers"],
        serde_json::json!(["x-api-key", "authorization"])
    );
    assert_eq!(crate::common::counters(&s)["unauthorized"], 0);

    // A wrong token: refused at once, as credentials, not waited on as "not ready".
    let (code, text) = everything(&with, &[("ENCBENCH_TEST_BEARER", "not-the-token")]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("401") && text.contains("--header"), "{text}");
    assert_absent(&text, &[BEARER, API_KEY, "not-the-token"]);

    // Bad input is named: an unset variable, a header for SageMaker, a malformed header.
    for (args, flag) in [
        (
            &[
                "--url",
                &s.url,
                "--bearer-token-env",
                "ENCBENCH_UNSET_VAR_X",
            ][..],
            "--bearer-token-env",
        ),
        (
            &[
                "--endpoint",
                "ep",
                "--region",
                "us-east-1",
                "--header",
                &key,
            ][..],
            "--header",
        ),
        (
            &["--url", &s.url, "--header", "no colon here"][..],
            "--header",
        ),
    ] {
        let (code, text) = everything(args, &[]);
        assert_eq!(code, Some(2), "{args:?}: {text}");
        assert!(text.contains(flag), "{args:?}: {text}");
        assert_absent(&text, &[API_KEY]);
    }

    // A malformed header, its value the key: clap once quoted the whole of it back, and a
    // CR cut its message short with no reason. One line naming the problem, no value.
    for (header, why) in [
        (format!("X-Api Key: {API_KEY}"), "a space after 'X-Api'"),
        (format!("X-Ключ: {API_KEY}"), "(outside ASCII) after 'X-'"),
        (format!("X-Api-Key{API_KEY}"), "expected 'Name: value'"),
        (
            format!("X-Api-Key: {API_KEY}\r\nInjected: x"),
            "X-Api-Key holds a line break",
        ),
    ] {
        for flag in ["--header", "--require-header"] {
            let args = if flag == "--header" {
                vec!["--url", &s.url, flag, &header]
            } else {
                vec!["serve", flag, &header]
            };
            let out = run_env(&args, &[]);
            let text = format!("{}{}", stdout(&out), stderr(&out));
            assert_eq!(out.status.code(), Some(2), "{header:?}: {text}");
            assert_eq!(text.trim_end().lines().count(), 1, "{header:?}: {text}");
            assert!(
                text.contains(flag) && text.contains(why),
                "{header:?}: {text}"
            );
            assert_absent(&text, &[API_KEY]);
        }
    }
}
