//! `diff`, `deid` and `check` at their edges: a side with nothing in it, a README beside the
//! messages, a key path no message has, and `-q`, which keeps the final summary.

use super::diff;
use crate::support::mllp;
use std::ffi::OsStr;
use std::path::Path;

fn two(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("a.hl7");
    let text = "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|K1|P|2.5\rPID|1||P1^^^H\r\
                MSH|^~\\&|A|B|C|D|20240101||ADT^A01|K2|P|2.5\rPID|1||P2^^^H\r";
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn an_empty_side_leaves_every_message_of_the_other_only_on_its_side() {
    let dir = tempfile::tempdir().unwrap();
    let a = two(dir.path());
    let empty = dir.path().join("empty.hl7");
    std::fs::write(&empty, "").unwrap();
    let empty_dir = dir.path().join("none");
    std::fs::create_dir(&empty_dir).unwrap();
    for b in [&empty, &empty_dir] {
        let run = diff(&[a.as_os_str(), b.as_os_str()]);
        assert_eq!(run.code, 1, "{b:?}: {}", run.stderr);
        assert!(run.stderr.contains("2 only in A"), "{}", run.stderr);
        let run = diff(&[b.as_os_str(), a.as_os_str()]);
        assert_eq!(run.code, 1, "{b:?}: {}", run.stderr);
        assert!(run.stderr.contains("2 only in B"), "{}", run.stderr);
    }
}

#[test]
fn a_file_that_is_not_hl7_in_a_directory_is_left_out_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    std::fs::create_dir(&a).unwrap();
    two(&a);
    let b = dir.path().join("b");
    std::fs::create_dir(&b).unwrap();
    two(&b);
    std::fs::write(b.join("README"), "These are the test messages.\n").unwrap();
    let run = diff(&[a.as_os_str(), b.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("README"), "{}", run.stderr);
    // deid -r: the README left out, the messages written.
    let key = crate::deid::new_key(dir.path(), "k.key");
    let out = dir.path().join("out");
    let run = crate::deid::deid(&[
        OsStr::new("-r"),
        b.as_os_str(),
        OsStr::new("--key-file"),
        key.as_os_str(),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("README"), "{}", run.stderr);
    assert!(out.join("a.hl7").exists());
    assert!(!out.join("README").exists());
}

#[test]
fn a_key_path_no_message_has_is_warned_with_how_many_lacked_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = two(dir.path());
    let run = diff(&[
        a.as_os_str(),
        a.as_os_str(),
        OsStr::new("--key"),
        OsStr::new("PID-3.9"),
    ]);
    let warning = run
        .stderr
        .lines()
        .find(|l| l.contains("PID-3.9"))
        .unwrap_or_else(|| panic!("a warning naming the path:\n{}", run.stderr));
    assert!(warning.contains("4 messages"), "{warning}");
}

#[test]
fn quiet_keeps_the_final_summary_of_diff_deid_and_check() {
    let dir = tempfile::tempdir().unwrap();
    let a = two(dir.path());
    let run = diff(&[OsStr::new("-q"), a.as_os_str(), a.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("2 pairs the same"), "{}", run.stderr);
    let out = mllp()
        .args([OsStr::new("-q"), OsStr::new("check"), a.as_os_str()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("checked 2 messages"), "{stderr}");
    let key = crate::deid::new_key(dir.path(), "k.key");
    let run = crate::deid::deid(&[
        OsStr::new("-q"),
        a.as_os_str(),
        OsStr::new("--key-file"),
        key.as_os_str(),
        OsStr::new("--out"),
        OsStr::new("-"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("2 messages read"), "{}", run.stderr);
}
