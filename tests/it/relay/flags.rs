//! Flags that do not apply to a relay, and TLS material it cannot load, are refused before
//! anything starts.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run `mllp relay ARGS` for at most a few seconds: its exit code and stderr (None: still
/// running, then killed).
fn relay(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(crate::support::mllp_bin())
        .args(["relay", "--listen", "0", "--to", "127.0.0.1:9"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (code, stderr)
}

#[test]
fn giving_up_upstream_is_refused_as_the_relay_never_gives_up() {
    for args in [
        &["--give-up-after", "5s"][..],
        &["--max-retries", "3"],
        &["--no-reconnect"],
    ] {
        let (code, stderr) = relay(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(args[0]), "{args:?}: {stderr}");
    }
    // Nor does the help offer them.
    let help = Command::new(crate::support::mllp_bin())
        .args(["relay", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in ["--give-up-after", "--max-retries", "--no-reconnect"] {
        assert!(!help.contains(flag), "{flag} in relay --help:\n{help}");
    }
}

#[test]
fn unloadable_tls_material_exits_5_naming_the_file_before_listening() {
    let (code, stderr) = relay(&[
        "--tls-cert",
        "/nonexistent/relay.pem",
        "--tls-key",
        "/nonexistent/relay.key",
    ]);
    assert_eq!(code, Some(5), "{stderr}");
    assert!(stderr.contains("/nonexistent/relay.pem"), "{stderr}");
    assert!(!stderr.contains("listening on"), "{stderr}");
}

#[test]
fn failover_flags_with_one_upstream_are_refused() {
    for args in [&["--failover-after", "2"][..], &["--failback-after", "1m"]] {
        let (code, stderr) = relay(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(args[0]), "{args:?}: {stderr}");
        assert!(stderr.contains("give --to more than once"), "{stderr}");
        assert!(!stderr.contains("listening on"), "{stderr}");
    }
}
