//! `listen --format json`: `payload` is the text MSH-18's character set reads, undecodable
//! bytes escaped and named by a warning; `payload_base64` stays for bytes that are not UTF-8.

use crate::support::listen_proc::ListenProc;
use crate::support::mllp_client::MllpClient;
use serde_json::Value;

#[tokio::test]
async fn the_payload_is_read_in_the_charset_msh18_names() {
    let server = ListenProc::start(&["--format", "json"]);
    let mut client = MllpClient::connect(server.addr).await;
    let latin = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|L1|P|2.5||||||8859/1\rPID|1||1||M\xfcLLER\r";
    let utf8_declared =
        b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|U1|P|2.5||||||UNICODE UTF-8\rPID|1||1||M\xfcLLER\r";
    let unknown = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|K1|P|2.5||||||EBCDIC\rPID|1\r";
    for message in [&latin[..], utf8_declared, unknown] {
        client.send(message).await;
        client.ack().await.unwrap();
    }
    server.signal("INT");
    let (status, _, out) = server.wait();
    assert_eq!(status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let payload = |i: usize| lines[i]["payload"].as_str().unwrap().to_string();
    assert!(payload(0).ends_with("PID|1||1||MüLLER\r"), "{}", payload(0));
    assert!(
        lines[0]["payload_base64"].is_string(),
        "the bytes are not UTF-8"
    );
    assert!(lines[0].get("warning").is_none());
    assert!(
        payload(1).ends_with("PID|1||1||M\\XFC\\LLER\r"),
        "{}",
        payload(1)
    );
    assert_eq!(lines[1]["warning"], "MLLP_TEXT_NOT_IN_CHARSET");
    assert_eq!(lines[2]["warning"], "MLLP_CHARSET_UNKNOWN");
    assert!(lines[2].get("payload_base64").is_none());
}
