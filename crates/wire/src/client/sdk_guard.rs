//! The AWS SDK client kept within bounds: every credential it signs with is remembered so
//! that a server echoing it (the session token travels in `x-amz-security-token`) cannot
//! get it shown or exported, and reply bodies are capped like a URL target's.

use super::body::MAX_REPLY_BYTES;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider, future};
use aws_sdk_sagemakerruntime::config::interceptors::BeforeDeserializationInterceptorContextMut;
use aws_sdk_sagemakerruntime::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_types::body::SdkBody;

/// The SDK's credential chain, remembering the secret and the session token of whatever it
/// resolves (refreshed role credentials included).
#[derive(Debug)]
pub(crate) struct Remembered(pub SharedCredentialsProvider);

impl ProvideCredentials for Remembered {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        future::ProvideCredentials::new(async move {
            let c = self.0.provide_credentials().await?;
            encbench_core::scrub::remember(c.secret_access_key());
            if let Some(token) = c.session_token() {
                encbench_core::scrub::remember(token);
            }
            Ok(c)
        })
    }
}

/// Reply bodies over `MAX_REPLY_BYTES` fail while being read: the SDK would buffer any
/// size, and the failure reaches `classify` as a response error (`BadResponse`).
#[derive(Debug)]
pub(crate) struct CapReplies;

impl Intercept for CapReplies {
    fn name(&self) -> &'static str {
        "encbench::CapReplies"
    }

    fn modify_before_deserialization(
        &self,
        context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let response = context.response_mut();
        let body = response.take_body();
        *response.body_mut() =
            SdkBody::from_body_1_x(http_body_util::Limited::new(body, MAX_REPLY_BYTES));
        Ok(())
    }
}
