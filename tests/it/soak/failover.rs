//! `soak --host A --host B`: with the first host refusing, every connection moves to the next,
//! and the accounting still closes with every message accepted.

use super::{assert_closes, n, soak};
use crate::support::listen_proc::ListenProc;
use crate::support::ports::closed_port;

#[test]
fn a_refusing_first_host_hands_every_connection_to_the_next() {
    let a = format!("127.0.0.1:{}", closed_port());
    let backup = ListenProc::start(&["--format", "raw", "--quiet"]);
    let b = backup.addr.to_string();
    let run = soak(&[
        "--host",
        &a,
        "--host",
        &b,
        "--failover-after",
        "1",
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "50ms",
        "--allow-synthetic",
        "--connections",
        "2",
        "--messages",
        "20",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_closes(&run);
    assert_eq!(n(&run.report, "accepted"), 20, "{}", run.report);
    assert_eq!(run.report["config"]["target"], a.as_str());
    assert_eq!(run.report["config"]["failover_hosts"][0], b.as_str());

    // The fault proxy stands in front of one host.
    let chaos = crate::support::mllp()
        .args(["soak", "--host", &a, "--host", &b, "--allow-synthetic"])
        .args(["--chaos", "reset=0.1", "--messages", "5"])
        .output()
        .unwrap();
    assert_eq!(chaos.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&chaos.stderr);
    assert!(stderr.contains("--chaos"), "{stderr}");
}

#[test]
fn failover_flags_with_one_host_are_refused() {
    for flags in [&["--failover-after", "2"][..], &["--failback-after", "1m"]] {
        let run = crate::support::mllp()
            .args(["soak", "--host", "127.0.0.1:9", "--allow-synthetic"])
            .args(["--messages", "1"])
            .args(flags)
            .timeout(std::time::Duration::from_secs(10))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(flags[0]), "{stderr}");
        assert!(stderr.contains("give --host more than once"), "{stderr}");
    }
}
