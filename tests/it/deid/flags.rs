//! The key, the policy, the output and the report, through the binary.

use super::{deid, get, messages, new_key, write_traffic};
use crate::support::{mllp, no_payload::MARKER};
use std::ffi::OsStr;

fn s(text: &str) -> &OsStr {
    OsStr::new(text)
}

const ADT: &str = "MSH|^~\\&|ADT|GH|LAB|GH|20240105083000||ADT^A01^ADT_A01|C1|P|2.5\rPID|1||4711235^^^GH^MR||NAMEMARKER^Winnifred||19800512\rZPI|1|ZPIVALUE\r";

#[test]
fn without_a_key_nothing_is_written_and_new_key_makes_a_private_one_once() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("adt.hl7");
    std::fs::write(&input, ADT.replace("NAMEMARKER", MARKER)).unwrap();
    let out = dir.path().join("out");
    let run = deid(&[input.as_os_str(), s("--out"), out.as_os_str()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--key-file") && run.stderr.contains("--new-key"),
        "{}",
        run.stderr
    );
    assert!(!out.exists());
    let missing = dir.path().join("missing.key");
    let run = deid(&[
        input.as_os_str(),
        s("--key-file"),
        missing.as_os_str(),
        s("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--new-key"), "{}", run.stderr);

    let key = new_key(dir.path(), "site.key");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let before = std::fs::read(&key).unwrap();
    let run = deid(&[s("--new-key"), key.as_os_str()]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("never overwritten"), "{}", run.stderr);
    assert_eq!(std::fs::read(&key).unwrap(), before);

    let bad = dir.path().join("bad.key");
    std::fs::write(&bad, "SECRETISH").unwrap();
    let run = deid(&[
        input.as_os_str(),
        s("--key-file"),
        bad.as_os_str(),
        s("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("64 hexadecimal digits"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains("SECRETISH"),
        "the key file's content shown"
    );

    // With the key: written, and the report names paths and counts, never a value.
    let run = deid(&[
        input.as_os_str(),
        s("--key-file"),
        key.as_os_str(),
        s("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("PID-5.1  1"), "{}", run.stderr);
    let written = std::fs::read_to_string(out.join("adt.hl7")).unwrap();
    assert!(!written.contains(MARKER) && !written.contains("Winnifred"));
    assert!(
        written.contains("|ZPIVALUE\r"),
        "a site's own segment is kept without a policy"
    );
}

#[test]
fn a_policy_adds_keeps_and_blanks_in_toml_or_json() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("adt.hl7");
    std::fs::write(&input, ADT).unwrap();
    let key = new_key(dir.path(), "k");
    let toml = dir.path().join("site.toml");
    std::fs::write(
        &toml,
        "[paths]\n\"ZPI-2\" = \"hash\"\n\"PID-7\" = \"keep\"\n\"PID-5\" = \"blank\"\n",
    )
    .unwrap();
    let json = dir.path().join("site.json");
    std::fs::write(
        &json,
        r#"{"paths":{"ZPI-2":"hash","PID-7":"keep","PID-5":"blank"}}"#,
    )
    .unwrap();
    let mut outputs = Vec::new();
    for policy in [&toml, &json] {
        let run = deid(&[
            input.as_os_str(),
            s("--key-file"),
            key.as_os_str(),
            s("--policy"),
            policy.as_os_str(),
            s("--out"),
            s("-"),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let m = run.stdout.as_bytes();
        assert_ne!(get(m, "ZPI-2"), "ZPIVALUE");
        assert_eq!(get(m, "ZPI-2").len(), "ZPIVALUE".len());
        assert_eq!(get(m, "PID-7"), "19800512");
        assert_eq!(get(m, "PID-5"), "");
        assert_ne!(get(m, "PID-3.1"), "4711235");
        outputs.push(run.stdout);
    }
    assert_eq!(outputs[0], outputs[1]);

    for (text, names) in [
        ("[paths]\n\"PID-x\" = \"hash\"\n", "paths.\"PID-x\""),
        ("[paths]\n\"PID-3\" = \"scramble\"\n", "--policy"),
        ("[paths]\n\"MSH-2\" = \"hash\"\n", "delimiters"),
        ("[rules]\n", "--policy"),
    ] {
        std::fs::write(&toml, text).unwrap();
        let run = deid(&[
            input.as_os_str(),
            s("--key-file"),
            key.as_os_str(),
            s("--policy"),
            toml.as_os_str(),
            s("--out"),
            s("-"),
        ]);
        assert_eq!(run.code, 2, "{text}");
        assert!(run.stderr.contains(names), "{text}: {}", run.stderr);
        assert!(run.stdout.is_empty());
    }
}

#[test]
fn stdout_feeds_send_and_where_leaves_messages_out() {
    let dir = tempfile::tempdir().unwrap();
    let (_, input) = write_traffic(dir.path(), 3, 5);
    let key = new_key(dir.path(), "k");
    let run = deid(&[
        input.as_os_str(),
        s("-r"),
        s("--key-file"),
        key.as_os_str(),
        s("--out"),
        s("-"),
        s("--where"),
        s("MSH-9.2!=A02"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("20 messages read, 15 written, 5 left out by --where"),
        "{}",
        run.stderr
    );
    assert_eq!(messages(run.stdout.as_bytes()).len(), 15);
    let out = mllp()
        .args(["send", "--dry-run", "--json"])
        .write_stdin(run.stdout.clone())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        listed.lines().filter(|l| l.contains("MSG0000")).count(),
        15,
        "{listed}"
    );
}

#[test]
fn the_output_directory_is_new_or_empty_and_each_input_gets_its_own_file() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key(dir.path(), "k");
    let (_, input) = write_traffic(dir.path(), 5, 2);
    let nested = input.join("late");
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::copy(input.join("a03.hl7"), nested.join("a03.hl7")).unwrap();
    let out = dir.path().join("out");
    let run = deid(&[
        input.as_os_str(),
        s("-r"),
        s("--key-file"),
        key.as_os_str(),
        s("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut names: Vec<String> = walk(&out);
    names.sort();
    assert_eq!(
        names,
        ["a01.hl7", "a02.hl7", "a03.hl7", "a08.hl7", "late/a03.hl7"]
    );
    // A second run into it: refused, nothing changed.
    let run = deid(&[
        input.as_os_str(),
        s("-r"),
        s("--key-file"),
        key.as_os_str(),
        s("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not empty"), "{}", run.stderr);
    // Two inputs of the same name from different places: refused before anything is written.
    let fresh = dir.path().join("fresh");
    let run = deid(&[
        input.join("a03.hl7").as_os_str(),
        nested.join("a03.hl7").as_os_str(),
        s("--key-file"),
        key.as_os_str(),
        s("--out"),
        fresh.as_os_str(),
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("a03.hl7"), "{}", run.stderr);
    assert!(!fresh.exists());
    // An input that breaks off: its file is not left half written.
    let broken = dir.path().join("broken.hl7");
    std::fs::write(
        &broken,
        "\x0bMSH|^~\\&|A|B|||20240101||ADT^A01|X1|P|2.5\rPID|1||123\r\x1c\r\x0bMSH|^~\\&|A|B|||20240101||ADT^A01|X2|P|2.5\r",
    )
    .unwrap();
    let partial = dir.path().join("partial");
    let whole = input.join("a03.hl7");
    let run = deid(&[
        whole.as_os_str(),
        broken.as_os_str(),
        s("--key-file"),
        key.as_os_str(),
        s("--out"),
        partial.as_os_str(),
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(walk(&partial), ["a03.hl7"]);
    // The report counts as written only what a kept file holds.
    let kept = messages(&std::fs::read(partial.join("a03.hl7")).unwrap()).len();
    assert_eq!(kept, 2);
    assert!(
        run.stderr.contains("3 messages read, 2 written to 1 file;"),
        "{}",
        run.stderr
    );
    // And the values replaced in it alone.
    let alone = deid(&[
        whole.as_os_str(),
        s("--key-file"),
        key.as_os_str(),
        s("--out"),
        s("-"),
    ]);
    let total = |text: &str| {
        text.lines()
            .next()
            .unwrap()
            .split("; ")
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert_eq!(total(&run.stderr), total(&alone.stderr));
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                found.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found
}

#[test]
fn never_writes_over_an_input_or_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key(dir.path(), "k");
    let (_, input) = write_traffic(dir.path(), 9, 2);
    let file = input.join("a01.hl7");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    let before = |p: &std::path::Path| std::fs::read(p).unwrap();
    let (key_bytes, file_bytes) = (before(&key), before(&file));
    let k = key.as_os_str();
    for args in [
        vec![file.as_os_str(), s("--key-file"), k, s("--out"), k],
        vec![
            file.as_os_str(),
            s("--key-file"),
            k,
            s("--out"),
            file.as_os_str(),
        ],
        vec![
            input.as_os_str(),
            s("-r"),
            s("--key-file"),
            k,
            s("--out"),
            input.as_os_str(),
        ],
        vec![s("--new-key"), file.as_os_str()],
        vec![s("--new-key"), k],
        vec![s("--new-key"), link.as_os_str()],
    ] {
        let run = deid(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert_eq!(before(&key), key_bytes, "{args:?}");
        assert_eq!(before(&file), file_bytes, "{args:?}");
        assert_eq!(walk(&input).len(), 4, "{args:?}");
    }
}
