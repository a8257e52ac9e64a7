//! Integration tests: the endpoint as every client command takes it. `soak --host HOST:PORT`,
//! `probe` from `MLLP_HOST`/`MLLP_PORT`, and `soak` never reading the environment.

use crate::support::listen_proc::ListenProc;
/// The binary without the caller's own endpoint variables.
fn mllp() -> crate::support::Mllp {
    let mut cmd = crate::support::mllp();
    cmd.env_remove("MLLP_HOST").env_remove("MLLP_PORT");
    cmd
}

fn run(cmd: &mut crate::support::Mllp) -> (i32, String, String) {
    let out = cmd
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn soak_takes_host_colon_port_and_never_the_environment() {
    let listen = ListenProc::start(&[]);
    let target = format!("127.0.0.1:{}", listen.addr.port());
    let (code, stdout, stderr) = run(mllp().args([
        "soak",
        "--host",
        &target,
        "--allow-synthetic",
        "--messages",
        "5",
        "--json",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(report["accepted"], 5, "{report}");
    assert_eq!(report["config"]["target"], target.as_str());

    // MLLP_HOST names a port nothing listens on: soak ignores it and uses its embedded peer.
    let (code, stdout, stderr) = run(mllp()
        .args(["soak", "--messages", "3", "--json"])
        .env("MLLP_HOST", "127.0.0.1:1"));
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(report["config"]["target"], "embedded");

    let (code, _, stderr) = run(mllp().args(["soak", "--host", &target, "--port", "2575"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("port is given twice"), "{stderr}");

    let (_, help, _) = run(mllp().args(["soak", "--help"]));
    assert!(!help.contains("MLLP_HOST"), "{help}");
}

#[test]
fn probe_reads_its_endpoint_from_the_environment() {
    let listen = ListenProc::start(&[]);
    let port = listen.addr.port().to_string();
    let (code, stdout, stderr) = run(mllp()
        .args(["probe", "--json", "--banner-wait", "0s"])
        .env("MLLP_HOST", "127.0.0.1")
        .env("MLLP_PORT", &port));
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(report["target"], format!("127.0.0.1:{port}"), "{report}");

    // A positional endpoint wins over MLLP_HOST.
    let target = format!("127.0.0.1:{port}");
    let (code, _, stderr) = run(mllp()
        .args(["probe", &target, "--banner-wait", "0s"])
        .env("MLLP_HOST", "127.0.0.1:1"));
    assert_eq!(code, 0, "{stderr}");

    let (_, help, _) = run(mllp().args(["probe", "--help"]));
    assert!(help.contains("MLLP_HOST="), "{help}");
    assert!(help.contains("MLLP_PORT="), "{help}");
}
