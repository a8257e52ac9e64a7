//! `probe --mllp2`: a Release 2 receiver's commit block passes, its NAK block says the link
//! works, and a Release 1 peer is named.

use super::{expect, phase, verdict_mentions, Scratch};
use crate::support::listen_proc::ListenProc;
use crate::support::peer::{Behaviour, Peer, Script};

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_block_passes_and_a_release_1_peer_is_named() {
    let s = Scratch::new();
    let listen = ListenProc::start(&["--mllp2"]);
    let target = format!("engine.test:{}", listen.addr.port());
    let message = s.message();
    let report = expect(
        &[&target, "--mllp2", "--message", &message],
        &s.hosts(),
        "ok",
        None,
        0,
    )
    .await;
    assert_eq!(phase(&report, "ack")["ack_code"], "CA");
    verdict_mentions(&report, "detail", "commit block");

    // A forced negative answer: a NAK block, the link works.
    let refusing = ListenProc::start(&["--mllp2", "--ack", "AE"]);
    let target = format!("engine.test:{}", refusing.addr.port());
    let report = expect(&[&target, "--mllp2"], &s.hosts(), "negative", None, 1).await;
    assert_eq!(phase(&report, "ack")["ack_code"], "CE");

    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let target = format!("engine.test:{}", peer.port());
    let report = expect(
        &[&target, "--mllp2"],
        &s.hosts(),
        "permanent",
        Some("peer-not-mllp2"),
        5,
    )
    .await;
    verdict_mentions(&report, "hint", "without --mllp2");
}
