//! A target at a `grpc://` URL: KServe v2's gRPC service, whatever `--engine` names it
//! (triton, kserve) or without it. What has no meaning there is refused before anything is
//! sent: another family, `--binary` (gRPC carries tensors raw), a route, headers the protocol
//! reserves; `--grpc-connections` only means something there.

use super::{FormatSettings, SetupError, TargetSettings, usage};
use encbench_core::choice::Choice;
use encbench_wire::client::grpc::{GrpcClient, GrpcTarget, is_grpc};
use encbench_wire::client::headers::ExtraHeaders;
use encbench_wire::grpc::messages::SERVICE;
use encbench_wire::payload::PayloadFormat;
use encbench_wire::payload::kserve::Declared;
use std::time::Duration;

/// The HTTP/2 path of every load request, as the export's `config.target.path` keeps it.
pub(super) fn invoke_path() -> String {
    format!("{SERVICE}ModelInfer")
}

/// The URL of a gRPC target, if this is one.
pub(super) fn url(s: &TargetSettings) -> Option<&str> {
    match &s.address {
        super::Address::Url(u) if is_grpc(u) => Some(u),
        _ => None,
    }
}

/// What the flags ask of a gRPC target, checked; and `--grpc-connections` refused elsewhere.
pub(super) fn check(s: &TargetSettings, headers: &ExtraHeaders) -> Result<(), SetupError> {
    let Some(_) = url(s) else {
        if s.grpc_connections.is_some() {
            return Err(usage(
                "--grpc-connections",
                "applies to a grpc:// URL (HTTP/1.1 sends one request per connection at a time, \
                 as many connections as the concurrency)",
            ));
        }
        return Ok(());
    };
    check_format(&s.format)?;
    for (name, _) in headers.as_slice() {
        let n = name.as_str();
        if n.starts_with("grpc-") || matches!(n, "content-type" | "te" | "user-agent") {
            return Err(usage(
                "--header",
                format!("{n} is the gRPC protocol's own header: give other metadata"),
            ));
        }
    }
    Ok(())
}

fn check_format(f: &FormatSettings) -> Result<(), SetupError> {
    if let Some(family) = f.format.filter(|&f| f != PayloadFormat::Triton) {
        return Err(usage(
            "--engine",
            format!(
                "a grpc:// URL speaks KServe v2's gRPC service, not {}: give --engine triton (or kserve), or none",
                family.name()
            ),
        ));
    }
    if f.binary {
        return Err(usage(
            "--binary",
            "gRPC always carries the tensors raw (raw_input_contents): drop --binary",
        ));
    }
    for (flag, given) in [("--path", &f.path), ("--ready-path", &f.ready_path)] {
        if given.is_some() {
            return Err(usage(
                flag,
                "applies to HTTP: a grpc:// URL's calls are the service's (ModelInfer, ModelReady)",
            ));
        }
    }
    Ok(())
}

/// The load's client: `--grpc-connections` HTTP/2 connections per client thread.
pub(super) fn target(
    s: &TargetSettings,
    url: &str,
    model: &str,
    headers: &ExtraHeaders,
) -> Result<GrpcTarget, SetupError> {
    let connect = s.timeout.min(Duration::from_secs(10));
    let client = GrpcClient::new(url, s.grpc_connections.unwrap_or(1), connect, headers)
        .map_err(|e| usage("--url", e))?;
    Ok(GrpcTarget::new(client, model, s.timeout).with_ready_timeout(s.ready_timeout))
}

/// What `ModelMetadata` declares of the model's tensors (Triton always declares them; a
/// KServe model that does not is answered with empty lists, as over HTTP).
pub(super) async fn declared_tensors(
    url: &str,
    model: &str,
    headers: &ExtraHeaders,
) -> Vec<Declared> {
    let wait = Duration::from_secs(10);
    let Ok(client) = GrpcClient::new(url, 1, wait, headers) else {
        return vec![];
    };
    match client.model_metadata(model, wait).await {
        Ok(m) => vec![Declared {
            inputs: m.inputs.into_iter().map(|t| (t.name, t.datatype)).collect(),
            outputs: m.outputs.into_iter().map(|t| t.name).collect(),
        }],
        Err(_) => vec![],
    }
}
