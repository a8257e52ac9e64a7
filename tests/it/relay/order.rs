//! The queue's rows in arrival order when a connection's next batches are committed while its
//! earlier ones are written: one pipelined sender, and eight side by side, each connection's
//! messages in the order it sent them.

use super::proc::RelayProc;
use crate::support::send_proc::{finish, messages};
use std::collections::HashMap;

/// Control IDs of the queue's rows, in id order.
fn queued(file: &std::path::Path) -> Vec<(String, String)> {
    let db = rusqlite::Connection::open(file).unwrap();
    let mut q = db
        .prepare("SELECT peer, control_id FROM queue ORDER BY id")
        .unwrap();
    let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

/// The number in a control ID `O<n>`.
fn seq(id: &str) -> u64 {
    id.trim_start_matches('O').parse().unwrap()
}

#[tokio::test]
async fn each_connections_rows_are_in_the_order_it_sent_them() {
    for connections in [1, 8] {
        let dir = tempfile::tempdir().unwrap();
        let queue = dir.path().join("q.db");
        let input = dir.path().join("in.hl7");
        std::fs::write(&input, messages("O", 3000)).unwrap();
        // Nothing upstream: every row stays pending, in the table as it was taken.
        let relay = RelayProc::start("127.0.0.1:9", &["--queue", queue.to_str().unwrap()]);
        let mut send = tokio::process::Command::new(crate::support::mllp_bin());
        send.arg("send").arg(&input).args([
            "--host",
            &relay.addr.to_string(),
            "--json",
            "--window",
            "64",
        ]);
        if connections > 1 {
            send.args(["--connections", "8", "--order-key", "none"]);
        }
        let run = finish(send, None).await;
        assert_eq!(run.accepted_ids().len(), 3000, "{}", run.stderr);
        drop(relay);
        let rows = queued(&queue);
        assert_eq!(rows.len(), 3000);
        let mut last: HashMap<&str, u64> = HashMap::new();
        for (peer, id) in &rows {
            let n = seq(id);
            let before = last.insert(peer, n);
            assert!(
                before.is_none_or(|b| b < n),
                "{connections} connections: {id} from {peer} after O{}",
                before.unwrap_or_default()
            );
        }
        assert_eq!(last.len(), connections, "rows from each connection");
    }
}
