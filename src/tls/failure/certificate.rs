//! The server's certificate refused: which check failed, in a few words or, with the
//! certificate at hand, with its names and dates; and the step that gets past it.

use super::TlsFailure;
use crate::cause::{Cause, Hint};
use crate::tls::CertSummary;
use rustls::CertificateError as C;

/// The server's certificate was refused: which check failed, with its names and dates when the
/// certificate is at hand, and how to get past it.
pub(super) fn server_certificate(err: &C, cert: Option<&CertSummary>) -> TlsFailure {
    let self_signed = cert.is_some_and(|c| c.issuer == c.subject);
    let (detail, hint) = match err {
        C::Expired | C::ExpiredContext { .. } => (
            match cert {
                Some(c) => {
                    let days = -c.days_left;
                    let unit = if days == 1 { "day" } else { "days" };
                    format!("certificate expired on {} ({days} {unit} ago)", c.not_after)
                }
                None => certificate_detail(err),
            },
            Hint::Prose("the peer's certificate has expired: the peer must renew it"),
        ),
        C::NotValidYet | C::NotValidYetContext { .. } => (
            match cert {
                Some(c) => format!("certificate is not valid until {}", c.not_before),
                None => certificate_detail(err),
            },
            Hint::Prose("the peer's certificate is not valid yet: check the clocks on both sides"),
        ),
        C::NotValidForName | C::NotValidForNameContext { .. } => {
            let names = cert.map(|c| c.sans.clone()).unwrap_or_default();
            (certificate_detail(err), Hint::GiveServerName { names })
        }
        // webpki may report a self-signed certificate as a signature mismatch against a trusted
        // root, or as a CA used as an end entity, rather than as an unknown issuer: its issuer
        // naming itself says which it is.
        _ if self_signed => (
            format!(
                "certificate is self-signed ({}), not issued by a trusted CA",
                cert.map(|c| c.subject.as_str()).unwrap_or_default()
            ),
            Hint::PinSelfSigned,
        ),
        C::UnknownIssuer => (
            match cert {
                Some(c) => format!("certificate issuer {} is not trusted", c.issuer),
                None => certificate_detail(err),
            },
            Hint::TrustIssuerOrPin,
        ),
        C::Revoked => (
            certificate_detail(err),
            Hint::Prose("the peer's certificate is revoked: the peer must replace it"),
        ),
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => (
            certificate_detail(err),
            Hint::Prose("the peer needs a certificate issued for TLS server authentication"),
        ),
        C::BadEncoding => (
            certificate_detail(err),
            Hint::Prose("the peer's certificate is malformed: the peer must replace it"),
        ),
        other if ca_used_as_end_entity(other) => {
            (certificate_detail(err), Hint::PinOrServerCertificate)
        }
        _ => (certificate_detail(err), Hint::TrustIssuerOrPin),
    };
    TlsFailure::new(Cause::TlsVerify, detail, hint)
}

/// A certificate check that failed, in a few words.
pub(super) fn certificate_detail(err: &C) -> String {
    match err {
        C::UnknownIssuer => "certificate issuer is not trusted (unknown issuer)".into(),
        C::Expired | C::ExpiredContext { .. } => "certificate expired".into(),
        C::NotValidYet | C::NotValidYetContext { .. } => "certificate is not valid yet".into(),
        C::NotValidForNameContext {
            expected,
            presented,
        } => {
            let names = if presented.is_empty() {
                "no name".to_string()
            } else {
                presented
                    .iter()
                    .map(|name| plain_name(name))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!("certificate is for {names}, not {}", expected.to_str())
        }
        C::NotValidForName => "certificate is not valid for the server name".into(),
        C::BadSignature => "certificate signature is invalid".into(),
        C::UnsupportedSignatureAlgorithmContext { .. }
        | C::UnsupportedSignatureAlgorithmForPublicKeyContext { .. } => {
            "certificate signature does not match a trusted issuer's key algorithm".into()
        }
        C::Revoked => "certificate is revoked".into(),
        C::BadEncoding => "certificate is malformed".into(),
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => {
            "certificate is not issued for this use (key usage)".into()
        }
        // A CA certificate presented as the peer's own: nearly always a self-signed one, as
        // `openssl req -x509` makes, which pinning trusts as it is.
        other if ca_used_as_end_entity(other) => {
            "certificate is most likely self-signed: it is marked as a CA, as `openssl req -x509` \
             makes one"
                .into()
        }
        other => format!("certificate rejected: {other:?}"),
    }
}

/// webpki's "CA used as end entity", which reaches rustls as an opaque error.
pub(super) fn ca_used_as_end_entity(err: &C) -> bool {
    matches!(err, C::Other(other) if format!("{other:?}").contains("CaUsedAsEndEntity"))
}

/// rustls renders presented names as `DnsName("x")` / `IpAddress(..)`: keep the name alone.
fn plain_name(name: &str) -> &str {
    name.strip_prefix("DnsName(\"")
        .and_then(|rest| rest.strip_suffix("\")"))
        .or_else(|| {
            name.strip_prefix("IpAddress(")
                .and_then(|rest| rest.strip_suffix(')'))
        })
        .unwrap_or(name)
}
