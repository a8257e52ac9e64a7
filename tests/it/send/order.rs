//! Order: a directory is sent in natural order, files named on the command line in the order
//! given, and `--failed-out` names its files so that they sort in send order.

use super::{ids, path, send, to, write};
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;
use crate::support::send_proc::messages;

#[tokio::test(flavor = "multi_thread")]
async fn a_directory_goes_in_natural_order_and_named_files_as_given() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    for n in [10, 9, 1, 2] {
        write(
            dir.path(),
            &format!("in/m#{n}.hl7"),
            &message(&format!("M{n}"), MARKER),
        );
    }
    let run = send(&to(peer.port(), &["-r", &path(&dir.path().join("in"))])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(ids(&peer.payloads()), ["M1", "M2", "M9", "M10"]);

    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let named: Vec<String> = [10, 9, 1]
        .iter()
        .map(|n| path(&dir.path().join(format!("in/m#{n}.hl7"))))
        .collect();
    let named: Vec<&str> = named.iter().map(String::as_str).collect();
    let run = send(&to(peer.port(), &named)).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(ids(&peer.payloads()), ["M10", "M9", "M1"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_out_files_sort_in_send_order_and_a_rerun_keeps_it() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AE"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "x.hl7", &messages("X", 12));
    let retry = dir.path().join("retry");
    let run = send(&to(
        peer.port(),
        &["--failed-out", &path(&retry), &path(&file)],
    ))
    .await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    let mut names: Vec<String> = std::fs::read_dir(&retry)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let sent: Vec<String> = (1..=12).map(|n| format!("X{n}")).collect();
    let in_name_order: Vec<String> = names
        .iter()
        .map(|n| {
            let bytes = std::fs::read(retry.join(n)).unwrap();
            ids(&[bytes]).remove(0)
        })
        .collect();
    assert_eq!(in_name_order, sent, "{names:?}");

    let again = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let run = send(&to(again.port(), &["-r", &path(&retry)])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(ids(&again.payloads()), sent);
}
