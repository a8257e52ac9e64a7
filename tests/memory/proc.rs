//! The process under test: `mllp --log-format json ARGS` as a child, its bound address from the
//! first event, its close causes counted, and its peak resident size read from /proc.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

/// One load at a time: two loaded processes would share the machine's cores and memory.
pub static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The bound every process must stay under with defaults, whatever its peers do.
pub const LIMIT_KIB: u64 = 512 * 1024;

pub struct Proc {
    child: Child,
    pub addr: SocketAddr,
    /// How many connections closed, by cause.
    pub causes: Arc<Mutex<BTreeMap<String, usize>>>,
    /// Held and never read when asked for: a stdout sink that stalls.
    _stdout: Option<ChildStdout>,
}

impl Proc {
    /// `mllp listen --port 0 ARGS`, stdout to nowhere.
    pub fn listen(args: &[&str]) -> Proc {
        Proc::start(&[&["listen", "--port", "0"], args].concat(), false)
    }

    /// `mllp listen --port 0 ARGS` whose stdout is a pipe nobody reads.
    pub fn listen_stalled_stdout(args: &[&str]) -> Proc {
        Proc::start(&[&["listen", "--port", "0"], args].concat(), true)
    }

    /// `mllp relay --listen 0 --to TO ARGS`.
    pub fn relay(to: SocketAddr, args: &[&str]) -> Proc {
        let to = to.to_string();
        Proc::start(
            &[&["relay", "--listen", "0", "--to", &to], args].concat(),
            false,
        )
    }

    fn start(args: &[&str], stall_stdout: bool) -> Proc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mllp"))
            .args(["--log-format", "json"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(if stall_stdout {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mllp");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = lines.next().expect("a first event").unwrap();
        let event: serde_json::Value = serde_json::from_str(&first).unwrap();
        assert_eq!(event["event"], "listening", "first event: {first}");
        let addr = event["addr"].as_str().unwrap().parse().unwrap();
        // The log is read so that writing it never holds the process up; close causes are
        // kept to explain a failure.
        let causes = Arc::new(Mutex::new(BTreeMap::new()));
        let seen = causes.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let Ok(event) = serde_json::from_str::<serde_json::Value>(&line) else {
                    continue;
                };
                if let Some(cause) = event["cause"].as_str() {
                    *seen.lock().unwrap().entry(cause.to_string()).or_insert(0) += 1;
                }
            }
        });
        let stdout = child.stdout.take();
        Proc {
            child,
            addr,
            causes,
            _stdout: stdout,
        }
    }

    /// The peak resident size so far, in KiB.
    pub fn peak_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// The close causes seen so far.
    pub fn causes(&self) -> BTreeMap<String, usize> {
        self.causes.lock().unwrap().clone()
    }

    /// Assert the peak is under the limit, and say it.
    pub fn assert_peak_within(&self, case: &str) {
        let peak = self.peak_kib();
        eprintln!("{case}: peak resident size {} MiB", peak / 1024);
        assert!(
            peak < LIMIT_KIB,
            "{case}: peak resident size {peak} KiB (limit {LIMIT_KIB} KiB); closes: {:?}",
            self.causes()
        );
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
