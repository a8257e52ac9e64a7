//! A fault proxy for the reliability proof: a TCP forwarder on 127.0.0.1 that watches the
//! sender's bytes frame by frame and, on the first few connections, breaks the link in one
//! chosen way at a chosen frame: a reset in the middle of a frame or between two frames, a
//! half-open link (nothing forwarded either way, nothing closed), a slow drip, a frame cut
//! short by an orderly close, or an ACK cut short (reset or closed). It also counts every complete frame it passed on, so a test can
//! restart the receiver at a chosen moment.

use super::peer_wire::{CR, FS, VT};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// How the link breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Nothing: the proxy only forwards (and counts frames).
    None,
    /// Both sockets reset after the first bytes of the chosen frame.
    ResetMidFrame,
    /// Both sockets reset right after the chosen frame's last byte.
    ResetBetweenFrames,
    /// After the chosen frame nothing is forwarded either way and nothing is closed, as when a
    /// NAT forgets the connection.
    Blackhole,
    /// The chosen frame and the two after it go through one byte every few milliseconds.
    SlowDrip,
    /// The chosen frame is cut after its first bytes and both sides closed in order (FIN).
    Truncate,
    /// The chosen answer (ACK) arrives without its last two bytes and frame end, and both
    /// sockets reset: its MSA-2 is cut short, so it may name another message.
    ResetMidAck,
    /// As [`Fault::ResetMidAck`], closed in order (FIN) instead.
    TruncateAck,
}

impl Fault {
    pub fn name(self) -> &'static str {
        match self {
            Fault::None => "pass-through",
            Fault::ResetMidFrame => "reset mid-frame",
            Fault::ResetBetweenFrames => "reset between frames",
            Fault::Blackhole => "blackhole",
            Fault::SlowDrip => "slow drip",
            Fault::Truncate => "truncate a frame",
            Fault::ResetMidAck => "reset mid-ACK",
            Fault::TruncateAck => "truncate an ACK",
        }
    }

    fn on_answers(self) -> bool {
        matches!(self, Fault::ResetMidAck | Fault::TruncateAck)
    }
}

/// Where the fault strikes: on each of the first `connections` connections, at the frame
/// numbered `at_frame` (1-based) on that connection.
#[derive(Debug, Clone, Copy)]
pub struct Strike {
    pub at_frame: usize,
    pub connections: usize,
}

/// Bytes of a frame let through before it is cut.
const CUT_AFTER: usize = 20;
const DRIP_GAP: Duration = Duration::from_millis(3);

struct Shared {
    upstream: SocketAddr,
    fault: Fault,
    strike: Strike,
    connections: AtomicUsize,
    frames: AtomicUsize,
    struck: AtomicUsize,
    /// Blackholed connections, held open until the proxy ends.
    held: Mutex<Vec<(TcpStream, TcpStream)>>,
}

pub struct FaultProxy {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl FaultProxy {
    pub async fn start(upstream: SocketAddr, fault: Fault, strike: Strike) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            upstream,
            fault,
            strike,
            connections: AtomicUsize::new(0),
            frames: AtomicUsize::new(0),
            struck: AtomicUsize::new(0),
            held: Mutex::new(Vec::new()),
        });
        let state = shared.clone();
        let accept = tokio::spawn(async move {
            let mut tasks = Vec::new();
            while let Ok((client, _)) = listener.accept().await {
                let n = state.connections.fetch_add(1, Ordering::SeqCst) + 1;
                let faulty = n <= state.strike.connections && state.fault != Fault::None;
                tasks.push(tokio::spawn(serve(client, state.clone(), faulty)));
            }
        });
        FaultProxy {
            addr,
            shared,
            accept,
        }
    }

    /// Complete frames passed on to the receiver, over all connections.
    pub fn frames(&self) -> usize {
        self.shared.frames.load(Ordering::SeqCst)
    }

    /// How many times the fault struck.
    pub fn struck(&self) -> usize {
        self.shared.struck.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.shared.held.lock().unwrap().clear();
    }
}

/// What to do with the byte just read from the sender.
#[derive(PartialEq)]
enum Step {
    Forward,
    Drip,
    /// Forward it, then break the link.
    BreakAfter,
    /// Break the link before it, holding back the two bytes before it too.
    BreakShort,
}

/// Frame position on one connection and the decision for each byte.
struct Cursor {
    fault: Fault,
    at: usize,
    /// Frames completed on this connection.
    done: usize,
    /// Bytes seen of the frame being read, counting from its VT.
    in_frame: Option<usize>,
    after_fs: bool,
}

impl Cursor {
    fn step(&mut self, byte: u8) -> Step {
        let ends_frame = self.after_fs && byte == CR;
        self.after_fs = false;
        match byte {
            VT => self.in_frame = Some(0),
            FS => {
                self.in_frame = None;
                self.done += 1;
                self.after_fs = true;
            }
            _ => {
                if let Some(n) = &mut self.in_frame {
                    *n += 1;
                }
            }
        }
        let current = self.done + 1;
        match self.fault {
            Fault::ResetMidFrame | Fault::Truncate
                if current == self.at && self.in_frame == Some(CUT_AFTER) =>
            {
                Step::BreakAfter
            }
            Fault::ResetBetweenFrames | Fault::Blackhole if ends_frame && self.done == self.at => {
                Step::BreakAfter
            }
            Fault::SlowDrip if (self.at..self.at + 3).contains(&(self.done + 1)) => Step::Drip,
            Fault::ResetMidAck | Fault::TruncateAck if byte == FS && self.done == self.at => {
                Step::BreakShort
            }
            _ => Step::Forward,
        }
    }
}

async fn serve(client: TcpStream, shared: Arc<Shared>, faulty: bool) {
    let Ok(upstream) = TcpStream::connect(shared.upstream).await else {
        // The receiver is down: the sender sees its connection reset and tries again.
        let _ = socket2::SockRef::from(&client).set_linger(Some(Duration::ZERO));
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let (mut client, mut upstream) = (client, upstream);
    let fault = if faulty { shared.fault } else { Fault::None };
    let broke = {
        let (mut c_rx, mut c_tx) = client.split();
        let (mut u_rx, mut u_tx) = upstream.split();
        let (ask, answer) = if fault.on_answers() {
            (Fault::None, fault)
        } else {
            (fault, Fault::None)
        };
        let requests = pump(&mut c_rx, &mut u_tx, cursor(ask, &shared), &shared, true);
        let answers = pump(
            &mut u_rx,
            &mut c_tx,
            cursor(answer, &shared),
            &shared,
            false,
        );
        tokio::select! {
            broke = requests => broke,
            broke = answers => broke,
        }
    };
    match (broke, fault) {
        (true, Fault::Blackhole) => shared.held.lock().unwrap().push((client, upstream)),
        (true, Fault::Truncate | Fault::TruncateAck) => {
            let _ = client.shutdown().await;
            let _ = upstream.shutdown().await;
        }
        (true, _) => {
            let _ = socket2::SockRef::from(&client).set_linger(Some(Duration::ZERO));
            let _ = socket2::SockRef::from(&upstream).set_linger(Some(Duration::ZERO));
        }
        // One side ended: the other is closed in order.
        (false, _) => {}
    }
}

fn cursor(fault: Fault, shared: &Shared) -> Cursor {
    Cursor {
        fault,
        at: shared.strike.at_frame,
        done: 0,
        in_frame: None,
        after_fs: false,
    }
}

/// Copy `from` to `to` under `cursor`'s fault until either side ends (false) or the fault
/// breaks the link (true); the sender's frames are counted when `count_frames`.
async fn pump(
    from: &mut (impl AsyncReadExt + Unpin),
    to: &mut (impl AsyncWriteExt + Unpin),
    mut cursor: Cursor,
    shared: &Shared,
    count_frames: bool,
) -> bool {
    let struck = || shared.struck.fetch_add(1, Ordering::SeqCst);
    let mut buf = vec![0u8; 16 * 1024];
    let mut dripped = false;
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        let mut start = 0;
        for i in 0..n {
            let before = cursor.done;
            let step = cursor.step(buf[i]);
            if count_frames && cursor.done > before {
                shared.frames.fetch_add(1, Ordering::SeqCst);
            }
            match step {
                Step::Forward => {}
                Step::Drip => {
                    if to.write_all(&buf[start..=i]).await.is_err() {
                        return false;
                    }
                    start = i + 1;
                    if !std::mem::replace(&mut dripped, true) {
                        struck();
                    }
                    tokio::time::sleep(DRIP_GAP).await;
                }
                Step::BreakAfter => {
                    let _ = to.write_all(&buf[start..=i]).await;
                    struck();
                    return true;
                }
                Step::BreakShort => {
                    let _ = to
                        .write_all(&buf[start..i.saturating_sub(2).max(start)])
                        .await;
                    let _ = to.flush().await;
                    struck();
                    return true;
                }
            }
        }
        if to.write_all(&buf[start..n]).await.is_err() {
            return false;
        }
    }
}
