//! The answer table against a model: for every upstream outcome and mode, what the downstream
//! peer reads on the wire (through the real server core, over an in-memory pipe), whether its
//! connection stays open, and whether the relay kept the message.

use super::*;
use crate::framing::{encode_frame, Decoded, MllpCodec, Tolerance};
use crate::relay::queue::{Enqueue, QUEUE_FULL_TEXT};
use crate::relay::store::Store;
use crate::server::sink::SinkFuture;
use crate::server::{Inbound, Server, ServerConfig, Shutdown, Sink};
use bytes::BytesMut;
use proptest::prelude::*;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::codec::Decoder;

const MESSAGE: &[u8] = b"MSH|^~\\&|SND|SF|RCV|RF|20240101120000||ADT^A01|C1|P|2.5\rPID|1||42\r";

fn ack(code: &str) -> Bytes {
    Bytes::from(format!(
        "MSH|^~\\&|RCV|RF|SND|SF|20240101120001||ACK^A01|U{code}|P|2.5\rMSA|{code}|C1\r"
    ))
}

/// Answers every message with a fixed upstream outcome, through the real table.
struct Scripted(Upstream);

impl Sink for Scripted {
    fn commit<'a>(&'a self, _message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(std::future::ready(pass_through(self.0.clone())))
    }
}

#[derive(Debug, Clone)]
enum Mode {
    PassThrough,
    Queue { full: bool },
}

/// What the downstream peer sees: the answer frames, and whether the connection was closed.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    answers: Vec<Vec<u8>>,
    closed: bool,
    kept: bool,
}

/// What is expected: upstream answers passed on byte for byte; a message not written refused
/// (nothing kept); no answer for one written and unanswered, and the connection closed; in
/// queue mode the table's answer for a committed message whatever the upstream does later.
fn model(upstream: &Upstream, mode: &Mode) -> (Vec<Answer>, bool, bool) {
    match mode {
        Mode::Queue { full: false } => (vec![Answer::Code("AA", None)], false, true),
        Mode::Queue { full: true } => (
            vec![Answer::Code("AE", Some(QUEUE_FULL_TEXT))],
            false,
            false,
        ),
        Mode::PassThrough => match upstream {
            Upstream::NotWritten { .. } => (
                vec![Answer::Code("AE", Some(UNAVAILABLE_TEXT))],
                false,
                false,
            ),
            Upstream::Answered { commit, last } => {
                let mut acks: Vec<Answer> =
                    commit.iter().map(|c| Answer::Bytes(c.clone())).collect();
                acks.push(Answer::Bytes(last.clone()));
                (acks, false, false)
            }
            Upstream::CommitOnly { commit, .. } => {
                (vec![Answer::Bytes(commit.clone())], true, false)
            }
            Upstream::Unanswered { .. } => (vec![], true, false),
        },
    }
}

#[derive(Debug)]
enum Answer {
    Bytes(Bytes),
    /// A built answer: its MSA-1 and MSA-3.
    Code(&'static str, Option<&'static str>),
}

fn matches(answer: &Answer, got: &[u8]) -> bool {
    match answer {
        Answer::Bytes(b) => b[..] == *got,
        Answer::Code(code, text) => {
            let view = crate::hl7::scan_ack(got).expect("an ACK");
            view.code == code.as_bytes() && view.text == text.map(str::as_bytes)
        }
    }
}

fn upstream() -> impl Strategy<Value = Upstream> {
    let cause = prop_oneof![
        Just(Cause::AckTimeout),
        Just(Cause::ConnectionReset),
        Just(Cause::PeerClosed)
    ];
    let last = prop_oneof![Just("AA"), Just("AE"), Just("AR"), Just("CA"), Just("CE")];
    prop_oneof![
        Just(Upstream::NotWritten {
            cause: "connect-timeout".into()
        }),
        (any::<bool>(), last).prop_map(|(two, last)| Upstream::Answered {
            commit: two.then(|| ack("CA")),
            last: ack(last),
        }),
        cause.clone().prop_map(|cause| Upstream::CommitOnly {
            commit: ack("CA"),
            cause
        }),
        cause.prop_map(|cause| Upstream::Unanswered { cause }),
    ]
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        Just(Mode::PassThrough),
        any::<bool>().prop_map(|full| Mode::Queue { full })
    ]
}

async fn exchange(sink: Arc<dyn Sink>, quiet: Duration) -> (Vec<Vec<u8>>, bool) {
    let server = Server::builder(ServerConfig::default(), sink)
        .build()
        .unwrap();
    let (mut client, server_side) = tokio::io::duplex(64 * 1024);
    let shutdown = Shutdown::new();
    let serving = {
        let shutdown = shutdown.clone();
        tokio::spawn(async move { server.serve(server_side, "test", &shutdown).await })
    };
    let mut out = BytesMut::new();
    encode_frame(MESSAGE, &mut out).unwrap();
    client.write_all(&out).await.unwrap();
    let mut codec = MllpCodec::new(Tolerance::RECEIVER, 1 << 20);
    let mut buf = BytesMut::new();
    let mut answers = Vec::new();
    // The first answer may wait on a synced commit of a busy disk: given ten seconds; after it,
    // `quiet` says no more is coming.
    let mut wait = quiet.max(Duration::from_secs(10));
    let closed = loop {
        match tokio::time::timeout(wait, client.read_buf(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break true,
            Ok(Ok(_)) => {
                while let Ok(Some(Decoded::Frame(f))) = codec.decode(&mut buf) {
                    answers.push(f.payload.to_vec());
                    wait = quiet;
                }
            }
            Err(_) => break false,
        }
    };
    shutdown.immediate.cancel();
    let _ = serving.await;
    (answers, closed)
}

fn seen(upstream: &Upstream, mode: &Mode) -> Seen {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(matches!(mode, Mode::PassThrough))
        .build()
        .unwrap();
    runtime.block_on(async {
        match mode {
            Mode::PassThrough => {
                let (answers, closed) =
                    exchange(Arc::new(Scripted(upstream.clone())), Duration::from_secs(5)).await;
                Seen {
                    answers,
                    closed,
                    kept: false,
                }
            }
            Mode::Queue { full } => {
                let dir = tempfile::tempdir().unwrap();
                let store = Store::open(&dir.path().join("q.db")).unwrap();
                let max = if *full { Some(0) } else { None };
                let wake = Arc::new(tokio::sync::Notify::new());
                let sink = Arc::new(Enqueue::new(store.clone(), max, wake));
                let (answers, closed) = tokio::time::timeout(Duration::from_secs(30), async {
                    // Real time: the store works on blocking threads; the read timeout is short.
                    exchange(sink, Duration::from_millis(300)).await
                })
                .await
                .unwrap();
                Seen {
                    answers,
                    closed,
                    kept: store.depth().await.unwrap() == 1,
                }
            }
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn downstream_hears_what_the_table_says(upstream in upstream(), mode in mode()) {
        let (expected, closed, kept) = model(&upstream, &mode);
        let got = seen(&upstream, &mode);
        prop_assert_eq!(got.closed, closed, "closed? {:?}", got);
        prop_assert_eq!(got.kept, kept);
        prop_assert_eq!(got.answers.len(), expected.len(), "{:?}", got);
        for (e, g) in expected.iter().zip(&got.answers) {
            prop_assert!(matches(e, g), "expected {:?}, got {:?}", e, String::from_utf8_lossy(g));
        }
    }
}

#[test]
fn a_ca_that_was_the_final_answer_is_passed_on_once() {
    let ca = crate::client::AckPayload::new(ack("CA"));
    let fate = Fate::Accepted {
        code: AckCode::CA,
        ack: ca.clone(),
        latency: Duration::ZERO,
    };
    let commit = crate::client::Commit {
        code: AckCode::CA,
        ack: ca,
        latency: Duration::ZERO,
    };
    assert_eq!(
        Upstream::from_fate(&fate, Some(commit)),
        Upstream::Answered {
            commit: None,
            last: ack("CA")
        }
    );
}

/// A final answer passed on by its code as the link read it is what the table makes of the answer
/// read again: the same result for every code, with and without a `CA` before it.
#[test]
fn a_fate_is_passed_through_as_its_answer_would_be() {
    let fate = |code: AckCode| {
        let ack = crate::client::AckPayload::new(ack(code.as_str()));
        match code.is_positive() {
            true => Fate::Accepted {
                code,
                ack,
                latency: Duration::ZERO,
            },
            false => Fate::Negative {
                code,
                ack,
                latency: Duration::ZERO,
            },
        }
    };
    let ca = || crate::client::Commit {
        code: AckCode::CA,
        ack: crate::client::AckPayload::new(ack("CA")),
        latency: Duration::ZERO,
    };
    for code in AckCode::ALL {
        for commit in [None, Some(ca())] {
            let fate = fate(code);
            let expected = pass_through(Upstream::from_fate(&fate, commit.clone()));
            assert_eq!(pass_through_fate(&fate, commit), expected, "{code:?}");
        }
    }
    // A Release 2 block, its payload the block's one byte.
    for block in [Block::Commit, Block::Nak] {
        let block = Fate::Accepted {
            code: AckCode::CA,
            ack: crate::client::AckPayload::new(Bytes::copy_from_slice(&block.wire()[1..2])),
            latency: Duration::ZERO,
        };
        assert_eq!(
            pass_through_fate(&block, None),
            pass_through(Upstream::from_fate(&block, None))
        );
    }
}

/// The downstream close names the upstream's own cause, never a stop the relay is not making.
#[test]
fn an_unanswered_message_closes_downstream_with_its_true_cause() {
    let unknown = |cause| Fate::UnknownFate {
        cause,
        flushed_at: std::time::SystemTime::UNIX_EPOCH,
        elapsed: Duration::ZERO,
        bytes: 1,
    };
    for (cause, expected) in [
        (FateCause::Poison, Cause::PeerClosed),
        (FateCause::Link(Cause::AckTimeout), Cause::AckTimeout),
        (FateCause::AppAckTimeout, Cause::AckTimeout),
        (FateCause::DrainTimeout, Cause::AckTimeout),
        (FateCause::Destroyed, Cause::Shutdown),
    ] {
        assert_eq!(
            Upstream::from_fate(&unknown(cause), None),
            Upstream::Unanswered { cause: expected },
            "{cause:?}"
        );
    }
}
