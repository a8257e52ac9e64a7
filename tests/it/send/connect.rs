//! Getting connected: `--host HOST[:PORT]`, `MLLP_HOST`/`MLLP_PORT`, a host refused by its shape
//! before any lookup, the first failure said at once, `-v` steps, and the last real cause kept
//! after Ctrl-C.

use super::{args, path, send, send_with, write};
use crate::support::mllp_bin;
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;
use crate::support::ports::closed_port;
use crate::support::send_proc::{finish, Run, Running};

/// `mllp send ARGS` with these environment variables set (and the test's own removed).
async fn send_env(args: &[String], env: &[(&str, String)]) -> Run {
    let mut cmd = tokio::process::Command::new(mllp_bin());
    cmd.arg("send")
        .args(args)
        .env_remove("MLLP_HOST")
        .env_remove("MLLP_PORT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    finish(cmd, None).await
}

#[tokio::test(flavor = "multi_thread")]
async fn host_takes_a_port_and_a_port_given_twice_is_a_usage_error() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = path(&write(dir.path(), "adt.hl7", &message("H1", MARKER)));
    let target = format!("127.0.0.1:{}", peer.port());
    let run = send(&args(&["--host", &target, &file])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(peer.payloads().len(), 1);

    let twice = send(&args(&["--host", &target, "--port", "2575", &file])).await;
    assert_eq!(twice.code, 2, "{}", twice.stderr);
    assert!(
        twice.stderr.contains("port is given twice"),
        "{}",
        twice.stderr
    );
    assert!(twice.stderr.contains("nothing was sent"));
    assert_eq!(peer.connections(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_that_cannot_be_one_is_refused_without_a_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let file = path(&write(dir.path(), "adt.hl7", &message("B1", MARKER)));
    // A hosts file that fails every lookup it is asked: a lookup would end in exit 5.
    let hosts = write(dir.path(), "hosts", b"fail engine_x\n");
    for bad in [
        "engine x",
        "http://engine",
        "-engine",
        "10.0.0.256",
        "[::1",
        "h:70000",
    ] {
        let mut cmd = tokio::process::Command::new(mllp_bin());
        cmd.args(["send", &format!("--host={bad}"), &file])
            .env("MLLP_HOSTS_FILE", &hosts);
        let run = finish(cmd, None).await;
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(
            run.stderr.contains("'--host <HOST[:PORT]>'"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("for example --host"), "{}", run.stderr);
        assert!(!run.stderr.contains("dns-"), "{}", run.stderr);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_environment_supplies_the_endpoint_and_flags_win() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let port = peer.port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = path(&write(dir.path(), "adt.hl7", &message("E1", MARKER)));
    let env = |host: &str, port: &str| {
        vec![
            ("MLLP_HOST", host.to_string()),
            ("MLLP_PORT", port.to_string()),
        ]
    };
    let run = send_env(&args(&[&file]), &env("127.0.0.1", &port)).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    // A --port on the command line beats the port in MLLP_HOST ...
    let run = send_env(
        &args(&["--port", &port, &file]),
        &env("127.0.0.1:1", "")[..1],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    // ... and a port in --host beats MLLP_PORT.
    let host = format!("127.0.0.1:{port}");
    let run = send_env(&args(&["--host", &host, &file]), &env("", "1")[1..]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(peer.payloads().len(), 3);
    // Both from the environment, disagreeing: a usage error naming them.
    let run = send_env(&args(&[&file]), &env(&host, "1")).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("MLLP_PORT"), "{}", run.stderr);

    let help = send(&args(&["--help"])).await;
    assert!(help.stdout.contains("MLLP_HOST="), "{}", help.stdout);
    assert!(help.stdout.contains("MLLP_PORT="), "{}", help.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_port_is_said_at_once_and_stays_the_cause_after_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let file = path(&write(dir.path(), "adt.hl7", &message("R1", MARKER)));
    let port = closed_port().to_string();
    let mut cmd = tokio::process::Command::new(mllp_bin());
    cmd.args([
        "send",
        "--host",
        "127.0.0.1",
        "--port",
        &port,
        "--json",
        &file,
    ]);
    let mut child = Running::start(cmd);
    let first = child.stderr_line().await;
    assert!(first.contains("connection-refused"), "{first}");
    assert!(first.contains(&format!("127.0.0.1:{port}")), "{first}");
    assert!(first.contains("giving up after 2m"), "{first}");
    child.signal("INT");
    let run = child.finish().await;
    assert_eq!(run.code, 130);
    let stdout = &run.stdout;
    let record: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(record["outcome"], "never-delivered");
    // Held by the refused link, or (on a loaded machine) not yet read when Ctrl-C came: both
    // are true. The run's failure stays the refusal either way.
    let cause = record["cause"].as_str().unwrap_or_default();
    assert!(
        ["connection-refused", "interrupted"].contains(&cause),
        "{stdout}"
    );
    let summary: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["last_failure"], "connection-refused", "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_shows_connects_writes_and_acks_without_payload() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let bytes = [message("V1", MARKER), message("V2", MARKER)].concat();
    let file = path(&write(dir.path(), "adt.hl7", &bytes));
    let target = format!("127.0.0.1:{}", peer.port());
    let run = send_with(&args(&["-v", "--host", &target, &file]), None).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let size = message("V1", MARKER).len();
    for want in [
        format!("* connecting to {target}"),
        format!("* connected to {target}"),
        format!("> MSH-10 V1  {size} bytes"),
        format!("> MSH-10 V2  {size} bytes"),
        "< AA  MSH-10 V1".to_string(),
        "< AA  MSH-10 V2".to_string(),
    ] {
        assert!(run.stderr.contains(&want), "{want}:\n{}", run.stderr);
    }
    let quiet = send_with(&args(&["--host", &target, &file]), None).await;
    assert!(!quiet.stderr.contains("* connect"), "{}", quiet.stderr);
    let more = send_with(&args(&["-vv", "--host", &target, &file]), None).await;
    assert!(
        more.stderr.contains("CONNECTING -> CONNECTED"),
        "{}",
        more.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ipv6_endpoint_takes_its_port_after_the_brackets() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        return; // no IPv6 loopback on this machine
    }
    let listen = crate::support::listen_proc::ListenProc::start(&["--host", "::1"]);
    let dir = tempfile::tempdir().unwrap();
    let file = path(&write(dir.path(), "adt.hl7", &message("I1", MARKER)));
    let target = format!("[::1]:{}", listen.addr.port());
    let run = send(&args(&["--host", &target, "--json", &file])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.summary()["accepted"], 1);
}
