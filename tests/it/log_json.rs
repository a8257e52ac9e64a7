//! Integration tests: under `--log-format json` every stderr line of every subcommand is one JSON
//! object with an `event` field, whether the command fails early, fails late or succeeds; the
//! ending error is `{"event":"error","message":..,"exit_code":N}`.

use crate::support::certs::Certs;
use crate::support::listen_proc::ListenProc;
use crate::support::mllp;
use crate::support::no_payload::MARKER;
use crate::support::ports::closed_port;
use crate::support::run::Run;
use serde_json::Value;
use std::path::Path;

fn run<S: AsRef<str>>(args: &[S], stdin: &[u8]) -> Run {
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    let out = mllp().args(args).write_stdin(stdin).output().unwrap();
    Run::checked(&out, "stderr")
}

/// `mllp --log-format json ARGS`.
fn json_run<S: AsRef<str>>(args: &[S], stdin: &[u8]) -> Run {
    let mut all = vec!["--log-format", "json"];
    all.extend(args.iter().map(AsRef::as_ref));
    run(&all, stdin)
}

/// Every stderr line as an event; panics on a line that is not one JSON object with `event`.
fn events_of(run: &Run) -> Vec<Value> {
    run.stderr
        .lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|_| panic!("not a JSON line: {line:?}\nstderr: {}", run.stderr));
            assert!(
                value["event"].is_string(),
                "no event field: {line}\nstderr: {}",
                run.stderr
            );
            value
        })
        .collect()
}

fn named<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == name).collect()
}

/// The run ended on exactly one error event, the last line, carrying its exit code.
fn ends_in_error(run: &Run, code: i32) -> Value {
    assert_eq!(run.code, code, "{}", run.stderr);
    let events = events_of(run);
    assert_eq!(named(&events, "error").len(), 1, "{}", run.stderr);
    let last = events.last().unwrap().clone();
    assert_eq!(last["event"], "error", "{}", run.stderr);
    assert_eq!(last["exit_code"], code, "{last}");
    assert!(!last["message"].as_str().unwrap().is_empty(), "{last}");
    last
}

fn message_file(dir: &Path) -> String {
    let path = dir.join("adt.hl7");
    let text = format!(
        "MSH|^~\\&|APP|FAC|RCV|RFAC|20240101000000||ADT^A01|LJ1|P|2.5\rPID|1||{MARKER}^^^H^MR\r"
    );
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// A TLS `listen` whose certificate the client does not check (`--insecure`).
fn tls_listen(certs: &Certs) -> ListenProc {
    let cert = certs.server.cert.display().to_string();
    let key = certs.server.key.display().to_string();
    ListenProc::start(&["--tls-cert", &cert, "--tls-key", &key])
}

#[test]
fn refused_command_lines_are_error_events_when_they_ask_for_json() {
    let bad_port = json_run(&["send", "--host", "127.0.0.1", "--port", "x"], b"");
    let error = ends_in_error(&bad_port, 2);
    assert_eq!(error["kind"], "value-validation", "{error}");
    assert!(error["message"].as_str().unwrap().contains("--port"));

    let unknown = run(&["probe", "--log-format=json", "--bogus", "h"], b"");
    assert_eq!(ends_in_error(&unknown, 2)["kind"], "unknown-argument");

    let nothing = json_run::<&str>(&[], b"");
    assert_eq!(ends_in_error(&nothing, 2)["kind"], "missing-subcommand");

    // Without the flag (or when the format is the bad value) clap's own text stands.
    for args in [
        &["send", "--host", "127.0.0.1", "--port", "x"][..],
        &["--log-format", "xml", "probe", "h"][..],
    ] {
        let plain = run(args, b"");
        assert_eq!(plain.code, 2);
        assert!(plain.stderr.starts_with("error: "), "{}", plain.stderr);
    }
}

#[test]
fn send_fails_and_succeeds_in_events() {
    let dir = tempfile::tempdir().unwrap();
    let file = message_file(dir.path());
    let missing = dir.path().join("missing.hl7").display().to_string();
    let args = |port: &str, extra: &[&str]| {
        let mut v: Vec<String> = ["send", "--host", "127.0.0.1", "--port", port]
            .map(String::from)
            .to_vec();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };

    let unreadable = json_run(&args("1", &[&missing]), b"");
    ends_in_error(&unreadable, 2);
    let bad_ca = json_run(&args("1", &["--ca", &missing, &file]), b"");
    ends_in_error(&bad_ca, 5);
    let zero = json_run(&args("1", &["--ack-timeout", "0s", &file]), b"");
    ends_in_error(&zero, 2);

    let certs = Certs::generate();
    let listen = tls_listen(&certs);
    let port = listen.addr.port().to_string();
    let ok = json_run(&args(&port, &["--tls", "--insecure", &file]), b"");
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let events = events_of(&ok);
    let warning = named(&events, "security_warning");
    assert_eq!(
        warning[0]["code"], "MLLP_TLS_VERIFY_DISABLED",
        "{}",
        ok.stderr
    );
    assert_eq!(events.last().unwrap()["event"], "summary", "{}", ok.stderr);
    // stdout keeps its human per-message lines.
    assert!(ok.stdout.contains("AA"), "{}", ok.stdout);
}

#[test]
fn listen_fails_and_succeeds_in_events() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let in_use = json_run(&["listen", "--port", &port], b"");
    let error = ends_in_error(&in_use, 5);
    assert!(error["cause"].is_string(), "{error}");

    let wildcard = json_run(&["listen", "--host", "0.0.0.0", "--port", "0"], b"");
    let error = ends_in_error(&wildcard, 2);
    assert_eq!(error["code"], "MLLP_BIND_ALL_INTERFACES");

    let no_tls = json_run(
        &["listen", "--port", "0", "--tls-cert", "/nonexistent.pem"],
        b"",
    );
    // clap or the TLS loader refuses it; either way an error event.
    assert!(matches!(no_tls.code, 2 | 5), "{}", no_tls.stderr);
    ends_in_error(&no_tls, no_tls.code);

    let certs = Certs::generate();
    let listen = tls_listen(&certs);
    listen.signal("TERM");
    let (status, rest, _) = listen.wait();
    assert!(status.success());
    for event in &rest {
        assert!(event["event"].is_string(), "not a JSON event: {event}");
    }
    assert_eq!(rest.last().unwrap()["event"], "stats");
}

#[test]
fn probe_fails_and_succeeds_in_events() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.hl7").display().to_string();
    let unreadable = json_run(&["probe", "127.0.0.1:1", "--message", &missing], b"");
    ends_in_error(&unreadable, 2);

    let target = format!("127.0.0.1:{}", closed_port());
    let refused = json_run(&["probe", &target], b"");
    assert_eq!(refused.code, 4, "{}", refused.stderr);
    assert!(named(&events_of(&refused), "error").is_empty());
    assert!(
        refused.stdout.contains("connection-refused"),
        "{}",
        refused.stdout
    );

    let certs = Certs::generate();
    let listen = tls_listen(&certs);
    let target = listen.addr.to_string();
    let file = message_file(dir.path());
    let ok = json_run(
        &["probe", &target, "--tls", "--insecure", "--message", &file],
        b"",
    );
    assert_eq!(ok.code, 0, "{}\n{}", ok.stdout, ok.stderr);
    let events = events_of(&ok);
    assert_eq!(events.len(), 1, "{}", ok.stderr);
    assert_eq!(events[0]["event"], "security_warning");
    assert_eq!(events[0]["code"], "MLLP_TLS_VERIFY_DISABLED");
}

#[test]
fn soak_fails_and_succeeds_in_events() {
    let dir = tempfile::tempdir().unwrap();
    let template = message_file(dir.path());
    let bad = json_run(&["soak", "--connections", "0"], b"");
    ends_in_error(&bad, 2);
    let not_a_report = json_run(&["soak", "--merge", &template], b"");
    ends_in_error(&not_a_report, 2);

    let report_file = dir.path().join("run.json").display().to_string();
    let ok = json_run(
        &[
            "soak",
            "--duration",
            "1s",
            "--report-interval",
            "200ms",
            "--template",
            &template,
            "--report",
            &report_file,
        ],
        b"",
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    let events = events_of(&ok);
    assert!(!named(&events, "progress").is_empty(), "{}", ok.stderr);
    let states = named(&events, "state_change");
    assert!(
        states
            .iter()
            .any(|s| s["connection"] == 1 && s["to"] == "CONNECTED"),
        "{}",
        ok.stderr
    );
    let report = events.last().unwrap();
    assert_eq!(report["event"], "report", "{}", ok.stderr);
    assert_eq!(report["exit_code"], 0);
    assert_eq!(report["accounting_ok"], true);
    assert_eq!(report["thresholds_ok"], true);
    assert_eq!(report["report_file"], report_file.as_str());
    assert!(report["generated"].as_u64().unwrap() > 0);
    assert!(report.get("histogram").is_none() && report.get("per_second").is_none());
    // The human summary is still stdout's.
    assert!(ok.stdout.starts_with("soak: "), "{}", ok.stdout);

    // A missed threshold: the report event says so, no human verdict line.
    let missed = json_run(
        &[
            "soak",
            "--messages",
            "20",
            "--min-throughput",
            "1000000000",
            "--quiet",
        ],
        b"",
    );
    assert_eq!(missed.code, 6, "{}", missed.stderr);
    let events = events_of(&missed);
    assert_eq!(events.len(), 1, "{}", missed.stderr);
    assert_eq!(events[0]["event"], "report");
    assert_eq!(events[0]["thresholds_ok"], false);
    assert_eq!(events[0]["exit_code"], 6);
}

#[test]
fn soak_warns_on_every_insecure_connect_in_events() {
    let dir = tempfile::tempdir().unwrap();
    let template = message_file(dir.path());
    let certs = Certs::generate();
    let listen = tls_listen(&certs);
    let port = listen.addr.port().to_string();
    let run = json_run(
        &[
            "soak",
            "--host",
            "127.0.0.1",
            "--port",
            &port,
            "--tls",
            "--insecure",
            "--template",
            &template,
            "--connections",
            "2",
            "--messages",
            "10",
            "--live",
            "always",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let events = events_of(&run);
    let warnings = named(&events, "security_warning");
    assert!(warnings.len() >= 2, "{}", run.stderr);
    assert!(warnings
        .iter()
        .all(|w| w["code"] == "MLLP_TLS_VERIFY_DISABLED"));
    assert_eq!(events.last().unwrap()["event"], "report");
}
