//! Integration tests: `mllp listen --host NAME` resolves through MLLP_HOSTS_FILE like every
//! other command, and the wildcard rule applies to what the name resolves to.

use crate::support::{mllp, mllp_bin};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

fn hosts_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let path = dir.path().join("hosts");
    std::fs::write(&path, "0.0.0.0 anywhere.test\n127.0.0.1 here.test\n").unwrap();
    path
}

#[test]
fn a_name_pinned_to_all_interfaces_is_refused_without_allow_wildcard() {
    let dir = tempfile::tempdir().unwrap();
    let out = mllp()
        .args(["listen", "--port", "0", "--host", "anywhere.test"])
        .env("MLLP_HOSTS_FILE", hosts_file(&dir))
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--allow-wildcard"), "{stderr}");
}

#[test]
fn a_pinned_name_is_bound_at_its_pinned_address() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(mllp_bin())
        .args(["--log-format", "json", "listen", "--port", "0"])
        .args(["--host", "here.test"])
        .env("MLLP_HOSTS_FILE", hosts_file(&dir))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let event: Value = serde_json::from_str(&first).unwrap_or_else(|_| panic!("{first}"));
    assert_eq!(event["event"], "listening", "{event}");
    let addr: std::net::SocketAddr = event["addr"].as_str().unwrap().parse().unwrap();
    assert!(addr.ip().is_loopback(), "{addr}");
}
