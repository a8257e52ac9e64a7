//! `mllp listen`'s `tls_client_error` events, worded from the listener's side: what the
//! connecting client did, never what a client would say about its own certificate.

use crate::listen_more::{is, tls_args, tls_exchange};
use crate::support::certs::Certs;
use crate::support::listen_proc::ListenProc;
use serde_json::Value;

fn detail(event: &Value) -> &str {
    event["detail"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_missing_or_untrusted_client_certificate_is_the_clients_doing() {
    let certs = Certs::generate();
    let server = ListenProc::start(&tls_args(&certs, "must"));
    assert_eq!(tls_exchange(server.addr, &certs, None).await, None);
    let missing = server.wait_event(is("tls_client_error"));
    assert_eq!(missing["cause"], "tls-handshake", "{missing}");
    assert!(
        detail(&missing).starts_with("client did not present a certificate"),
        "{missing}"
    );
    let untrusted = tls_exchange(server.addr, &certs, Some(&certs.untrusted_client)).await;
    assert_eq!(untrusted, None);
    let untrusted = server.wait_event(is("tls_client_error"));
    assert_eq!(untrusted["cause"], "tls-verify", "{untrusted}");
    assert!(
        detail(&untrusted).starts_with("client certificate not trusted"),
        "{untrusted}"
    );
}

#[tokio::test]
async fn a_client_that_does_not_trust_our_certificate_aborted_the_handshake() {
    let certs = Certs::generate();
    // Self-signed: the client, trusting only the test CA, gives up on it.
    let server = ListenProc::start(&[
        "--tls-cert",
        certs.untrusted.cert.to_str().unwrap(),
        "--tls-key",
        certs.untrusted.key.to_str().unwrap(),
    ]);
    assert_eq!(tls_exchange(server.addr, &certs, None).await, None);
    let error = server.wait_event(is("tls_client_error"));
    assert_eq!(error["cause"], "tls-handshake", "{error}");
    let detail = detail(&error);
    assert!(
        detail.starts_with("client aborted the handshake")
            && detail.contains("it likely does not trust our certificate"),
        "{error}"
    );
    assert!(!detail.contains("our client certificate"), "{error}");
}
