//! `serve`: the reference endpoint alone, until SIGINT or SIGTERM.

use super::{AppError, Stdout, usage};
use crate::cli::ServeArgs;
use encbench_serve::{self as serve, ServeSettings, model::ServiceModel};
use encbench_wire::tokenize::TokenCounter;
use std::time::Duration;

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64(v / 1000.0)
}

/// The reference endpoint `serve` starts for these arguments, and its tokenizer.
pub fn config(a: &ServeArgs) -> Result<(ServeSettings, TokenCounter), AppError> {
    let tokenizer =
        TokenCounter::load(a.tokenizer.as_deref()).map_err(|e| usage("--tokenizer", e))?;
    let tls = match (&a.tls_cert, &a.tls_key) {
        (Some(cert), Some(key)) => {
            Some(serve::tls::settings(cert, key).map_err(|e| usage("--tls-cert", e))?)
        }
        _ => None,
    };
    let cfg = ServeSettings {
        port: a.port,
        workers: a.workers,
        model_load: ms(a.model_load_ms),
        service: ServiceModel {
            base_ms: a.base_ms,
            per_token_ms: a.per_token_ms,
            saturation_tokens: a.saturation_tokens,
        },
        error_rate: a.error_rate,
        throttle_above: a.throttle_above,
        stall_at: a.stall_at.map(Duration::from_secs_f64),
        stall_for: ms(a.stall_ms.unwrap_or(0.0)),
        error_burst_at: a.error_burst_at.map(Duration::from_secs_f64),
        error_burst_for: ms(a.error_burst_ms.unwrap_or(0.0)),
        reset_rate: a.reset_rate,
        garbage_rate: a.garbage_rate,
        wrong_content_type: a.wrong_content_type,
        flip_labels: a.flip_labels,
        label_ids: a.label_ids,
        seed: a.seed,
        credentials: a.access_key.clone().zip(a.secret_key.clone()),
        unhealthy_for: ms(a.unhealthy_for_ms),
        service_dist: a.service_dist,
        queue: a.queue,
        replicas: a.replicas,
        require_headers: a.require_headers.clone(),
        v2: serve::V2Tensors {
            output: a.v2_output_name.clone(),
            ids_type: a.v2_ids_datatype,
            declared: !a.v2_no_metadata,
        },
        only: a.only,
        model_kind: a.model_kind,
        served_model: a.served_model_name.clone(),
        request_log: a.request_log.clone(),
        tls,
    };
    Ok((cfg, tokenizer))
}

pub(super) async fn main(a: ServeArgs, stdout: &mut Stdout<'_>) -> Result<(), AppError> {
    let (cfg, tokenizer) = config(&a)?;
    let server = serve::start(cfg, tokenizer).await.map_err(|e| {
        usage(
            "--port",
            format!("cannot listen on 127.0.0.1:{}: {e}", a.port),
        )
    })?;
    // Tests and scripts read the port from this line.
    stdout.print(&format!(
        "encbench-tui reference endpoint listening on {}\n",
        server.url()
    ))?;
    crate::signals::wait_for_signal().await;
    Ok(())
}
