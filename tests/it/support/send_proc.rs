//! `mllp send` as a child process run to its end: what it printed and how it exited, with stderr
//! checked for the payload marker. The caller builds the command (arguments, environment).

use super::no_payload::MARKER;
use super::peer_wire::message;
use std::process::Stdio;
use std::time::Duration;

pub use super::run::Run;

/// Run `cmd` with `stdin` piped in then closed (or no stdin at all), bounded in time.
pub async fn finish(mut cmd: tokio::process::Command, stdin: Option<Vec<u8>>) -> Run {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    let mut child = cmd.spawn().unwrap();
    if let Some(bytes) = stdin {
        use tokio::io::AsyncWriteExt;
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(&bytes).await.unwrap();
    }
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("send finished")
        .unwrap();
    Run::checked(&out, "send stderr")
}

/// `n` messages `{prefix}{i}` (1-based), each a CR-terminated ADT carrying the marker.
pub fn messages(prefix: &str, n: usize) -> Vec<u8> {
    (1..=n)
        .flat_map(|i| message(&format!("{prefix}{i}"), MARKER))
        .collect()
}
