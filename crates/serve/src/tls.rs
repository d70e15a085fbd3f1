//! HTTPS for the reference endpoint (`serve --tls-cert --tls-key`): what `https://` and
//! `grpcs://` targets are tested against. Handshakes run on their own tasks, so one slow or
//! failed client never holds up the accepting of others.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;

/// A server's TLS settings: one certificate, HTTP/2 (for gRPC) and HTTP/1.1 by ALPN.
#[derive(Clone, Debug)]
pub struct ServerTls(Arc<rustls::ServerConfig>);

/// Settings are equal when they are the same settings (read once from the same files).
impl PartialEq for ServerTls {
    fn eq(&self, other: &ServerTls) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The settings from a PEM certificate chain and its PEM private key. The error names the
/// file and what is wrong.
pub fn settings(cert: &Path, key: &Path) -> Result<ServerTls, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|e| format!("{}: no PEM certificate read ({e})", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("{}: holds no PEM certificate", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("{}: no PEM private key read ({e})", key.display()))?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("the certificate and key do not make a TLS server: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(ServerTls(Arc::new(config)))
}

/// Connections that finished their TLS handshake, for `axum::serve`.
pub(crate) struct TlsListener {
    handshaken: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    addr: SocketAddr,
}

impl TlsListener {
    pub fn new(tcp: TcpListener, tls: &ServerTls) -> std::io::Result<Self> {
        let addr = tcp.local_addr()?;
        let (tx, handshaken) = mpsc::channel(64);
        let acceptor = tokio_rustls::TlsAcceptor::from(tls.0.clone());
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    // The server has shut down: nobody takes connections any more.
                    () = tx.closed() => return,
                    a = tcp.accept() => a,
                };
                let Ok((stream, peer)) = accepted else {
                    // Out of file descriptors and the like: the next accept may do.
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                };
                // Without TCP_NODELAY small responses wait on delayed ACKs.
                let _ = stream.set_nodelay(true);
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    if let Ok(tls) = acceptor.accept(stream).await {
                        let _ = tx.send((tls, peer)).await;
                    }
                });
            }
        });
        Ok(TlsListener { handshaken, addr })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.handshaken.recv().await {
            Some(accepted) => accepted,
            // The accepting task holds the sender until this listener is dropped.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.addr)
    }
}
