//! `mllp` against the MLLP libraries users would otherwise pick, rerunnable by anyone:
//!
//! `cargo bench --bench compare -- [--messages N] [--runs R] [--window W] [--json] [--only TEXT]`
//!
//! Installs the peers from their package registries into a scratch directory (python-hl7 from
//! PyPI: its `mllp_send` client and asyncio server and client; node-hl7-client, node-hl7-server
//! and simple-hl7 from npm; versions pinned in `benches/compare/`), writes N ADT^A01 messages of
//! 470 bytes, and sends them through every pairing: `mllp send` to each server, each client to
//! `mllp listen`, each library with its own, the floor pair (`benches/floor`) and each side of
//! ours against the floor's other side. Every pairing runs pipelined (window W) and one message
//! at a time, all of them interleaved, R times; every sender checks every ACK. Prints a table
//! (or one JSON document with `--json`) of medians and spreads, ratios to the floor of the same
//! run, latency, CPU per message and peak RSS; a pairing that fails is listed with the reason.
//! After each run of a whole-process client (the floors, `mllp send`) a one-message run of the
//! same pairing gives its fixed start-up CPU, so CPU per message reads whole and net of it.

#[path = "../floor/mod.rs"]
mod floor;
mod install;
mod peer;
mod report;
mod run;
mod slow;
mod workload;

use peer::{Client, Server};
use report::{Cell, Results};
use std::path::PathBuf;
use std::time::Duration;

const MESSAGE_BYTES: usize = 470;

/// The pairings, the floor pair first; each runs in both modes.
const PAIRINGS: [(Client, Server); 17] = [
    (Client::Floor, Server::Floor),
    // The Rust floor held to the same pair in C: its x floor is how far the Rust floor is from C.
    (Client::FloorC, Server::FloorC),
    (Client::Send, Server::Listen),
    // Keyed parallel links into a fast receiver: what routing by key costs where the engine is
    // not the limit (the rows against a slow engine come with --slow-messages).
    (Client::SendKeyed, Server::Listen),
    (Client::Floor, Server::Listen),
    (Client::Send, Server::Floor),
    (Client::Send, Server::PyAsyncio),
    (Client::Send, Server::NodeHl7),
    (Client::Send, Server::SimpleHl7),
    (Client::PyAsyncio, Server::Listen),
    (Client::PyMllpSend, Server::Listen),
    (Client::NodeHl7, Server::Listen),
    (Client::SimpleHl7, Server::Listen),
    (Client::PyAsyncio, Server::PyAsyncio),
    (Client::PyMllpSend, Server::PyAsyncio),
    (Client::NodeHl7, Server::NodeHl7),
    (Client::SimpleHl7, Server::SimpleHl7),
];

const USAGE: &str = "usage: cargo bench --bench compare -- [--messages N (20000)] [--runs R (3)] \
[--window W (64)] [--json] [--only TEXT (pairings whose label contains it; the floor pair always \
runs, and so does the C floor pair)] [--scratch DIR (target/compare-peers)] [--timeout SECONDS (per client run; 30 + N/1000)] [--slow-messages N (0: off; the parallel-links rows against a 5 ms engine)] [--baseline MLLP (another build's mllp, whose keyed runs go beside these in the parallel-links rows)]";

struct Options {
    messages: usize,
    runs: usize,
    window: usize,
    json: bool,
    only: Vec<String>,
    scratch: PathBuf,
    timeout: Option<u64>,
    slow_messages: usize,
    baseline: Option<PathBuf>,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        messages: 20_000,
        runs: 3,
        window: 64,
        json: false,
        only: Vec::new(),
        scratch: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target/compare-peers")),
        timeout: None,
        slow_messages: 0,
        baseline: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        let number = |v: String, name: &str| {
            v.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or(format!("{name} needs a whole number above 0, not `{v}`"))
        };
        match arg.as_str() {
            "--messages" => o.messages = number(value(&arg)?, &arg)?,
            "--runs" => o.runs = number(value(&arg)?, &arg)?,
            "--window" => o.window = number(value(&arg)?, &arg)?,
            "--timeout" => o.timeout = Some(number(value(&arg)?, &arg)? as u64),
            "--slow-messages" => o.slow_messages = number(value(&arg)?, &arg)?,
            "--baseline" => o.baseline = Some(value(&arg)?.into()),
            "--json" => o.json = true,
            "--only" => o.only.push(value(&arg)?),
            "--scratch" => o.scratch = value(&arg)?.into(),
            // `cargo bench` adds this to every benchmark's arguments.
            "--bench" => {}
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0)
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(o)
}

fn main() {
    floor::serve_if_asked();
    let o = options().unwrap_or_else(|e| {
        eprintln!("compare: {e}\n{USAGE}");
        std::process::exit(2)
    });
    let peers = install::install(&o.scratch);
    for why in [peers.python.as_ref().err(), peers.node.as_ref().err()]
        .into_iter()
        .flatten()
    {
        eprintln!("compare: a peer could not be installed; its pairings fail: {why}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("adt.hl7");
    workload::write_workload(&file, o.messages, MESSAGE_BYTES);
    let timeout = o.timeout.unwrap_or(30 + o.messages as u64 / 1000);
    let setup = run::Setup {
        mllp: PathBuf::from(env!("CARGO_BIN_EXE_mllp")),
        peers: &peers,
        file,
        messages: o.messages,
        timeout: Duration::from_secs(timeout),
    };
    // One message: a whole-process client's fixed start-up cost, to read CPU per message net of it.
    let one = dir.path().join("one.hl7");
    workload::write_workload(&one, 1, MESSAGE_BYTES);
    let setup_one = run::Setup {
        mllp: setup.mllp.clone(),
        peers: &peers,
        file: one,
        messages: 1,
        timeout: setup.timeout,
    };
    let windows = if o.window == 1 {
        vec![1]
    } else {
        vec![o.window, 1]
    };
    let cells: Vec<Cell> = windows
        .iter()
        .flat_map(|&window| {
            PAIRINGS.iter().map(move |&(client, server)| Cell {
                client,
                server,
                window,
            })
        })
        .filter(|c| {
            let floor = matches!(
                (c.client, c.server),
                (Client::Floor, Server::Floor) | (Client::FloorC, Server::FloorC)
            );
            floor || o.only.is_empty() || o.only.iter().any(|t| c.label().contains(t.as_str()))
        })
        .collect();
    let mut results = Results::new(cells.clone(), o.runs, o.messages);
    for run in 0..o.runs {
        // Each run starts one pairing further on, so no pairing always runs first or last.
        for k in 0..cells.len() {
            let i = (k + run) % cells.len();
            let cell = cells[i];
            if let Some(why) = cell.client.cannot_pipeline().filter(|_| cell.window > 1) {
                results.record(i, run, Err(why.to_string()));
                continue;
            }
            // A pairing that failed once is not run again: its reason stands.
            if results.failed(i) {
                continue;
            }
            let outcome = run::measure(&setup, cell.client, cell.server, cell.window);
            match &outcome {
                Ok(s) => eprintln!(
                    "run {}/{}: {} (window {}): {:.0} msg/s",
                    run + 1,
                    o.runs,
                    cell.label(),
                    cell.window,
                    s.rate
                ),
                Err(why) => eprintln!(
                    "run {}/{}: {} (window {}): failed: {why}",
                    run + 1,
                    o.runs,
                    cell.label(),
                    cell.window
                ),
            }
            if outcome.is_ok() && cell.client.whole_process_cpu() {
                if let Ok(s) = run::measure(&setup_one, cell.client, cell.server, cell.window) {
                    results.record_startup(i, run, s.client_cpu_us);
                }
            }
            results.record(i, run, outcome);
        }
    }
    let versions: Vec<String> = peers
        .versions
        .iter()
        .map(|(p, v)| format!("{p} {v}"))
        .collect();
    if o.json {
        let head = serde_json::json!({
            "messages": o.messages,
            "message_bytes": MESSAGE_BYTES,
            "runs": o.runs,
            "window": o.window,
            "versions": peers.versions.iter().map(|(p, v)| (p.clone(), serde_json::Value::from(v.as_str()))).collect::<serde_json::Map<_, _>>(),
        });
        println!("{}", results.json(head));
    } else {
        let header = format!(
            "compare: {} ADT^A01 messages of {MESSAGE_BYTES} bytes per run, {} runs interleaved, loopback, every ACK checked\npeers: {}",
            o.messages,
            o.runs,
            versions.join(", ")
        );
        print!("{}", results.table(&header, &windows));
    }
    if o.slow_messages > 0 {
        slow::run(
            &setup.mllp,
            dir.path(),
            o.slow_messages,
            o.runs,
            o.baseline.clone(),
        );
    }
}
