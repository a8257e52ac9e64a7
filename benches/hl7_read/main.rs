//! Reading fields out of HL7 messages, beside the Python libraries users would otherwise pick:
//!
//! `cargo bench --bench hl7_read -- [--messages N] [--runs R] [--bytes SIZE] [--scratch DIR]`
//!
//! Installs python-hl7 and hl7apy from PyPI into a virtual environment in the scratch directory
//! (versions pinned here), writes N ADT^A01 messages of 470 bytes (the `compare` workload), and
//! times getting PID-3.1 and PID-5 out of each message: with the library (`Message::new` and
//! two `get`s, in process), with python-hl7 (`hl7.parse`, then the two values) and with hl7apy
//! (`parse_message`, then the two values), each in its own process over the same messages. A
//! row per reader: the best of R runs per message, messages a second, and how many times
//! slower than the library. Then `mllp show --get PID-3.1 --get PID-5` (the release binary
//! beside this bench) over a file of SIZE bytes of the same messages, read from the page cache
//! (the file is read once before): MB/s, best of R. Python's figures are per message within the
//! process (start-up not counted).

mod python;
#[path = "../compare/workload.rs"]
mod workload;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MESSAGE_BYTES: usize = 470;

const USAGE: &str = "usage: cargo bench --bench hl7_read -- [--messages N (20000)] [--runs R (3)] \
[--bytes SIZE (1G; 0 skips the whole-file row)] [--scratch DIR (target/compare-peers)]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        println!("hl7_read: bench");
        return;
    }
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return;
    }
    let messages: usize = value("--messages").map_or(20_000, |v| v.parse().expect("--messages N"));
    let runs: usize = value("--runs").map_or(3, |v| v.parse().expect("--runs R"));
    let bytes: u64 = value("--bytes").map_or(1 << 30, |v| parse_size(&v));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let scratch = value("--scratch")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/compare-peers"));
    std::fs::create_dir_all(&scratch).expect("the scratch directory");

    let file = scratch.join("hl7-read.hl7");
    write_messages(&file, messages);
    let payloads = split(&std::fs::read(&file).expect("read the messages back"));
    assert_eq!(payloads.len(), messages);

    let ours = best(runs, || library(&payloads));
    println!(
        "{:<34} {:>10} {:>14} {:>10}",
        "reader", "µs/msg", "messages/s", "x library"
    );
    row("mllp::hl7 (Message::new + 2 get)", ours, ours);
    let py = python::install(&scratch.join("hl7-read-py"));
    for reader in [python::Reader::PythonHl7, python::Reader::Hl7apy] {
        match &py {
            Ok(env) => match best_of(runs, || python::time(env, reader, &file)) {
                Ok(per) => row(&env.label(reader), per, ours),
                Err(e) => println!("{:<34} failed: {e}", reader.name()),
            },
            Err(e) => println!("{:<34} not installed: {e}", reader.name()),
        }
    }
    if bytes > 0 {
        whole_file(&root, &scratch, bytes, runs);
    }
}

/// Per-message time of the best run of `f`, which times all messages.
fn best(runs: usize, f: impl Fn() -> Duration) -> Duration {
    (0..runs.max(1)).map(|_| f()).min().unwrap_or_default()
}

fn best_of(runs: usize, f: impl Fn() -> Result<Duration, String>) -> Result<Duration, String> {
    let mut best: Option<Duration> = None;
    for _ in 0..runs.max(1) {
        let d = f()?;
        best = Some(best.map_or(d, |b| b.min(d)));
    }
    best.ok_or_else(|| "no run".into())
}

fn row(name: &str, per: Duration, ours: Duration) {
    let us = per.as_secs_f64() * 1e6;
    println!(
        "{name:<34} {us:>10.3} {:>14.0} {:>10.1}",
        1.0 / per.as_secs_f64(),
        per.as_secs_f64() / ours.as_secs_f64()
    );
}

/// The library's parse-and-get per message: the best of ten passes over all messages.
fn library(payloads: &[Vec<u8>]) -> Duration {
    let id: mllp::hl7::Path = "PID-3.1".parse().unwrap();
    let name: mllp::hl7::Path = "PID-5".parse().unwrap();
    let mut best = Duration::MAX;
    for _ in 0..10 {
        let started = Instant::now();
        let mut total = 0usize;
        for p in payloads {
            let m = mllp::hl7::Message::new(p);
            total += m.get(&id).decoded().len() + m.get(&name).decoded().len();
        }
        std::hint::black_box(total);
        best = best.min(started.elapsed() / payloads.len() as u32);
    }
    best
}

/// `mllp show --get PID-3.1 --get PID-5` over `bytes` of messages, from the page cache.
fn whole_file(root: &Path, scratch: &Path, bytes: u64, runs: usize) {
    let mllp = root.join("target/release/mllp");
    if !mllp.exists() {
        println!("mllp show: no {} (cargo build --release)", mllp.display());
        return;
    }
    let file = scratch.join(format!("hl7-read-{bytes}.hl7"));
    let want = bytes / MESSAGE_BYTES as u64 * MESSAGE_BYTES as u64;
    if std::fs::metadata(&file).map(|m| m.len()).ok() != Some(want) {
        write_messages(&file, (bytes / MESSAGE_BYTES as u64) as usize);
    }
    let size = std::fs::metadata(&file).expect("the file").len();
    // Into the page cache first.
    let _ = std::io::copy(
        &mut std::fs::File::open(&file).unwrap(),
        &mut std::io::sink(),
    );
    let mut best = Duration::MAX;
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        let status = std::process::Command::new(&mllp)
            .args(["show", "--get", "PID-3.1", "--get", "PID-5"])
            .arg(&file)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("run mllp show");
        assert!(status.success(), "mllp show failed");
        best = best.min(started.elapsed());
    }
    println!(
        "mllp show --get PID-3.1 --get PID-5: {:.0} MB in {:.2} s, {:.0} MB/s (best of {runs})",
        size as f64 / 1e6,
        best.as_secs_f64(),
        size as f64 / 1e6 / best.as_secs_f64()
    );
}

/// `n` ADT^A01 messages of 470 bytes, as the `compare` bench writes them.
fn write_messages(file: &Path, n: usize) {
    workload::write_workload(file, n, MESSAGE_BYTES);
}

/// The messages of the file: each starts at an `MSH` that starts a segment.
fn split(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut starts: Vec<usize> = vec![0];
    for (i, w) in bytes.windows(4).enumerate() {
        if w == b"\rMSH" {
            starts.push(i + 1);
        }
    }
    starts.push(bytes.len());
    starts
        .windows(2)
        .map(|w| bytes[w[0]..w[1]].to_vec())
        .collect()
}

fn parse_size(text: &str) -> u64 {
    let (digits, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = digits.parse().expect("--bytes SIZE");
    n * match unit.trim_end_matches(['i', 'B']) {
        "" => 1,
        "K" | "k" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        other => panic!("--bytes: unit {other}"),
    }
}
