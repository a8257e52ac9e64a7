//! Integration tests: `mllp listen --exec` words its answer with the first line the command
//! prints (made safe for an ACK), and nothing the command started outlives it.

use crate::support::listen_proc::ListenProc;
use crate::support::mllp_client::{marked, MllpClient};
use std::time::{Duration, Instant};

/// The fields of the segment `name` in an ACK.
fn segment(ack: &[u8], name: &str) -> Vec<String> {
    String::from_utf8_lossy(ack)
        .split('\r')
        .find(|s| s.starts_with(name))
        .unwrap_or_default()
        .split('|')
        .map(String::from)
        .collect()
}

#[tokio::test]
async fn the_commands_first_line_words_the_answer() {
    let cases = [
        // A rejection in the command's own words: MSA-3 and ERR-8.
        (
            "echo 'refusing discharge INB0002'; echo more; exit 2",
            "AR",
            "refusing discharge INB0002",
        ),
        // A positive answer can carry words too.
        ("echo 'stored as 42'", "AA", "stored as 42"),
        // Separators and control bytes are taken out; at most 80 bytes are kept.
        ("printf 'a|b^c~d\\\\e&f\\tg\\rh\\n'", "AA", "abcdefgh"),
        ("printf '%0100d\\n' 7; exit 1", "AE", &"0".repeat(80)),
    ];
    for (command, code, words) in cases {
        let server = ListenProc::start(&["--exec", command]);
        let mut client = MllpClient::connect(server.addr).await;
        client.send(&marked("W1", "")).await;
        let ack = client.ack().await.unwrap();
        assert_eq!(ack.code, code, "{command}");
        let msa = segment(&ack.payload, "MSA");
        assert_eq!(msa.get(3).map(String::as_str), Some(words), "{command}");
        if code != "AA" {
            let err = segment(&ack.payload, "ERR");
            assert_eq!(err.get(8).map(String::as_str), Some(words), "{command}");
        }
    }
}

/// Whether `pid` runs (a zombie waiting for its reaper does not).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z'))
    })
}

#[tokio::test]
async fn a_background_child_never_outlives_its_command() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let command = format!("sleep 300 & echo $! >> {}; echo ok", pids.display());
    let server = ListenProc::start(&["--exec", &command]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("C1", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    let pid: i32 = std::fs::read_to_string(&pids)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let started = Instant::now();
    while alive(pid) && started.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !alive(pid),
        "the command's background child {pid} outlived it"
    );
}
