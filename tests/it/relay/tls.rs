//! TLS bridged both ways: plain downstream to an upstream that wants our client certificate,
//! and TLS downstream with client authentication to a plain upstream.

use super::proc::RelayProc;
use crate::support::certs::Certs;
use crate::support::listen_proc::ListenProc;
use crate::support::mllp_client::{adt, MllpClient};
use crate::support::send_proc::{finish, messages};

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[tokio::test]
async fn plain_downstream_reaches_an_upstream_that_asks_for_mutual_tls() {
    let certs = Certs::generate();
    let upstream = ListenProc::start(&[
        "--tls-cert",
        s(&certs.server.cert),
        "--tls-key",
        s(&certs.server.key),
        "--client-ca",
        s(&certs.ca),
        "--client-auth",
        "must",
    ]);
    let relay = RelayProc::start(
        &upstream.addr.to_string(),
        &[
            "--ca",
            s(&certs.ca),
            "--cert",
            s(&certs.client.cert),
            "--key",
            s(&certs.client.key),
            "--server-name",
            "localhost",
        ],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    client.send(&adt(b"T1", "")).await;
    let answer = client.ack().await.expect("an answer");
    assert_eq!(
        (answer.code.as_str(), &answer.control_id[..]),
        ("AA", &b"T1"[..])
    );
}

#[tokio::test]
async fn tls_downstream_with_client_authentication_reaches_a_plain_upstream() {
    let certs = Certs::generate();
    let upstream = ListenProc::start(&[]);
    let relay = RelayProc::start(
        &upstream.addr.to_string(),
        &[
            "--tls-cert",
            s(&certs.server.cert),
            "--tls-key",
            s(&certs.server.key),
            "--client-ca",
            s(&certs.ca),
            "--client-auth",
            "must",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.hl7");
    std::fs::write(&input, messages("T", 3)).unwrap();
    let host = format!("127.0.0.1:{}", relay.addr.port());
    let mut send = tokio::process::Command::new(crate::support::mllp_bin());
    send.arg("send")
        .arg(&input)
        .args(["--host", &host, "--json", "--server-name", "localhost"])
        .args(["--ca", s(&certs.ca)])
        .args([
            "--cert",
            s(&certs.client.cert),
            "--key",
            s(&certs.client.key),
        ]);
    let run = finish(send, None).await;
    assert_eq!(run.summary()["accepted"], 3, "{:?}", run.summary());

    // Without a client certificate the relay's TLS side refuses the link.
    let mut bare = tokio::process::Command::new(crate::support::mllp_bin());
    bare.arg("send")
        .arg(&input)
        .args(["--host", &host, "--json", "--server-name", "localhost"])
        .args(["--ca", s(&certs.ca), "--no-reconnect"]);
    let refused = finish(bare, None).await;
    assert_eq!(refused.summary()["accepted"], 0);
}
