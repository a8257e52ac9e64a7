//! A TLS 1.3 server refusing our client certificate after the handshake: its alert waits on the
//! read side, and a write may meet the reset that follows it first. Either way the link ends
//! `tls-client-cert`, every send never delivered, nothing retried (and a strategy that retries
//! anyway writes each send at most `max_resends` times again).

use super::harness::MARKER;
use crate::cause::Cause;
use crate::client::{
    Client, ClientOptions, ExponentialBackoff, Fate, FateCause, MaxRetries, Reconnect,
    RetryContext, RetryStrategy,
};
use crate::resolve::BoxFuture;
use crate::tls::TlsSummary;
use crate::transport::{Connection, Connector, LinkError};
use bytes::Bytes;
use rustls::{AlertDescription, Error as TlsError};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The refusing server's side of the stream: takes `room` bytes, then resets; the alert is
/// readable once the write side has failed (or, when `alert_first`, once anything was written).
#[derive(Default)]
struct Refusal {
    room: usize,
    alert_first: bool,
    written: bool,
    write_failed: bool,
    reader: Option<Waker>,
}

struct RefusingStream(Arc<Mutex<Refusal>>);

impl AsyncRead for RefusingStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        _: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let mut state = self.0.lock().unwrap();
        if (state.alert_first && state.written) || state.write_failed {
            let alert = TlsError::AlertReceived(AlertDescription::CertificateRequired);
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, alert)));
        }
        state.reader = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl AsyncWrite for RefusingStream {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.0.lock().unwrap();
        if state.room == 0 {
            state.write_failed = true;
            if let Some(waker) = state.reader.take() {
                waker.wake();
            }
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        let n = buf.len().min(state.room);
        state.room -= n;
        state.written = true;
        if let Some(waker) = state.reader.take() {
            waker.wake();
        }
        Poll::Ready(Ok(n))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

struct RefusingConnector {
    tls: bool,
    room: usize,
    alert_first: bool,
    connects: AtomicUsize,
}

impl Connector for RefusingConnector {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>> {
        self.connects.fetch_add(1, Ordering::Relaxed);
        let state = Refusal {
            room: self.room,
            alert_first: self.alert_first,
            ..Refusal::default()
        };
        let tls = self.tls.then(TlsSummary::default);
        Box::pin(async move {
            Ok(Connection {
                stream: Box::new(RefusingStream(Arc::new(Mutex::new(state)))),
                peer: None,
                tls,
                security_warnings: vec![],
            })
        })
    }
}

async fn fates(connector: Arc<RefusingConnector>) -> Vec<Fate> {
    // Reconnect on, bounded, so that a transient misreading would show as retries.
    let strategy = MaxRetries {
        inner: Arc::new(ExponentialBackoff::default()),
        max: 3,
    };
    let options = ClientOptions {
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(strategy),
        },
        ..ClientOptions::default()
    };
    let client = Client::new(connector, options).unwrap();
    let payloads = (0..5).map(|i| {
        Bytes::from(format!(
            "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|R{i}|P|2.5\rPID|1||{MARKER}\r"
        ))
    });
    let handles = client.send_many(payloads).await;
    let mut fates = vec![];
    for handle in handles {
        fates.push(handle.await);
    }
    let stats = client.stats();
    assert_eq!(stats.reconnect_attempts, 0);
    let failure = stats.last_failure.unwrap();
    assert_eq!(failure.cause, Cause::TlsClientCert);
    assert_eq!(failure.detail, "the server requires a client certificate");
    fates
}

fn refused() -> Fate {
    Fate::NeverDelivered {
        cause: FateCause::Link(Cause::TlsClientCert),
    }
}

#[tokio::test(start_paused = true)]
async fn an_alert_on_the_first_read_is_tls_client_cert_and_nothing_was_delivered() {
    let connector = Arc::new(RefusingConnector {
        tls: true,
        room: usize::MAX,
        alert_first: true,
        connects: AtomicUsize::new(0),
    });
    let fates = fates(connector.clone()).await;
    assert!(fates.iter().all(|f| *f == refused()), "{fates:?}");
    assert_eq!(connector.connects.load(Ordering::Relaxed), 1);
}

#[tokio::test(start_paused = true)]
async fn a_write_that_meets_the_reset_first_still_finds_the_alert() {
    let connector = Arc::new(RefusingConnector {
        tls: true,
        room: 40,
        alert_first: false,
        connects: AtomicUsize::new(0),
    });
    let fates = fates(connector.clone()).await;
    assert!(fates.iter().all(|f| *f == refused()), "{fates:?}");
    assert_eq!(connector.connects.load(Ordering::Relaxed), 1);
}

/// Retries every cause at once, even a permanent one.
#[derive(Debug)]
struct Relentless;

impl RetryStrategy for Relentless {
    fn next_delay(&self, _: &RetryContext) -> Option<std::time::Duration> {
        Some(std::time::Duration::ZERO)
    }
}

/// A strategy that retries a refused certificate still writes each send at most
/// `max_resends` times again; then it ends as the refusal leaves it, never delivered.
#[tokio::test(start_paused = true)]
async fn retrying_a_refused_certificate_writes_each_send_again_at_most_max_resends_times() {
    let connector = Arc::new(RefusingConnector {
        tls: true,
        room: usize::MAX,
        alert_first: true,
        connects: AtomicUsize::new(0),
    });
    let options = ClientOptions {
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(MaxRetries {
                inner: Arc::new(Relentless),
                max: 50,
            }),
        },
        max_resends: 2,
        ..ClientOptions::default()
    };
    let client = Client::new(connector.clone(), options).unwrap();
    let payload = format!("MSH|^~\\&|A|B|C|D|20240101||ADT^A01|R1|P|2.5\rPID|1||{MARKER}\r");
    let mut handle = client.send(Bytes::from(payload)).await;
    assert_eq!((&mut handle).await, refused());
    assert_eq!(handle.writes(), 3);
}
