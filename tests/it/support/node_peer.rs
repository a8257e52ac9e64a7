//! node-hl7-server and node-hl7-client (npm) as an independent MLLP peer: the pinned packages
//! `.ci/run` installs under `tests/interop-node/`, the scripts committed next to them, and their
//! processes killed on drop. A missing peer fails the test under `CI`, skips otherwise.

use super::interop_peer::{InteropPeer, LineServer, WAIT};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The versions `tests/interop-node/package-lock.json` pins.
pub const PINNED: [(&str, &str); 2] = [("node-hl7-server", "2.5.0"), ("node-hl7-client", "2.3.1")];

const INSTALL: &str = "cd tests/interop-node && npm ci --no-audit --no-fund";

/// node with the pinned packages installed.
pub struct NodePeer {
    dir: PathBuf,
}

impl NodePeer {
    /// The peer, or `None` (with a note on stderr) when node or the packages are missing and `CI`
    /// is unset. Under `CI` a missing peer fails the test: the interop tests must run there.
    pub fn find(test: &str) -> Option<NodePeer> {
        let dir = super::repo_root().join("tests/interop-node");
        match Command::new("node").arg("--version").output() {
            Ok(out) if out.status.success() => {}
            Ok(_) => return Self::missing(test, "node --version failed"),
            Err(e) => return Self::missing(test, &format!("node not runnable: {e}")),
        }
        for (package, pinned) in PINNED {
            let manifest = dir.join("node_modules").join(package).join("package.json");
            let Ok(text) = std::fs::read_to_string(&manifest) else {
                return Self::missing(test, &format!("{package} is not installed"));
            };
            let json: serde_json::Value = serde_json::from_str(&text).unwrap();
            if json["version"] != pinned {
                eprintln!(
                    "{test}: {package} {} installed; these tests pin {pinned} ({INSTALL})",
                    json["version"]
                );
            }
        }
        Some(NodePeer { dir })
    }

    fn missing(test: &str, why: &str) -> Option<NodePeer> {
        if std::env::var_os("CI").is_some() {
            panic!("{test}: {why}; CI is set, so the interop peer is required ({INSTALL})");
        }
        eprintln!("SKIPPED {test}: {why} (install with {INSTALL}; under CI this fails)");
        None
    }

    /// `client.js`: sends the messages of `file` (blank-line separated) one at a time.
    pub fn client(&self, port: u16, file: &Path) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new("node");
        cmd.arg(self.dir.join("client.js"))
            .arg(port.to_string())
            .arg(file)
            .timeout(WAIT);
        cmd
    }
}

impl InteropPeer for NodePeer {
    /// `server.js`, on node-hl7-server.
    fn server(&self, code: &str) -> LineServer {
        let mut cmd = Command::new("node");
        cmd.arg(self.dir.join("server.js")).arg(code);
        LineServer::start(cmd, "node-hl7-server script")
    }
}
