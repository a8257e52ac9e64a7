//! What a probe may claim: silence proves only that the port is reachable; a server that waits
//! for a line end (HTTP) or hangs up on plain bytes (TLS) is named once something is sent.

use super::{expect, phase, probe, verdict_mentions, Scratch};
use crate::support::peer_wire::FS;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A server on port 0 that runs `serve` for every connection.
async fn server<F, Fut>(serve: F) -> u16
where
    F: Fn(tokio::net::TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream));
        }
    });
    port
}

/// Accepts and never says a word, reading whatever comes.
async fn sink(mut stream: tokio::net::TcpStream) {
    let mut buf = [0u8; 1024];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            // Held open: a sink does not hang up either.
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            return;
        }
    }
}

/// Like Python's `http.server`: reads the request line up to LF (or the end of input), then
/// answers an unreadable one with an HTML error page and no status line.
async fn http_waiting_for_a_line_end(mut stream: tokio::net::TcpStream) {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while let Ok(1) = stream.read(&mut byte).await {
        line.push(byte[0]);
        if byte[0] == b'\n' {
            break;
        }
    }
    let page = "<!DOCTYPE HTML>\n<html><body><h1>Error response</h1><p>Error code: 400</p>\
                </body></html>\n";
    let _ = stream.write_all(page.as_bytes()).await;
}

/// Like a TLS server given bytes that are not a handshake: reads them and hangs up without a
/// word, by a FIN or by a reset.
async fn tls_hanging_up(mut stream: tokio::net::TcpStream, reset: bool) {
    // The whole frame is read first: unread bytes would turn a FIN into a reset.
    let mut buf = [0u8; 4096];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 || buf[..n].contains(&FS) {
            break;
        }
    }
    if reset {
        let _ = socket2::SockRef::from(&stream).set_linger(Some(std::time::Duration::ZERO));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn silence_proves_only_that_the_port_is_reachable() {
    let s = Scratch::new();
    let port = server(sink).await;
    let target = format!("127.0.0.1:{port}");
    let report = expect(
        &[&target, "--banner-wait", "200ms"],
        &s.hosts(),
        "ok",
        None,
        0,
    )
    .await;
    verdict_mentions(&report, "detail", "reachable");
    verdict_mentions(&report, "hint", "--send");
    let detail = report["verdict"]["detail"].as_str().unwrap();
    assert!(
        !detail.contains("as an MLLP receiver does"),
        "silence is claimed as MLLP: {detail}"
    );

    // No banner wait: nothing was listened for, so nothing "stayed silent".
    let report = expect(&[&target, "--banner-wait", "0s"], &s.hosts(), "ok", None, 0).await;
    verdict_mentions(&report, "detail", "reachable");
    verdict_mentions(&report, "hint", "--send");
    let human = probe(&[&target, "--banner-wait", "0s"], &s.hosts()).await;
    assert!(!human.stdout.contains("silent"), "{}", human.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_server_waiting_for_a_line_end_is_recognised() {
    let s = Scratch::new();
    let port = server(http_waiting_for_a_line_end).await;
    let target = format!("127.0.0.1:{port}");
    let args = [target.as_str(), "--send", "--ack-timeout", "300ms"];
    let report = expect(&args, &s.hosts(), "permanent", Some("framing-fatal"), 5).await;
    verdict_mentions(&report, "detail", "HTTP");
    verdict_mentions(&report, "hint", "not an MLLP receiver");
    assert_eq!(phase(&report, "send")["ok"], true);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tls_port_that_hangs_up_on_plain_bytes_suggests_tls() {
    let s = Scratch::new();
    let message = s.message();
    for reset in [false, true] {
        let port = server(move |stream| tls_hanging_up(stream, reset)).await;
        let target = format!("127.0.0.1:{port}");
        let args = [target.as_str(), "--message", &message];
        let cause = if reset {
            "connection-reset"
        } else {
            "peer-closed"
        };
        let report = expect(&args, &s.hosts(), "transient", Some(cause), 4).await;
        verdict_mentions(&report, "hint", "--tls");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_phase_leaves_no_blank_line() {
    let s = Scratch::new();
    let port = server(sink).await;
    let target = format!("127.0.0.1:{port}");
    let run = probe(&[&target, "--send", "--ack-timeout", "300ms"], &s.hosts()).await;
    assert_eq!(run.code, 3, "{}", run.stdout);
    assert!(
        run.stdout.lines().all(|l| !l.trim().is_empty()),
        "a blank line in:\n{}",
        run.stdout
    );
}
