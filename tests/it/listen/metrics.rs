//! Integration tests: `--metrics` of listen and soak, announced, scraped over HTTP and parsed.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{adt, marked, MllpClient};
use crate::support::no_payload::{assert_no_marker, MARKER};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn the_metrics_endpoint_is_scraped_and_parsed() {
    let server = ListenProc::start(&["--metrics", "127.0.0.1:0", "--format", "json"]);
    // Right after `listening` comes the address metrics were bound to.
    let announced = server.events_until(|_| true).remove(0);
    assert_eq!(announced["event"], "metrics_listening", "{announced}");
    let metrics: SocketAddr = announced["addr"].as_str().unwrap().parse().unwrap();
    assert_ne!(metrics.port(), 0);
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
    // The message with no MSH-10 was refused before any commit: it times none.
    assert_eq!(value("mllp_listen_commit_seconds_count"), 1.0);
    assert!(response.contains("mllp_listen_commit_seconds_bucket{le="));
    assert_no_marker("metrics", &response, MARKER);
}

/// The `metrics_listening` address soak printed on stderr, in either format.
fn soak_metrics_addr(log_format: &str) -> String {
    let out = crate::support::mllp()
        .args(["--log-format", log_format, "soak", "--duration", "1s"])
        .args(["--metrics", "127.0.0.1:0", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    if log_format == "json" {
        let event: serde_json::Value = stderr
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .find(|v: &serde_json::Value| v["event"] == "metrics_listening")
            .unwrap_or_else(|| panic!("no metrics_listening in {stderr}"));
        event["addr"].as_str().unwrap().to_string()
    } else {
        let line = stderr
            .lines()
            .find_map(|l| l.strip_prefix("metrics on http://"))
            .unwrap_or_else(|| panic!("no metrics line in {stderr}"));
        line.strip_suffix("/metrics").unwrap().to_string()
    }
}

#[test]
fn soak_announces_the_port_it_bound_for_metrics() {
    for format in ["json", "human"] {
        let addr: SocketAddr = soak_metrics_addr(format).parse().unwrap();
        assert_eq!(addr.ip().to_string(), "127.0.0.1");
        assert_ne!(addr.port(), 0, "{format}");
    }
}
