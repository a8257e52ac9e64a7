//! `mllp deid` through the binary: what is replaced and what stays, one person under one key
//! across messages, files and runs, dates that keep their intervals, the key and the policy.

mod batch;
mod flags;
mod orders;
mod patients;
mod replaced;

use crate::support::{adt, mllp, run::Run};
use std::path::{Path, PathBuf};

/// A day of ADT traffic for `n` patients, one file per event kind, in `dir/in`.
pub fn write_traffic(dir: &Path, seed: u64, n: usize) -> (Vec<adt::Patient>, PathBuf) {
    let (patients, messages) = adt::traffic(seed, n);
    let input = dir.join("in");
    std::fs::create_dir_all(&input).unwrap();
    for kind in ["a01", "a02", "a08", "a03"] {
        let text: String = messages
            .iter()
            .filter(|(k, _)| k == kind)
            .map(|(_, m)| m.as_str())
            .collect();
        std::fs::write(input.join(format!("{kind}.hl7")), text).unwrap();
    }
    (patients, input)
}

/// A key in `dir`, made by the binary.
pub fn new_key(dir: &Path, name: &str) -> PathBuf {
    let key = dir.join(name);
    let out = mllp()
        .arg("deid")
        .arg("--new-key")
        .arg(&key)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    key
}

/// `mllp deid ARGS`, checked for the payload marker.
pub fn deid(args: &[&std::ffi::OsStr]) -> Run {
    let out = mllp().arg("deid").args(args).output().unwrap();
    Run::checked(&out, "deid")
}

/// The messages of a file, split at MSH.
pub fn messages(bytes: &[u8]) -> Vec<Vec<u8>> {
    let text = String::from_utf8_lossy(bytes);
    text.split("MSH|")
        .filter(|m| !m.is_empty())
        .map(|m| format!("MSH|{m}").into_bytes())
        .collect()
}

/// A value of a message by path, decoded.
pub fn get(message: &[u8], path: &str) -> String {
    let path: mllp::hl7::Path = path.parse().unwrap();
    let m = mllp::hl7::Message::new(message);
    String::from_utf8_lossy(&m.get(&path).decoded()).into_owned()
}
