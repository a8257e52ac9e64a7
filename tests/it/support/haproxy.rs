//! A real HAProxy in TCP mode in front of listeners, for the scale-out tests: the binary from
//! `MLLP_TEST_HAPROXY` (set by `.ci/run`), else `haproxy` on PATH or in /usr/sbin; skipped with
//! one line when there is none, failed under CI.

use std::io::Write;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Haproxy {
    child: Child,
    pub addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The haproxy binary, or `None` after one line saying the test is skipped.
pub fn binary() -> Option<PathBuf> {
    let found = std::env::var_os("MLLP_TEST_HAPROXY")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path)
                    .chain([PathBuf::from("/usr/sbin")])
                    .map(|d| d.join("haproxy"))
                    .find(|p| p.is_file())
            })
        });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "no haproxy: under CI this test needs it (.ci/run installs it)"
        );
        eprintln!("skipped: no haproxy (apt-get install haproxy, or set MLLP_TEST_HAPROXY)");
    }
    found
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Haproxy {
    /// Balance round-robin over `servers`, each health-checked every 200 ms; `server_options`
    /// is appended to each `server` line (e.g. `send-proxy-v2 check-send-proxy`).
    pub fn start(bin: &PathBuf, servers: &[SocketAddr], server_options: &str) -> Haproxy {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let mut config = format!(
            "global\n  maxconn 1024\n\
             defaults\n  mode tcp\n  timeout connect 1s\n  timeout client 30s\n  timeout server 30s\n  retries 3\n  option redispatch\n\
             frontend mllp\n  bind 127.0.0.1:{port}\n  default_backend listeners\n\
             backend listeners\n  balance roundrobin\n"
        );
        for (i, server) in servers.iter().enumerate() {
            config.push_str(&format!(
                "  server l{i} {server} check inter 200ms fall 1 rise 1 {server_options}\n"
            ));
        }
        let file = dir.path().join("haproxy.cfg");
        std::fs::File::create(&file)
            .unwrap()
            .write_all(config.as_bytes())
            .unwrap();
        let child = Command::new(bin)
            .args(["-db", "-f"])
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start haproxy");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "haproxy did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Haproxy {
            child,
            addr,
            _dir: dir,
        }
    }
}
