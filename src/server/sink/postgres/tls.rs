//! TLS to PostgreSQL over rustls (ring), as libpq's `sslmode` says: `verify-full` checks the
//! chain and the host name, `verify-ca` the chain alone, and the others encrypt without checking
//! (libpq's `require` and `prefer`), unless a root file is named, which makes them `verify-ca`.
//! Roots: `sslrootcert` (a PEM file, or `system`), else `~/.postgresql/root.crt` when present,
//! else the system's.

use super::conninfo::{ConnInfo, SslMode};
use crate::tls::{insecure::AcceptAnyServerCert, pem, provider, signatures_checked_by};
use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, RootCertStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// The connector for `info`; an error names the root file and what was wrong with it.
pub(crate) fn connector(info: &ConnInfo, home: Option<&Path>) -> Result<MakeRustlsConnect, String> {
    let default_root = home.map(|h| h.join(".postgresql/root.crt"));
    let root_file: Option<PathBuf> = match info.root_cert.as_deref() {
        Some("system") => None,
        Some(file) => Some(PathBuf::from(file)),
        None => default_root.filter(|f| f.is_file()),
    };
    let verify = match info.ssl_mode {
        SslMode::VerifyFull => Some(true),
        SslMode::VerifyCa => Some(false),
        _ if root_file.is_some() => Some(false),
        _ => None,
    };
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        None => Arc::new(AcceptAnyServerCert::new(provider())),
        Some(check_name) => {
            let mut roots = RootCertStore::empty();
            match &root_file {
                Some(file) => {
                    for cert in pem::load_certs(file).map_err(|e| e.to_string())? {
                        roots
                            .add(cert)
                            .map_err(|e| format!("{}: {e}", file.display()))?;
                    }
                }
                None => {
                    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
                }
            }
            let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| e.to_string())?;
            Arc::new(ChainVerifier { webpki, check_name })
        }
    };
    let config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// WebPKI against the roots; for `verify-ca`, a certificate for another name still passes.
#[derive(Debug)]
struct ChainVerifier {
    webpki: Arc<WebPkiServerVerifier>,
    check_name: bool,
}

impl ServerCertVerifier for ChainVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .webpki
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    signatures_checked_by!(webpki);
}
