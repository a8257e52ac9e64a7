//! `mllp send` as a child process run to its end: what it printed and how it exited, with stderr
//! checked for the payload marker. The caller builds the command (arguments, environment).

use super::no_payload::{assert_no_marker, MARKER};
use super::peer_wire::message;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Every stdout line, as JSON (`--json` output).
    pub fn records(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
            .collect()
    }

    /// The per-message records: every record but the summary, which must come last.
    pub fn messages(&self) -> Vec<Value> {
        let mut records = self.records();
        let summary = records.pop().expect("a summary record");
        assert_eq!(summary["type"], "summary", "{}", self.stdout);
        records
    }

    pub fn summary(&self) -> Value {
        self.records().pop().expect("a summary record")
    }
}

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
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert_no_marker("send stderr", &run.stderr, MARKER);
    run
}

/// `n` messages `{prefix}{i}` (1-based), each a CR-terminated ADT carrying the marker.
pub fn messages(prefix: &str, n: usize) -> Vec<u8> {
    (1..=n)
        .flat_map(|i| message(&format!("{prefix}{i}"), MARKER))
        .collect()
}
