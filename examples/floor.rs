//! The floor's receiver and sender as a program of their own, for measuring by hand (`perf`,
//! `strace -c`) outside the benchmarks, which run the same code as their own child processes.
//!
//! `cargo build --release --example floor`, then
//! `target/release/examples/floor recv [--port P]` and
//! `target/release/examples/floor send --port P --window W FILE`.

#[path = "../benches/floor/wire.rs"]
mod wire;

fn main() {
    let mut args = std::env::args().skip(1);
    let result = match args.next().as_deref() {
        Some("recv") => wire::recv_main(args),
        Some("send") => wire::send_main(args),
        _ => Err("usage: floor recv [--port P] | floor send --port P --window W FILE".into()),
    };
    if let Err(e) = result {
        eprintln!("floor: {e}");
        std::process::exit(1);
    }
}
