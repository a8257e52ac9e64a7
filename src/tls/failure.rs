//! The one table from TLS failures to a cause, a detail and a hint, worded for the side we are
//! on: the client (`send`, `soak`, `probe`: "the peer" is the server) or the listener (what the
//! connecting client did). Details name certificates, names and alerts, never payload.

mod certificate;

use super::CertSummary;
use crate::cause::{classify_io, Cause, Hint};
use certificate::{ca_used_as_end_entity, certificate_detail, server_certificate};
use rustls::{AlertDescription as A, CertificateError as C, Error as E, PeerIncompatible as P};
use std::io;

/// Which end of the handshake we are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// We connected: the peer is a server.
    Client,
    /// We accepted: the peer is a client.
    Server,
}

/// What is known beyond the error itself (the probe knows the most; a bare error, the least).
#[derive(Debug, Clone, Copy, Default)]
pub struct Seen<'a> {
    /// The peer's end-entity certificate, when it sent one that parses.
    pub peer_certificate: Option<&'a CertSummary>,
    /// Whether we presented a client certificate, when that is known.
    pub client_certificate: Option<bool>,
    /// Whether the server asked for a client certificate, when that is known.
    pub certificate_requested: Option<bool>,
}

/// A classified TLS failure: its cause, what happened, and a step that can fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFailure {
    /// The cause it is reported as.
    pub cause: Cause,
    /// What happened, in one line: certificates, names and alerts, never payload.
    pub detail: String,
    /// What can fix it.
    pub hint: Hint,
}

impl TlsFailure {
    fn new(cause: Cause, detail: impl Into<String>, hint: Hint) -> Self {
        TlsFailure {
            cause,
            detail: detail.into(),
            hint,
        }
    }
}

/// What went wrong, once for both sides: the only match on rustls errors.
enum Kind<'e> {
    /// We refused the peer's certificate.
    Certificate(&'e C),
    /// The peer presented no certificate.
    NoCertificate,
    /// The peer wants a (client) certificate and got none.
    CertificateRequired,
    /// The peer refused a certificate: under TLS only ours can be meant.
    CertificateRefused(A),
    NoVersion,
    NoCipher,
    Incompatible(&'e P),
    NotTls,
    Misbehaved,
    Decrypt,
    /// The peer found nothing acceptable in what we offered.
    Refused(A),
    Alert(A),
    /// Any other error: worded from the error itself.
    Other,
}

fn kind(err: &E) -> Kind<'_> {
    match err {
        E::InvalidCertificate(cert) => Kind::Certificate(cert),
        E::NoCertificatesPresented => Kind::NoCertificate,
        E::AlertReceived(A::CertificateRequired) => Kind::CertificateRequired,
        E::AlertReceived(
            alert @ (A::BadCertificate
            | A::UnknownCA
            | A::CertificateUnknown
            | A::CertificateExpired
            | A::CertificateRevoked
            | A::UnsupportedCertificate
            | A::AccessDenied),
        ) => Kind::CertificateRefused(*alert),
        E::AlertReceived(A::ProtocolVersion) => Kind::NoVersion,
        E::AlertReceived(alert @ (A::HandshakeFailure | A::InsufficientSecurity)) => {
            Kind::Refused(*alert)
        }
        E::AlertReceived(alert) => Kind::Alert(*alert),
        E::PeerIncompatible(
            P::ServerDoesNotSupportTls12Or13
            | P::ServerTlsVersionIsDisabledByOurConfig
            | P::SupportedVersionsExtensionRequired
            | P::Tls12NotOffered
            | P::Tls12NotOfferedOrEnabled,
        ) => Kind::NoVersion,
        E::PeerIncompatible(P::NoCipherSuitesInCommon) => Kind::NoCipher,
        E::PeerIncompatible(other) => Kind::Incompatible(other),
        E::InvalidMessage(_) | E::InappropriateMessage { .. } => Kind::NotTls,
        E::InappropriateHandshakeMessage { .. } | E::PeerMisbehaved(_) => Kind::Misbehaved,
        E::DecryptError => Kind::Decrypt,
        _ => Kind::Other,
    }
}

/// The table: a rustls error, from `side`, with what else is known.
pub fn describe(err: &E, side: Side, seen: Seen<'_>) -> TlsFailure {
    let kind = kind(err);
    certificate(err, &kind, side, seen)
        .or_else(|| negotiation(&kind, side))
        .unwrap_or_else(|| refusal(err, &kind, side, seen))
}

/// The rows about certificates: ours refused, the peer's refused or missing.
fn certificate(err: &E, kind: &Kind<'_>, side: Side, seen: Seen<'_>) -> Option<TlsFailure> {
    use Side::{Client, Server};
    let handshake = Cause::TlsHandshake;
    Some(match (kind, side) {
        (Kind::Certificate(cert), Client) => server_certificate(cert, seen.peer_certificate),
        (Kind::Certificate(cert), Server) if ca_used_as_end_entity(cert) => TlsFailure::new(
            Cause::TlsVerify,
            "client certificate not trusted: most likely self-signed, it is marked as a CA, as \
             `openssl req -x509` makes one",
            Hint::ClientNeedsTrustedIssuer { ca_own: true },
        ),
        (Kind::Certificate(cert), Server) => TlsFailure::new(
            Cause::TlsVerify,
            format!("client certificate not trusted: {}", certificate_detail(cert)),
            Hint::ClientNeedsTrustedIssuer { ca_own: false },
        ),
        (Kind::NoCertificate, Client) => TlsFailure::new(
            handshake,
            "the peer presented no certificate",
            Hint::Prose("the peer must be configured with a certificate"),
        ),
        (Kind::NoCertificate, Server) => TlsFailure::new(
            handshake,
            "client did not present a certificate (client authentication requires one)",
            Hint::ClientMustPresentCertificate,
        ),
        (Kind::CertificateRequired, Client) => TlsFailure::new(
            Cause::TlsClientCert,
            match seen.client_certificate {
                Some(false) => "the server requires a client certificate and none was given",
                _ => "the server requires a client certificate",
            },
            Hint::GiveClientCertificate,
        ),
        (Kind::CertificateRefused(alert), Client) => match seen.client_certificate {
            Some(false) => TlsFailure::new(
                Cause::TlsClientCert,
                format!("the server refused a connection without a client certificate (alert {alert:?})"),
                Hint::GiveClientCertificate,
            ),
            _ => TlsFailure::new(
                Cause::TlsClientCert,
                format!("the server refused our client certificate (alert {alert:?})"),
                Hint::ReplaceClientCertificate,
            ),
        },
        (Kind::CertificateRequired | Kind::CertificateRefused(_), Server) => {
            let alert = match err {
                E::AlertReceived(alert) => *alert,
                _ => A::CertificateRequired,
            };
            TlsFailure::new(
                handshake,
                format!(
                    "client aborted the handshake (alert {alert:?}): it likely does not trust \
                     our certificate"
                ),
                Hint::ClientMustTrustUs,
            )
        }
        _ => return None,
    })
}

/// The rows about what the two ends could not agree on: versions, suites, the protocol itself.
fn negotiation(kind: &Kind<'_>, side: Side) -> Option<TlsFailure> {
    use Side::{Client, Server};
    let handshake = Cause::TlsHandshake;
    Some(match (kind, side) {
        (Kind::NoVersion, Client) => TlsFailure::new(
            handshake,
            "no TLS version in common with the peer (this client speaks TLS 1.2 and 1.3)",
            Hint::Prose(
                "enable TLS 1.2 or 1.3 on the peer; a peer limited to older versions needs a TLS \
             1.2 terminator in front of it",
            ),
        ),
        (Kind::NoVersion, Server) => TlsFailure::new(
            handshake,
            "client offered no TLS version we accept (TLS 1.2 and 1.3)",
            Hint::Prose("the client must enable TLS 1.2 or 1.3"),
        ),
        (Kind::NoCipher, Client) => TlsFailure::new(
            handshake,
            "no cipher suite in common with the peer",
            Hint::Prose(
                "enable a modern suite on the peer (ECDHE with AES-GCM or ChaCha20-Poly1305)",
            ),
        ),
        (Kind::NoCipher, Server) => TlsFailure::new(
            handshake,
            "client offered no cipher suite we accept",
            Hint::Prose(
                "the client must enable a modern suite (ECDHE with AES-GCM or ChaCha20-Poly1305)",
            ),
        ),
        (Kind::Incompatible(other), Client) => TlsFailure::new(
            handshake,
            format!("the peer is incompatible: {other:?}"),
            Hint::Prose("check the peer's TLS settings against TLS 1.2 and 1.3 defaults"),
        ),
        (Kind::Incompatible(other), Server) => TlsFailure::new(
            handshake,
            format!("client is incompatible: {other:?}"),
            Hint::Prose("check the client's TLS settings"),
        ),
        (Kind::NotTls, Client) => TlsFailure::new(
            handshake,
            "the peer did not answer with TLS (non-TLS or malformed bytes)",
            Hint::TurnTlsOff,
        ),
        (Kind::NotTls, Server) => TlsFailure::new(
            handshake,
            "client did not speak TLS (non-TLS or malformed bytes: plain MLLP to a TLS port?)",
            Hint::ClientMustUseTls,
        ),
        (Kind::Misbehaved, Client) => TlsFailure::new(
            handshake,
            "the peer broke the TLS handshake protocol",
            Hint::Prose("the peer's TLS stack misbehaved: check its logs and version"),
        ),
        (Kind::Misbehaved, Server) => TlsFailure::new(
            handshake,
            "client broke the TLS handshake protocol",
            Hint::Prose("the client's TLS stack misbehaved: check its version"),
        ),
        (Kind::Decrypt, Client) => TlsFailure::new(
            handshake,
            "TLS decryption of the peer's data failed",
            Hint::Prose("check the peer's logs: something between us may alter the traffic"),
        ),
        (Kind::Decrypt, Server) => TlsFailure::new(
            handshake,
            "TLS decryption of the client's data failed",
            Hint::Prose(
                "check what sits between the client and us: something may alter the traffic",
            ),
        ),
        _ => return None,
    })
}

/// The rows left: the peer refused or ended the handshake with an alert, or another error.
fn refusal(err: &E, kind: &Kind<'_>, side: Side, seen: Seen<'_>) -> TlsFailure {
    use Side::{Client, Server};
    let handshake = Cause::TlsHandshake;
    match (kind, side) {
        // A TLS 1.2 server that asked for a certificate and got none often says only this.
        (Kind::Refused(alert), Client)
            if seen.certificate_requested == Some(true)
                && seen.client_certificate == Some(false) =>
        {
            TlsFailure::new(
                Cause::TlsClientCert,
                format!(
                    "the server asked for a client certificate, none was given, and it refused \
                     the handshake (alert {alert:?})"
                ),
                Hint::GiveClientCertificate,
            )
        }
        (Kind::Refused(alert), Client) => TlsFailure::new(
            handshake,
            format!("the peer refused the handshake (alert {alert:?})"),
            match seen.client_certificate {
                Some(true) => Hint::Prose(
                    "check the peer's logs: it found our TLS versions, cipher suites or client \
                     certificate unacceptable",
                ),
                _ => Hint::ClientCertificateOrSuites,
            },
        ),
        (Kind::Refused(alert), Server) => TlsFailure::new(
            handshake,
            format!("client aborted the handshake (alert {alert:?})"),
            Hint::Prose("check the client's logs"),
        ),
        (Kind::Alert(alert), Client) => TlsFailure::new(
            handshake,
            format!("the peer sent TLS alert {alert:?}"),
            Hint::Prose("check the peer's logs for why it ended the session"),
        ),
        (Kind::Alert(alert), Server) => TlsFailure::new(
            handshake,
            format!("client sent TLS alert {alert:?}"),
            Hint::Prose("check the client's logs"),
        ),
        (_, Client) => TlsFailure::new(
            handshake,
            format!("TLS error: {err}"),
            Hint::Prose("check the peer's TLS configuration and logs"),
        ),
        (_, Server) => TlsFailure::new(
            handshake,
            format!("TLS error with the client: {err}"),
            Hint::Prose("check the client's TLS configuration"),
        ),
    }
}

/// The rustls error inside an I/O error from a TLS stream, if that is what it is.
pub(crate) fn rustls_error(err: &io::Error) -> Option<&E> {
    err.get_ref().and_then(|e| e.downcast_ref::<E>())
}

/// An I/O error from a TLS handshake: a rustls error goes through [`describe`]; an end of
/// stream is `tls-handshake` (a peer that hangs up on a ClientHello does not speak TLS there,
/// or refused us); other OS errors through the OS table.
pub(crate) fn describe_handshake_io(err: &io::Error, side: Side, seen: Seen<'_>) -> TlsFailure {
    if let Some(tls) = rustls_error(err) {
        return describe(tls, side, seen);
    }
    if err.kind() == io::ErrorKind::UnexpectedEof {
        return match side {
            Side::Client => TlsFailure::new(
                Cause::TlsHandshake,
                "the peer closed the connection during the TLS handshake",
                Hint::TurnTlsOffOrCheckAccess,
            ),
            Side::Server => TlsFailure::new(
                Cause::TlsHandshake,
                "client closed the connection during the TLS handshake (it may not trust our \
                 certificate, or not speak TLS)",
                Hint::ClientMustTrustUs,
            ),
        };
    }
    let cause = classify_io(err);
    TlsFailure::new(cause, err.to_string(), cause.hint())
}

/// The cause of a failed read or write on an established client session. Under TLS 1.3 a
/// server checks our certificate (or its absence) after our side of the handshake is done:
/// its refusal comes as an alert before it sends any data, and then, like every TLS failure
/// before the peer's first byte, it is classified by the table. Later, a TLS error is
/// `network-error` (transient) like any other broken stream.
pub fn session_cause(err: &io::Error, nothing_received: bool) -> Cause {
    match rustls_error(err) {
        Some(tls) if nothing_received => describe(tls, Side::Client, Seen::default()).cause,
        Some(_) => Cause::NetworkError,
        None => classify_io(err),
    }
}

/// Whether a session error is the server's refusal of our client certificate.
pub(crate) fn refuses_client_certificate(err: &io::Error) -> bool {
    rustls_error(err).is_some_and(|tls| {
        matches!(
            kind(tls),
            Kind::CertificateRequired | Kind::CertificateRefused(_)
        )
    })
}

#[cfg(test)]
mod tests;
