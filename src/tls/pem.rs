//! PEM loading through rustls-pki-types; every error names the file and what was wrong.

use super::TlsConfigError;
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;

fn pem_error(file: &Path, err: pem::Error, expected: &str) -> TlsConfigError {
    let what = match err {
        pem::Error::Io(io) => format!("cannot read: {io}"),
        pem::Error::NoItemsFound => format!("no {expected} found (expected a PEM file)"),
        other => format!("not valid PEM: {other}"),
    };
    TlsConfigError::Pem {
        file: file.to_path_buf(),
        what,
    }
}

/// Every certificate in a PEM file; at least one.
pub(crate) fn load_certs(file: &Path) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    let iter =
        CertificateDer::pem_file_iter(file).map_err(|e| pem_error(file, e, "certificate"))?;
    let certs = iter
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_error(file, e, "certificate"))?;
    if certs.is_empty() {
        return Err(pem_error(file, pem::Error::NoItemsFound, "certificate"));
    }
    Ok(certs)
}

/// The first private key (PKCS#8, PKCS#1 or SEC1) in a PEM file.
pub(crate) fn load_key(file: &Path) -> Result<PrivateKeyDer<'static>, TlsConfigError> {
    PrivateKeyDer::from_pem_file(file).map_err(|e| pem_error(file, e, "private key"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let err = load_certs(&missing).unwrap_err().to_string();
        assert!(
            err.contains("missing.pem") && err.contains("cannot read"),
            "{err}"
        );

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "just text\n").unwrap();
        let err = load_certs(&empty).unwrap_err().to_string();
        assert!(
            err.contains("empty.pem") && err.contains("no certificate"),
            "{err}"
        );
        let err = load_key(&empty).unwrap_err().to_string();
        assert!(
            err.contains("empty.pem") && err.contains("no private key"),
            "{err}"
        );

        let broken = dir.path().join("broken.pem");
        std::fs::write(&broken, "-----BEGIN CERTIFICATE-----\n!!!!\n").unwrap();
        let err = load_certs(&broken).unwrap_err().to_string();
        assert!(
            err.contains("broken.pem") && err.contains("not valid PEM"),
            "{err}"
        );
    }
}
