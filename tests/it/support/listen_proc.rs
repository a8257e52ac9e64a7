//! `mllp listen` as a child process: started on port 0 (or a given port, to stand in for one that
//! was killed), its JSON events read line by line from stderr and each checked for the payload
//! marker, stopped with a signal. Every wait is bounded.

use super::no_payload::MARKER;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(15);

pub struct ListenProc {
    child: Child,
    events: mpsc::Receiver<Value>,
    pub addr: SocketAddr,
    stdout: Option<std::thread::JoinHandle<Vec<u8>>>,
    /// The first stderr line that carried the payload marker; the test fails on it.
    leak: Arc<Mutex<Option<String>>>,
}

impl ListenProc {
    /// Start `mllp --log-format json listen --port 0 ARGS` and wait for its `listening` event.
    pub fn start(args: &[&str]) -> ListenProc {
        Self::start_with(args, Stdio::piped())
    }

    /// Start on `port` (one a killed listener held), waiting for the port to be free.
    pub fn start_at(port: u16, args: &[&str]) -> ListenProc {
        Self::launch_on(port, args, Stdio::piped(), true, |_| {})
    }

    /// Start with stdout already closed at its reading end (writes fail with EPIPE).
    pub fn start_with_closed_stdout(args: &[&str]) -> ListenProc {
        Self::launch(args, Stdio::piped(), false)
    }

    pub fn start_with(args: &[&str], stdout: Stdio) -> ListenProc {
        Self::launch(args, stdout, true)
    }

    /// Start with the open-descriptor limit (soft and hard) lowered to `limit`.
    pub fn start_with_fd_limit(args: &[&str], limit: u64) -> ListenProc {
        use std::os::unix::process::CommandExt;
        Self::launch_with(args, Stdio::piped(), true, |command| {
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    let rlimit = libc::rlimit {
                        rlim_cur: limit,
                        rlim_max: limit,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &rlimit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        })
    }

    fn launch(args: &[&str], stdout: Stdio, read_stdout: bool) -> ListenProc {
        Self::launch_with(args, stdout, read_stdout, |_| {})
    }

    fn launch_with(
        args: &[&str],
        stdout: Stdio,
        read_stdout: bool,
        configure: impl FnOnce(&mut Command),
    ) -> ListenProc {
        Self::launch_on(0, args, stdout, read_stdout, configure)
    }

    /// Start `mllp --log-format json listen --dial ENGINE ARGS` and wait for its `dialling`
    /// event; `addr` is then the engine's.
    pub fn dialling(engine: SocketAddr, args: &[&str]) -> ListenProc {
        let dial = ["--dial".to_string(), engine.to_string()];
        Self::spawn(&dial, args, Stdio::piped(), true, |_| {})
    }

    fn launch_on(
        port: u16,
        args: &[&str],
        stdout: Stdio,
        read_stdout: bool,
        configure: impl FnOnce(&mut Command),
    ) -> ListenProc {
        let front = ["--port".to_string(), port.to_string()];
        Self::spawn(&front, args, stdout, read_stdout, configure)
    }

    /// Start `mllp --log-format json listen FRONT ARGS`; the first event says where it listens
    /// (`--port`) or what it dials (`--dial`).
    fn spawn(
        front: &[String],
        args: &[&str],
        stdout: Stdio,
        read_stdout: bool,
        configure: impl FnOnce(&mut Command),
    ) -> ListenProc {
        let mut command = Command::new(super::mllp_bin());
        command
            .args(["--log-format", "json", "listen"])
            .args(front)
            .args(args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(Stdio::piped());
        configure(&mut command);
        let mut child = command.spawn().expect("start mllp listen");
        let stderr = child.stderr.take().unwrap();
        let (tx, events) = mpsc::channel();
        let leak = Arc::new(Mutex::new(None));
        let seen = leak.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if line.contains(MARKER) {
                    seen.lock().unwrap().get_or_insert(line.clone());
                }
                let value =
                    serde_json::from_str(&line).unwrap_or_else(|_| Value::String(line.clone()));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stdout = child.stdout.take().filter(|_| read_stdout).map(|mut out| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = out.read_to_end(&mut bytes);
                bytes
            })
        });
        let first = events.recv_timeout(WAIT).expect("no listening event");
        let addr = match first["event"].as_str() {
            Some("listening") => &first["addr"],
            Some("dialling") => &first["target"],
            _ => panic!("first event: {first}"),
        };
        let addr = addr.as_str().unwrap().parse().unwrap();
        ListenProc {
            child,
            events,
            addr,
            stdout,
            leak,
        }
    }

    /// Panics if any stderr line so far carried the payload marker.
    pub fn assert_no_payload(&self) {
        if let Some(line) = self.leak.lock().unwrap().as_ref() {
            panic!("listen stderr leaks payload: marker {MARKER:?} found in {line:?}");
        }
    }

    /// The next event matching `pred`, skipping others; panics after the wait.
    pub fn wait_event(&self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let next = self.events.recv_timeout(left);
            self.assert_no_payload();
            match next {
                Ok(v) if pred(&v) => return v,
                Ok(_) => {}
                Err(e) => panic!("no matching event: {e}"),
            }
        }
    }

    /// The next event, if one comes within `wait`.
    pub fn next_event(&self, wait: Duration) -> Option<Value> {
        let event = self.events.recv_timeout(wait).ok();
        self.assert_no_payload();
        event
    }

    /// Events up to and including the first matching `pred`.
    pub fn events_until(&self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let v = self.events.recv_timeout(WAIT).expect("event stream ended");
            self.assert_no_payload();
            let done = pred(&v);
            seen.push(v);
            if done {
                return seen;
            }
        }
    }

    pub fn signal(&self, name: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{name}");
    }

    /// The child's process ID.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Wait for the process to exit, without reading what is left of its output.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "listen did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait for exit; returns the status, the remaining events and everything printed on stdout.
    pub fn wait(mut self) -> (ExitStatus, Vec<Value>, Vec<u8>) {
        let status = self.wait_exit();
        let mut rest = Vec::new();
        while let Ok(v) = self.events.recv_timeout(WAIT) {
            rest.push(v);
        }
        self.assert_no_payload();
        let out = self
            .stdout
            .take()
            .map(|h| h.join().unwrap())
            .unwrap_or_default();
        (status, rest, out)
    }
}

impl Drop for ListenProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Lines written just before the end may still be on their way to the reader.
        std::thread::sleep(Duration::from_millis(20));
        if !std::thread::panicking() {
            self.assert_no_payload();
        }
    }
}

/// Matches events named `event`, for `wait_event` and `events_until`.
pub fn is(event: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["event"] == event
}

/// `mllp listen --postgres` (with `--dedupe` when asked) storing into a fresh database named
/// after `test`, and `sql` run there once the listener has made its table; the database's URL
/// and the listener.
pub async fn with_postgres(
    server: &str,
    test: &str,
    dedupe: bool,
    sql: &str,
) -> (String, ListenProc) {
    let url = super::pg::fresh_database(server, test).await;
    let mut args = vec!["--postgres", url.as_str()];
    if dedupe {
        args.push("--dedupe");
    }
    let listener = ListenProc::start(&args);
    super::pg::connect(&url)
        .await
        .batch_execute(sql)
        .await
        .unwrap();
    (url, listener)
}
