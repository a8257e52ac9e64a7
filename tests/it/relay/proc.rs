//! `mllp relay` as a child process: JSON events from stderr, the bound address from the first;
//! every line of stderr and stdout checked for the payload marker, the test failing on it.

use crate::support::no_payload::MARKER;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

pub struct RelayProc {
    child: Child,
    #[allow(dead_code)]
    pub events: mpsc::Receiver<Value>,
    pub addr: SocketAddr,
    /// The first line of stderr or stdout that carried the payload marker.
    leak: Arc<Mutex<Option<String>>>,
}

impl RelayProc {
    /// Start `mllp --log-format json relay --listen 0 --to TO ARGS`.
    pub fn start(to: &str, args: &[&str]) -> RelayProc {
        Self::start_on(0, to, args)
    }

    /// Start on `port` (one a killed relay held), trying again while the port is still taken.
    pub fn start_at(port: u16, to: &str, args: &[&str]) -> RelayProc {
        for _ in 0..50 {
            if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Self::start_on(port, to, args)
    }

    fn start_on(port: u16, to: &str, args: &[&str]) -> RelayProc {
        let port = port.to_string();
        let mut child = Command::new(crate::support::mllp_bin())
            .args([
                "--log-format",
                "json",
                "relay",
                "--listen",
                &port,
                "--to",
                to,
            ])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mllp relay");
        let leak = Arc::new(Mutex::new(None));
        let stdout = child.stdout.take().unwrap();
        let seen = leak.clone();
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = BufReader::new(stdout).read_to_end(&mut text);
            let text = String::from_utf8_lossy(&text);
            if let Some(line) = text.lines().find(|line| line.contains(MARKER)) {
                seen.lock()
                    .unwrap()
                    .get_or_insert(format!("stdout: {line}"));
            }
        });
        let stderr = child.stderr.take().unwrap();
        let (tx, events) = mpsc::channel();
        let seen = leak.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if line.contains(MARKER) {
                    seen.lock()
                        .unwrap()
                        .get_or_insert(format!("stderr: {line}"));
                }
                let value =
                    serde_json::from_str(&line).unwrap_or_else(|_| Value::String(line.clone()));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let first = events
            .recv_timeout(Duration::from_secs(15))
            .expect("no listening event");
        if let Some(line) = leak.lock().unwrap().as_ref() {
            panic!("relay output leaks payload: marker {MARKER:?} found in {line:?}");
        }
        assert_eq!(first["event"], "listening", "first event: {first}");
        let addr = first["addr"].as_str().unwrap().parse().unwrap();
        RelayProc {
            child,
            events,
            addr,
            leak,
        }
    }

    /// Panics if any line so far carried the payload marker.
    pub fn assert_no_payload(&self) {
        if let Some(line) = self.leak.lock().unwrap().as_ref() {
            panic!("relay output leaks payload: marker {MARKER:?} found in {line:?}");
        }
    }

    /// The events until `pred` accepts one (the last), within a few seconds.
    #[allow(dead_code)]
    pub fn events_until(&self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let Ok(event) = self.events.recv_timeout(left) else {
                panic!("no such event in time; seen: {seen:#?}");
            };
            self.assert_no_payload();
            let done = pred(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
    }

    /// Its process id, for /proc.
    #[allow(dead_code)]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stop it as an operator would (SIGTERM) and wait for it; every event it wrote.
    #[allow(dead_code)]
    pub fn terminate(mut self) -> Vec<Value> {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "SIGTERM to the relay");
        let _ = self.child.wait();
        // Lines written just before the end may still be on their way to the reader.
        std::thread::sleep(Duration::from_millis(20));
        self.assert_no_payload();
        self.events.try_iter().collect()
    }

    /// Kill it outright (SIGKILL), as a crash would.
    #[allow(dead_code)]
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RelayProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(Duration::from_millis(20));
        if !std::thread::panicking() {
            self.assert_no_payload();
        }
    }
}

/// The sweep is wired in: a record the relay cannot open is named on stderr, and a marker in
/// its path is caught there.
#[test]
#[should_panic(expected = "leaks payload")]
fn relay_stderr_is_swept() {
    let path = format!("/nonexistent/{MARKER}/record.db");
    RelayProc::start("127.0.0.1:9", &["--record", &path]);
}
