//! Integration tests: a commit group of the PostgreSQL sink goes into the table in one statement,
//! and keeps every answer true where one statement cannot say which row failed: a row refused or
//! dropped in the middle of a group (answered negatively, the rest committed), duplicates of
//! each other within a group under de-duplication (one stored, the others duplicates), groups of
//! 1 and of 2,048 rows, and one of large messages cut over several statements; a group copied
//! holds what one inserted holds, and rows a trigger moves to other ids are found. The sink is
//! driven through the library, so each call is exactly one group; one test drives the binary.

use crate::support::listen_proc::with_postgres;
use crate::support::mllp_client::{marked, MllpClient};
use crate::support::peer_wire::frame;
use crate::support::pg;
use bytes::Bytes;
use mllp::ack::Disposition;
use mllp::server::{CommitGroups, Inbound, PostgresSink, Sink, SinkResult};
use std::sync::Arc;

/// A message with control ID `id`, as its sink sees it.
fn inbound(id: &str) -> Inbound {
    inbound_of(marked(id, ""))
}

fn inbound_of(payload: Vec<u8>) -> Inbound {
    Inbound::new(1, 1, Arc::from("127.0.0.1:9"), Bytes::from(payload), false)
}

/// Each result as `stored`, `duplicate` or `failed`.
fn fates(results: &[SinkResult]) -> Vec<&'static str> {
    results
        .iter()
        .map(|r| match (r.disposition, r.duplicate) {
            (Disposition::Committed, false) => "stored",
            (Disposition::Committed, true) => "duplicate",
            _ => "failed",
        })
        .collect()
}

/// A fresh database with the sink's table, a statement counter, and the sink.
async fn sink(test: &str, dedupe: bool) -> Option<(String, PostgresSink)> {
    let server = pg::required("MLLP_TEST_PG")?;
    let url = pg::fresh_database(&server, test).await;
    let sink = PostgresSink::open(&url, dedupe)
        .await
        .expect("the sink opens");
    // Each INSERT statement that stores rows into messages counts once, however many rows.
    pg::connect(&url)
        .await
        .batch_execute(
            "CREATE TABLE inserts (n int);
             CREATE FUNCTION count_insert() RETURNS trigger LANGUAGE plpgsql AS
               $$ BEGIN INSERT INTO inserts VALUES (1); RETURN NULL; END $$;
             CREATE TRIGGER count_insert AFTER INSERT ON messages
               FOR EACH STATEMENT EXECUTE FUNCTION count_insert();",
        )
        .await
        .unwrap();
    Some((url, sink))
}

/// INSERT statements committed so far.
async fn statements(url: &str) -> i64 {
    pg::connect(url)
        .await
        .query_one("SELECT count(*) FROM inserts", &[])
        .await
        .unwrap()
        .get(0)
}

fn ids(rows: &[(String, Vec<u8>)]) -> Vec<&str> {
    rows.iter().map(|(id, _)| id.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_is_one_statement_at_1_and_2048_rows_stored_in_order() {
    let Some((url, sink)) = sink("group_sizes", false).await else {
        return;
    };
    let one = sink.commit_batch(&[inbound("ONE")]).await;
    assert_eq!(fates(&one), ["stored"]);
    assert_eq!(statements(&url).await, 1);
    let sent: Vec<Inbound> = (0..2048).map(|i| inbound(&format!("R{i:04}"))).collect();
    let results = sink.commit_batch(&sent).await;
    assert!(fates(&results).iter().all(|f| *f == "stored"));
    assert_eq!(statements(&url).await, 2, "2,048 rows in one statement");
    let rows = pg::rows(&url).await;
    assert_eq!(rows.len(), 2049);
    for (row, m) in rows[1..].iter().zip(&sent) {
        assert_eq!(row.1, m.payload, "stored byte for byte, in the order given");
    }
    let groups: CommitGroups = sink.commit_groups().unwrap();
    assert_eq!((groups.groups, groups.rows), (2, 2049));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_row_refused_in_the_middle_of_a_group_fails_alone_and_the_rest_commit() {
    for dedupe in [false, true] {
        let Some((url, sink)) = sink(&format!("group_refused_{dedupe}"), dedupe).await else {
            return;
        };
        pg::connect(&url)
            .await
            .batch_execute("ALTER TABLE messages ADD CONSTRAINT no_m5 CHECK (control_id <> 'M5')")
            .await
            .unwrap();
        let sent: Vec<Inbound> = (1..=9).map(|i| inbound(&format!("M{i}"))).collect();
        let results = sink.commit_batch(&sent).await;
        let expected = [
            "stored", "stored", "stored", "stored", "failed", "stored", "stored", "stored",
            "stored",
        ];
        assert_eq!(fates(&results), expected, "dedupe {dedupe}");
        let detail = results[4].detail.as_deref().unwrap();
        assert!(
            detail.contains("23514") && detail.contains("no_m5"),
            "{detail}"
        );
        let rows = pg::rows(&url).await;
        assert_eq!(
            ids(&rows),
            ["M1", "M2", "M3", "M4", "M6", "M7", "M8", "M9"],
            "dedupe {dedupe}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_row_a_trigger_drops_in_the_middle_of_a_group_fails_alone() {
    for dedupe in [false, true] {
        let Some((url, sink)) = sink(&format!("group_dropped_{dedupe}"), dedupe).await else {
            return;
        };
        pg::connect(&url)
            .await
            .batch_execute(
                "CREATE FUNCTION drop_row() RETURNS trigger LANGUAGE plpgsql AS
                   $$ BEGIN IF NEW.control_id LIKE 'X%' THEN RETURN NULL; END IF; RETURN NEW; END $$;
                 CREATE TRIGGER drop_row BEFORE INSERT ON messages
                   FOR EACH ROW EXECUTE FUNCTION drop_row();",
            )
            .await
            .unwrap();
        let sent = ["K1", "K2", "X3", "K4", "X5"].map(inbound);
        let results = sink.commit_batch(&sent).await;
        assert_eq!(
            fates(&results),
            ["stored", "stored", "failed", "stored", "failed"],
            "dedupe {dedupe}"
        );
        assert_eq!(ids(&pg::rows(&url).await), ["K1", "K2", "K4"]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicates_of_each_other_in_one_group_are_stored_once_and_answered_positively() {
    let Some((url, sink)) = sink("group_duplicates", true).await else {
        return;
    };
    let first = sink.commit_batch(&[inbound("OLD")]).await;
    assert_eq!(fates(&first), ["stored"]);
    let sent = ["A", "B", "A", "OLD", "A", "C", "B"].map(inbound);
    let results = sink.commit_batch(&sent).await;
    assert_eq!(
        fates(&results),
        [
            "stored",
            "stored",
            "duplicate",
            "duplicate",
            "duplicate",
            "stored",
            "duplicate"
        ]
    );
    assert_eq!(ids(&pg::rows(&url).await), ["OLD", "A", "B", "C"]);
    // Without duplicates the next group is one statement again.
    let before = statements(&url).await;
    let next = sink.commit_batch(&["D", "E", "F"].map(inbound)).await;
    assert_eq!(fates(&next), ["stored", "stored", "stored"]);
    assert_eq!(statements(&url).await, before + 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_of_large_messages_is_cut_over_statements_and_a_refusal_in_the_last_found() {
    let Some((url, sink)) = sink("group_large", false).await else {
        return;
    };
    pg::connect(&url)
        .await
        .batch_execute("ALTER TABLE messages ADD CONSTRAINT no_l9 CHECK (control_id <> 'L9')")
        .await
        .unwrap();
    // 10 messages of 4 MiB: more than one statement's share.
    let big = |id: &str| {
        let mut m = marked(id, "");
        m.extend_from_slice(format!("NTE|2||{}\r", "x".repeat(4 << 20)).as_bytes());
        inbound_of(m)
    };
    let sent: Vec<Inbound> = (0..10).map(|i| big(&format!("L{i}"))).collect();
    let results = sink.commit_batch(&sent).await;
    let mut expected = vec!["stored"; 10];
    expected[9] = "failed";
    assert_eq!(fates(&results), expected);
    let rows = pg::rows(&url).await;
    assert_eq!(
        ids(&rows),
        ["L0", "L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8"]
    );
    for (row, m) in rows.iter().zip(&sent) {
        assert_eq!(row.1, m.payload);
    }
    let clean: Vec<Inbound> = (10..20).map(|i| big(&format!("L{i}"))).collect();
    let before = statements(&url).await;
    let results = sink.commit_batch(&clean).await;
    assert!(fates(&results).iter().all(|f| *f == "stored"));
    assert!(statements(&url).await - before > 1, "cut over statements");
}

#[tokio::test(flavor = "multi_thread")]
async fn pipelined_messages_with_one_refused_are_answered_each_by_what_the_table_holds() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    for dedupe in [false, true] {
        let (url, listener) = with_postgres(
            &server,
            &format!("group_pipelined_{dedupe}"),
            dedupe,
            "ALTER TABLE messages ADD CONSTRAINT no_p37 CHECK (control_id <> 'P37')",
        )
        .await;
        let mut client = MllpClient::connect(listener.addr).await;
        let sent: Vec<Vec<u8>> = (0..200).map(|i| marked(&format!("P{i}"), "")).collect();
        // One write, so the listener reads them together and commits them in large groups.
        client
            .send_raw(&sent.iter().flat_map(|m| frame(m)).collect::<Vec<u8>>())
            .await;
        let mut codes = Vec::new();
        for _ in &sent {
            codes.push(client.ack().await.expect("an answer").code);
        }
        let refused: Vec<usize> = (0..200).filter(|&i| codes[i] != "AA").collect();
        assert_eq!(refused, [37], "dedupe {dedupe}");
        let stored = pg::rows(&url).await;
        assert_eq!(stored.len(), 199);
        assert!(stored.iter().all(|(id, _)| id != "P37"));
        listener.assert_no_payload();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_a_trigger_or_a_rule_deletes_after_the_insert_are_answered_negatively_alone() {
    // A trigger after each row, then a rule: the statement returned every id, and the look-up
    // before COMMIT must still find which rows are gone.
    let deleting = [
        "CREATE FUNCTION delete_row() RETURNS trigger LANGUAGE plpgsql AS
           $$ BEGIN DELETE FROM messages WHERE id = NEW.id AND control_id LIKE 'X%'; RETURN NULL; END $$;
         CREATE TRIGGER delete_row AFTER INSERT ON messages
           FOR EACH ROW EXECUTE FUNCTION delete_row();",
        "CREATE RULE delete_row AS ON INSERT TO messages
           DO ALSO DELETE FROM messages WHERE control_id LIKE 'X%'",
    ];
    for (n, ddl) in deleting.iter().enumerate() {
        for dedupe in [false, true] {
            let Some((url, sink)) = sink(&format!("group_deleted_{n}_{dedupe}"), dedupe).await
            else {
                return;
            };
            // Alone: without the statement counter, which is a trigger too.
            let admin = pg::connect(&url).await;
            admin
                .batch_execute("DROP TRIGGER count_insert ON messages")
                .await
                .unwrap();
            admin.batch_execute(ddl).await.unwrap();
            let sent = ["K1", "X2", "K3", "K4", "X5", "K6"].map(inbound);
            let results = sink.commit_batch(&sent).await;
            if n == 1 && dedupe {
                // The server refuses ON CONFLICT on a table with rules: nothing is kept.
                assert_eq!(fates(&results), ["failed"; 6]);
                assert!(pg::rows(&url).await.is_empty());
                continue;
            }
            assert_eq!(
                fates(&results),
                ["stored", "failed", "stored", "stored", "failed", "stored"],
                "{ddl} dedupe {dedupe}"
            );
            assert_eq!(ids(&pg::rows(&url).await), ["K1", "K3", "K4", "K6"]);
        }
    }
}

/// Every column of every row, as text, in the order of the ids.
async fn columns(url: &str) -> Vec<String> {
    pg::connect(url)
        .await
        .query(
            "SELECT row(received_at, peer, msh3, msh4, control_id, msh7, message_type, bytes,
                 encode(payload, 'hex'), dedupe)::text FROM messages ORDER BY id",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_group_copied_holds_what_the_insert_stores_column_for_column() {
    // Without a trigger the group goes in by COPY; the statement counter (a trigger) makes the
    // other sink insert it: the two tables must hold the same values.
    let Some((inserted, by_insert)) = sink("copy_values_insert", false).await else {
        return;
    };
    let server = pg::required("MLLP_TEST_PG").unwrap();
    let copied = pg::fresh_database(&server, "copy_values_copy").await;
    let by_copy = PostgresSink::open(&copied, false).await.unwrap();
    let payloads: [&[u8]; 4] = [
        &marked("C1", ""),
        "MSH|^~\\&|APPÄ|FAC|RCV|FAC|20240101120000||ADT^A01|C2|P|2.5\rPID|1\r".as_bytes(),
        b"MSH|^~\\&|APP|F\xffAC|RCV|FAC|||ADT^A01|C3|P|2.5\r",
        b"MSH|^~\\&|APP\r",
    ];
    // One arrival before 2000, from where the server counts its timestamps, and one after.
    let at = [1, 1_700_000_000_123_456, 2, 3]
        .map(|us| std::time::UNIX_EPOCH + std::time::Duration::from_micros(us));
    let sent: Vec<Inbound> = payloads
        .iter()
        .zip(at)
        .map(|(p, at)| {
            let mut m = inbound_of(p.to_vec());
            m.received_at = at;
            m
        })
        .collect();
    assert_eq!(fates(&by_copy.commit_batch(&sent).await), ["stored"; 4]);
    assert_eq!(fates(&by_insert.commit_batch(&sent).await), ["stored"; 4]);
    assert_eq!(statements(&inserted).await, 1, "inserted, not copied");
    let (copied, inserted) = (columns(&copied).await, columns(&inserted).await);
    assert_eq!(copied.len(), 4);
    assert_eq!(copied, inserted);
}

#[tokio::test(flavor = "multi_thread")]
async fn rows_a_trigger_moves_to_other_ids_are_answered_stored() {
    // The ids given are not where the rows are: only the rows themselves, inserted each by its
    // own statement, can say they were kept.
    let Some((url, sink)) = sink("group_moved", false).await else {
        return;
    };
    let admin = pg::connect(&url).await;
    admin
        .batch_execute(
            "DROP TRIGGER count_insert ON messages;
             CREATE FUNCTION move_row() RETURNS trigger LANGUAGE plpgsql AS
               $$ BEGIN NEW.id := NEW.id + 1000000; RETURN NEW; END $$;
             CREATE TRIGGER move_row BEFORE INSERT ON messages
               FOR EACH ROW EXECUTE FUNCTION move_row();",
        )
        .await
        .unwrap();
    let sent = ["M1", "M2", "M3"].map(inbound);
    assert_eq!(fates(&sink.commit_batch(&sent).await), ["stored"; 3]);
    assert_eq!(ids(&pg::rows(&url).await), ["M1", "M2", "M3"]);
}
