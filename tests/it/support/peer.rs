//! A scripted MLLP peer on 127.0.0.1:0, in the test process: each connection follows a
//! behaviour from a script, and everything received is recorded for assertions.

use super::peer_wire::{ack, frame, message, Deframer};
use mllp::tls::{AcceptedTls, TlsAcceptError, TlsAcceptor};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// What the peer does on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// ACK every message with this code (`AA`, or `AE`/`AR` for a NAK, `CA`, ...).
    Ack(&'static str),
    /// Collect this many messages, then ACK them (`AA`) in reverse order.
    Reorder(usize),
    /// Read and record, never answer.
    Stall,
    /// Accept, never read and never write: also a TLS peer that never answers the handshake.
    NeverRead,
    /// Reset (SO_LINGER 0, close) right after accepting.
    ResetOnAccept,
    /// ACK this many messages, then reset when the next one arrives.
    ResetAfter(usize),
    /// Close (FIN) right after accepting.
    CloseAtOnce,
    /// Read whatever comes first (a ClientHello, a frame), then close (FIN).
    CloseAfterFirstRead,
    /// ACK this many messages, then close the connection; with the script repeating it, the
    /// link drops every N messages.
    DropEvery(usize),
    /// Read whatever comes first, answer `HTTP/1.1 400 Bad Request`, close.
    Http,
    /// Send an SSH banner on accept, then read and discard.
    SshBanner,
    /// Answer each message with each of these codes in turn (`["CA", "CA"]`: a repeated CA).
    Replies(&'static [&'static str]),
    /// Answer each message with this code, naming another control ID (`ZZZ`).
    WrongId(&'static str),
    /// Write `AA` naming `ZZZ` as soon as the connection is up, then read and never answer.
    Unsolicited,
    /// Answer each message with this code, then write a stray `AA` naming `ZZZ`.
    AckThenStray(&'static str),
    /// ACK this many messages, then write the next one's ACK without its frame end and close
    /// (FIN): the link cut in the middle of an answer.
    CutAckAfter(usize),
    /// The n-th message of the connection gets the n-th step; messages past the list `AA`.
    Steps(&'static [Step]),
    /// `AA` for every message but one whose payload holds these bytes: at that one the
    /// connection closes unanswered, dropping whatever else was read (python-hl7's server on a
    /// message it cannot decode: a poison message).
    CloseOn(&'static str),
    /// `AA` for every message; closes when no frame follows an answer within this many ms (an
    /// engine with a short idle limit).
    IdleClose(u64),
}

/// What [`Behaviour::Steps`] does with one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Answer with this code.
    Ack(&'static str),
    /// Read it and say nothing.
    Silent,
    /// Reset the connection (SO_LINGER 0) unanswered.
    Reset,
    /// Close the connection (FIN) unanswered.
    Close,
    /// A reply naming another control ID (`ZZZ`, a late ACK of an earlier message), then 10 ms
    /// later the right ACK with this code.
    StrayFirst(&'static str),
    /// A frame that is not HL7 in place of the answer.
    NotHl7,
    /// A stale reply `AA` naming this control ID (a message answered on an earlier
    /// connection), then 10 ms later the answer with this code.
    StaleFirst(&'static str, &'static str),
    /// An HL7 message with no MSA segment, then the answer with this code.
    NoMsaFirst(&'static str),
}

/// Behaviours by connection: the first ones in order, then `rest` for every later connection.
#[derive(Debug, Clone)]
pub struct Script {
    pub first: Vec<Behaviour>,
    pub rest: Behaviour,
}

impl Script {
    pub fn always(behaviour: Behaviour) -> Script {
        Script {
            first: Vec::new(),
            rest: behaviour,
        }
    }

    pub fn then(first: Vec<Behaviour>, rest: Behaviour) -> Script {
        Script { first, rest }
    }

    fn for_connection(&self, index: usize) -> Behaviour {
        self.first.get(index).copied().unwrap_or(self.rest)
    }
}

/// What the peer saw.
#[derive(Debug, Default, Clone)]
pub struct Record {
    pub connections: usize,
    pub payloads: Vec<Vec<u8>>,
    pub tls_accepted: Vec<AcceptedTls>,
    pub tls_errors: Vec<TlsAcceptError>,
}

struct Shared {
    record: Mutex<Record>,
    version: watch::Sender<u64>,
}

impl Shared {
    fn update(&self, change: impl FnOnce(&mut Record)) {
        change(&mut self.record.lock().unwrap());
        self.version.send_modify(|v| *v += 1);
    }
}

/// The running peer; dropping it stops the accept loop and every connection.
pub struct Peer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    cancel: CancellationToken,
}

impl Peer {
    /// A plain-TCP peer.
    pub async fn start(script: Script) -> Peer {
        Self::spawn(script, None).await
    }

    /// A TLS peer: behaviours that act on the raw socket (close, reset, never read, HTTP, SSH)
    /// happen before any handshake; the others after a handshake through `acceptor`.
    pub async fn start_tls(script: Script, acceptor: TlsAcceptor) -> Peer {
        Self::spawn(script, Some(acceptor)).await
    }

    /// Accepts TCP and never answers anything, TLS handshakes included.
    pub async fn never_answering() -> Peer {
        Self::start(Script::always(Behaviour::NeverRead)).await
    }

    /// A plain-TCP peer on a given port (one that refused connections until now).
    pub async fn start_on(port: u16, script: Script) -> Peer {
        let listener = TcpListener::bind(("127.0.0.1", port)).await.unwrap();
        Self::serve(listener, script, None)
    }

    async fn spawn(script: Script, tls: Option<TlsAcceptor>) -> Peer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::serve(listener, script, tls)
    }

    fn serve(listener: TcpListener, script: Script, tls: Option<TlsAcceptor>) -> Peer {
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            record: Mutex::new(Record::default()),
            version: watch::channel(0).0,
        });
        let cancel = CancellationToken::new();
        let (loop_shared, loop_cancel) = (shared.clone(), cancel.clone());
        tokio::spawn(async move {
            let mut index = 0;
            loop {
                let accepted = tokio::select! {
                    _ = loop_cancel.cancelled() => return,
                    accepted = listener.accept() => accepted,
                };
                let Ok((tcp, _)) = accepted else { continue };
                loop_shared.update(|r| r.connections += 1);
                let behaviour = script.for_connection(index);
                index += 1;
                let (shared, cancel, tls) = (loop_shared.clone(), loop_cancel.clone(), tls.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        _ = cancel.cancelled() => {}
                        _ = handle(tcp, behaviour, tls, &shared) => {}
                    }
                });
            }
        });
        Peer {
            addr,
            shared,
            cancel,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn record(&self) -> Record {
        self.shared.record.lock().unwrap().clone()
    }

    pub fn connections(&self) -> usize {
        self.record().connections
    }

    pub fn payloads(&self) -> Vec<Vec<u8>> {
        self.record().payloads
    }

    /// Waits until `done` holds for the record (at most 10 s, then panics with the record).
    pub async fn wait_for(&self, done: impl Fn(&Record) -> bool) -> Record {
        let mut changes = self.shared.version.subscribe();
        let wait = async {
            loop {
                let record = self.record();
                if done(&record) {
                    return record;
                }
                if changes.changed().await.is_err() {
                    return record;
                }
            }
        };
        match tokio::time::timeout(Duration::from_secs(10), wait).await {
            Ok(record) => record,
            Err(_) => panic!("peer never reached the expected state: {:?}", self.record()),
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// A stream the peer can reset: it reaches the TCP socket underneath.
trait PeerStream: AsyncRead + AsyncWrite + Unpin + Send {
    fn tcp(&self) -> &TcpStream;
}

impl PeerStream for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

impl PeerStream for tokio_rustls::server::TlsStream<TcpStream> {
    fn tcp(&self) -> &TcpStream {
        self.get_ref().0
    }
}

fn reset(tcp: &TcpStream) {
    socket2::SockRef::from(tcp)
        .set_linger(Some(Duration::ZERO))
        .unwrap();
}

async fn handle(
    mut tcp: TcpStream,
    behaviour: Behaviour,
    tls: Option<TlsAcceptor>,
    shared: &Shared,
) {
    let mut scratch = [0u8; 4096];
    match behaviour {
        Behaviour::CloseAtOnce => return,
        Behaviour::ResetOnAccept => return reset(&tcp),
        Behaviour::NeverRead => return std::future::pending().await,
        Behaviour::CloseAfterFirstRead => {
            let _ = tcp.read(&mut scratch).await;
            return;
        }
        Behaviour::Http => {
            let _ = tcp.read(&mut scratch).await;
            let answer =
                "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            let _ = tcp.write_all(answer.as_bytes()).await;
            let _ = tcp.shutdown().await;
            return;
        }
        Behaviour::SshBanner => {
            let _ = tcp
                .write_all(b"SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n")
                .await;
            while matches!(tcp.read(&mut scratch).await, Ok(n) if n > 0) {}
            return;
        }
        Behaviour::Unsolicited => {
            let _ = tcp.write_all(&stray()).await;
        }
        _ => {}
    }
    match tls {
        None => serve(tcp, behaviour, shared).await,
        Some(acceptor) => match acceptor.accept(tcp).await {
            Ok((stream, info)) => {
                shared.update(|r| r.tls_accepted.push(info));
                serve(stream, behaviour, shared).await
            }
            Err(err) => shared.update(|r| r.tls_errors.push(err)),
        },
    }
}

async fn serve<S: PeerStream>(mut stream: S, behaviour: Behaviour, shared: &Shared) {
    let mut deframer = Deframer::default();
    let mut scratch = [0u8; 4096];
    let mut received = 0usize;
    let mut held: Vec<Vec<u8>> = Vec::new();
    loop {
        let read = stream.read(&mut scratch);
        let n = match behaviour {
            Behaviour::IdleClose(ms) if received > 0 => {
                match tokio::time::timeout(Duration::from_millis(ms), read).await {
                    Ok(read) => read,
                    Err(_) => return,
                }
            }
            _ => read.await,
        };
        let n = match n {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        deframer.push(&scratch[..n]);
        while let Some(payload) = deframer.next_frame() {
            received += 1;
            shared.update(|r| r.payloads.push(payload.clone()));
            let answer = match behaviour {
                Behaviour::Ack(code) => framed_ack(&payload, code),
                Behaviour::Reorder(group) => {
                    held.push(payload);
                    if held.len() < group.max(1) {
                        continue;
                    }
                    held.drain(..)
                        .rev()
                        .flat_map(|p| framed_ack(&p, "AA"))
                        .collect()
                }
                Behaviour::Replies(codes) => codes
                    .iter()
                    .flat_map(|code| framed_ack(&payload, code))
                    .collect(),
                Behaviour::AckThenStray(code) => {
                    let mut answer = framed_ack(&payload, code);
                    answer.extend(stray());
                    answer
                }
                Behaviour::WrongId(code) => frame(&ack(STRAY, code)),
                Behaviour::ResetAfter(limit) if received > limit => return reset(stream.tcp()),
                Behaviour::CutAckAfter(limit) if received > limit => {
                    let whole = framed_ack(&payload, "AA");
                    let _ = stream.write_all(&whole[..whole.len() - 2]).await;
                    let _ = stream.shutdown().await;
                    return;
                }
                Behaviour::Steps(steps) => match steps.get(received - 1) {
                    None => framed_ack(&payload, "AA"),
                    Some(Step::Ack(code)) => framed_ack(&payload, code),
                    Some(Step::StrayFirst(code)) => {
                        if stream.write_all(&stray()).await.is_err() {
                            return;
                        }
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        framed_ack(&payload, code)
                    }
                    Some(Step::StaleFirst(id, code)) => {
                        let stale = frame(&ack(&message(id, ""), "AA"));
                        if stream.write_all(&stale).await.is_err() {
                            return;
                        }
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        framed_ack(&payload, code)
                    }
                    Some(Step::NoMsaFirst(code)) => {
                        let no_msa =
                            b"MSH|^~\\&|PEER|TEST|MLLP|TEST|20240101000000||ACK|R1|P|2.5\r";
                        if stream.write_all(&frame(no_msa)).await.is_err() {
                            return;
                        }
                        framed_ack(&payload, code)
                    }
                    Some(Step::Silent) => continue,
                    Some(Step::Reset) => return reset(stream.tcp()),
                    Some(Step::Close) => return,
                    Some(Step::NotHl7) => frame(b"not an acknowledgement"),
                },
                Behaviour::CloseOn(needle) if contains(&payload, needle.as_bytes()) => return,
                Behaviour::ResetAfter(_)
                | Behaviour::DropEvery(_)
                | Behaviour::CutAckAfter(_)
                | Behaviour::CloseOn(_)
                | Behaviour::IdleClose(_) => framed_ack(&payload, "AA"),
                _ => continue,
            };
            if stream.write_all(&answer).await.is_err() {
                return;
            }
            if behaviour == Behaviour::DropEvery(received) {
                let _ = stream.shutdown().await;
                return;
            }
        }
    }
}

/// The header a stray reply answers: another message (`ZZZ`).
const STRAY: &[u8] = b"MSH|^~\\&|||||||ADT|ZZZ";

/// An `AA` naming `ZZZ`.
fn stray() -> Vec<u8> {
    frame(&ack(STRAY, "AA"))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn framed_ack(payload: &[u8], code: &str) -> Vec<u8> {
    frame(&ack(payload, code))
}
