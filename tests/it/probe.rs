//! Integration tests: probe. The real binary against real local peers, one module per verdict
//! class (and one for repeated probes); each test checks the class, the cause and the exit code
//! in human and in JSON output.

mod hosts;
mod mllp2;
mod ok;
mod permanent;
mod reachable;
mod repeat;
mod transient;

use crate::support::certs::Certs;
use crate::support::mllp;
use crate::support::no_payload::MARKER;
use crate::support::run::Run;
use mllp::tls::TlsAcceptor;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Runs `mllp probe ARGS` with names pinned by `hosts` (an MLLP_HOSTS_FILE), off the runtime so
/// the in-process peers keep serving.
async fn probe(args: &[&str], hosts: &Path) -> Run {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let hosts = hosts.to_path_buf();
    let output = tokio::task::spawn_blocking(move || {
        mllp()
            .arg("probe")
            .args(&args)
            .env("MLLP_HOSTS_FILE", hosts)
            .timeout(Duration::from_secs(30))
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    Run::checked(&output, "probe stderr")
}

/// A scratch directory with a hosts file pinning `localhost` (and a failing name), and a
/// message file carrying the payload marker.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("hosts"),
            "127.0.0.1 localhost engine.test\nfail broken.test\n",
        )
        .unwrap();
        let message = format!(
            "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|PROBE42|D|2.5\r\nPID|1||1||{MARKER}^X\r\n"
        );
        std::fs::write(dir.path().join("adt.hl7"), message).unwrap();
        Scratch { dir }
    }
    fn hosts(&self) -> PathBuf {
        self.dir.path().join("hosts")
    }
    fn message(&self) -> String {
        self.dir.path().join("adt.hl7").display().to_string()
    }
}

/// Probes twice, human and JSON, and checks the verdict both ways. Returns the JSON report.
async fn expect(args: &[&str], hosts: &Path, class: &str, cause: Option<&str>, code: i32) -> Value {
    let human = probe(args, hosts).await;
    let headline = match cause {
        Some(cause) => format!("verdict: {class} ({cause})"),
        None => format!("verdict: {class}\n"),
    };
    assert!(
        human.stdout.contains(&headline),
        "want {headline:?}: {}",
        human.stdout
    );
    assert!(human.stdout.contains("hint: "), "{}", human.stdout);
    assert_eq!(human.code, code, "{}{}", human.stdout, human.stderr);

    let mut json_args = args.to_vec();
    json_args.push("--json");
    let run = probe(&json_args, hosts).await;
    assert_eq!(run.code, code, "{}{}", run.stdout, run.stderr);
    let report: Value = serde_json::from_str(run.stdout.trim()).expect(&run.stdout);
    assert_eq!(report["verdict"]["class"], class, "{report}");
    match cause {
        Some(cause) => assert_eq!(report["verdict"]["cause"], cause, "{report}"),
        None => assert!(report["verdict"]["cause"].is_null(), "{report}"),
    }
    assert!(report["verdict"]["hint"]
        .as_str()
        .is_some_and(|h| !h.is_empty()));
    assert!(report["phases"].as_array().is_some_and(|p| !p.is_empty()));
    report
}

fn phase<'a>(report: &'a Value, name: &str) -> &'a Value {
    // The phase names are interface.
    for p in report["phases"].as_array().into_iter().flatten() {
        let n = p["name"].as_str().unwrap_or_default();
        assert!(
            ["resolve", "connect", "tls", "send", "ack"].contains(&n),
            "phase name {n:?} is not a known phase: {report}"
        );
    }
    report["phases"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no {name} phase in {report}"))
}

fn acceptor(certs: &Certs, options: mllp::tls::ServerTlsOptions) -> TlsAcceptor {
    let _ = certs;
    options.acceptor(Duration::from_secs(5)).unwrap()
}

/// Asserts that the verdict's `field` (`detail`, `hint`) mentions `text`.
fn verdict_mentions(report: &Value, field: &str, text: &str) {
    let value = report["verdict"][field].as_str().unwrap_or_default();
    assert!(
        value.contains(text),
        "verdict {field} lacks {text:?}: {report}"
    );
}
