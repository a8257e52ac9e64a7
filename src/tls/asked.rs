//! Whether the server asked for a client certificate. rustls consults the client-certificate
//! resolver only when a CertificateRequest came, so a resolver that notes the call knows; a
//! handshake refused after that, with no certificate given, was refused for the certificate.

use rustls::client::ResolvesClientCert;
use rustls::{sign, ClientConfig, SignatureScheme};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Debug)]
struct Noting {
    inner: Arc<dyn ResolvesClientCert>,
    asked: AtomicBool,
}

impl ResolvesClientCert for Noting {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<sign::CertifiedKey>> {
        self.asked.store(true, Ordering::Relaxed);
        self.inner.resolve(root_hint_subjects, sigschemes)
    }

    fn only_raw_public_keys(&self) -> bool {
        self.inner.only_raw_public_keys()
    }

    fn has_certs(&self) -> bool {
        self.inner.has_certs()
    }
}

/// Notes, for the handshakes made with one configuration, whether the server asked for a
/// client certificate.
#[derive(Debug, Clone)]
pub struct CertificateAsked(Arc<Noting>);

impl CertificateAsked {
    /// `config` with its client-certificate resolver wrapped to note the request.
    pub(crate) fn install(config: &ClientConfig) -> (Arc<ClientConfig>, CertificateAsked) {
        let noting = Arc::new(Noting {
            inner: config.client_auth_cert_resolver.clone(),
            asked: AtomicBool::new(false),
        });
        let mut config = config.clone();
        config.client_auth_cert_resolver = noting.clone();
        (Arc::new(config), CertificateAsked(noting))
    }

    /// Whether the server asked for a client certificate in the last handshake.
    pub(crate) fn get(&self) -> bool {
        self.0.asked.load(Ordering::Relaxed)
    }

    /// Forget the previous handshake's request.
    pub(crate) fn reset(&self) {
        self.0.asked.store(false, Ordering::Relaxed);
    }
}
