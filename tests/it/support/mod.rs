//! Shared test helpers: the built binary, temporary directories, and (as they land) the
//! scripted MLLP peer and generated certificates.

#![allow(dead_code)]

pub mod certs;
pub mod crowd;
pub mod interop_peer;
pub mod no_payload;
pub mod node_peer;
pub mod openssl_peer;
pub mod peer;
#[cfg(test)]
mod peer_selftest;
pub mod peer_wire;
pub mod python_peer;
pub mod run;
pub mod screen;
pub mod send_proc;

use std::path::PathBuf;

pub mod listen_proc;
pub mod mllp_client;

/// Path of the built `mllp` binary.
pub fn mllp_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mllp"))
}

/// A `Command` for the binary with an isolated environment.
pub fn mllp() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(mllp_bin());
    cmd.env_remove("NO_COLOR").env("MLLP_TEST", "1");
    cmd
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
