//! `send --mllp2` against engines written from MLLP Release 2 as engines speak it: commit and
//! NAK blocks, an HL7 acknowledgement that follows and wants its own block, a Release 1 peer,
//! silence, and `mllp listen --mllp2` end to end.

use super::{marked_input as input, path, send, to, write};
use crate::support::engine::scripted;
use crate::support::listen_proc::ListenProc;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::{ack, control_id, frame, message};
use std::sync::{Arc, Mutex};

const COMMIT: &[u8] = &[0x0b, 0x06, 0x1c, 0x0d];
const NAK: &[u8] = &[0x0b, 0x15, 0x1c, 0x0d];

/// How the engine answers the `n`-th message it reads (from 0).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Answer {
    Commit,
    Nak,
    /// A commit block, then the HL7 acknowledgement with this code as a message of its own.
    CommitThen(&'static str),
    Silence,
}

/// What the engine saw: the messages' control IDs in arrival order, blocks the sender sent it,
/// and whether a message ever came while another still awaited its block.
#[derive(Default, Debug)]
struct Seen {
    messages: Vec<String>,
    blocks: Vec<u8>,
    pipelined: bool,
}

/// A Release 2 engine on a free port: `answer(n)` decides the `n`-th message's answer. After
/// an HL7 acknowledgement it waits for the sender's block before reading on.
async fn engine(
    answer: impl Fn(usize) -> Answer + Send + Sync + 'static,
) -> (u16, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let state = seen.clone();
    let port = scripted(move |frames| {
        let messages = frames.iter().filter(|f| f.len() != 1).count();
        let mut reply = Vec::new();
        for payload in frames {
            if let [b] = payload[..] {
                state.lock().unwrap().blocks.push(b);
                continue;
            }
            let n = {
                let mut s = state.lock().unwrap();
                s.pipelined |= messages > 1;
                s.messages.push(control_id(&payload).unwrap_or_default());
                s.messages.len() - 1
            };
            match answer(n) {
                Answer::Commit => reply.extend(COMMIT),
                Answer::Nak => reply.extend(NAK),
                Answer::CommitThen(code) => {
                    reply.extend(COMMIT);
                    reply.extend(frame(&ack(&payload, code)));
                }
                Answer::Silence => {}
            }
        }
        reply
    })
    .await;
    (port, seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn commit_blocks_accept_each_message_written_one_at_a_time() {
    let (port, seen) = engine(|_| Answer::Commit).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), &["R1", "R2", "R3", "R4"]);
    let run = send(&to(port, &["--mllp2", "--json", &file])).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for r in run.messages() {
        assert_eq!(r["outcome"], "accepted", "{r}");
        assert_eq!(r["ack_code"], "CA", "{r}");
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.messages, ["R1", "R2", "R3", "R4"]);
    // A block names no message: a second frame before the first one's block could be credited
    // with the wrong block.
    assert!(!seen.pipelined, "frames were pipelined under Release 2");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_nak_block_writes_the_message_again_and_a_lasting_one_ends_it_negative() {
    // Message 1 is refused once, then committed; message 2 is refused every time.
    let (port, seen) = engine(|n| match n {
        0 | 2 | 3 | 4 => Answer::Nak,
        1 => Answer::Commit,
        _ => Answer::Nak,
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), &["N1", "N2"]);
    let run = send(&to(
        port,
        &["--mllp2", "--json", "--max-resends", "2", &file],
    ))
    .await;
    let records = run.messages();
    assert_eq!(records[0]["outcome"], "accepted", "{}", records[0]);
    assert_eq!(records[1]["outcome"], "negative", "{}", records[1]);
    assert_eq!(records[1]["ack_code"], "CE", "{}", records[1]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    // N2 written once and again at most --max-resends times: never more.
    assert_eq!(
        seen.lock().unwrap().messages,
        ["N1", "N1", "N2", "N2", "N2"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_application_ack_after_the_commit_block_settles_and_gets_its_own_block() {
    // MSH-16 AL asks for the application ACK: the commit block alone is not the answer.
    let enhanced = "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|E1|P|2.5|||AL|AL\rPID|1||X||PAYLOADMARKER7Q3^P\r\
                    MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|E2|P|2.5|||AL|AL\rPID|1||X||PAYLOADMARKER7Q3^P\r";
    let (port, seen) = engine(|n| match n {
        0 => Answer::CommitThen("AA"),
        _ => Answer::CommitThen("AE"),
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = path(&write(dir.path(), "enh.hl7", enhanced.as_bytes()));
    let run = send(&to(port, &["--mllp2", "--json", "--print-ack", &file])).await;
    let records = run.messages();
    assert_eq!(records[0]["outcome"], "accepted", "{}", records[0]);
    assert_eq!(records[0]["ack_code"], "AA", "{}", records[0]);
    assert!(records[0]["ack"].as_str().unwrap().contains("MSA|AA|E1"));
    assert_eq!(records[1]["outcome"], "negative", "{}", records[1]);
    assert_eq!(records[1]["ack_code"], "AE", "{}", records[1]);
    // Each HL7 acknowledgement was answered with a commit block.
    let seen = wait_for_blocks(&seen, 2).await;
    assert_eq!(seen, [0x06, 0x06]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_hl7_ack_following_a_commit_block_in_original_mode_changes_nothing() {
    // Some engines answer every message with a commit block and then an HL7 ACK anyway.
    let (port, seen) = engine(|_| Answer::CommitThen("AE")).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), &["O1", "O2", "O3"]);
    let run = send(&to(port, &["--mllp2", "--json", &file])).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for r in run.messages() {
        assert_eq!(r["outcome"], "accepted", "{r}");
    }
    assert!(
        !run.stderr.contains("MLLP_PEER_NOT_MLLP2"),
        "{}",
        run.stderr
    );
    assert_eq!(seen.lock().unwrap().messages, ["O1", "O2", "O3"]);
}

async fn wait_for_blocks(seen: &Arc<Mutex<Seen>>, n: usize) -> Vec<u8> {
    for _ in 0..200 {
        let blocks = seen.lock().unwrap().blocks.clone();
        if blocks.len() >= n {
            return blocks;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    seen.lock().unwrap().blocks.clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_1_peer_is_named_and_nothing_is_reported_accepted() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), &["P1", "P2"]);
    let run = send(&to(peer.port(), &["--mllp2", "--json", &file])).await;
    assert_eq!(run.code, 5, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("MLLP_PEER_NOT_MLLP2"), "{}", run.stderr);
    assert!(run.stdout.contains("without --mllp2"), "{}", run.stdout);
    for r in run.messages() {
        assert_ne!(r["outcome"], "accepted", "{r}");
    }
    assert_eq!(run.messages()[0]["cause"], "peer-not-mllp2");
}

#[tokio::test(flavor = "multi_thread")]
async fn silence_is_unknown_fate() {
    let (port, _seen) = engine(|_| Answer::Silence).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), &["S1"]);
    let quick = [
        "--mllp2",
        "--json",
        "--ack-timeout",
        "300ms",
        "--no-reconnect",
    ];
    let run = send(&to(port, &[&quick[..], &[&file]].concat())).await;
    assert_eq!(run.messages()[0]["outcome"], "unknown-fate");
    assert_eq!(run.code, 3, "{}{}", run.stdout, run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn send_and_listen_speak_release_2_end_to_end() {
    let store = tempfile::tempdir().unwrap();
    let out = path(store.path());
    let listen = ListenProc::start(&["--mllp2", "--out-dir", &out]);
    let dir = tempfile::tempdir().unwrap();
    let enhanced = "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|L3|P|2.5|||AL|AL\rPID|1||X||PAYLOADMARKER7Q3^P\r";
    let mut bytes: Vec<u8> = ["L1", "L2"]
        .iter()
        .flat_map(|id| message(id, "PAYLOADMARKER7Q3"))
        .collect();
    bytes.extend_from_slice(enhanced.as_bytes());
    let file = path(&write(dir.path(), "in.hl7", &bytes));
    let run = send(&to(listen.addr.port(), &["--mllp2", "--json", &file])).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let records = run.messages();
    assert_eq!(records[0]["ack_code"], "CA");
    // Enhanced mode: the commit block, then listen's application ACK.
    assert_eq!(records[2]["ack_code"], "AA", "{}", records[2]);
    // Three messages kept, and no block of the sender's among them.
    let kept = std::fs::read_dir(store.path())
        .unwrap()
        .filter(|e| {
            let e = e.as_ref().unwrap();
            e.path().extension().is_some_and(|x| x == "hl7")
        })
        .count();
    assert_eq!(kept, 3);
    listen.assert_no_payload();
}
