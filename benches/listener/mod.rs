//! `mllp listen` as a child of a benchmark: started on port 0 with the benchmark's arguments,
//! its address taken from the first stderr line (`listening on ADDR`, or the JSON event's
//! `addr`), and the rest of stderr handed over line by line so the server never blocks on it.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct Listener {
    pub child: Child,
    pub addr: SocketAddr,
    /// Every stderr line after the first, for the benchmarks that follow the events.
    #[allow(dead_code)]
    pub lines: mpsc::Receiver<String>,
}

impl Listener {
    /// `bin ARGS`, where ARGS run `listen --port 0` with the global flags first.
    pub fn start<S: AsRef<std::ffi::OsStr>>(bin: &str, args: &[S]) -> Listener {
        let mut child = Command::new(bin)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start mllp listen");
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let first = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("listen said nothing");
        let addr = address(&first).unwrap_or_else(|| panic!("no address in {first:?}"));
        Listener { child, addr, lines }
    }
}

/// The address in the first line, human or JSON.
fn address(line: &str) -> Option<SocketAddr> {
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(event) => event["addr"].as_str()?.parse().ok(),
        Err(_) => line.trim().rsplit(' ').next()?.parse().ok(),
    }
}
