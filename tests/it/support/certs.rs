//! Certificates generated at test time (rcgen): a CA, good and bad server certificates, client
//! certificates, written as PEM files into a temporary directory.

use mllp::tls::{ClientAuth, ClientTlsOptions, ServerTlsOptions};
use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use std::path::{Path, PathBuf};
use time::{Duration, OffsetDateTime};

/// A certificate and its key on disk.
#[derive(Debug, Clone)]
pub struct Pair {
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// Every fixture, all under one temporary directory that lives as long as this value.
pub struct Certs {
    pub dir: tempfile::TempDir,
    /// The trusted test CA (PEM).
    pub ca: PathBuf,
    /// Valid now for localhost and 127.0.0.1, signed by the CA.
    pub server: Pair,
    pub expired: Pair,
    pub not_yet_valid: Pair,
    /// Valid, signed by the CA, but for other.example only.
    pub wrong_name: Pair,
    /// Self-signed for localhost/127.0.0.1: nobody's CA trusts it.
    pub untrusted: Pair,
    /// Self-signed the way `openssl req -x509 -subj /CN=localhost` makes one: marked as a CA,
    /// no subjectAltName, so it names no host a client could verify.
    pub openssl_style: Pair,
    /// Client certificate signed by the CA.
    pub client: Pair,
    /// Client certificate signed by a CA the server does not trust.
    pub untrusted_client: Pair,
}

struct Ca {
    cert: Certificate,
    key: KeyPair,
}

fn ca(name: &str) -> Ca {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let cert = params.self_signed(&key).unwrap();
    Ca { cert, key }
}

fn leaf_params(
    names: &[&str],
    common_name: &str,
    purpose: ExtendedKeyUsagePurpose,
    valid: (OffsetDateTime, OffsetDateTime),
) -> CertificateParams {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names).unwrap();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.extended_key_usages = vec![purpose];
    params.not_before = valid.0;
    params.not_after = valid.1;
    params
}

fn write(dir: &Path, stem: &str, cert: &Certificate, key: &KeyPair) -> Pair {
    let pair = Pair {
        cert: dir.join(format!("{stem}.crt")),
        key: dir.join(format!("{stem}.key")),
    };
    std::fs::write(&pair.cert, cert.pem()).unwrap();
    std::fs::write(&pair.key, key.serialize_pem()).unwrap();
    pair
}

impl Certs {
    pub fn generate() -> Certs {
        let dir = tempfile::tempdir().unwrap();
        let now = OffsetDateTime::now_utc();
        let valid = (now - Duration::days(1), now + Duration::days(30));
        let local = ["localhost", "127.0.0.1"];
        let server_eku = ExtendedKeyUsagePurpose::ServerAuth;
        let client_eku = ExtendedKeyUsagePurpose::ClientAuth;

        let root = ca("mllp test CA");
        let ca_path = dir.path().join("ca.crt");
        std::fs::write(&ca_path, root.cert.pem()).unwrap();
        let signed = |stem: &str, params: CertificateParams, by: &Ca| {
            let key = KeyPair::generate().unwrap();
            let cert = params.signed_by(&key, &by.cert, &by.key).unwrap();
            write(dir.path(), stem, &cert, &key)
        };

        let server = signed(
            "server",
            leaf_params(&local, "localhost", server_eku.clone(), valid),
            &root,
        );
        let expired = signed(
            "expired",
            leaf_params(
                &local,
                "localhost",
                server_eku.clone(),
                (now - Duration::days(60), now - Duration::days(30)),
            ),
            &root,
        );
        let not_yet_valid = signed(
            "not-yet-valid",
            leaf_params(
                &local,
                "localhost",
                server_eku.clone(),
                (now + Duration::days(30), now + Duration::days(60)),
            ),
            &root,
        );
        let wrong_name = signed(
            "wrong-name",
            leaf_params(
                &["other.example"],
                "other.example",
                server_eku.clone(),
                valid,
            ),
            &root,
        );
        let untrusted = {
            let key = KeyPair::generate().unwrap();
            let cert = leaf_params(&local, "localhost", server_eku, valid)
                .self_signed(&key)
                .unwrap();
            write(dir.path(), "untrusted", &cert, &key)
        };
        let openssl_style = {
            let key = KeyPair::generate().unwrap();
            let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params
                .distinguished_name
                .push(DnType::CommonName, "localhost");
            params.not_before = valid.0;
            params.not_after = valid.1;
            let cert = params.self_signed(&key).unwrap();
            write(dir.path(), "openssl-style", &cert, &key)
        };
        let client = signed(
            "client",
            leaf_params(&[], "mllp test client", client_eku.clone(), valid),
            &root,
        );
        let stranger = ca("stranger CA");
        let untrusted_client = signed(
            "untrusted-client",
            leaf_params(&[], "stranger client", client_eku, valid),
            &stranger,
        );
        Certs {
            dir,
            ca: ca_path,
            server,
            expired,
            not_yet_valid,
            wrong_name,
            untrusted,
            openssl_style,
            client,
            untrusted_client,
        }
    }

    /// Client options trusting the test CA alone (the machine's native roots stay out of
    /// tests: they may hold anything, even a root named localhost).
    pub fn client_options(&self) -> ClientTlsOptions {
        ClientTlsOptions {
            ca_file: Some(self.ca.clone()),
            ca_only: true,
            ..ClientTlsOptions::default()
        }
    }

    /// Server options presenting `pair`, without client authentication.
    pub fn server_options(&self, pair: &Pair) -> ServerTlsOptions {
        ServerTlsOptions {
            cert_file: pair.cert.clone(),
            key_file: pair.key.clone(),
            ..ServerTlsOptions::default()
        }
    }

    /// Server options presenting the good server certificate and asking for client certificates
    /// signed by the test CA.
    pub fn mtls_server_options(&self, auth: ClientAuth) -> ServerTlsOptions {
        ServerTlsOptions {
            client_ca: Some(self.ca.clone()),
            client_auth: auth,
            ..self.server_options(&self.server)
        }
    }
}
