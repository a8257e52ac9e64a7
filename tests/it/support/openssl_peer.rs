//! TLS peers that are not ours: `openssl s_server` on a port of its own choosing, killed on
//! drop: TLS 1.1 only (`-tls1_1 -cipher DEFAULT@SECLEVEL=0`), or TLS 1.2 requiring a client
//! certificate. A missing openssl fails the test under `CI` (the CI script installs it) and
//! skips otherwise; an openssl that cannot serve TLS 1.1 here skips always, saying why.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct OpensslPeer {
    child: Child,
    pub port: u16,
}

impl OpensslPeer {
    /// Serves `cert`/`key` over TLS 1.1 only, or `None` (with a note on stderr) when this
    /// machine's openssl cannot.
    pub fn tls11(test: &str, cert: &Path, key: &Path) -> Option<OpensslPeer> {
        let peer = Self::serve(
            test,
            &["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"],
            cert,
            key,
        )?;
        if let Err(why) = peer.speaks_tls11() {
            eprintln!("SKIPPED {test}: this openssl cannot serve TLS 1.1 ({why})");
            return None;
        }
        Some(peer)
    }

    /// Serves `cert`/`key` over TLS 1.2, requiring a client certificate issued by `ca`: such a
    /// server refuses a client without one by a bare `handshake_failure` alert.
    pub fn tls12_requiring_client_cert(
        test: &str,
        cert: &Path,
        key: &Path,
        ca: &Path,
    ) -> Option<OpensslPeer> {
        let ca = ca.display().to_string();
        Self::serve(
            test,
            &["-tls1_2", "-Verify", "1", "-CAfile", &ca],
            cert,
            key,
        )
    }

    /// `openssl s_server ARGS` with `cert`/`key` on a free loopback port.
    fn serve(test: &str, args: &[&str], cert: &Path, key: &Path) -> Option<OpensslPeer> {
        if let Err(e) = Command::new("openssl").arg("version").output() {
            let why = format!("openssl not runnable: {e}");
            if std::env::var_os("CI").is_some() {
                panic!("{test}: {why}; CI is set, so openssl is required (.ci/run installs it)");
            }
            eprintln!("SKIPPED {test}: {why} (install openssl; under CI this fails)");
            return None;
        }
        let mut child = Command::new("openssl")
            .arg("s_server")
            .args(args)
            .arg("-cert")
            .arg(cert)
            .arg("-key")
            .arg(key)
            .args(["-accept", "127.0.0.1:0"])
            // The system configuration may raise the floor past TLS 1.1: leave it out.
            .env("OPENSSL_CONF", "/dev/null")
            // s_server ends when its stdin does: keep it open.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdout = child.stdout.take()?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(port) = line
                    .strip_prefix("ACCEPT ")
                    .and_then(|addr| addr.rsplit(':').next())
                    .and_then(|p| p.parse::<u16>().ok())
                {
                    let _ = tx.send(port);
                }
            }
        });
        let port = rx.recv_timeout(Duration::from_secs(10)).ok();
        let mut peer = OpensslPeer { child, port: 0 };
        let Some(port) = port else {
            eprintln!(
                "SKIPPED {test}: openssl s_server {} did not start here",
                args.join(" ")
            );
            return None;
        };
        peer.port = port;
        Some(peer)
    }

    /// The peer really completes a TLS 1.1 handshake (so a refusal later is ours).
    fn speaks_tls11(&self) -> Result<(), String> {
        let out = Command::new("openssl")
            .args(["s_client", "-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"])
            .args(["-connect", &format!("127.0.0.1:{}", self.port)])
            .env("OPENSSL_CONF", "/dev/null")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout);
        if text.contains("Protocol  : TLSv1.1") || text.contains("Protocol: TLSv1.1") {
            Ok(())
        } else {
            Err(format!(
                "s_client could not connect with TLS 1.1 (exit {})",
                out.status
            ))
        }
    }
}

impl Drop for OpensslPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
