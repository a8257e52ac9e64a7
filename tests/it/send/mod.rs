//! Integration tests: `mllp send` as a child process against the scripted peer and `mllp
//! listen`, one module per topic: input shapes and the checked input set, every exit code from a
//! real peer behaviour, TLS, the resend policy across drops and `--failed-out` reruns, enhanced
//! mode, the causes records carry, getting connected, flag values and the flags people expect
//! (`--dry-run`, `--timeout`), order, parallel links, live streams, and what is printed around
//! the records. No test finds the payload marker on stderr.

mod accept;
mod causes;
mod connect;
mod control_ids;
mod enhanced;
mod exit_codes;
mod failover;
mod failover_events;
mod failover_faults;
mod fates;
mod flags;
mod input;
mod input_set;
mod interrupt;
mod mllp2;
mod no_reconnect;
mod order;
mod output;
mod parallel;
mod replay;
mod resend;
mod retry_on;
mod stream;
mod tls;
mod truth;

use crate::support::mllp_bin;
use crate::support::peer_wire::control_id;
use crate::support::send_proc::{finish, Run};
use std::path::{Path, PathBuf};

/// The binary under test: the one built with the tests, or `MLLP_SEND_BIN` to run these
/// scenarios against another build (an older one, to see a test fail before its fix).
fn send_bin() -> PathBuf {
    std::env::var_os("MLLP_SEND_BIN").map_or_else(mllp_bin, PathBuf::from)
}

/// Run `mllp send ARGS` (stdin from `stdin`), check stderr for the marker, return everything.
async fn send_with(args: &[String], stdin: Option<Vec<u8>>) -> Run {
    let mut cmd = tokio::process::Command::new(send_bin());
    cmd.arg("send").args(args).env_remove("NO_COLOR");
    finish(cmd, stdin).await
}

async fn send(args: &[String]) -> Run {
    send_with(args, None).await
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// `--host 127.0.0.1 --port PORT` plus quick reconnects.
fn to(port: u16, rest: &[&str]) -> Vec<String> {
    let mut v = args(&[
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "50ms",
    ]);
    v.extend(args(rest));
    v
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `in.hl7` in `dir`: one message a control ID, each carrying the payload marker; its path.
fn marked_input(dir: &Path, ids: &[&str]) -> String {
    let bytes: Vec<u8> = ids
        .iter()
        .flat_map(|id| crate::support::peer_wire::message(id, "PAYLOADMARKER7Q3"))
        .collect();
    path(&write(dir, "in.hl7", &bytes))
}

fn ids(payloads: &[Vec<u8>]) -> Vec<String> {
    payloads.iter().filter_map(|p| control_id(p)).collect()
}
