//! One TLS stack for both HTTP clients: rustls with ring. The AWS SDK's client is told so
//! directly; reqwest reads rustls's process-wide provider, which must be set before its
//! first client is built, or reqwest panics.

use aws_smithy_http_client::tls;

/// reqwest's builder, with the TLS provider in place.
pub fn reqwest_builder() -> reqwest::ClientBuilder {
    // Fails only when a provider is already installed, which is as good.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}

/// The AWS SDK's TLS provider.
pub fn sdk_provider() -> tls::Provider {
    tls::Provider::Rustls(tls::rustls_provider::CryptoMode::Ring)
}
