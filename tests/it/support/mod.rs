//! Shared test helpers: the built binary, temporary directories, and (as they land) the
//! scripted MLLP peer and generated certificates.

#![allow(dead_code)]

pub mod adt;
pub mod certs;
pub mod crowd;
pub mod engine;
pub mod fault_proxy;
pub mod haproxy;
pub mod interop_peer;
pub mod no_payload;
pub mod node_peer;
pub mod openssl_peer;
pub mod peer;
#[cfg(test)]
mod peer_selftest;
pub mod peer_wire;
pub mod pg;
pub mod ports;
pub mod proc_sample;
pub mod python_peer;
pub mod reverse;
pub mod run;
pub mod screen;
pub mod send_proc;
pub mod store;

use std::ffi::OsStr;
use std::path::PathBuf;

pub mod listen_proc;
pub mod mllp_client;

/// Path of the built `mllp` binary.
pub fn mllp_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mllp"))
}

/// A command for the binary with an isolated environment, whose stderr is checked for the
/// payload marker when it ends.
pub fn mllp() -> Mllp {
    let mut cmd = assert_cmd::Command::new(mllp_bin());
    cmd.env_remove("NO_COLOR");
    Mllp(cmd)
}

/// `assert_cmd::Command` for the binary; each way to run it checks what it wrote.
pub struct Mllp(assert_cmd::Command);

impl Mllp {
    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.0.arg(arg);
        self
    }

    pub fn args<S: AsRef<OsStr>>(&mut self, args: impl IntoIterator<Item = S>) -> &mut Self {
        self.0.args(args);
        self
    }

    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.0.env(key, value);
        self
    }

    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Self {
        self.0.env_remove(key);
        self
    }

    pub fn current_dir(&mut self, dir: impl AsRef<std::path::Path>) -> &mut Self {
        self.0.current_dir(dir);
        self
    }

    pub fn timeout(&mut self, timeout: std::time::Duration) -> &mut Self {
        self.0.timeout(timeout);
        self
    }

    pub fn write_stdin(&mut self, stdin: impl Into<Vec<u8>>) -> &mut Self {
        self.0.write_stdin(stdin);
        self
    }

    pub fn output(&mut self) -> std::io::Result<std::process::Output> {
        let out = self.0.output()?;
        no_payload::assert_output_clean("mllp", &out);
        Ok(out)
    }

    pub fn assert(&mut self) -> assert_cmd::assert::Assert {
        let assert = self.0.assert();
        no_payload::assert_output_clean("mllp", assert.get_output());
        assert
    }
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
