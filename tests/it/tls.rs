//! HTTPS and gRPC over TLS against the reference endpoint serving a test CA's certificate
//! (tests/fixtures/tls: a CA, and a leaf for localhost and 127.0.0.1 valid to 2126 whose key
//! serves these tests only). The binary trusts the CA as users' tools do, through
//! `SSL_CERT_FILE`.

use crate::common::{Serve, run_env, run_export_env, schema_violations};
use serde_json::Value;
use std::path::Path;

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls");
    path.join(name).to_str().unwrap().to_string()
}

/// What arrived, one JSON value per request (`serve --request-log`).
fn arrived(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `https://` runs take the same measured HTTP/1.1 path as `http://` ones (a figure must not
/// depend on the scheme: BENCHMARKS.md, "HTTPS through the pool"), `grpcs://` agrees h2 by
/// ALPN, and an untrusted certificate is one line that says so.
#[test]
fn https_and_grpcs_runs_are_their_plain_twins_over_tls() {
    let log = crate::common::tmp_path("tls-requests.jsonl");
    let (cert, key, ca) = (fixture("cert.pem"), fixture("key.pem"), fixture("ca.pem"));
    let s = Serve::one_ms(&[
        "--only",
        "triton",
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--request-log",
        log.to_str().unwrap(),
    ]);
    assert!(s.url.starts_with("https://127.0.0.1:"), "{}", s.url);
    let trusted = [("SSL_CERT_FILE", ca.as_str())];

    // Triton found from the URL alone, over TLS; JSON tensors, then binary ones.
    for extra in [&[][..], &["--binary"][..]] {
        let args = [&["--url", &s.url, "-n", "30", "-c", "4"][..], extra].concat();
        let (out, e) = run_export_env(&args, &trusted);
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", out.stderr);
        assert_eq!(schema_violations(&e), Vec::<String>::new());
        let p = &e["phases"][0];
        assert_eq!(
            (p["ok"].as_u64(), p["sent"].as_u64()),
            (Some(30), Some(30)),
            "{p}"
        );
        assert_eq!(e["accuracy"]["passed"], e["accuracy"]["total"], "{extra:?}");
        assert!(e["accuracy"]["total"].as_u64().unwrap() > 0);
    }
    // Every invocation came over HTTP/1.1: the pool, which offers only that by ALPN, where
    // reqwest would have agreed HTTP/2 with this server.
    let lines = arrived(&log);
    assert!(lines.len() >= 60, "{} requests logged", lines.len());
    for l in &lines {
        assert_eq!(l["http"], "HTTP/1.1", "{l}");
    }

    // gRPC over TLS: h2 by ALPN, the model found over gRPC.
    let grpcs = s.url.replace("https://", "grpcs://");
    let (out, e) = run_export_env(&["--url", &grpcs, "-n", "20"], &trusted);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(e["config"]["target"]["wire"], "grpc");
    assert_eq!(e["phases"][0]["ok"], 20);

    // Without the CA the certificate is nobody's: refused before the run, in one line.
    for url in [&s.url, &grpcs] {
        let out = run_env(&["--headless", "--url", url, "-n", "5"], &[]);
        let line = out.stderr.trim();
        assert_ne!(out.status.code(), Some(0), "{url}: {line}");
        assert!(!line.contains('\n'), "{url}: one line: {line}");
        assert!(line.to_lowercase().contains("certificate"), "{url}: {line}");
    }

    // A URL's user:password@ goes on the same path, as `Basic` credentials decoded as a URL
    // carries them; the password shows nowhere.
    let basic = Serve::one_ms(&[
        "--only",
        "triton",
        // base64("us@r:p:w-SECRET")
        "--require-header",
        "Authorization: Basic dXNAcjpwOnctU0VDUkVU",
    ]);
    let url = basic.url.replace("http://", "http://us%40r:p%3Aw-SECRET@");
    let (out, e) = run_export_env(&["--url", &url, "-n", "10"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert_eq!(e["phases"][0]["ok"], 10, "{}", e["phases"][0]);
    let everything = format!("{}{}{e}", out.stdout, out.stderr);
    assert!(!everything.contains("SECRET"), "{everything}");
}
