//! The guards against slow and greedy peers: the frame deadline and the budget for partly
//! received frames.

use super::*;

fn deadline_config() -> ServerConfig {
    ServerConfig {
        frame_timeout: Some(Duration::from_secs(10)),
        idle_timeout: Some(Duration::from_secs(5)),
        ..ServerConfig::default()
    }
}

/// Write `bytes` one at a time, `gap` apart, until the server closes; how many were written.
async fn trickle(h: &mut Harness, bytes: &[u8], gap: Duration) -> usize {
    for (i, byte) in bytes.iter().enumerate() {
        if h.client.write_all(&[*byte]).await.is_err() {
            return i;
        }
        tokio::time::sleep(gap).await;
    }
    bytes.len()
}

#[tokio::test(start_paused = true)]
async fn a_trickle_inside_the_idle_timeout_is_closed_at_the_frame_deadline() {
    let mut h = harness(deadline_config(), ScriptedSink::default());
    // One byte a second never trips the 5 s idle timeout; the 10 s deadline ends it.
    let frame = frame(&msg("slow", ""));
    let mut forever = frame.clone();
    forever.extend(std::iter::repeat_n(b'x', 100));
    forever[frame.len() - 2] = b'x'; // no FS: the frame never ends
    let written = trickle(&mut h, &forever, Duration::from_secs(1)).await;
    assert!(
        written < 20,
        "the connection outlived its deadline: {written} bytes"
    );
    assert_eq!(h.ack().await, None);
    let events = h.events_until_close().await;
    assert_eq!(closed_cause(&events), (Cause::FrameTimeout, None));
    assert!(h.sink.committed.lock().unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn whitespace_after_the_last_frame_starts_the_deadline() {
    let mut h = harness(deadline_config(), ScriptedSink::default());
    h.send(&frame(&msg("one", ""))).await;
    assert_eq!(h.ack().await, Some(("AA".into(), "one".into())));
    let written = trickle(&mut h, &[b'\n'; 100], Duration::from_secs(1)).await;
    assert!(
        written < 20,
        "whitespace held the connection: {written} bytes"
    );
    let events = h.events_until_close().await;
    assert_eq!(closed_cause(&events), (Cause::FrameTimeout, None));
}

#[tokio::test(start_paused = true)]
async fn a_slow_sender_whose_frames_each_beat_the_deadline_is_served() {
    let mut h = harness(deadline_config(), ScriptedSink::default());
    // Ten frames, each spread over about 8 s: far longer than the deadline in all, each within.
    for i in 0..10 {
        let frame = frame(&msg(&format!("m{i}"), ""));
        let chunk = frame.len().div_ceil(4);
        for part in frame.chunks(chunk) {
            h.send(part).await;
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
        assert_eq!(h.ack().await, Some(("AA".into(), format!("m{i}"))));
    }
    assert_eq!(h.sink.committed.lock().unwrap().len(), 10);
}

#[tokio::test(start_paused = true)]
async fn no_deadline_runs_between_frames() {
    let mut h = harness(
        ServerConfig {
            idle_timeout: None,
            ..deadline_config()
        },
        ScriptedSink::default(),
    );
    h.send(&frame(&msg("one", ""))).await;
    assert_eq!(h.ack().await, Some(("AA".into(), "one".into())));
    tokio::time::sleep(Duration::from_secs(3600)).await;
    h.send(&frame(&msg("two", ""))).await;
    assert_eq!(h.ack().await, Some(("AA".into(), "two".into())));
}

/// Two connections on one server.
struct Pair {
    a: DuplexStream,
    b: DuplexStream,
    events: mpsc::Receiver<ServerEvent>,
    server: Server,
}

fn pair(config: ServerConfig) -> Pair {
    pair_with(config, ScriptedSink::default())
}

fn pair_with(config: ServerConfig, sink: ScriptedSink) -> Pair {
    let (tx, events) = mpsc::channel(1024);
    let server = Server::builder(config, Arc::new(sink) as Arc<dyn Sink>)
        .events(tx)
        .build()
        .unwrap();
    let mut ends = Vec::new();
    for name in ["a", "b"] {
        let (client, server_side) = tokio::io::duplex(64 * 1024);
        let s = server.clone();
        tokio::spawn(async move { s.serve(server_side, name, &Shutdown::new()).await });
        ends.push(client);
    }
    let b = ends.pop().unwrap();
    let a = ends.pop().unwrap();
    Pair {
        a,
        b,
        events,
        server,
    }
}

#[tokio::test(start_paused = true)]
async fn a_frame_that_would_pass_the_budget_closes_its_own_connection() {
    let mut p = pair(ServerConfig {
        max_buffered: 1000,
        ..ServerConfig::default()
    });
    let whole = frame(&msg(&"a".repeat(700), ""));
    let (head, tail) = whole.split_at(whole.len() - 10);
    p.a.write_all(head).await.unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(p.server.shared.limits.buffered() > 600);
    // The second partial frame would pass the 1000 bytes held by all connections together.
    p.b.write_all(head).await.unwrap();
    let mut closed = None;
    while let Some(event) = p.events.recv().await {
        if let ServerEvent::ConnectionClosed {
            peer, cause, code, ..
        } = event
        {
            closed = Some((peer.to_string(), cause, code));
            break;
        }
    }
    assert_eq!(
        closed,
        Some((
            "b".to_string(),
            Cause::BufferBudget,
            Some(WarningCode::FrameTooLarge)
        ))
    );
    // The connection within the budget is served to the end of its frame.
    p.a.write_all(tail).await.unwrap();
    let mut reply = vec![0u8; 512];
    let n = p.a.read(&mut reply).await.unwrap();
    let ack = scan_ack(&reply[1..n - 2]).expect("an ACK");
    assert_eq!(ack.code, b"AA");
    assert_eq!(
        p.server.shared.limits.buffered(),
        0,
        "nothing held between frames"
    );
}

#[tokio::test(start_paused = true)]
async fn a_frame_waiting_for_a_slow_commit_holds_the_budget_and_the_next_reader_waits() {
    let budget = 3000;
    let mut p = pair_with(
        ServerConfig {
            max_buffered: budget,
            ..ServerConfig::default()
        },
        ScriptedSink {
            delay: Some(Duration::from_secs(10)),
            ..ScriptedSink::default()
        },
    );
    // A complete frame of 2000 bytes waits 10 s for its commit: it stays in the budget.
    p.a.write_all(&frame(&msg(&"a".repeat(2000), "")))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(p.server.shared.limits.buffered() > 2000);
    // The second frame does not fit beside it: it is not read (nor closed) until room comes.
    p.b.write_all(&frame(&msg(&"b".repeat(1000), "")))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    // Reads are granted within the budget; a complete frame's bookkeeping is counted beside.
    assert!(p.server.shared.limits.buffered() <= budget + 512);
    while let Ok(event) = p.events.try_recv() {
        assert!(
            !matches!(event, ServerEvent::ConnectionClosed { .. }),
            "the waiting connection was closed: {event:?}"
        );
    }
    let mut reply = vec![0u8; 512];
    let n = p.a.read(&mut reply).await.unwrap();
    assert_eq!(scan_ack(&reply[1..n - 2]).expect("an ACK").code, b"AA");
    // Room came back with the first answer: the second frame is read, committed, answered.
    let n = p.b.read(&mut reply).await.unwrap();
    assert_eq!(scan_ack(&reply[1..n - 2]).expect("an ACK").code, b"AA");
    assert_eq!(p.server.shared.limits.buffered(), 0);
}
