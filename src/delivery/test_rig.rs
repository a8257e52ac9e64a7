//! Set-up shared by the run's tests: in-memory links to a peer task, the frames that peer
//! reads and its `AA` answers, numbered messages and their feed, client options, and the
//! client tests' paused clock.

use super::Input;
pub(crate) use crate::client::tests::harness::{cid_of, paused, Peer};
use crate::client::{ClientOptions, Correlation, ExponentialBackoff, OnBackpressure};
use crate::client::{Reconnect, Window};

use crate::input::Message;
use crate::resolve::BoxFuture;
use crate::transport::{Connection, LinkError};
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::DuplexStream;

/// A link whose other end is handed to `serve`, running as its own task.
pub(crate) fn link<F>(
    serve: impl FnOnce(DuplexStream) -> F,
) -> BoxFuture<'static, Result<Connection, LinkError>>
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    tokio::spawn(serve(theirs));
    Box::pin(async move {
        Ok(Connection {
            stream: Box::new(ours),
            peer: None,
            tls: None,
            security_warnings: vec![],
        })
    })
}

/// Message `n` (control ID `M` and `n`) with `pid3` in PID-3.
pub(crate) fn message(n: u64, pid3: &str) -> Message {
    let payload = format!("MSH|^~\\&|A|B|C|D|20240101120000||ADT^A01|M{n}|P|2.5\rPID|1||{pid3}\r");
    Message {
        source: "in.hl7".into(),
        index: n,
        line: 1,
        offset: 0,
        payload: Bytes::from(payload),
        original_control_id: None,
    }
}

/// `messages` through a bounded channel, as a producer outside the run would.
pub(crate) fn feed(messages: impl Iterator<Item = Message> + Send + 'static) -> Input {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        for message in messages {
            if tx.send(message).await.is_err() {
                return;
            }
        }
    });
    Input::from_channel(rx, false)
}

/// Waiting for room in a window of `window`, reconnecting with a seeded backoff.
pub(crate) fn client_options(correlation: Correlation, window: usize) -> ClientOptions {
    ClientOptions {
        correlation,
        window: Window {
            count: Some(window),
            bytes: None,
        },
        on_backpressure: OnBackpressure::Wait,
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(ExponentialBackoff::seeded(Default::default(), 7)),
        },
        ack_timeout: Duration::from_secs(5),
        drain_timeout: Duration::from_secs(5),
        ..ClientOptions::default()
    }
}
