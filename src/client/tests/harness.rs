//! Test doubles: a connector that hands out duplex streams (or scripted failures) and a peer
//! that reads frames and writes ACKs.

use crate::cause::Cause;
use crate::client::{
    Client, ClientEvent, ClientOptions, Fate, Population, Reason, SendHandle, State,
};
use crate::framing::{encode_frame, Decoded, MllpCodec, Tolerance};
use crate::resolve::BoxFuture;
use crate::transport::{Connection, Connector, LinkError, Phase};
use bytes::{Bytes, BytesMut};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::{broadcast, mpsc};
use tokio_util::codec::Decoder;

/// Marker that must never appear in any diagnostic.
pub(crate) const MARKER: &str = "PAYLOADMARKER";

pub(crate) enum Plan {
    Accept,
    /// Accept over a link that buffers at most this many bytes each way.
    AcceptSmall(usize),
    Fail(Cause),
}

pub(crate) struct TestConnector {
    plans: Mutex<VecDeque<Plan>>,
    peers: mpsc::UnboundedSender<Peer>,
}

impl Connector for TestConnector {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>> {
        let plan = self
            .plans
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Plan::Accept);
        Box::pin(async move {
            match plan {
                Plan::Fail(cause) => Err(LinkError {
                    cause,
                    phase: Phase::Connect,
                    detail: "scripted".into(),
                }),
                Plan::Accept | Plan::AcceptSmall(_) => {
                    let size = match plan {
                        Plan::AcceptSmall(size) => size,
                        _ => 1 << 20,
                    };
                    let (ours, theirs) = tokio::io::duplex(size);
                    let _ = self.peers.send(Peer::new(theirs));
                    Ok(Connection {
                        stream: Box::new(ours),
                        peer: None,
                        tls: None,
                        security_warnings: vec![],
                    })
                }
            }
        })
    }
}

pub(crate) struct Rig {
    pub client: Client,
    pub events: broadcast::Receiver<ClientEvent>,
    pub peers: mpsc::UnboundedReceiver<Peer>,
}

pub(crate) fn rig(plans: Vec<Plan>, options: ClientOptions) -> Rig {
    let (tx, peers) = mpsc::unbounded_channel();
    let connector = Arc::new(TestConnector {
        plans: Mutex::new(plans.into()),
        peers: tx,
    });
    let client = Client::new(connector, options).unwrap();
    let events = client.subscribe();
    Rig {
        client,
        events,
        peers,
    }
}

impl Rig {
    pub(crate) async fn peer(&mut self) -> Peer {
        self.peers.recv().await.expect("a connection")
    }

    /// Every event so far (the clock is paused, so "so far" is well defined after a yield).
    pub(crate) fn drain_events(&mut self) -> Vec<ClientEvent> {
        let mut out = vec![];
        while let Ok(e) = self.events.try_recv() {
            out.push(e);
        }
        out
    }

    pub(crate) async fn wait_state(&mut self, state: State) -> Vec<ClientEvent> {
        let mut seen = vec![];
        loop {
            let e = self.events.recv().await.expect("event");
            let done = matches!(&e, ClientEvent::StateChange(t) if t.to == state);
            seen.push(e);
            if done {
                return seen;
            }
        }
    }
}

/// A runtime on tokio's paused clock.
pub(crate) fn paused() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
}

pub(crate) fn states(events: &[ClientEvent]) -> Vec<(State, State)> {
    events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::StateChange(t) => Some((t.from, t.to)),
            _ => None,
        })
        .collect()
}

/// The state changes with their reasons.
pub(crate) fn transitions(events: &[ClientEvent]) -> Vec<(State, State, Reason)> {
    events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::StateChange(t) => Some((t.from, t.to, t.reason)),
            _ => None,
        })
        .collect()
}

pub(crate) fn warnings(events: &[ClientEvent]) -> Vec<&'static str> {
    events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Warning(w) => Some(w.code.as_str()),
            _ => None,
        })
        .collect()
}

/// An HL7 message with control ID `cid`; enhanced when `msh15` is not empty.
pub(crate) fn msg(cid: &str, msh15: &str) -> Bytes {
    Bytes::from(format!(
        "MSH|^~\\&|A|B|C|D|20240101120000||ADT^A01|{cid}|P|2.5|||{msh15}|\rPID|1||{MARKER}\r"
    ))
}

/// An HL7 message with control ID `cid`, MSH-15 `msh15` and MSH-16 `msh16`.
pub(crate) fn msg2(cid: &str, msh15: &str, msh16: &str) -> Bytes {
    Bytes::from(format!(
        "MSH|^~\\&|A|B|C|D|20240101120000||ADT^A01|{cid}|P|2.5|||{msh15}|{msh16}\rPID|1||{MARKER}\r"
    ))
}

pub(crate) fn ack(code: &str, cid: &str) -> Bytes {
    Bytes::from(format!(
        "MSH|^~\\&|C|D|A|B|20240101120000||ACK^A01|R{cid}|P|2.5\rMSA|{code}|{cid}|{MARKER}\r"
    ))
}

/// The far end of a duplex link.
pub(crate) struct Peer {
    pub(crate) stream: DuplexStream,
    pub(crate) codec: MllpCodec,
    pub(crate) buf: BytesMut,
}

impl Peer {
    pub(crate) fn new(stream: DuplexStream) -> Self {
        Peer {
            stream,
            codec: MllpCodec::new(Tolerance::STRICT, 1 << 20),
            buf: BytesMut::new(),
        }
    }

    /// The next frame's payload; `None` when the client closed the link.
    pub(crate) async fn read(&mut self) -> Option<Bytes> {
        loop {
            // The client's lone LF after a long first silence (an HTTP server's line end) is
            // outside any frame: a receiver skips it.
            while self.codec.between_frames() && self.buf.first() == Some(&b'\n') {
                let _ = self.buf.split_to(1);
            }
            if let Some(Decoded::Frame(f)) = self.codec.decode(&mut self.buf).unwrap() {
                return Some(f.payload);
            }
            if self.stream.read_buf(&mut self.buf).await.ok()? == 0 {
                return None;
            }
        }
    }

    /// The frames of one read from the link (at least one; `None` when the client closed it),
    /// as a receiver that takes a buffer at a time sees them.
    pub(crate) async fn read_chunk(&mut self) -> Option<Vec<Bytes>> {
        let mut frames = vec![];
        loop {
            while self.codec.between_frames() && self.buf.first() == Some(&b'\n') {
                let _ = self.buf.split_to(1);
            }
            match self.codec.decode(&mut self.buf).unwrap() {
                Some(Decoded::Frame(f)) => {
                    frames.push(f.payload);
                    continue;
                }
                Some(_) => continue,
                None if !frames.is_empty() => return Some(frames),
                None => {}
            }
            // A receiver's read buffer, as engines size it.
            self.buf.reserve(64 * 1024);
            if self.stream.read_buf(&mut self.buf).await.ok()? == 0 {
                return None;
            }
        }
    }

    /// Bytes as they are, no framing.
    pub(crate) async fn write_raw(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).await.is_ok()
    }

    /// Raw bytes up to and including the first LF, as a line-reading server takes them;
    /// `None` when the client closed the link first.
    pub(crate) async fn read_line(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(at) = self.buf.iter().position(|b| *b == b'\n') {
                return Some(self.buf.split_to(at + 1).to_vec());
            }
            if self.stream.read_buf(&mut self.buf).await.ok()? == 0 {
                return None;
            }
        }
    }

    /// Read `n` frames, returning their control IDs.
    pub(crate) async fn read_ids(&mut self, n: usize) -> Vec<String> {
        let mut ids = vec![];
        for _ in 0..n {
            ids.push(cid_of(&self.read().await.expect("a frame")));
        }
        ids
    }

    /// Write an ACK; `false` when the client already closed the link.
    pub(crate) async fn try_write_ack(&mut self, code: &str, cid: &str) -> bool {
        let mut buf = BytesMut::new();
        encode_frame(&ack(code, cid), &mut buf).unwrap();
        self.stream.write_all(&buf).await.is_ok()
    }

    pub(crate) async fn write_ack(&mut self, code: &str, cid: &str) {
        assert!(
            self.try_write_ack(code, cid).await,
            "the client closed the link"
        );
    }
}

/// A payload's control ID.
pub(crate) fn cid_of(payload: &[u8]) -> String {
    let scan = crate::hl7::scan(payload);
    let cid = scan.msh.and_then(|m| m.control_id()).unwrap_or_default();
    String::from_utf8_lossy(cid).into_owned()
}

/// Send one message per control ID, in order; the handles in the same order.
pub(crate) async fn send_all<I: AsRef<str>>(
    client: &Client,
    ids: impl IntoIterator<Item = I>,
) -> Vec<SendHandle> {
    let mut hs = vec![];
    for id in ids {
        hs.push(client.send(msg(id.as_ref(), "")).await);
    }
    hs
}

/// Await every handle; check that each fate's Display/Debug is payload-free.
pub(crate) async fn fates(handles: Vec<SendHandle>) -> Vec<Fate> {
    let mut out = vec![];
    for h in handles {
        let fate = h.await;
        assert_clean(&fate);
        out.push(fate);
    }
    out
}

pub(crate) fn assert_clean<T: std::fmt::Debug + std::fmt::Display>(value: &T) {
    assert!(!format!("{value}").contains(MARKER), "{value}");
    assert!(!format!("{value:?}").contains(MARKER), "{value:?}");
}

pub(crate) fn populations(fates: &[Fate]) -> BTreeMap<Population, usize> {
    let mut m = BTreeMap::new();
    for f in fates {
        *m.entry(f.population()).or_default() += 1;
    }
    m
}

/// The stats' population counts must equal the fates seen.
pub(crate) fn assert_accounts(client: &Client, fates: &[Fate]) {
    let stats = client.stats();
    let total: u64 = stats.by_population.values().sum();
    assert_eq!(total as usize, fates.len(), "{:?}", stats.by_population);
    for (pop, n) in populations(fates) {
        assert_eq!(
            stats.by_population.get(pop.as_str()).copied().unwrap_or(0) as usize,
            n
        );
    }
    assert!(!serde_json::to_string(&stats).unwrap().contains(MARKER));
}
