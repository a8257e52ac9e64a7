//! Integration tests: every subcommand run with its stdout closed at the reading end (`| head`)
//! ends cleanly with the exit code its run earned (2 when nothing was done), never a panic.

use crate::support::listen_proc::ListenProc;
use crate::support::mllp_bin;
use crate::support::peer_wire::frame;
use std::io::Write;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const ADT: &str = "MSH|^~\\&|APP|FAC|RCV|RFAC|20240101000000||ADT^A01|CLOSED1|T|2.5\rPID|1||42^^^H^MR||DOE^JANE\r";

/// Start `mllp ARGS` with stdout a pipe whose reading end is already closed. The reading end
/// is closed before the child starts, so no early write can land in the pipe's buffer.
fn spawn_closed(args: &[&str], stdin: Stdio) -> Child {
    let mut fds = [0; 2];
    // Close-on-exec, so no other test's child inherits the reading end and keeps it open.
    // SAFETY: pipe2(2) fills both descriptors on success; each is owned exactly once below.
    let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(made, 0, "pipe2(2) failed");
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(reader);
    Command::new(mllp_bin())
        .args(args)
        .stdin(stdin)
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait (bounded) and return the exit code and stderr; a run that does not end is killed and fails.
fn finish(child: Child) -> (i32, String) {
    let pid = child.id().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let out = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid]).status();
            panic!("the command did not end after its stdout closed");
        }
    };
    crate::support::no_payload::assert_output_clean("mllp", &out);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    (out.status.code().unwrap_or(-1), stderr)
}

fn run_closed(args: &[&str]) -> (i32, String) {
    finish(spawn_closed(args, Stdio::null()))
}

#[test]
fn soak_keeps_the_exit_code_its_run_earned() {
    for extra in [&["--json"][..], &[][..]] {
        let mut args = vec!["soak", "--quiet", "--messages", "300"];
        args.extend_from_slice(extra);
        let (code, stderr) = run_closed(&args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        let (code, stderr) = run_closed(&[&args[..], &["--min-throughput", "1e12"]].concat());
        assert_eq!(code, 6, "{args:?}: {stderr}");
    }
}

#[test]
fn soak_merge_keeps_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let report = report.to_str().unwrap();
    let (code, stderr) = run_closed(&["soak", "--quiet", "--messages", "50", "--report", report]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stderr) = run_closed(&["soak", "--merge", report]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn generated_text_with_no_reader_is_exit_2_without_a_word() {
    for args in [&["completions", "bash"][..], &["man"][..]] {
        let (code, stderr) = run_closed(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

#[test]
fn probe_stops_at_the_first_result_nobody_reads() {
    let listen = ListenProc::start(&[]);
    let target = format!("127.0.0.1:{}", listen.addr.port());
    // Without the stop, 1000 probes 1 s apart would outlast the bounded wait.
    let args = [
        "probe",
        &target,
        "--send",
        "--count",
        "1000",
        "--interval",
        "1s",
    ];
    let (code, stderr) = run_closed(&args);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn send_stops_reading_and_drains_when_its_results_have_no_reader() {
    let listen = ListenProc::start(&[]);
    let port = listen.addr.port().to_string();
    let args = ["send", "--host", "127.0.0.1", "--port", &port, "--stream"];
    let mut child = spawn_closed(&args, Stdio::piped());
    // stdin stays open: only the closed stdout can end this run, part way through its input.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&frame(ADT.as_bytes())).unwrap();
    stdin.flush().unwrap();
    let (code, stderr) = finish(child);
    drop(stdin);
    assert_eq!(code, 2, "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}

#[test]
fn diff_and_deid_end_quietly_when_nobody_reads() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.hl7"), dir.path().join("b.hl7"));
    let many: String = (0..2000)
        .map(|i| ADT.replace("CLOSED1", &format!("C{i}")))
        .collect();
    std::fs::write(&a, &many).unwrap();
    std::fs::write(&b, many.replace("DOE^JANE", "DOE^JOAN")).unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    // They differ: the exit code says so, whether or not the findings were read.
    let (code, stderr) = run_closed(&["diff", a, b]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    let key = dir.path().join("k");
    let (code, stderr) = run_closed(&["deid", "--new-key", key.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stderr) =
        run_closed(&["deid", a, "--key-file", key.to_str().unwrap(), "--out", "-"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
}
