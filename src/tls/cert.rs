//! What a peer certificate says, for `probe` and for server connection events.

use rustls::pki_types::CertificateDer;
use serde::Serialize;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer, X509Certificate};

/// The end-entity certificate in brief. Certificates are configuration, not payload.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CertSummary {
    /// The subject's distinguished name (`CN=localhost`).
    pub subject: String,
    /// The issuer's distinguished name; the subject's own when self-signed.
    pub issuer: String,
    /// DNS names and IP addresses from subjectAltName.
    pub sans: Vec<String>,
    /// RFC 3339, UTC.
    pub not_before: String,
    /// RFC 3339, UTC.
    pub not_after: String,
    /// Whole days until `not_after`; negative once expired.
    pub days_left: i64,
}

impl CertSummary {
    /// Parses a DER certificate; `None` when it does not parse (the handshake verified or
    /// rejected it already; a summary is a courtesy).
    pub(crate) fn from_der(der: &CertificateDer<'_>) -> Option<CertSummary> {
        Self::at(der, SystemTime::now())
    }

    fn at(der: &CertificateDer<'_>, now: SystemTime) -> Option<CertSummary> {
        let (_, cert) = X509Certificate::from_der(der.as_ref()).ok()?;
        let sans = match cert.subject_alternative_name() {
            Ok(Some(ext)) => ext
                .value
                .general_names
                .iter()
                .filter_map(general_name)
                .collect(),
            _ => Vec::new(),
        };
        let not_before = cert.validity().not_before.timestamp();
        let not_after = cert.validity().not_after.timestamp();
        let now_secs = now
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        Some(CertSummary {
            subject: cert.subject().to_string(),
            issuer: cert.issuer().to_string(),
            sans,
            not_before: rfc3339(not_before),
            not_after: rfc3339(not_after),
            days_left: (not_after - now_secs).div_euclid(86_400),
        })
    }
}

fn general_name(name: &GeneralName<'_>) -> Option<String> {
    match name {
        GeneralName::DNSName(dns) => Some(dns.to_string()),
        GeneralName::IPAddress(bytes) => match bytes.len() {
            4 => {
                let octets: [u8; 4] = (*bytes).try_into().ok()?;
                Some(std::net::Ipv4Addr::from(octets).to_string())
            }
            16 => {
                let octets: [u8; 16] = (*bytes).try_into().ok()?;
                Some(std::net::Ipv6Addr::from(octets).to_string())
            }
            _ => None,
        },
        _ => None,
    }
}

fn rfc3339(unix: i64) -> String {
    let time = if unix >= 0 {
        UNIX_EPOCH + Duration::from_secs(unix as u64)
    } else {
        UNIX_EPOCH - Duration::from_secs(unix.unsigned_abs())
    };
    humantime::format_rfc3339_seconds(time).to_string()
}
