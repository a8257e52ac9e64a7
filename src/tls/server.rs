//! Server-side TLS: configuration with client authentication `none|want|must`, and an acceptor
//! that bounds the handshake and reports the client certificate.

use super::failure::{describe_handshake_io, Seen, Side};
use super::{pem, provider, TlsConfigError, TlsSummary, TlsVersions};
use crate::cause::{Cause, Hint};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// Whether a client must, may or need not present a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientAuth {
    /// No client certificate is asked for.
    #[default]
    None,
    /// Optional, but verified against `client_ca` when presented.
    Want,
    /// Required and verified against `client_ca`.
    Must,
}

/// Server-side TLS options, as `listen` takes them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerTlsOptions {
    /// The listener's certificate chain (PEM).
    pub cert_file: PathBuf,
    /// The listener's private key (PEM).
    pub key_file: PathBuf,
    /// Roots for client certificates; needed by `want` and `must`.
    pub client_ca: Option<PathBuf>,
    /// Whether clients must, may or need not present a certificate.
    pub client_auth: ClientAuth,
    /// Which TLS versions to accept.
    pub versions: TlsVersions,
}

impl ServerTlsOptions {
    /// Builds the configuration once.
    pub fn build(&self) -> Result<Arc<ServerConfig>, TlsConfigError> {
        let provider = provider();
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(self.versions.protocol_versions())
            .map_err(|e| TlsConfigError::Rustls {
                what: e.to_string(),
            })?;
        let builder = match (self.client_auth, &self.client_ca) {
            (ClientAuth::None, _) => builder.with_no_client_auth(),
            (_, None) => {
                return Err(TlsConfigError::Incomplete {
                    option: "client authentication want/must",
                    needs: "a client CA file",
                })
            }
            (auth, Some(ca_file)) => {
                let mut roots = RootCertStore::empty();
                for cert in pem::load_certs(ca_file)? {
                    roots
                        .add(cert)
                        .map_err(|e| TlsConfigError::BadCertificate {
                            file: ca_file.clone(),
                            what: e.to_string(),
                        })?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
                let verifier = if auth == ClientAuth::Want {
                    verifier.allow_unauthenticated()
                } else {
                    verifier
                };
                let verifier = verifier
                    .build()
                    .map_err(|e| TlsConfigError::BadCertificate {
                        file: ca_file.clone(),
                        what: e.to_string(),
                    })?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let certs = pem::load_certs(&self.cert_file)?;
        let key = pem::load_key(&self.key_file)?;
        let config =
            builder
                .with_single_cert(certs, key)
                .map_err(|e| TlsConfigError::KeyMismatch {
                    cert_file: self.cert_file.clone(),
                    key_file: self.key_file.clone(),
                    what: e.to_string(),
                })?;
        Ok(Arc::new(config))
    }

    /// The configuration wrapped in an acceptor whose handshakes last at most `handshake_timeout`.
    pub fn acceptor(&self, handshake_timeout: Duration) -> Result<TlsAcceptor, TlsConfigError> {
        Ok(TlsAcceptor::new(
            self.build()?,
            self.client_auth,
            handshake_timeout,
        ))
    }
}

/// A failed server-side handshake, for a `tls_client_error` event: a cause and a short detail,
/// no certificate dump and no payload.
#[derive(Debug, Clone, thiserror::Error)]
#[error("TLS handshake with client failed ({cause}): {detail}")]
pub struct TlsAcceptError {
    /// The cause it is reported as.
    pub cause: Cause,
    /// What the client did, in one line.
    pub detail: String,
    /// What the client's operator (or ours) can do about it, when that is known.
    pub hint: Option<Hint>,
}

impl TlsAcceptError {
    /// The stable code for events: the cause name.
    pub fn code(&self) -> &'static str {
        self.cause.as_str()
    }
}

/// What the accepted handshake established.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct AcceptedTls {
    /// What the handshake negotiated.
    pub tls: TlsSummary,
    /// The client presented a certificate.
    pub client_cert_presented: bool,
    /// A presented certificate verified against the client CA (always, under want and must:
    /// an unverifiable one fails the handshake).
    pub client_cert_verified: bool,
    /// The subject of the client's certificate, when it presented one.
    pub client_subject: Option<String>,
}

/// Performs server handshakes with a bound.
#[derive(Clone)]
pub struct TlsAcceptor {
    inner: tokio_rustls::TlsAcceptor,
    client_auth: ClientAuth,
    handshake_timeout: Duration,
}

impl std::fmt::Debug for TlsAcceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsAcceptor")
            .field("client_auth", &self.client_auth)
            .field("handshake_timeout", &self.handshake_timeout)
            .finish()
    }
}

impl TlsAcceptor {
    /// An acceptor for `config` whose every handshake is bounded by `timeout`.
    pub fn new(config: Arc<ServerConfig>, client_auth: ClientAuth, timeout: Duration) -> Self {
        TlsAcceptor {
            inner: tokio_rustls::TlsAcceptor::from(config),
            client_auth,
            handshake_timeout: timeout,
        }
    }

    /// Runs the handshake on an accepted stream.
    pub async fn accept<S>(
        &self,
        stream: S,
    ) -> Result<(tokio_rustls::server::TlsStream<S>, AcceptedTls), TlsAcceptError>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let handshake = tokio::time::timeout(self.handshake_timeout, self.inner.accept(stream));
        let stream = match handshake.await {
            Err(_) => {
                return Err(TlsAcceptError {
                    cause: Cause::ConnectTimeout,
                    detail: format!(
                        "client did not complete a TLS handshake within {}",
                        humantime::format_duration(self.handshake_timeout)
                    ),
                    hint: None,
                })
            }
            Ok(Err(err)) => {
                let failure = describe_handshake_io(&err, Side::Server, Seen::default());
                return Err(TlsAcceptError {
                    cause: failure.cause,
                    detail: failure.detail,
                    hint: Some(failure.hint),
                });
            }
            Ok(Ok(stream)) => stream,
        };
        let (_, session) = stream.get_ref();
        let presented = session.peer_certificates().is_some_and(|c| !c.is_empty());
        let verified = presented && self.client_auth != ClientAuth::None;
        let tls = TlsSummary::of(session, verified);
        let info = AcceptedTls {
            client_subject: tls.peer_certificate.as_ref().map(|c| c.subject.clone()),
            tls,
            client_cert_presented: presented,
            client_cert_verified: verified,
        };
        Ok((stream, info))
    }
}
