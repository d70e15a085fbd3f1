//! A SageMaker endpoint through the AWS SDK: the standard credential chain, SigV4 by the SDK,
//! routing headers for multi-container, inference-component, multi-model and variant targets.
//!
//! Client-side traps are switched off: retries are disabled (a throttle is a throttle, not a
//! silent resend), the connection pool and the timeouts are sized from the run's concurrency
//! and `--timeout` (botocore's 10-connection pool and 60 s read timeout distort both).

use super::sdk_guard::CapReplies;
use super::{BoxFuture, ErrorKind, Failure, OnWaiting, Target, TargetError};
use crate::payload::{BodyKind, Prepared, Reply};
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_credential_types::provider::SharedCredentialsProvider;
use aws_sdk_sagemakerruntime::Client;
use aws_sdk_sagemakerruntime::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_sagemakerruntime::operation::invoke_endpoint::InvokeEndpointError;
use aws_sdk_sagemakerruntime::primitives::Blob;
use bytes::Bytes;
use encbench_core::scrub;
use std::time::Duration;

/// SageMaker refuses request bodies above 6 MiB; we refuse them before sending.
pub const MAX_BODY_BYTES: usize = 6 * 1024 * 1024;

/// Where and how to invoke. Credentials are never held here: the SDK resolves them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SageMakerSettings {
    pub endpoint: String,
    pub region: Option<String>,
    pub profile: Option<String>,
    pub endpoint_url: Option<String>,
    pub target_container: Option<String>,
    pub inference_component: Option<String>,
    pub target_model: Option<String>,
    pub target_variant: Option<String>,
    pub content_type: String,
}

pub struct SageMakerTarget {
    cfg: SageMakerSettings,
    client: Client,
    /// A real request for the pre-flight check (there is no ping in the runtime API).
    probe: Prepared,
    credentials: Option<SharedCredentialsProvider>,
    /// The region the SDK found (flag, environment, profile, instance metadata), if any.
    region: Option<String>,
}

impl SageMakerTarget {
    pub async fn new(
        cfg: SageMakerSettings,
        concurrency: usize,
        timeout: Duration,
        probe: Prepared,
    ) -> SageMakerTarget {
        let timeouts = TimeoutConfig::builder()
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .read_timeout(timeout)
            .operation_attempt_timeout(timeout)
            .operation_timeout(timeout)
            .build();
        let loaded =
            super::aws::load(&cfg, concurrency, RetryConfig::disabled(), timeouts, true).await;
        let (sdk, credentials) = (loaded.sdk, loaded.credentials);
        let region = sdk.region().map(ToString::to_string);
        let mut config =
            aws_sdk_sagemakerruntime::config::Builder::from(&sdk).interceptor(CapReplies);
        config.set_credentials_provider(credentials.clone());
        let config = config.build();
        SageMakerTarget {
            client: Client::from_conf(config),
            cfg,
            probe,
            credentials,
            region,
        }
    }

    fn name(&self) -> String {
        let c = &self.cfg;
        encbench_core::text::sagemaker_target(
            &c.endpoint,
            [
                &c.target_container,
                &c.inference_component,
                &c.target_model,
                &c.target_variant,
            ]
            .map(Option::as_deref),
        )
    }

    async fn call(&self, req: &Prepared) -> Result<Reply, (ErrorKind, String)> {
        let body = &req.body;
        if body.len() > MAX_BODY_BYTES {
            return Err((
                ErrorKind::TooLarge,
                format!("body of {} bytes is over the 6 MiB limit", body.len()),
            ));
        }
        // Triton behind SageMaker takes the binary tensor extension under its own media type.
        let content_type = match req.kind {
            BodyKind::Json => self.cfg.content_type.clone(),
            BodyKind::Binary { json_len } => {
                format!("application/vnd.sagemaker-triton.binary+json;json-header-size={json_len}")
            }
            // Setup never pairs a gRPC body with an endpoint; the type would say what it is.
            BodyKind::Grpc => "application/grpc".into(),
            BodyKind::Raw { content_type } => content_type.into(),
        };
        let call = self
            .client
            .invoke_endpoint()
            .endpoint_name(&self.cfg.endpoint)
            .content_type(content_type)
            .accept("application/json")
            .set_target_container_hostname(self.cfg.target_container.clone())
            .set_inference_component_name(self.cfg.inference_component.clone())
            .set_target_model(self.cfg.target_model.clone())
            .set_target_variant(self.cfg.target_variant.clone())
            .body(Blob::new(body.to_vec()));
        // A warmup request of a new shape may take far longer than a measured one.
        let out = match req.timeout {
            Some(t) => {
                let timeouts = TimeoutConfig::builder()
                    .read_timeout(t)
                    .operation_attempt_timeout(t)
                    .operation_timeout(t)
                    .build();
                let over =
                    aws_sdk_sagemakerruntime::config::Builder::default().timeout_config(timeouts);
                call.customize().config_override(over).send().await
            }
            None => call.send().await,
        }
        .map_err(|e| classify(&e))?;
        let json_len = out
            .content_type()
            .and_then(|t| t.split("json-header-size=").nth(1))
            .and_then(|n| n.trim().parse().ok());
        Ok(Reply {
            variant: out.invoked_production_variant().map(scrub::text),
            json_len,
            body: Bytes::from(out.body.map(Blob::into_inner).unwrap_or_default()),
            // The runtime API passes on none of the container's headers.
            server_time: None,
        })
    }
}

/// Error codes of a request that was not accepted as signed by a known identity.
const AUTH_CODES: &[&str] = &[
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "SignatureDoesNotMatch",
    "IncompleteSignature",
    "InvalidClientTokenId",
    "AccessDeniedException",
    "ExpiredTokenException",
    "MissingAuthenticationToken",
];

/// Maps an SDK error to the kind counted in tables, with a message for one-off reports.
/// Both may quote the server, so both are scrubbed (`crate::scrub`).
pub fn classify(e: &SdkError<InvokeEndpointError>) -> (ErrorKind, String) {
    let message = match e {
        SdkError::ServiceError(se) => {
            let err = se.err();
            let status = se.raw().status().as_u16();
            match (
                known_code(err.code()),
                se.raw().body().bytes().and_then(xml_error_code),
            ) {
                (Some(code), _) => format!("{code}: {}", err.message().unwrap_or("")),
                (None, Some(code)) => format!("{code} (HTTP {status})"),
                (None, None) => format!("HTTP {status}"),
            }
        }
        other => {
            let mut source: &dyn std::error::Error = other;
            while let Some(next) = source.source() {
                source = next;
            }
            source.to_string()
        }
    };
    let kind = match e {
        SdkError::ServiceError(se) => match se.err() {
            InvokeEndpointError::ModelError(m) => ErrorKind::ModelError {
                original_status: m.original_status_code().and_then(|s| u16::try_from(s).ok()),
            },
            InvokeEndpointError::ModelNotReadyException(_) => ErrorKind::ModelNotReady,
            InvokeEndpointError::ServiceUnavailable(_) => ErrorKind::ServiceUnavailable,
            InvokeEndpointError::ValidationError(_) => ErrorKind::Validation,
            InvokeEndpointError::InternalFailure(_)
            | InvokeEndpointError::InternalDependencyException(_) => ErrorKind::InternalFailure,
            other => {
                let raw = se.raw();
                // Some implementations (moto) answer auth failures in AWS's XML error form,
                // which the JSON protocol parser leaves without a code.
                let xml_code = raw.body().bytes().and_then(xml_error_code);
                match known_code(other.code()).or(xml_code.as_deref()) {
                    Some("ThrottlingException") => ErrorKind::Throttling,
                    Some(code) if AUTH_CODES.contains(&code) => ErrorKind::Auth,
                    _ if matches!(raw.status().as_u16(), 401 | 403) => ErrorKind::Auth,
                    Some(code) => ErrorKind::Service(scrub::text(code)),
                    None => ErrorKind::Http(raw.status().as_u16()),
                }
            }
        },
        SdkError::TimeoutError(_) => ErrorKind::Timeout,
        SdkError::DispatchFailure(d) if d.is_timeout() => ErrorKind::Timeout,
        SdkError::DispatchFailure(_) => ErrorKind::Connection,
        SdkError::ResponseError(_) => ErrorKind::BadResponse,
        // Raised before sending, e.g. when no credentials could be found.
        _ => ErrorKind::Auth,
    };
    (kind, scrub::text(&message))
}

/// The JSON error parser reports "unknown" when the body carried no code it understood.
fn known_code(code: Option<&str>) -> Option<&str> {
    code.filter(|c| !c.is_empty() && *c != "unknown")
}

/// `<Code>SignatureDoesNotMatch</Code>` from an AWS XML error body.
fn xml_error_code(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let start = text.find("<Code>")? + "<Code>".len();
    let end = start + text[start..].find("</Code>")?;
    // An empty code would become an error kind without a name.
    Some(text[start..end].trim().to_string()).filter(|c| !c.is_empty())
}

impl SageMakerTarget {
    /// A region and credentials, before anything is sent: the SDK's own words for their
    /// absence ("missing signing region") name neither the cause nor the fix. `cold-start`
    /// needs this without the probe request, which would spoil the cold first request.
    pub async fn check_config(&self) -> Result<(), TargetError> {
        use aws_credential_types::provider::{ProvideCredentials, error::CredentialsError};
        let target = self.name();
        if self.region.is_none() {
            return Err(TargetError::Config {
                target,
                reason: no_region(&self.cfg),
            });
        }
        let found = match &self.credentials {
            Some(p) => p.provide_credentials().await.map(|_| ()),
            None => Err(CredentialsError::not_loaded("no credentials provider")),
        };
        match found {
            Ok(()) => {}
            Err(CredentialsError::CredentialsNotLoaded(_)) => {
                return Err(TargetError::Config {
                    target,
                    reason: no_credentials(&self.cfg, None),
                });
            }
            Err(e) => {
                let why = in_words(&e);
                // Instance metadata is the chain's last source: its refusal (a 403 from a
                // proxy or a locked-down host) means that none of the others had any.
                if why.contains("IMDS") {
                    return Err(TargetError::Config {
                        target,
                        reason: no_credentials(&self.cfg, Some(&why)),
                    });
                }
                // A source was found and failed (an expired SSO token, a profile that is
                // not defined): the SDK's own words name it.
                return Err(TargetError::Auth {
                    target,
                    reason: format!("AWS credentials: {why}"),
                });
            }
        }
        Ok(())
    }
}

impl Target for SageMakerTarget {
    fn describe(&self) -> String {
        self.name()
    }

    /// One real invocation: an authentication or connection failure ends the run before it
    /// starts; any other answer means the endpoint is there (its errors will be counted).
    fn check_ready<'a>(&'a self, _: &'a OnWaiting) -> BoxFuture<'a, Result<String, TargetError>> {
        Box::pin(async move {
            self.check_config().await?;
            let target = self.name();
            match self.call(&self.probe).await {
                Ok(_) => Ok("invoked".into()),
                Err((ErrorKind::Auth, reason)) => Err(TargetError::Auth { target, reason }),
                Err((ErrorKind::Connection, reason)) => {
                    Err(TargetError::Unreachable { target, reason })
                }
                Err((ErrorKind::TooLarge, reason)) => Err(TargetError::Config { target, reason }),
                Err((kind, reason)) => Ok(format!("answered {}: {reason}", kind.key())),
            }
        })
    }

    fn invoke<'a>(&'a self, req: &'a Prepared) -> BoxFuture<'a, Result<Reply, Failure>> {
        Box::pin(async move {
            self.call(req).await.map_err(|(kind, reason)| {
                // Only a service error carries the endpoint's words; the others are the SDK's.
                let transport = matches!(
                    kind,
                    ErrorKind::Timeout
                        | ErrorKind::Connection
                        | ErrorKind::BadResponse
                        | ErrorKind::TooLarge
                );
                let said = (!transport).then_some(reason);
                // The SDK's dispatch failure: no response came, for want of a connection
                // (its causes are the connector's, not I/O errors it exposes).
                let unconnected = (kind == ErrorKind::Connection)
                    .then_some(encbench_core::reach::ConnectFailure::Unreachable);
                Failure {
                    kind,
                    said,
                    unconnected,
                }
            })
        })
    }
}

/// The profile the SDK reads, and the files it reads it from, as the SDK picks them.
fn profile_and_files(cfg: &SageMakerSettings) -> (String, String, String) {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let profile = cfg
        .profile
        .clone()
        .or_else(|| var("AWS_PROFILE"))
        .unwrap_or_else(|| "default".into());
    let config = var("AWS_CONFIG_FILE").unwrap_or_else(|| "~/.aws/config".into());
    let credentials =
        var("AWS_SHARED_CREDENTIALS_FILE").unwrap_or_else(|| "~/.aws/credentials".into());
    (profile, config, credentials)
}

/// The SDK says "missing signing region" at the first request: say where a region comes
/// from instead, before anything is sent.
fn no_region(cfg: &SageMakerSettings) -> String {
    let (profile, config, _) = profile_and_files(cfg);
    format!(
        "no AWS region found (not in --region, AWS_REGION, AWS_DEFAULT_REGION, profile \
         '{profile}' of {config} or instance metadata): give --region us-east-1, export \
         AWS_REGION=us-east-1, or set region in the profile"
    )
}

/// An error and its sources in their own words, one line. The SDK's `DisplayErrorContext`
/// ends with a Debug dump of the whole: a thousand characters of response headers and SDK
/// internals.
fn in_words(e: &dyn std::error::Error) -> String {
    let mut words = vec![e.to_string()];
    let mut next = e.source();
    while let Some(s) = next {
        let said = s.to_string();
        // A wrapper often repeats its source's words.
        if !words.iter().any(|w| w.contains(&said)) {
            words.push(said);
        }
        next = s.source();
    }
    encbench_core::scrub::text(&words.join(": "))
}

/// The SDK's default chain says only "the credential provider was not enabled" (its last
/// source, instance metadata): name every source it tried, in its order, and what instance
/// metadata said when it refused.
fn no_credentials(cfg: &SageMakerSettings, imds_refused: Option<&str>) -> String {
    let (profile, config, credentials) = profile_and_files(cfg);
    let imds = if std::env::var("AWS_EC2_METADATA_DISABLED")
        .is_ok_and(|v| v.eq_ignore_ascii_case("true"))
    {
        "EC2 instance metadata (off: AWS_EC2_METADATA_DISABLED)".to_string()
    } else if let Some(why) = imds_refused {
        let why = why.trim_start_matches("an error occurred while loading credentials: ");
        format!(
            "EC2 instance metadata (which refused: {})",
            why.trim_end_matches('.')
        )
    } else {
        "EC2 instance metadata".to_string()
    };
    format!(
        "no AWS credentials found; tried the environment (AWS_ACCESS_KEY_ID and \
         AWS_SECRET_ACCESS_KEY), profile '{profile}' in {credentials} and {config} (keys, \
         SSO, credential_process, role), web identity (AWS_WEB_IDENTITY_TOKEN_FILE), \
         container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI) and \
         {imds}: export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give --profile NAME \
         (aws configure, aws sso login)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_error_codes_are_found() {
        let body = b"<?xml version=\"1.0\"?><ErrorResponse><Errors><Error><Code>SignatureDoesNotMatch</Code></Error></Errors></ErrorResponse>";
        assert_eq!(
            xml_error_code(body).as_deref(),
            Some("SignatureDoesNotMatch")
        );
        assert_eq!(xml_error_code(b"{}"), None);
        assert_eq!(xml_error_code(b"<Code>unterminated"), None);
    }
}
