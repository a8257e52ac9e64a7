//! A scripted engine on 127.0.0.1:0 in the test process, for exchanges the scripted peer does
//! not speak (Release 2 blocks, answers with ERR segments): each read's complete frames go to
//! the script, and what it returns is written back (nothing: silence).

use super::peer_wire::Deframer;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Start the engine; its port. `script` gets the payloads one read completed, in order, on
/// every connection.
pub async fn scripted(script: impl Fn(Vec<Vec<u8>>) -> Vec<u8> + Send + Sync + 'static) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = Arc::new(script);
    tokio::spawn(async move {
        loop {
            let Ok((mut tcp, _)) = listener.accept().await else {
                return;
            };
            let script = script.clone();
            tokio::spawn(async move {
                let mut deframer = Deframer::default();
                let mut buf = [0u8; 4096];
                loop {
                    let n = match tcp.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    deframer.push(&buf[..n]);
                    let mut frames = Vec::new();
                    while let Some(payload) = deframer.next_frame() {
                        frames.push(payload);
                    }
                    let reply = script(frames);
                    if !reply.is_empty() && tcp.write_all(&reply).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}
