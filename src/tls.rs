//! TLS configuration through rustls (ring provider): client verification, mTLS, server client-auth.
//!
//! Each configuration is built once into an `Arc` and shared by every connection. The ring
//! provider is named explicitly so no other provider can be picked up by accident.

mod asked;
mod cert;
mod failure;
pub(crate) mod insecure;
pub(crate) mod pem;
mod server;
mod verify;

pub use asked::CertificateAsked;
pub use cert::CertSummary;
pub use failure::{describe, session_cause, Seen, Side, TlsFailure};
pub(crate) use failure::{describe_handshake_io, refuses_client_certificate, rustls_error};
pub use server::{AcceptedTls, ClientAuth, ServerTlsOptions, TlsAcceptError, TlsAcceptor};
pub(crate) use verify::signatures_checked_by;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore, SupportedProtocolVersion};
use std::path::PathBuf;
use std::sync::Arc;

/// The ring provider, the only one this crate uses.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Which TLS versions to offer or accept. The floor is always TLS 1.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TlsVersions {
    /// TLS 1.2 and 1.3 (the default).
    #[default]
    Tls12AndUp,
    /// TLS 1.2 only, for peers that break on 1.3.
    Tls12Only,
    /// TLS 1.3 only.
    Tls13Only,
}

impl TlsVersions {
    fn protocol_versions(self) -> &'static [&'static SupportedProtocolVersion] {
        static BOTH: [&SupportedProtocolVersion; 2] =
            [&rustls::version::TLS13, &rustls::version::TLS12];
        static V12: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
        static V13: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
        match self {
            TlsVersions::Tls12AndUp => &BOTH,
            TlsVersions::Tls12Only => &V12,
            TlsVersions::Tls13Only => &V13,
        }
    }
}

/// A TLS configuration that could not be built. Names the file and what was wrong with it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsConfigError {
    /// A PEM file could not be read or held nothing usable.
    #[error("{file}: {what}")]
    Pem {
        /// The file.
        file: PathBuf,
        /// What was wrong with it.
        what: String,
    },
    /// A certificate in a file could not be used as a trusted root.
    #[error("{file}: no usable certificate: {what}")]
    BadCertificate {
        /// The file.
        file: PathBuf,
        /// Why rustls refused the certificate.
        what: String,
    },
    /// The certificate and the private key are not one pair.
    #[error("certificate {cert_file} and key {key_file} do not fit together: {what}")]
    KeyMismatch {
        /// The certificate file.
        cert_file: PathBuf,
        /// The key file.
        key_file: PathBuf,
        /// What rustls said.
        what: String,
    },
    /// One part of a pair was given without the other.
    #[error("{option} is set without {needs}")]
    Incomplete {
        /// What was set, in words (`client certificate`).
        option: &'static str,
        /// What it needs, in words (`its key`).
        needs: &'static str,
    },
    /// The name to verify is neither a DNS name nor an IP address.
    #[error("invalid TLS server name {name:?}")]
    ServerName {
        /// The name as given.
        name: String,
    },
    /// rustls refused the configuration (versions, suites).
    #[error("TLS configuration rejected: {what}")]
    Rustls {
        /// What rustls said.
        what: String,
    },
}

/// Client-side TLS options, as the command line gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientTlsOptions {
    /// Extra trusted roots (PEM), added to the native ones.
    pub ca_file: Option<PathBuf>,
    /// Trust `ca_file` alone, not the native roots (pinning a private CA).
    pub ca_only: bool,
    /// Client certificate chain (PEM) for mTLS; needs `key_file`.
    pub cert_file: Option<PathBuf>,
    /// Client private key (PEM) for mTLS; needs `cert_file`.
    pub key_file: Option<PathBuf>,
    /// SNI and verification name; the connect host when absent.
    pub server_name: Option<String>,
    /// Accept any certificate. Every connect then carries `MLLP_TLS_VERIFY_DISABLED`.
    pub insecure: bool,
    /// Which TLS versions to offer.
    pub versions: TlsVersions,
}

/// A built client configuration plus the name to verify: what a connector needs.
#[derive(Debug, Clone)]
pub struct TlsClient {
    /// The rustls configuration, shared by every connection.
    pub config: Arc<ClientConfig>,
    /// The name sent as SNI and verified in the server's certificate.
    pub server_name: ServerName<'static>,
    /// Verification is off (insecure mode): report `MLLP_TLS_VERIFY_DISABLED` on every connect.
    pub verify_disabled: bool,
    /// A client certificate is configured (mTLS).
    pub client_certificate: bool,
}

impl TlsClient {
    /// The configuration for one connection, noting whether its server asks for a client
    /// certificate (a copy of the shared one: its parts are shared, resumption included).
    pub fn for_connection(&self) -> (Arc<ClientConfig>, CertificateAsked) {
        CertificateAsked::install(&self.config)
    }
}

impl ClientTlsOptions {
    /// Builds the configuration once. `host` is the connect host, the default server name.
    pub fn build(&self, host: &str) -> Result<TlsClient, TlsConfigError> {
        let name = self.server_name.as_deref().unwrap_or(host);
        let bare = name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(name);
        let server_name = ServerName::try_from(bare.to_string())
            .map_err(|_| TlsConfigError::ServerName { name: name.into() })?;
        Ok(TlsClient {
            config: self.client_config()?,
            server_name,
            verify_disabled: self.insecure,
            client_certificate: self.cert_file.is_some(),
        })
    }

    /// The rustls configuration alone.
    pub fn client_config(&self) -> Result<Arc<ClientConfig>, TlsConfigError> {
        let provider = provider();
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(self.versions.protocol_versions())
            .map_err(|e| TlsConfigError::Rustls {
                what: e.to_string(),
            })?;
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(self.server_verifier()?);
        let config = match (&self.cert_file, &self.key_file) {
            (Some(cert_file), Some(key_file)) => {
                let certs = pem::load_certs(cert_file)?;
                let key = pem::load_key(key_file)?;
                builder.with_client_auth_cert(certs, key).map_err(|e| {
                    TlsConfigError::KeyMismatch {
                        cert_file: cert_file.clone(),
                        key_file: key_file.clone(),
                        what: e.to_string(),
                    }
                })?
            }
            (Some(_), None) => {
                return Err(TlsConfigError::Incomplete {
                    option: "client certificate",
                    needs: "its key",
                })
            }
            (None, Some(_)) => {
                return Err(TlsConfigError::Incomplete {
                    option: "client key",
                    needs: "its certificate",
                })
            }
            (None, None) => builder.with_no_client_auth(),
        };
        Ok(Arc::new(config))
    }

    /// The server-certificate verifier `client_config` installs: WebPKI against the configured
    /// roots, with every certificate of the CA file also trusted as itself (pinned), or the
    /// accept-anything verifier under `insecure`. For callers that wrap it.
    pub(crate) fn server_verifier(
        &self,
    ) -> Result<Arc<dyn rustls::client::danger::ServerCertVerifier>, TlsConfigError> {
        if self.insecure {
            return Ok(Arc::new(insecure::AcceptAnyServerCert::new(provider())));
        }
        let (roots, pinned) = self.trust()?;
        let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider(),
        )
        .build()
        .map_err(|e| TlsConfigError::Rustls {
            what: e.to_string(),
        })?;
        Ok(Arc::new(verify::PinningVerifier::new(pinned, webpki)))
    }

    /// The certificates trusted as themselves: the CA file's, unless verification is off.
    pub(crate) fn pinned_certificates(
        &self,
    ) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
        match &self.ca_file {
            Some(ca_file) if !self.insecure => pem::load_certs(ca_file),
            _ => Ok(Vec::new()),
        }
    }

    /// Native roots (honouring `SSL_CERT_FILE`/`SSL_CERT_DIR`; unreadable ones are skipped, the
    /// rest kept) plus the CA file, whose every certificate must parse; and the CA file's
    /// certificates themselves, for pinning.
    fn trust(&self) -> Result<(RootCertStore, Vec<CertificateDer<'static>>), TlsConfigError> {
        let mut roots = RootCertStore::empty();
        let mut pinned = Vec::new();
        if !self.ca_only {
            let native = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(native.certs);
        } else if self.ca_file.is_none() {
            return Err(TlsConfigError::Incomplete {
                option: "CA-only trust",
                needs: "a CA file",
            });
        }
        if let Some(ca_file) = &self.ca_file {
            for cert in pem::load_certs(ca_file)? {
                roots
                    .add(cert.clone())
                    .map_err(|e| TlsConfigError::BadCertificate {
                        file: ca_file.clone(),
                        what: e.to_string(),
                    })?;
                pinned.push(cert);
            }
        }
        Ok((roots, pinned))
    }
}

/// What TLS negotiated, for events and `probe`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct TlsSummary {
    /// The negotiated version: `TLS1.3`, `TLS1.2`.
    pub version: String,
    /// The negotiated cipher suite's IANA-style name.
    pub cipher_suite: String,
    /// The peer's certificate was checked (false under insecure mode, or a listener that does
    /// not verify clients).
    pub verified: bool,
    /// The peer's end-entity certificate, when it sent one that parses.
    pub peer_certificate: Option<CertSummary>,
}

impl TlsSummary {
    /// The summary of an established session; `verified` says whether the peer's certificate
    /// was checked.
    pub(crate) fn of(session: &rustls::CommonState, verified: bool) -> TlsSummary {
        TlsSummary {
            version: version_name(session.protocol_version()),
            cipher_suite: suite_name(session.negotiated_cipher_suite()),
            verified,
            peer_certificate: session
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(CertSummary::from_der),
        }
    }
}

/// "TLS1.3" / "TLS1.2" for summaries.
pub(crate) fn version_name(version: Option<rustls::ProtocolVersion>) -> String {
    match version {
        Some(rustls::ProtocolVersion::TLSv1_3) => "TLS1.3".into(),
        Some(rustls::ProtocolVersion::TLSv1_2) => "TLS1.2".into(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

/// The negotiated suite's IANA-style name.
pub(crate) fn suite_name(suite: Option<rustls::SupportedCipherSuite>) -> String {
    suite
        .and_then(|s| s.suite().as_str())
        .map(str::to_string)
        .unwrap_or_default()
}
