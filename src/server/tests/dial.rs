//! The receiver that dials out, on tokio's paused clock over in-memory streams: failed connects
//! reported with their attempt, class and the backoff's delay, the connection served by the
//! connection core (AA only after the commit), and a new connect once it ends.

use super::*;
use crate::client::BackoffConfig;
use crate::resolve::BoxFuture;
use crate::transport::{Connection, Connector, LinkError, Phase};
use tokio::sync::mpsc as channel;

/// Refuses the first `refusals` connects, then hands each new link's far end to the test.
struct Engine {
    refusals: Mutex<u32>,
    links: channel::UnboundedSender<DuplexStream>,
}

impl Connector for Engine {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>> {
        Box::pin(async move {
            {
                let mut left = self.refusals.lock().unwrap();
                if *left > 0 {
                    *left -= 1;
                    return Err(LinkError {
                        cause: Cause::ConnectionRefused,
                        phase: Phase::Connect,
                        detail: "engine: refused".into(),
                    });
                }
            }
            let (ours, theirs) = tokio::io::duplex(1 << 16);
            self.links.send(theirs).unwrap();
            Ok(Connection {
                stream: Box::new(ours),
                peer: None,
                tls: None,
                security_warnings: vec![],
            })
        })
    }
}

async fn next_ack(engine: &mut DuplexStream) -> String {
    let mut codec = MllpCodec::new(Tolerance::RECEIVER, 1 << 20);
    let mut buf = BytesMut::new();
    loop {
        if let Ok(Some(Decoded::Frame(frame))) = codec.decode(&mut buf) {
            return String::from_utf8_lossy(&frame.payload).into_owned();
        }
        let mut chunk = [0u8; 4096];
        let n = engine.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed before the answer");
        buf.extend_from_slice(&chunk[..n]);
    }
}

#[tokio::test(start_paused = true)]
async fn failed_connects_back_off_and_each_connection_is_served_as_an_accepted_one() {
    let sink = Arc::new(ScriptedSink::default());
    let (tx, mut events) = channel::channel(64);
    let server = Server::builder(ServerConfig::default(), sink.clone())
        .events(tx)
        .build()
        .unwrap();
    let (links, mut far) = channel::unbounded_channel();
    let engine = Arc::new(Engine {
        refusals: Mutex::new(2),
        links,
    });
    let backoff = BackoffConfig {
        initial: Duration::from_millis(100),
        multiplier: 2.0,
        max: Duration::from_secs(1),
        jitter: 0.0,
    };
    let shutdown = Shutdown::new();
    let stop = shutdown.clone();
    let dialling =
        tokio::spawn(async move { server.dial(engine, "engine:6661", backoff, stop).await });

    let first = events.recv().await.unwrap();
    assert!(matches!(first, ServerEvent::Dialling { ref target } if &**target == "engine:6661"));
    for (attempt, wait) in [(1, 100), (2, 200)] {
        match events.recv().await.unwrap() {
            ServerEvent::DialFailed {
                attempt: a,
                cause,
                retry_in,
                ..
            } => {
                assert_eq!(a, attempt);
                assert_eq!(cause, Cause::ConnectionRefused);
                assert_eq!(cause.class(), crate::cause::Class::Transient);
                assert_eq!(retry_in, Duration::from_millis(wait));
            }
            other => panic!("expected a failed connect, got {other:?}"),
        }
    }
    let mut link = far.recv().await.unwrap();
    link.write_all(&frame(&msg("D1", ""))).await.unwrap();
    let ack = next_ack(&mut link).await;
    assert!(ack.contains("MSA|AA|D1"), "{ack:?}");
    // The AA came after the commit.
    assert_eq!(sink.committed.lock().unwrap().len(), 1);

    // The engine drops the link: a new connect follows, and is served too.
    drop(link);
    let mut link = far.recv().await.unwrap();
    link.write_all(&frame(&msg("D2", ""))).await.unwrap();
    assert!(next_ack(&mut link).await.contains("MSA|AA|D2"));
    let mut dialled = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let ServerEvent::Dialled { connection, .. } = event {
            dialled.push(connection);
        }
    }
    assert_eq!(dialled, [1, 2]);

    shutdown.graceful.cancel();
    drop(link);
    let stats = dialling.await.unwrap();
    assert_eq!(stats.connections_accepted, 2);
}
