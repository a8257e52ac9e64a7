//! Send every `.hl7` file of a folder with a [`Client`], one message at a time in file-name
//! order, and print each message's fate: `accepted` only for a final positive ACK naming it.
//!
//! `cargo run --example send_folder -- HOST:PORT FOLDER`; exits 0 when every message was
//! accepted, 1 when one was not, 2 on bad arguments or an unreadable file.

use mllp::client::{Client, ClientOptions, Fate};
use mllp::input::{SplitOptions, Splitter};
use mllp::target::Target;
use mllp::transport::TcpConnector;
use std::path::PathBuf;
use std::sync::Arc;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let code = match run().await {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => {
            eprintln!("send_folder: {e}");
            2
        }
    };
    std::process::exit(code);
}

async fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [target, folder] = args.as_slice() else {
        return Err("usage: send_folder HOST:PORT FOLDER".into());
    };
    let target = Target::parse(target)?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|path| path.extension().is_some_and(|ext| ext == "hl7"));
    files.sort();

    let port = target.port_or_default();
    let connector = TcpConnector::new(target.host, port);
    let client = Client::new(Arc::new(connector), ClientOptions::default())?;
    let mut all_accepted = true;
    for path in &files {
        let name = path.display().to_string();
        let file = std::fs::File::open(path)?;
        // One file may hold several messages: split at each MSH, line endings made CR.
        for message in Splitter::from_read(&name, file, SplitOptions::default()) {
            let message = message?;
            // `send` returns once the message is admitted; awaiting the handle gives its fate.
            let fate = client.send(message.payload).await.await;
            all_accepted &= matches!(fate, Fate::Accepted { .. });
            println!("{name} #{}: {fate}", message.index);
        }
    }
    let report = client.close().await;
    // Sends were awaited one by one, so nothing is left pending: the report is empty.
    debug_assert!(report.never_delivered.is_empty() && report.unknown_fate.is_empty());
    eprintln!("send_folder: {} file(s) sent", files.len());
    Ok(all_accepted)
}
