//! Two engines' outputs captured by `listen --sqlite`, compared store against store.

use super::diff;
use crate::support::adt::traffic;
use crate::support::listen_proc::ListenProc;
use crate::support::mllp;
use std::ffi::OsStr;

#[test]
fn stores_captured_by_listen_compare_like_files() {
    let dir = tempfile::tempdir().unwrap();
    let (_, messages) = traffic(31, 5);
    let old: String = messages.iter().map(|(_, m)| m.as_str()).collect();
    // The new engine writes the attending doctor's ID otherwise, in the admission alone.
    let new = old.replacen("|W^101^1||||", "|W^101^1||||X", 1);
    let mut stores = Vec::new();
    for (name, text) in [("old", &old), ("new", &new)] {
        let db = dir.path().join(format!("{name}.db"));
        let mut server = ListenProc::start(&["--sqlite", db.to_str().unwrap()]);
        let file = dir.path().join(format!("{name}.hl7"));
        std::fs::write(&file, text).unwrap();
        let out = mllp()
            .args(["send", "--host", &server.addr.to_string()])
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        server.signal("TERM");
        server.wait_exit();
        stores.push(db);
    }
    let run = diff(&[
        stores[0].as_os_str(),
        stores[1].as_os_str(),
        OsStr::new("--no-values"),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("19 pairs the same, 1 different, 0 only in A, 0 only in B"),
        "{}",
        run.stderr
    );
    let first = run.stdout.lines().next().unwrap();
    assert!(first.starts_with("MSG00000001  differs  "), "{first}");
    assert!(
        first.contains("old.db#1") && first.contains("new.db#1"),
        "{first}"
    );
    assert_eq!(run.stdout.lines().nth(1), Some("  PV1-7.1"));
}
