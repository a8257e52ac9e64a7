//! The way out for a self-signed server: `--ca` with the server's own certificate trusts
//! exactly it, however it is marked and whatever names it carries, on `send`, `soak` and
//! `probe`.

use super::{path, run, strings, tls_peer};
use crate::support::certs::{Certs, Pair};
use crate::support::no_payload::MARKER;
use crate::support::peer_wire::message;
use serde_json::Value;

async fn delivered_everywhere(certs: &Certs, pair: &Pair, extra: &[&str]) {
    let peer = tls_peer(certs.server_options(pair)).await;
    let port = peer.port().to_string();
    let mut tls = strings(&["--ca", &path(&pair.cert)]);
    tls.extend(strings(extra));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("adt.hl7");
    std::fs::write(&file, message("PIN1", MARKER)).unwrap();

    let mut send = strings(&["send", &path(&file), "--json", "--host", "127.0.0.1"]);
    send.extend(strings(&["--port", &port]));
    send.extend(tls.clone());
    let sent = run(send).await;
    assert_eq!(sent.code, 0, "send: {}{}", sent.stdout, sent.stderr);
    assert_eq!(sent.messages()[0]["outcome"], "accepted");

    let mut soak = strings(&["soak", "--host", "127.0.0.1", "--allow-synthetic", "--json"]);
    soak.extend(strings(&["--port", &port, "--messages", "20"]));
    soak.extend(tls.clone());
    let soaked = run(soak).await;
    assert_eq!(soaked.code, 0, "soak: {}{}", soaked.stdout, soaked.stderr);
    let report: Value = serde_json::from_str(soaked.stdout.trim()).unwrap();
    assert_eq!(report["accepted"], 20, "{report}");

    let mut probe = strings(&["probe", &format!("127.0.0.1:{port}"), "--json", "--send"]);
    probe.extend(tls);
    let probed = run(probe).await;
    assert_eq!(probed.code, 0, "probe: {}{}", probed.stdout, probed.stderr);
    let report: Value = serde_json::from_str(probed.stdout.trim()).unwrap();
    assert_eq!(report["verdict"]["class"], "ok", "{report}");
    let phases = report["phases"].as_array().unwrap();
    let tls = phases.iter().find(|p| p["name"] == "tls").unwrap();
    assert_eq!(tls["pinned"], true, "{report}");
    assert_eq!(tls["verified"], true, "{report}");
}

/// A certificate as `openssl req -x509 -subj /CN=localhost` makes it (a CA, no subjectAltName),
/// reached by address: nothing in it could pass a name check, and it need not.
#[tokio::test(flavor = "multi_thread")]
async fn an_openssl_style_self_signed_certificate_given_to_ca_is_trusted() {
    let certs = Certs::generate();
    delivered_everywhere(&certs, &certs.openssl_style, &[]).await;
}

/// A self-signed leaf pinned is trusted under any server name.
#[tokio::test(flavor = "multi_thread")]
async fn a_pinned_certificate_is_trusted_whatever_names_it_carries() {
    let certs = Certs::generate();
    delivered_everywhere(
        &certs,
        &certs.untrusted,
        &["--server-name", "elsewhere.test"],
    )
    .await;
}
