//! A target's flags weighed against where its requests go, for a run and for each target of a
//! comparison, while they settle: before any file is read or anything is sent.

use super::{AppError, usage};
use encbench_core::choice::Choice;
use encbench_load::setup::{Address, FormatSettings, TargetSettings};
use encbench_wire::client::grpc::is_grpc;
use encbench_wire::payload::PayloadFormat;

pub(super) fn check_fit(s: &TargetSettings) -> Result<(), AppError> {
    grpc(s)?;
    signed(s)
}

/// At a `grpc://` URL, KServe v2's gRPC service, whatever `--engine` names it: what has no
/// meaning there is refused (another family, `--binary`, a route, headers the protocol
/// reserves); `--grpc-connections` only means something there.
fn grpc(s: &TargetSettings) -> Result<(), AppError> {
    if !matches!(&s.address, Address::Url(u) if is_grpc(u)) {
        if s.grpc_connections.is_some() {
            return Err(usage(
                "--grpc-connections",
                "applies to a grpc:// URL (HTTP/1.1 sends one request per connection at a time, \
                 as many connections as the concurrency)",
            ));
        }
        return Ok(());
    }
    grpc_format(&s.format)?;
    for (name, _) in &s.headers {
        // As the header map spells it.
        let n = name.to_ascii_lowercase();
        if n.starts_with("grpc-") || matches!(n.as_str(), "content-type" | "te" | "user-agent") {
            return Err(usage(
                "--header",
                format!("{n} is the gRPC protocol's own header: give other metadata"),
            ));
        }
    }
    Ok(())
}

fn grpc_format(f: &FormatSettings) -> Result<(), AppError> {
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

/// SageMaker requests are signed by the SDK: a header there would be dropped.
fn signed(s: &TargetSettings) -> Result<(), AppError> {
    if !matches!(s.address, Address::SageMaker(_)) {
        return Ok(());
    }
    let flag = match (s.headers.is_empty(), &s.bearer_token_env) {
        (false, _) => "--header",
        (true, Some(_)) => "--bearer-token-env",
        (true, None) => return Ok(()),
    };
    Err(usage(
        flag,
        "applies to URL targets: SageMaker requests are signed by the AWS SDK",
    ))
}
