//! Integration tests: `mllp listen --metrics`, scraped over HTTP and parsed.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{adt, marked, MllpClient};
use crate::support::no_payload::{assert_no_marker, MARKER};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(10);

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_metrics_endpoint_is_scraped_and_parsed() {
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let server = ListenProc::start(&["--metrics", &metrics.to_string(), "--format", "json"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("M1", "")).await;
    client.send(&adt(b"", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    assert_eq!(client.ack().await.unwrap().code, "AE");
    server.wait_event(is("message"));
    server.wait_event(is("message"));
    let mut http = TcpStream::connect(metrics).await.unwrap();
    http.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    tokio::time::timeout(WAIT, http.read_to_string(&mut response))
        .await
        .unwrap()
        .unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let value = |name: &str| -> f64 {
        response
            .lines()
            .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {response}"))
    };
    assert_eq!(value("mllp_listen_messages_total"), 2.0);
    assert_eq!(value("mllp_listen_acks_total{code=\"AA\"}"), 1.0);
    assert_eq!(value("mllp_listen_acks_total{code=\"AE\"}"), 1.0);
    assert_eq!(value("mllp_listen_connections_total"), 1.0);
    assert_eq!(value("mllp_listen_connections_open"), 1.0);
    assert_eq!(value("mllp_listen_commit_seconds_count"), 2.0);
    assert!(response.contains("mllp_listen_commit_seconds_bucket{le="));
    assert_no_marker("metrics", &response, MARKER);
}
