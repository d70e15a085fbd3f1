//! The AWS SDK's configuration as every client of a SageMaker target loads it: the standard
//! credential chain (each secret it resolves remembered, so none is ever shown), the region
//! and profile of the flags, the endpoint override. The runtime client and CloudWatch share
//! it, so both act as the same identity in the same region.

use super::sagemaker::SageMakerSettings;
use super::sdk_guard::Remembered;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, SdkConfig};
use aws_credential_types::provider::SharedCredentialsProvider;
use aws_smithy_http_client::Builder;

/// The loaded configuration and its credential chain, wrapped to remember what it resolves.
pub struct LoadedSdk {
    pub sdk: SdkConfig,
    pub credentials: Option<SharedCredentialsProvider>,
}

/// Loads the configuration with this client's connection pool, retries and timeouts;
/// `--endpoint-url` applies unless `override_url` is false.
pub async fn load(
    cfg: &SageMakerSettings,
    pool: usize,
    retry: RetryConfig,
    timeouts: TimeoutConfig,
    override_url: bool,
) -> LoadedSdk {
    let http = Builder::new()
        .pool_max_idle_per_host(pool.max(1))
        .tls_provider(super::tls::sdk_provider())
        .build_https();
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .http_client(http)
        .retry_config(retry)
        .timeout_config(timeouts);
    if let Some(r) = &cfg.region {
        loader = loader.region(aws_config::Region::new(r.clone()));
    }
    if let Some(p) = &cfg.profile {
        loader = loader.profile_name(p);
    }
    if let Some(u) = cfg.endpoint_url.as_ref().filter(|_| override_url) {
        loader = loader.endpoint_url(u);
    }
    let sdk = loader.load().await;
    let credentials = sdk
        .credentials_provider()
        .map(|chain| SharedCredentialsProvider::new(Remembered(chain)));
    LoadedSdk { sdk, credentials }
}
