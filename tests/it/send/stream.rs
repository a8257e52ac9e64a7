//! `send --stream` on a live feed: the last message of what has come so far goes once the input
//! pauses, while stdin stays open, instead of waiting for the next `MSH` or the end of input.

use super::{send_bin, to};
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::{control_id, message};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// `send --stream --json -` to `peer`, every stream piped.
fn streaming(peer: &Peer) -> tokio::process::Child {
    tokio::process::Command::new(send_bin())
        .arg("send")
        .args(to(peer.port(), &["--stream", "--json", "-"]))
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_held_at_the_end_of_a_live_stream_goes_once_the_input_pauses() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let mut child = streaming(&peer);
    let mut stdin = child.stdin.take().unwrap();
    let mut records = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut stderr = child.stderr.take().unwrap();
    // The feed's first message, and nothing after it: stdin stays open.
    stdin.write_all(&message("LIVE1", MARKER)).await.unwrap();
    stdin.flush().await.unwrap();
    let seen = peer.wait_for(|r| !r.payloads.is_empty()).await;
    assert_eq!(control_id(&seen.payloads[0]).as_deref(), Some("LIVE1"));
    let line = tokio::time::timeout(Duration::from_secs(10), records.next_line())
        .await
        .expect("a record while stdin is open")
        .unwrap()
        .expect("a record line");
    let record: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(record["control_id"], "LIVE1");
    assert_eq!(record["outcome"], "accepted");
    // The feed goes on: the next message, then its end.
    stdin.write_all(&message("LIVE2", MARKER)).await.unwrap();
    drop(stdin);
    let mut rest = String::new();
    let read_rest = async {
        while let Some(line) = records.next_line().await.unwrap() {
            rest.push_str(&line);
            rest.push('\n');
        }
        child.wait().await.unwrap()
    };
    let status = tokio::time::timeout(Duration::from_secs(30), read_rest)
        .await
        .expect("send finished");
    let mut said = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut said)
        .await
        .unwrap();
    assert!(!said.contains(MARKER), "payload on stderr: {said}");
    assert_eq!(status.code(), Some(0), "{rest}{said}");
    assert!(rest.contains(r#""control_id":"LIVE2""#), "{rest}");
    assert_eq!(peer.payloads().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_message_goes_once_the_input_pauses_whatever_its_line_ends() {
    for end in ["\n", "\r\n"] {
        let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
        let mut child = streaming(&peer);
        let mut stdin = child.stdin.take().unwrap();
        // Segments ended as a text editor or `tail -f` of a log gives them; stdin stays open.
        let text = String::from_utf8(message("LINE1", MARKER)).unwrap();
        stdin
            .write_all(text.replace('\r', end).as_bytes())
            .await
            .unwrap();
        stdin.flush().await.unwrap();
        let seen = peer.wait_for(|r| !r.payloads.is_empty()).await;
        assert_eq!(
            control_id(&seen.payloads[0]).as_deref(),
            Some("LINE1"),
            "{end:?}"
        );
        drop(stdin);
        let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
            .await
            .expect("send finished")
            .unwrap();
        assert_eq!(status.code(), Some(0), "{end:?}");
    }
}
