//! Server-certificate verification: WebPKI against the trusted roots, except that a
//! certificate the CA file holds itself is trusted exactly (pinned): the certificate is then
//! the identity, whether or not it is marked as a CA and whatever names it carries. Its
//! validity dates still hold, and the handshake still proves the server has its key.

use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, Error};
use std::sync::Arc;
use x509_parser::prelude::{FromDer, X509Certificate};

/// The handshake-signature half of a [`ServerCertVerifier`] whose own decision is about the
/// certificate alone: every signature check goes to the verifier in field `$inner`.
macro_rules! signatures_checked_by {
    ($inner:ident) => {
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &rustls::pki_types::CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            self.$inner.verify_tls12_signature(message, cert, dss)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &rustls::pki_types::CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            self.$inner.verify_tls13_signature(message, cert, dss)
        }

        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            self.$inner.supported_verify_schemes()
        }
    };
}
pub(crate) use signatures_checked_by;

#[derive(Debug)]
pub(crate) struct PinningVerifier {
    pinned: Vec<CertificateDer<'static>>,
    webpki: Arc<WebPkiServerVerifier>,
}

impl PinningVerifier {
    pub(crate) fn new(
        pinned: Vec<CertificateDer<'static>>,
        webpki: Arc<WebPkiServerVerifier>,
    ) -> Self {
        PinningVerifier { pinned, webpki }
    }
}

/// A pinned certificate is trusted only between its own dates.
fn check_dates(der: &CertificateDer<'_>, now: UnixTime) -> Result<(), Error> {
    let (_, cert) = X509Certificate::from_der(der.as_ref())
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))?;
    let now = now.as_secs() as i64;
    let validity = cert.validity();
    if now < validity.not_before.timestamp() {
        return Err(Error::InvalidCertificate(CertificateError::NotValidYet));
    }
    if now > validity.not_after.timestamp() {
        return Err(Error::InvalidCertificate(CertificateError::Expired));
    }
    Ok(())
}

impl ServerCertVerifier for PinningVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        if self
            .pinned
            .iter()
            .any(|p| p.as_ref() == end_entity.as_ref())
        {
            check_dates(end_entity, now)?;
            return Ok(ServerCertVerified::assertion());
        }
        self.webpki
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    signatures_checked_by!(webpki);
}
