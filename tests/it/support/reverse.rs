//! Engines that take the other role, written from how such engines behave: one that only
//! accepts connections and pushes messages down them (for `listen --dial`), and one that
//! connects to its sender and answers what it reads (for `send --accept`). Every wait is
//! bounded.

use super::peer_wire::{ack, control_id, frame, Deframer};
use super::store::Store;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const WAIT: Duration = Duration::from_secs(15);

/// How the pushing engine treats its first connection.
#[derive(Debug, Clone, Copy)]
pub enum FirstConnection {
    /// Like every other: each message written, then its answer read.
    Whole,
    /// `answered` messages each answered, then `written` more written at once with half of the
    /// next one, and the connection dropped without reading their answers.
    Drop { answered: usize, written: usize },
}

/// What the pushing engine saw: each answer (`AA`, `AE`, ..., or `commit` for a Release 2
/// commit block) with the control ID of the message it answered, and the connections accepted.
#[derive(Debug, Default)]
pub struct Pushed {
    pub answers: Vec<(String, String)>,
    pub connections: usize,
}

/// An engine on 127.0.0.1 that accepts connections and pushes messages down them.
pub struct PushingEngine {
    pub addr: SocketAddr,
    done: tokio::task::JoinHandle<Pushed>,
}

impl PushingEngine {
    /// Push `messages` (payloads, in order) down the connections it accepts, each until every
    /// message has a positive answer. With `store`, each positive answer is checked at once:
    /// the message it names must already be in the store.
    pub async fn start(
        messages: Vec<Vec<u8>>,
        first: FirstConnection,
        store: Option<Store>,
    ) -> PushingEngine {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let done = tokio::spawn(push(listener, messages, first, store));
        PushingEngine { addr, done }
    }

    /// What it saw, once every message has a positive answer.
    pub async fn finished(self) -> Pushed {
        tokio::time::timeout(Duration::from_secs(30), self.done)
            .await
            .expect("every message answered positively")
            .unwrap()
    }
}

async fn push(
    listener: TcpListener,
    messages: Vec<Vec<u8>>,
    first: FirstConnection,
    store: Option<Store>,
) -> Pushed {
    let mut pushed = Pushed::default();
    let mut left = messages;
    while !left.is_empty() {
        let (mut tcp, _) = tokio::time::timeout(WAIT, listener.accept())
            .await
            .expect("the receiver dialled in")
            .unwrap();
        pushed.connections += 1;
        let mut deframer = Deframer::canonical();
        let (answer_first, drop_after) = match first {
            FirstConnection::Drop { answered, written } if pushed.connections == 1 => {
                (answered, Some(written))
            }
            _ => (left.len(), None),
        };
        let mut answered = 0;
        for payload in left.iter().take(answer_first) {
            tcp.write_all(&frame(payload)).await.unwrap();
            let Some(answer) = read_answer(&mut tcp, &mut deframer).await else {
                break;
            };
            let id = control_id(payload).unwrap();
            let positive = answer == "AA" || answer == "commit";
            if positive {
                if let Some(store) = &store {
                    let kept = store.messages();
                    let held = kept.iter().any(|m| control_id(m).as_deref() == Some(&id));
                    assert!(held, "{id} answered {answer} before it was stored");
                }
            }
            pushed.answers.push((id, answer));
            if !positive {
                break;
            }
            answered += 1;
        }
        if let Some(written) = drop_after {
            let rest: Vec<u8> = left[answered..]
                .iter()
                .take(written)
                .flat_map(|p| frame(p))
                .collect();
            let half = left
                .get(answered + written)
                .map(|p| frame(p))
                .unwrap_or_default();
            let _ = tcp.write_all(&rest).await;
            let _ = tcp.write_all(&half[..half.len() / 2]).await;
        }
        left.drain(..answered);
        drop(tcp);
    }
    pushed
}

/// The next answer on `tcp`: the MSA-1 code of an HL7 ACK, or `commit`/`nak` for a Release 2
/// block; `None` when the connection ends first.
async fn read_answer(tcp: &mut TcpStream, deframer: &mut Deframer) -> Option<String> {
    let frame = tokio::time::timeout(WAIT, deframer.read_frame(tcp))
        .await
        .expect("an answer within the wait")?;
    Some(match frame.as_slice() {
        [0x06] => "commit".to_string(),
        [0x15] => "nak".to_string(),
        ack => {
            let text = String::from_utf8_lossy(ack);
            let msa = text.split('\r').find(|s| s.starts_with("MSA|"))?;
            msa.split('|').nth(1)?.to_string()
        }
    })
}

/// Connect to a sender at `addr` as an engine that dials out: read frames and answer each with
/// `AA`, until `n` are answered or the sender closes. The control IDs answered, in order.
pub async fn dial_in_and_answer(addr: SocketAddr, n: usize) -> Vec<String> {
    let mut tcp = connect(addr).await;
    let mut deframer = Deframer::canonical();
    let mut answered = Vec::new();
    while answered.len() < n {
        let read = tokio::time::timeout(WAIT, deframer.read_frame(&mut tcp)).await;
        let Some(payload) = read.expect("a frame within the wait") else {
            break;
        };
        tcp.write_all(&frame(&ack(&payload, "AA"))).await.unwrap();
        answered.push(control_id(&payload).unwrap_or_default());
    }
    answered
}

/// Connect to a sender at `addr`, read `n` frames without answering, and drop the connection.
/// The control IDs read.
pub async fn dial_in_read_and_drop(addr: SocketAddr, n: usize) -> Vec<String> {
    let mut tcp = connect(addr).await;
    let mut deframer = Deframer::canonical();
    let mut read = Vec::new();
    while read.len() < n {
        let next = tokio::time::timeout(WAIT, deframer.read_frame(&mut tcp)).await;
        let payload = next.expect("a frame within the wait").expect("a frame");
        read.push(control_id(&payload).unwrap_or_default());
    }
    read
}

/// Whether a connection to `addr` is closed by the other side (end of stream or reset) within
/// the wait, without a byte written to it.
pub async fn closed_at_once(addr: SocketAddr) -> bool {
    let mut tcp = connect(addr).await;
    let mut buf = [0u8; 64];
    matches!(
        tokio::time::timeout(WAIT, tcp.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}

async fn connect(addr: SocketAddr) -> TcpStream {
    tokio::time::timeout(WAIT, TcpStream::connect(addr))
        .await
        .expect("connected within the wait")
        .unwrap()
}
