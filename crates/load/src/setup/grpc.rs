//! A target at a `grpc://` URL: KServe v2's gRPC service, whatever `--engine` names it
//! (triton, kserve) or without it. What has no meaning there was refused while the run
//! settled (`app::target` in the binary).

use super::{SetupError, TargetSettings, usage};
use encbench_wire::client::grpc::{GrpcClient, GrpcTarget, is_grpc};
use encbench_wire::client::headers::ExtraHeaders;
use encbench_wire::grpc::messages::SERVICE;
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
