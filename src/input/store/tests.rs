//! Reading a store: pages in arrival order, rows checked as files, no row loaded whole when it
//! is over the largest message.

use super::*;

fn store(rows: &[(&str, rusqlite::types::Value)]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rx.db");
    let db = Connection::open(&file).unwrap();
    db.execute_batch(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
         control_id TEXT, message_type TEXT, payload BLOB)",
    )
    .unwrap();
    for (kind, payload) in rows {
        db.execute(
            "INSERT INTO messages (received_at, control_id, message_type, payload)
             VALUES ('2024-01-31T08:00:00Z', 'C', ?1, ?2)",
            rusqlite::params![kind, payload],
        )
        .unwrap();
    }
    (dir, file)
}

fn adt(id: &str) -> rusqlite::types::Value {
    rusqlite::types::Value::Blob(format!("MSH|^~\\&|A|B|C|D|2024||ADT^A01|{id}|P|2.5\r").into())
}

#[test]
fn rows_are_read_a_page_at_a_time_in_arrival_order() {
    let rows: Vec<_> = (0..PAGE_ROWS * 3 + 7)
        .map(|i| {
            (
                if i % 2 == 0 { "ADT^A01" } else { "ORU^R01" },
                adt(&format!("C{i}")),
            )
        })
        .collect();
    let (_dir, file) = store(&rows);
    let filter = StoreFilter {
        message_type: Some("ADT".into()),
        ..StoreFilter::default()
    };
    let mut read = StoreRows::open(&file, filter, SplitOptions::default()).unwrap();
    assert_eq!(read.last_id(), Some(rows.len() as i64));
    let mut ids = Vec::new();
    while let Some(row) = read.next() {
        assert!(read.buffered() < PAGE_ROWS, "{} rows held", read.buffered());
        let stored = row.unwrap();
        assert_eq!(
            stored.message.label(),
            format!("rx.db#{}", stored.message.index)
        );
        ids.push(stored.message.index);
    }
    let expected: Vec<u64> = (1..=rows.len() as u64).step_by(2).collect();
    assert_eq!(ids, expected);
}

#[test]
fn a_second_pass_reads_only_the_rows_the_first_one_saw() {
    let (_dir, file) = store(&[("ADT^A01", adt("A")), ("ADT^A01", adt("B"))]);
    let first = StoreRows::open(&file, StoreFilter::default(), SplitOptions::default()).unwrap();
    let last = first.last_id().unwrap();
    Connection::open(&file)
        .unwrap()
        .execute(
            "INSERT INTO messages (received_at, payload) VALUES ('2024-01-31T09:00:00Z', 'x')",
            [],
        )
        .unwrap();
    let again = StoreRows::open(&file, StoreFilter::default(), SplitOptions::default())
        .unwrap()
        .upto(last);
    assert_eq!(again.count(), 2);
}

#[test]
fn a_row_over_the_largest_message_is_refused_from_a_blob_read_in_blocks() {
    let mut big = b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|L1|P|2.5\rOBX|".to_vec();
    big.resize(1 << 20, b'x');
    let (_dir, file) = store(&[("ADT^A01", rusqlite::types::Value::Blob(big))]);
    let options = SplitOptions {
        max_message: 4096,
        ..SplitOptions::default()
    };
    let error = StoreRows::open(&file, StoreFilter::default(), options)
        .unwrap()
        .next()
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(error, InputError::MessageTooLarge { max: 4096, .. }),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("rx.db#1 line 1: message is larger"),
        "{error}"
    );
}

#[test]
fn a_status_filter_on_a_receivers_store_is_refused() {
    let (_dir, file) = store(&[("ADT^A01", adt("A"))]);
    let filter = StoreFilter {
        statuses: vec!["negative".into()],
        ..StoreFilter::default()
    };
    let error = StoreRows::open(&file, filter, SplitOptions::default()).unwrap_err();
    assert!(error.what.contains("keeps no upstream status"), "{error}");
}

#[test]
fn arrivals_name_the_rows_without_reading_payloads() {
    let (_dir, file) = store(&[
        ("ADT^A01", adt("A")),
        ("ADT^A01", rusqlite::types::Value::Null),
    ]);
    let arrivals: Vec<_> = StoreRows::open(&file, StoreFilter::default(), SplitOptions::default())
        .unwrap()
        .arrivals()
        .map(|r| r.unwrap().0)
        .collect();
    assert_eq!(arrivals, [1, 2]);
}
