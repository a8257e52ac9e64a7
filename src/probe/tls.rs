//! The probe's TLS side: a client configuration whose verifier remembers the peer certificate
//! (so a refused certificate can still be described), and a stream wrapper that keeps the
//! first bytes the peer sent (so a non-TLS answer to the ClientHello can be recognised).

use crate::tls::{signatures_checked_by, CertificateAsked, ClientTlsOptions, TlsConfigError};
use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::ClientConfig;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How many of the peer's first bytes are kept for recognition.
const KEEP_FIRST: usize = 16;

/// The peer certificate the verifier was shown, whether it names the server name, and whether
/// the CA file holds it itself (then it is trusted as itself, names aside).
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub cert: CertificateDer<'static>,
    pub name_matched: bool,
    pub pinned: bool,
}

/// Delegates every decision to `inner`, remembering the end-entity certificate first.
#[derive(Debug)]
struct Capturing {
    inner: Arc<dyn ServerCertVerifier>,
    pinned: Vec<CertificateDer<'static>>,
    seen: Mutex<Option<Seen>>,
}

impl ServerCertVerifier for Capturing {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let name_matched = rustls::server::ParsedCertificate::try_from(end_entity)
            .and_then(|parsed| rustls::client::verify_server_name(&parsed, server_name))
            .is_ok();
        if let Ok(mut seen) = self.seen.lock() {
            *seen = Some(Seen {
                cert: end_entity.clone().into_owned(),
                name_matched,
                pinned: self
                    .pinned
                    .iter()
                    .any(|p| p.as_ref() == end_entity.as_ref()),
            });
        }
        self.inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    signatures_checked_by!(inner);
}

/// The TLS side of a probe, built once; probes run one at a time through it.
#[derive(Debug, Clone)]
pub struct ProbeTls {
    pub(crate) config: Arc<ClientConfig>,
    /// The name sent as SNI and checked in the server's certificate.
    pub server_name: ServerName<'static>,
    /// Verification is off (insecure mode).
    pub verify_disabled: bool,
    /// A client certificate is configured.
    pub client_cert: bool,
    capture: Arc<Capturing>,
    asked: CertificateAsked,
}

impl ProbeTls {
    /// Builds from the client options; `host` is the default server name. Session resumption is
    /// off, so every probe sees a full handshake and the server's certificate.
    pub fn new(options: &ClientTlsOptions, host: &str) -> Result<ProbeTls, TlsConfigError> {
        let built = options.build(host)?;
        let capture = Arc::new(Capturing {
            inner: options.server_verifier()?,
            pinned: options.pinned_certificates()?,
            seen: Mutex::new(None),
        });
        let mut config = (*built.config).clone();
        config.dangerous().set_certificate_verifier(capture.clone());
        config.resumption = Resumption::disabled();
        let (config, asked) = CertificateAsked::install(&config);
        Ok(ProbeTls {
            config,
            asked,
            server_name: built.server_name,
            verify_disabled: built.verify_disabled,
            client_cert: options.cert_file.is_some(),
            capture,
        })
    }

    /// Whether the server asked for a client certificate in this probe's handshake.
    pub(crate) fn certificate_requested(&self) -> bool {
        self.asked.get()
    }

    /// Forgets the certificate (and the certificate request) of the previous probe.
    pub(crate) fn reset(&self) {
        self.asked.reset();
        if let Ok(mut seen) = self.capture.seen.lock() {
            *seen = None;
        }
    }

    pub(crate) fn seen(&self) -> Option<Seen> {
        self.capture.seen.lock().ok().and_then(|s| s.clone())
    }

    /// The server name as text: a DNS name, or an IP address.
    pub(crate) fn server_name_text(&self) -> String {
        match &self.server_name {
            ServerName::DnsName(name) => name.as_ref().to_string(),
            ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
            other => format!("{other:?}"),
        }
    }
}

/// A stream that keeps a copy of the first [`KEEP_FIRST`] bytes read through it.
pub(crate) struct Recording<S> {
    inner: S,
    first: Arc<Mutex<Vec<u8>>>,
}

impl<S> Recording<S> {
    pub(crate) fn new(inner: S) -> (Self, Arc<Mutex<Vec<u8>>>) {
        let first = Arc::new(Mutex::new(Vec::with_capacity(KEEP_FIRST)));
        (
            Recording {
                inner,
                first: first.clone(),
            },
            first,
        )
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Recording<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            if let Ok(mut first) = self.first.lock() {
                let room = KEEP_FIRST.saturating_sub(first.len());
                let new = &buf.filled()[before..];
                first.extend_from_slice(&new[..new.len().min(room)]);
            }
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Recording<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
