//! The AWS SDK client kept within bounds: every credential it signs with is remembered so
//! that a server echoing it (the session token travels in `x-amz-security-token`) cannot
//! get it shown or exported.

use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider, future};

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
            crate::scrub::remember(c.secret_access_key());
            if let Some(token) = c.session_token() {
                crate::scrub::remember(token);
            }
            Ok(c)
        })
    }
}
