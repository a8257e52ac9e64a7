//! `mllp diff` and `mllp deid` on a million messages, each beside a baseline measured in the
//! same run on the same files:
//!
//! - diff: two sides of PAIRS ADT messages (1% of pairs differing in a field, 0.1% of messages
//!   only on one side), beside `cat` reading both files; then a small side against a large one
//!   both ways round, whose peak RSS follows the small side (it alone is held, as keys).
//! - deid: MESSAGES ADT messages with next of kin, guarantor and insurance, to `--out -`
//!   (stdout to /dev/null), beside the same run under a policy with no rule (reading, splitting
//!   and writing alone); messages per second of wall and of CPU time.
//!
//! `cargo bench --bench migrate` (PAIRS=N, MESSAGES=N to change the counts).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_mllp");

fn count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// An admission with the people around the patient, about 700 bytes; `variant` changes the
/// patient's given name (a planted difference).
fn adt(i: usize, variant: bool, out: &mut String) {
    let given = if variant { "JOHNNY" } else { "JOHN" };
    let _ = write!(
        out,
        "MSH|^~\\&|ADT|GOODHEALTH|LAB|GOODHEALTH|20240101120000||ADT^A01^ADT_A01|MSG{i:09}|P|2.5\r\
         EVN|A01|20240101120000\r\
         PID|1||{i:08}^^^GH^MR~{ssn:09}^^^SSA^SS||DOE{f}^{given}^Q||19{yy:02}0{m}1{d}|M|||{n} MAIN ST^^SPRINGFIELD^OR^97{z:03}^USA||(503)555-{p:04}^PRN^PH||||||AC{i:08}^^^GH^AN|{ssn:09}\r\
         NK1|1|DOE{f}^JANE|SPO|{n} MAIN ST^^SPRINGFIELD^OR^97{z:03}|(503)555-{p:04}||||||||||F|19{yy:02}0{m}2{d}\r\
         PV1|1|I|W^101^1||||{doc:06}^HOUSE^GREG|||MED||||||||V{i:09}|||||||||||||||||||||||||20240101120000\r\
         GT1|1|AC{i:08}^^^GH|DOE{f}^{given}||{n} MAIN ST^^SPRINGFIELD^OR^97{z:03}|(503)555-{p:04}||19{yy:02}0{m}1{d}|M||SEL|{ssn:09}\r\
         IN1|1|PLAN7|INS01^^^INS|ACME HEALTH PLAN||||||||||||DOE{f}^{given}|SEL|19{yy:02}0{m}1{d}|{n} MAIN ST^^SPRINGFIELD^OR^97{z:03}|||||||||||||||||POL{i:08}|||||||||||||INS{i:08}\r",
        ssn = 100_000_000 + i * 7 % 899_999_999,
        f = i % 5000,
        yy = 30 + i % 60,
        m = 1 + i % 9,
        d = i % 9,
        n = 1 + i % 9000,
        z = i % 1000,
        p = i % 10000,
        doc = i % 1000,
    );
}

/// `PAIRS` messages to `path`, from `first`; every 100th a variant when `vary`, every 1000th
/// left out when `gaps`.
fn write_side(path: &Path, first: usize, messages: usize, vary: bool, gaps: bool) -> u64 {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let mut text = String::with_capacity(1024);
    for i in first..first + messages {
        if gaps && i % 1000 == 999 {
            continue;
        }
        text.clear();
        adt(i, vary && i % 100 == 7, &mut text);
        out.write_all(text.as_bytes()).unwrap();
    }
    out.flush().unwrap();
    std::fs::metadata(path).unwrap().len()
}

/// Wall time, CPU time (user and system) and peak RSS in MiB of one child, stdout discarded.
// The child is reaped by wait4, which also gives its resource usage.
#[allow(clippy::zombie_processes)]
fn measure(program: &str, args: &[OsString]) -> (Duration, Duration, f64, i32) {
    let started = Instant::now();
    let child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child, with valid pointers to locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    let wall = started.elapsed();
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let cpu = tv(usage.ru_utime) + tv(usage.ru_stime);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (wall, cpu, usage.ru_maxrss as f64 / 1024.0, code)
}

fn main() {
    let pairs = count("PAIRS", 1_000_000);
    let messages = count("MESSAGES", 1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let os = |p: &Path| p.as_os_str().to_owned();
    let arg = |s: &str| OsString::from(s);

    // diff.
    let (a, b) = (dir.path().join("a.hl7"), dir.path().join("b.hl7"));
    let bytes = write_side(&a, 0, pairs, false, false) + write_side(&b, 0, pairs, true, true);
    let (cat, ..) = measure("cat", &[os(&a), os(&b)]);
    let (wall, cpu, rss, code) = measure(BIN, &[arg("diff"), os(&a), os(&b), arg("--no-values")]);
    assert_eq!(code, 1, "diff found no difference");
    println!(
        "mllp diff, {pairs} pairs ({:.0} MB in all, 1% differing, 0.1% on one side)",
        bytes as f64 / 1e6
    );
    println!(
        "  cat A B > /dev/null                {:>8.2} s",
        cat.as_secs_f64()
    );
    println!(
        "  mllp diff A B --no-values          {:>8.2} s  {:.1}x cat  {:.0} pairs/s  CPU {:.2} s  peak RSS {rss:.0} MB",
        wall.as_secs_f64(),
        wall.as_secs_f64() / cat.as_secs_f64(),
        pairs as f64 / wall.as_secs_f64(),
        cpu.as_secs_f64(),
    );
    // A tenth of the pairs on one side: that side alone is held, whichever it is.
    let small = dir.path().join("small.hl7");
    write_side(&small, 0, pairs / 10, false, false);
    for (x, y, label) in [
        (&small, &b, "small A, large B"),
        (&b, &small, "large A, small B"),
    ] {
        let (wall, _, rss, _) = measure(BIN, &[arg("diff"), os(x), os(y), arg("--no-values")]);
        println!(
            "  mllp diff, {label:<18}      {:>8.2} s  peak RSS {rss:.0} MB",
            wall.as_secs_f64()
        );
    }
    for f in [&a, &b, &small] {
        let _ = std::fs::remove_file(f);
    }

    // deid.
    let input = dir.path().join("day.hl7");
    let bytes = write_side(&input, 0, messages, false, false);
    let key = dir.path().join("bench.key");
    let made = Command::new(BIN)
        .args(["deid", "--new-key"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(made.success());
    let empty = dir.path().join("none.toml");
    std::fs::write(&empty, "standard = false\n").unwrap();
    let run = |policy: Option<&Path>| {
        let mut args = vec![
            arg("deid"),
            os(&input),
            arg("--key-file"),
            os(&key),
            arg("--out"),
            arg("-"),
        ];
        if let Some(p) = policy {
            args.extend([arg("--policy"), os(p)]);
        }
        let (wall, cpu, rss, code) = measure(BIN, &args);
        assert_eq!(code, 0);
        (wall, cpu, rss)
    };
    let (base, base_cpu, _) = run(Some(&empty));
    let (wall, cpu, rss) = run(None);
    let rate = |d: Duration| messages as f64 / d.as_secs_f64();
    println!(
        "mllp deid, {messages} messages ({:.0} MB), --out - to /dev/null",
        bytes as f64 / 1e6
    );
    println!(
        "  no rule (read, split, write)       {:>8.2} s  {:>9.0} msg/s  {:>9.0} msg/s of CPU",
        base.as_secs_f64(),
        rate(base),
        rate(base_cpu)
    );
    println!(
        "  standard policy                    {:>8.2} s  {:>9.0} msg/s  {:>9.0} msg/s of CPU  {:.2}x no rule  peak RSS {rss:.0} MB",
        wall.as_secs_f64(),
        rate(wall),
        rate(cpu),
        wall.as_secs_f64() / base.as_secs_f64(),
    );
}
