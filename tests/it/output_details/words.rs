//! Integration tests: the words of send's human output: what a warning means, said next to its
//! code (JSON keeps the bare code); endpoints written as URLs.

use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::ports::closed_port;
use crate::support::send_proc::{finish, Run};
use serde_json::Value;

/// `mllp GLOBAL... send --host 127.0.0.1 --port PORT FLAGS... FILE` with one ADT `E1` in FILE.
async fn send_one(port: u16, global: &[&str], flags: &[&str]) -> Run {
    let port = port.to_string();
    send_to(&["--host", "127.0.0.1", "--port", &port], global, flags).await
}

/// `mllp GLOBAL... send TARGET... FLAGS... FILE` with one ADT `E1` in FILE.
async fn send_to(target: &[&str], global: &[&str], flags: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.hl7");
    std::fs::write(
        &file,
        "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|E1|P|2.5\rPID|1\r",
    )
    .unwrap();
    let mut cmd = tokio::process::Command::new(crate::support::mllp_bin());
    cmd.args(global)
        .arg("send")
        .args(target)
        .args(flags)
        .arg(&file);
    finish(cmd, None).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_warning_says_what_it_means_for_people_and_stays_a_code_in_json() {
    let peer = Peer::start(Script::always(Behaviour::WrongId("AA"))).await;
    let flags = ["--ack-timeout", "300ms", "--no-reconnect"];
    let human = send_one(peer.port(), &[], &flags).await;
    let line = human
        .stderr
        .lines()
        .find(|l| l.contains("MLLP_ACK_UNMATCHED_CONTROL_ID"))
        .unwrap_or_else(|| panic!("no warning in {}", human.stderr));
    assert!(
        line.starts_with("warning MLLP_ACK_UNMATCHED_CONTROL_ID at byte ")
            && line.ends_with(": an ACK named a control ID no message in flight has"),
        "{line}"
    );

    let json = send_one(peer.port(), &["--log-format", "json"], &flags).await;
    let warning: Value = json
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "warning")
        .unwrap_or_else(|| panic!("no warning event in {}", json.stderr));
    assert_eq!(
        warning["code"], "MLLP_ACK_UNMATCHED_CONTROL_ID",
        "{warning}"
    );
    let keys: Vec<&String> = warning.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["byte_offset", "code", "event", "time"], "{warning}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mllp_url_is_its_endpoint_and_mllps_says_to_turn_tls_on() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let url = format!("mllp://127.0.0.1:{}", peer.port());
    let run = send_to(&["--host", &url], &[], &["--json"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.messages()[0]["outcome"], "accepted", "{}", run.stdout);

    let tls = format!("mllps://127.0.0.1:{}", peer.port());
    let run = send_to(&["--host", &tls], &[], &[]).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "`mllps://` is not part of an address: give HOST[:PORT] and turn TLS on with --tls"
        ),
        "{}",
        run.stderr
    );
    let run = send_to(&["--host", "http://127.0.0.1:80"], &[], &[]).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("`http://` is not an MLLP address"),
        "{}",
        run.stderr
    );
    assert_eq!(peer.connections(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_ack_events_round_latency_like_the_records() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let run = send_one(peer.port(), &["-v", "--log-format", "json"], &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ack: Value = run
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "ack")
        .unwrap_or_else(|| panic!("no ack event in {}", run.stderr));
    let ms = ack["latency_ms"].as_f64().unwrap();
    // Written as a JSON number with at most one decimal.
    let text = ack["latency_ms"].to_string();
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
    assert!(decimals <= 1, "{text} ({ms})");
}

#[tokio::test(flavor = "multi_thread")]
async fn giving_up_names_the_last_failure_too() {
    let closed = closed_port();
    let run = send_one(closed, &[], &["--json", "--no-reconnect"]).await;
    let summary = run.summary();
    assert_eq!(summary["gave_up"], "connection-refused", "{summary}");
    assert_eq!(summary["last_failure"], "connection-refused", "{summary}");
}

#[test]
fn soak_progress_off_a_terminal_is_one_plain_line_per_interval() {
    let out = crate::support::mllp()
        .args(["soak", "--duration", "1s", "--report-interval", "200ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let progress: Vec<&str> = stderr.lines().filter(|l| l.starts_with("soak ")).collect();
    assert!(!progress.is_empty(), "{stderr}");
    for line in &progress {
        assert!(
            line.contains("generated ") && line.contains(" p99 "),
            "{line}"
        );
    }
    // Nothing continues a line: no indented figures, no wrapped `max`.
    for line in stderr.lines() {
        assert!(
            !line.starts_with(' ') && !line.starts_with("max "),
            "a progress block, not a line: {stderr}"
        );
    }
}

#[test]
fn the_send_man_page_correlation_block_fits_80_columns() {
    let page =
        std::fs::read_to_string(crate::support::repo_root().join("man/mllp-send.1")).unwrap();
    let mut preformatted = false;
    let mut seen = 0;
    for line in page.lines() {
        match line {
            ".nf" => preformatted = true,
            ".fi" => preformatted = false,
            _ if preformatted => {
                seen += 1;
                // man indents a section's text by 7 columns; the block keeps one spare.
                let shown = line.replace("\\-", "-").replace("\\*(Aq", "'");
                assert!(
                    shown.chars().count() <= 72,
                    "wider than 80 columns under man: {shown}"
                );
            }
            _ => {}
        }
    }
    assert!(seen > 0, "no preformatted block in the page");
}

#[test]
fn with_no_host_the_usage_names_mllp_host_and_files_are_optional() {
    let out = crate::support::mllp()
        .arg("send")
        .env_remove("MLLP_HOST")
        .env_remove("MLLP_PORT")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let usage: Vec<&str> = stderr
        .lines()
        .skip_while(|l| !l.starts_with("Usage:"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(usage.iter().any(|l| l.contains("MLLP_HOST")), "{stderr}");
    for line in &usage {
        assert!(
            !line.contains(" FILES") && !line.contains("<FILES>"),
            "FILES required: {line}"
        );
    }
    assert!(usage.iter().all(|l| l.contains("[FILES]...")), "{stderr}");
}

/// `mllp send --dry-run --json FILE` of `bytes`.
fn dry_run(bytes: &[u8]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.hl7");
    std::fs::write(&file, bytes).unwrap();
    crate::support::mllp()
        .args(["send", "--dry-run", "--json"])
        .arg(&file)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dos_end_of_file_mark_is_not_sent() {
    let text = b"MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|Z1|P|2.5\r\nPID|1\r\n";
    for tail in [&b"\x1a"[..], b"\x1a\x1a"] {
        let bytes = [&text[..], tail].concat();
        let out = dry_run(&bytes);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        // Sent, the peer gets the two segments and nothing after them.
        let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("dos.hl7");
        std::fs::write(&file, &bytes).unwrap();
        let mut cmd = tokio::process::Command::new(crate::support::mllp_bin());
        cmd.args([
            "send",
            "--json",
            "--host",
            &format!("127.0.0.1:{}", peer.port()),
        ])
        .arg(&file);
        let run = finish(cmd, None).await;
        assert_eq!(run.code, 0, "{}", run.stderr);
        let payloads = peer.payloads();
        assert_eq!(payloads.len(), 1);
        for payload in payloads {
            assert!(
                payload.ends_with(b"PID|1\r"),
                "{:?}",
                String::from_utf8_lossy(&payload)
            );
        }
    }
}

#[test]
fn utf16_input_is_named_as_such() {
    let text = "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|U1|P|2.5\rPID|1\r";
    let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    for bytes in [
        [&[0xFF, 0xFE][..], &le].concat(),
        [&[0xFE, 0xFF][..], &be].concat(),
        le,
    ] {
        let out = dry_run(&bytes);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("in.hl7: UTF-16 text: convert it to UTF-8 or an 8-bit charset"),
            "{stderr}"
        );
    }
}

/// The error line of `mllp ARGS`, which must exit 2.
fn usage_error(args: &[&str]) -> String {
    let out = crate::support::mllp()
        .args(args)
        .env_remove("MLLP_HOST")
        .env_remove("MLLP_PORT")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    stderr
}

#[test]
fn refusals_the_library_types_are_said_in_flag_words() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.hl7");
    std::fs::write(
        &file,
        "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|E1|P|2.5\r",
    )
    .unwrap();
    let file = file.display().to_string();
    for (args, said) in [
        (
            vec!["send", "--host", "h:1", "--port", "2", &file],
            "the port is given twice, in --host h:1 and --port 2: give it once, for example \
             --host h:1 or --host h --port 2",
        ),
        (
            vec!["probe", "h:1", "--host", "h:2"],
            "the endpoint is given twice, as HOST[:PORT] and as --host: give it once",
        ),
        (
            vec!["soak", "--connections", "0"],
            "--connections must be from 1 to 999",
        ),
        (
            vec!["soak", "--host", "127.0.0.1:9"],
            "against a real --host the built-in synthetic message needs --allow-synthetic \
             (fake patients must not reach a production engine by accident), or give \
             --template FILE",
        ),
        (
            vec!["listen", "--host", "0.0.0.0", "--port", "0"],
            "0.0.0.0:0 listens on every interface; pass --allow-wildcard if that is intended",
        ),
    ] {
        let stderr = usage_error(&args);
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
}
