//! The connection handler over in-memory pipes: ordering, containment, the commit contract,
//! idle timeout and drain on tokio's paused clock.

use super::*;
use crate::ack::AckCode;
use crate::cause::Cause;
use crate::framing::{encode_frame, Decoded, MllpCodec, Tolerance};
use crate::hl7::scan_ack;
use crate::server::sink::{SinkFuture, SinkResult};
use bytes::BytesMut;
use std::sync::Mutex;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio_util::codec::Decoder;

fn msg(control_id: &str, msh15: &str) -> Vec<u8> {
    format!(
        "MSH|^~\\&|SND|SF|RCV|RF|20240101120000||ADT^A01|{control_id}|P|2.5|||{msh15}\rPID|1||42\r"
    )
    .into_bytes()
}

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode_frame(payload, &mut out).unwrap();
    out.to_vec()
}

/// Commits, fails or rejects by control ID suffix, and records what it committed.
#[derive(Default)]
struct ScriptedSink {
    committed: Mutex<Vec<Vec<u8>>>,
    delay: Option<Duration>,
    /// Signalled as each commit begins.
    started: tokio::sync::Notify,
}

impl Sink for ScriptedSink {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(async move {
            self.started.notify_one();
            if let Some(delay) = self.delay {
                tokio::time::sleep(delay).await;
            }
            let id = message.control_id_lossy();
            if id.ends_with("-fail") {
                return SinkResult::failed("scripted failure");
            }
            if id.ends_with("-reject") {
                return SinkResult::rejected("scripted reject");
            }
            self.committed
                .lock()
                .unwrap()
                .push(message.payload.to_vec());
            SinkResult::committed()
        })
    }
}

struct Harness {
    client: DuplexStream,
    events: mpsc::Receiver<ServerEvent>,
    shutdown: Shutdown,
    /// The server's counters once the connection has ended.
    task: tokio::task::JoinHandle<StatsSnapshot>,
    sink: Arc<ScriptedSink>,
    decoder: MllpCodec,
    buf: BytesMut,
}

fn harness(config: ServerConfig, sink: ScriptedSink) -> Harness {
    let sink = Arc::new(sink);
    serving(config, sink.clone(), sink)
}

/// A server over `serve`'s sink on one in-memory connection; `sink` is the scripted one the
/// test reads back (a default one when the server's sink is another kind).
fn serving(config: ServerConfig, serve: Arc<dyn Sink>, sink: Arc<ScriptedSink>) -> Harness {
    let (tx, events) = mpsc::channel(1024);
    let server = Server::builder(config, serve).events(tx).build().unwrap();
    let (client, server_side) = tokio::io::duplex(64 * 1024);
    let shutdown = Shutdown::new();
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        server.serve(server_side, "test-peer", &stop).await;
        server.stats()
    });
    Harness {
        client,
        events,
        shutdown,
        task,
        sink,
        decoder: MllpCodec::new(Tolerance::ACK_READER, 1 << 20),
        buf: BytesMut::new(),
    }
}

impl Harness {
    async fn send(&mut self, bytes: &[u8]) {
        self.client.write_all(bytes).await.unwrap();
    }

    /// The next ACK as (MSA-1, MSA-2), or `None` at end of stream.
    async fn ack(&mut self) -> Option<(String, String)> {
        loop {
            if let Some(Decoded::Frame(f)) = self.decoder.decode(&mut self.buf).unwrap() {
                let view = scan_ack(&f.payload).expect("an ACK with MSA");
                return Some((
                    String::from_utf8_lossy(view.code).into_owned(),
                    String::from_utf8_lossy(view.control_id).into_owned(),
                ));
            }
            if self.client.read_buf(&mut self.buf).await.unwrap() == 0 {
                return None;
            }
        }
    }

    /// Events up to and including the connection's close.
    async fn events_until_close(&mut self) -> Vec<ServerEvent> {
        let mut seen = Vec::new();
        while let Some(event) = self.events.recv().await {
            let done = matches!(event, ServerEvent::ConnectionClosed { .. });
            seen.push(event);
            if done {
                break;
            }
        }
        seen
    }
}

#[test]
fn ack_control_id_counters_are_zero_padded_to_six_digits() {
    for n in [0, 7, 999_999, 1_000_000, 123_456_789, u64::MAX] {
        let mut out = String::new();
        super::push_padded(&mut out, n, 6);
        assert_eq!(out, format!("{n:06}"));
    }
}

proptest::proptest! {
    #[test]
    fn ack_control_id_digits_are_what_format_writes(n: u64, width in 0usize..=20, prefix in "[0-9]{0,12}") {
        let mut out = prefix.clone();
        super::push_padded(&mut out, n, width);
        proptest::prop_assert_eq!(out, format!("{prefix}{n:0width$}"));
    }

    #[test]
    fn an_ack_control_id_incremented_in_place_is_the_next_one_written(
        n in proptest::prop_oneof![0u64..2_000_000, proptest::num::u64::ANY],
        nines in 0u32..8,
        prefix in "[0-9]{0,12}",
    ) {
        // Numbers ending in runs of nines are where the carry moves: make them common.
        let n = n.saturating_mul(10u64.pow(nines)).saturating_add(10u64.pow(nines) - 1);
        let n = n.min(u64::MAX - 1);
        let mut out = format!("{prefix}{n:06}");
        if super::increment_padded(&mut out) {
            proptest::prop_assert_eq!(out, format!("{prefix}{:06}", n + 1));
        } else {
            proptest::prop_assert_eq!(out, format!("{prefix}{n:06}"));
            proptest::prop_assert!(n % 1_000_000 == 999_999, "{}", n);
        }
    }
}

/// A harness whose server has read a message with control ID `id` and is committing it, each
/// commit taking `delay`.
async fn committing(delay: Duration, id: &str) -> Harness {
    let sink = ScriptedSink {
        delay: Some(delay),
        ..ScriptedSink::default()
    };
    let mut h = harness(ServerConfig::default(), sink);
    h.send(&frame(&msg(id, ""))).await;
    h.sink.started.notified().await;
    h
}

fn closed_cause(events: &[ServerEvent]) -> (Cause, Option<WarningCode>) {
    match events.last() {
        Some(ServerEvent::ConnectionClosed { cause, code, .. }) => (*cause, *code),
        other => panic!("last event is not a close: {other:?}"),
    }
}

use crate::warning::WarningCode;

mod dial;
mod guards;
mod model;
mod nack;
mod overlap;
mod read_ahead;

#[tokio::test]
async fn pipelined_messages_are_answered_in_arrival_order() {
    let mut h = harness(ServerConfig::default(), ScriptedSink::default());
    let mut bytes = Vec::new();
    for i in 0..20 {
        let id = match i % 5 {
            3 => format!("m{i}-fail"),
            4 => format!("m{i}-reject"),
            _ => format!("m{i}"),
        };
        bytes.extend(frame(&msg(&id, "")));
    }
    h.send(&bytes).await;
    for i in 0..20 {
        let (code, id) = h.ack().await.unwrap();
        let expected = match i % 5 {
            3 => ("AE", format!("m{i}-fail")),
            4 => ("AR", format!("m{i}-reject")),
            _ => ("AA", format!("m{i}")),
        };
        assert_eq!((code.as_str(), id), expected);
    }
    assert_eq!(h.sink.committed.lock().unwrap().len(), 12);
}

#[tokio::test]
async fn frames_before_a_fatal_byte_are_committed_and_answered() {
    let mut h = harness(ServerConfig::default(), ScriptedSink::default());
    let mut bytes = frame(&msg("first", ""));
    bytes.extend(frame(&msg("second", "AL")));
    bytes.extend(b"GET / HTTP/1.1\r\n\r\n");
    h.send(&bytes).await;
    assert_eq!(h.ack().await, Some(("AA".into(), "first".into())));
    assert_eq!(h.ack().await, Some(("CA".into(), "second".into())));
    assert_eq!(
        h.ack().await,
        None,
        "the connection closes after the fatal byte"
    );
    let events = h.events_until_close().await;
    assert_eq!(
        closed_cause(&events),
        (Cause::FramingFatal, Some(WarningCode::MissingLeadingVt))
    );
    assert_eq!(h.sink.committed.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn an_oversize_frame_is_rejected_unkept_and_the_connection_goes_on() {
    let config = ServerConfig {
        max_frame: 100,
        ..ServerConfig::default()
    };
    let mut h = harness(config, ScriptedSink::default());
    let mut big = msg("big", "");
    big.extend(std::iter::repeat_n(b'x', 500));
    let mut bytes = frame(&big);
    bytes.extend(frame(&msg("next", "")));
    h.send(&bytes).await;
    assert_eq!(h.ack().await, Some(("AR".into(), "big".into())));
    assert_eq!(h.ack().await, Some(("AA".into(), "next".into())));
    let committed = h.sink.committed.lock().unwrap().clone();
    assert_eq!(
        committed,
        vec![msg("next", "")],
        "the oversize frame is not kept"
    );
}

#[tokio::test]
async fn an_inbound_ack_is_committed_and_never_answered() {
    let mut h = harness(ServerConfig::default(), ScriptedSink::default());
    let ack = b"MSH|^~\\&|A|B|C|D|20240101||ACK^A01|x1|P|2.5\rMSA|AA|m0\r";
    let mut bytes = frame(ack);
    bytes.extend(frame(&msg("after", "")));
    h.send(&bytes).await;
    // The first answer on the wire belongs to the message after the ACK.
    assert_eq!(h.ack().await, Some(("AA".into(), "after".into())));
    assert_eq!(h.sink.committed.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn ack_none_commits_and_stays_silent() {
    let config = ServerConfig {
        ack: AckMode::None,
        ..ServerConfig::default()
    };
    let mut h = harness(config, ScriptedSink::default());
    h.send(&frame(&msg("quiet", ""))).await;
    h.client.shutdown().await.unwrap();
    assert_eq!(h.ack().await, None);
    let events = h.events_until_close().await;
    assert!(events
        .iter()
        .any(|e| matches!(e, ServerEvent::Message { ack_code: None, .. })));
    assert_eq!(h.sink.committed.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn uncorrelatable_and_damaged_messages_are_never_positive() {
    let mut h = harness(ServerConfig::default(), ScriptedSink::default());
    // Empty MSH-10.
    h.send(&frame(&msg("", ""))).await;
    let (code, _) = h.ack().await.unwrap();
    assert_eq!(code, "AE");
    // A VT mid-payload: the partial payload is discarded, the remnant flagged.
    let mut damaged = vec![0x0B];
    damaged.extend(b"MSH|^~\\&|partial");
    damaged.extend(frame(&msg("remnant", "")));
    h.send(&damaged).await;
    let (code, id) = h.ack().await.unwrap();
    assert_eq!((code.as_str(), id.as_str()), ("AE", "remnant"));
    h.client.shutdown().await.unwrap();
    let events = h.events_until_close().await;
    let reasons: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ServerEvent::Nack { why, .. } => Some(why.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, ["uncorrelatable-inbound", "discarded-bytes"]);
    assert!(
        h.sink.committed.lock().unwrap().is_empty(),
        "a negative answer keeps nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn an_idle_connection_is_closed() {
    let config = ServerConfig {
        idle_timeout: Some(Duration::from_secs(5)),
        ..ServerConfig::default()
    };
    let mut h = harness(config, ScriptedSink::default());
    h.send(&frame(&msg("one", ""))).await;
    assert_eq!(h.ack().await, Some(("AA".into(), "one".into())));
    let events = h.events_until_close().await;
    assert_eq!(closed_cause(&events), (Cause::IdleTimeout, None));
}

#[tokio::test(start_paused = true)]
async fn a_graceful_stop_lets_a_commit_under_way_finish_and_be_answered() {
    let mut h = committing(Duration::from_secs(2), "slow").await;
    h.shutdown.graceful.cancel();
    assert_eq!(h.ack().await, Some(("AA".into(), "slow".into())));
    let events = h.events_until_close().await;
    assert_eq!(closed_cause(&events), (Cause::Shutdown, None));
    h.task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn an_immediate_stop_abandons_the_commit_and_answers_nothing() {
    let mut h = committing(Duration::from_secs(60), "stuck").await;
    h.shutdown.immediate.cancel();
    assert_eq!(h.ack().await, None);
    h.task.await.unwrap();
    assert!(h.sink.committed.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_msh15_table_picks_the_code() {
    let mut h = harness(ServerConfig::default(), ScriptedSink::default());
    let cases = [
        ("NE", "ok", "AA"),
        ("AL", "ok", "CA"),
        ("AL", "x-fail", "CE"),
        ("AL", "x-reject", "CR"),
        ("ER", "ok", "AA"),
        ("ER", "y-fail", "CE"),
        ("SU", "ok", "CA"),
        ("SU", "z-fail", "AE"),
        ("SU", "z-reject", "AR"),
        ("XX", "ok", "AA"),
    ];
    for (msh15, id, expected) in cases {
        h.send(&frame(&msg(id, msh15))).await;
        let (code, got) = h.ack().await.unwrap();
        assert_eq!(
            (code.as_str(), got.as_str()),
            (expected, id),
            "MSH-15 {msh15}"
        );
    }
}

#[tokio::test]
async fn forced_codes_still_obey_the_contract() {
    let config = ServerConfig {
        ack: AckMode::Forced(AckCode::AA),
        ..ServerConfig::default()
    };
    let mut h = harness(config, ScriptedSink::default());
    h.send(&frame(&msg("q-fail", ""))).await;
    assert_eq!(h.ack().await, Some(("AE".into(), "q-fail".into())));
    h.send(&frame(&msg("q-ok", ""))).await;
    assert_eq!(h.ack().await, Some(("AA".into(), "q-ok".into())));
}
