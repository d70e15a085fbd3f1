//! A KServe v2 server at a `grpc://` URL: what it names itself (`ServerMetadata`) and, where
//! `--model` does not say, its model (Triton's repository index, else its statistics of
//! every model; KServe's gRPC service lists none). Nothing is asked over HTTP: the port
//! speaks gRPC only.

use super::servers::pick_model;
use super::{Ask, Found, Refused, refused};
use crate::client::ErrorKind;
use crate::client::grpc::GrpcClient;
use crate::payload::PayloadFormat;
use encbench_core::choice::Choice;
use encbench_core::export::Detected;

/// What the server says of itself and its models; `unreachable` when it does not answer,
/// which the readiness check then says in its own words.
pub async fn grpc(ask: &Ask<'_>) -> Result<Found, Refused> {
    let client = GrpcClient::new(ask.url, 1, ask.wait, ask.headers).map_err(|e| {
        refused(
            "--url",
            format!("{}: {e}", crate::client::shown_url(ask.url)),
        )
    })?;
    let mut tried = vec![];
    let server = match client.server_metadata(ask.wait).await {
        Ok(m) => {
            tried.push("ServerMetadata OK".to_string());
            let said = format!("{} {}", m.name, m.version);
            format!("KServe v2 over gRPC ({})", said.trim())
        }
        // With a model to load, the readiness check says what is wrong in its own words;
        // without one there is nothing to load, and the user's mistake is the address.
        Err(f) if matches!(f.kind, ErrorKind::Connection | ErrorKind::Timeout) => {
            if ask.model.is_some() {
                return Err(Refused {
                    unreachable: true,
                    ..refused("--url", "no answer")
                });
            }
            return Err(refused(
                "--url",
                format!(
                    "{}: ServerMetadata failed ({f}): check the address, and that the port speaks gRPC{}",
                    crate::client::shown_url(ask.url),
                    if ask.url.starts_with("grpcs") {
                        " over TLS"
                    } else {
                        ""
                    }
                ),
            ));
        }
        // Refused is not "lists no model": nothing more would be answered either.
        Err(f) if f.kind == ErrorKind::Auth => {
            return Err(refused(
                "--url",
                format!(
                    "{}: ServerMetadata was refused ({f}): the server wants credentials (--header, --bearer-token-env)",
                    crate::client::shown_url(ask.url)
                ),
            ));
        }
        Err(f) => {
            tried.push(format!("ServerMetadata {}", f.kind.key()));
            "a KServe v2 gRPC server".to_string()
        }
    };
    let mut names = vec![];
    if ask.model.is_none() {
        for (rpc, answer) in [
            ("RepositoryIndex", client.repository_index(ask.wait).await),
            ("ModelStatistics", client.statistics_names(ask.wait).await),
        ] {
            match answer {
                Ok(n) => {
                    tried.push(format!("{rpc} OK ({} models)", n.len()));
                    names = n;
                }
                Err(f) => tried.push(format!("{rpc} {}", f.kind.key())),
            }
            if !names.is_empty() {
                break;
            }
        }
    }
    let model = pick_model(&names, ask.model, "its model list")?;
    if model.is_none() {
        return Err(refused(
            "--model",
            format!(
                "{server} at {} lists no model ({}): name it with --model",
                crate::client::shown_url(ask.url),
                tried.join(", ")
            ),
        ));
    }
    let server = encbench_core::scrub::text(&server);
    Ok(Found {
        family: PayloadFormat::Triton,
        api: None,
        prefix: "",
        record: Detected {
            engine: PayloadFormat::Triton.name().into(),
            server,
            kind: None,
            model: model.clone(),
            max_client_batch: None,
            tried,
        },
        model,
    })
}
