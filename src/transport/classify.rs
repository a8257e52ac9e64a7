//! The cause of any failure the library reports: the error chain walked for a link, resolver,
//! TLS or OS error. TLS errors go through the TLS table, OS errors through the OS table.

use crate::cause::{classify_io, Cause};
use crate::resolve::ResolveError;
use crate::tls::{describe, rustls_error, Seen, Side};
use crate::transport::LinkError;
use std::error::Error;
use std::io;

/// The cause of any failure the library reports, for the CLI and `probe`: walks the error and
/// its sources for a [`LinkError`], [`ResolveError`], rustls error or OS error. A TLS error
/// wrapped in an I/O error after the handshake (a TLS 1.3 server refusing our client
/// certificate on its first read) is classified by the TLS table. Anything else is
/// `network-error`.
pub fn classify(err: &(dyn Error + 'static)) -> Cause {
    let mut current: Option<&(dyn Error + 'static)> = Some(err);
    while let Some(err) = current {
        if let Some(link) = err.downcast_ref::<LinkError>() {
            return link.cause;
        }
        if let Some(resolve) = err.downcast_ref::<ResolveError>() {
            return resolve.cause();
        }
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return describe(tls, Side::Client, Seen::default()).cause;
        }
        if let Some(io) = err.downcast_ref::<io::Error>() {
            if let Some(tls) = rustls_error(io) {
                return describe(tls, Side::Client, Seen::default()).cause;
            }
            return classify_io(io);
        }
        current = err.source();
    }
    Cause::NetworkError
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::Phase;
    use rustls::{AlertDescription as A, Error as E};

    #[test]
    fn io_wrapping_and_chains_classify() {
        let wrapped = io::Error::new(
            io::ErrorKind::InvalidData,
            E::AlertReceived(A::CertificateRequired),
        );
        assert_eq!(classify(&wrapped), Cause::TlsClientCert);
        let version = io::Error::new(
            io::ErrorKind::InvalidData,
            E::AlertReceived(A::ProtocolVersion),
        );
        assert_eq!(classify(&version), Cause::TlsHandshake);
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(classify(&refused), Cause::ConnectionRefused);
        let link = LinkError {
            cause: Cause::DnsFailed,
            phase: Phase::Resolve,
            detail: "x".into(),
        };
        assert_eq!(classify(&link), Cause::DnsFailed);
        let resolve = ResolveError::NotFound { host: "h".into() };
        assert_eq!(classify(&resolve), Cause::DnsNotFound);
        assert_eq!(classify(&io::Error::other("odd")), Cause::NetworkError);
    }
}
