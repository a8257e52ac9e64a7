//! A row's values in the order of the table's columns: the one list the single INSERT's
//! parameters, the group INSERT's arrays and the COPY's binary rows are all read from, each
//! value encoded one way (its length, then its bytes in the binary format of its column's type).

use super::Row;
use bytes::{BufMut, BytesMut};
use std::error::Error;
use std::time::SystemTime;
use tokio_postgres::types::{to_sql_checked, IsNull, Kind, ToSql, Type};

/// The columns the listener writes, in order, with the type each value is encoded as.
pub(super) const COLUMNS: [(&str, Type); 11] = [
    ("id", Type::INT8),
    ("received_at", Type::TIMESTAMPTZ),
    ("peer", Type::TEXT),
    ("msh3", Type::TEXT),
    ("msh4", Type::TEXT),
    ("control_id", Type::TEXT),
    ("msh7", Type::TEXT),
    ("message_type", Type::TEXT),
    ("bytes", Type::INT8),
    ("payload", Type::BYTEA),
    ("dedupe", Type::BOOL),
];

type Failed = Box<dyn Error + Sync + Send>;

/// One row's values under `id`.
pub(super) struct Cells<'a> {
    id: i64,
    row: &'a Row,
    bytes: i64,
    payload: &'a [u8],
    /// NULL, not false, when not de-duplicated: the unique index covers only `WHERE dedupe`.
    dedupe: Option<bool>,
}

impl<'a> Cells<'a> {
    pub(super) fn new(row: &'a Row, id: i64) -> Cells<'a> {
        Cells {
            id,
            row,
            bytes: row.payload.len() as i64,
            payload: &row.payload,
            dedupe: row.dedupe.then_some(true),
        }
    }

    /// The values, in the order of [`COLUMNS`].
    pub(super) fn values(&self) -> [&(dyn ToSql + Sync); 11] {
        let f = &self.row.fields;
        [
            &self.id,
            &self.row.received_at as &SystemTime,
            &self.row.peer,
            &f[0],
            &f[1],
            &f[2],
            &f[3],
            &f[4],
            &self.bytes,
            &self.payload,
            &self.dedupe,
        ]
    }
}

/// One value as the binary COPY row and the binary array carry it: its length (-1 for NULL),
/// then its bytes. Whether it is NULL.
pub(super) fn encode(buf: &mut BytesMut, value: &dyn ToSql, ty: &Type) -> Result<bool, Failed> {
    let at = buf.len();
    buf.put_i32(0);
    let len = match value.to_sql_checked(ty, buf)? {
        IsNull::Yes => -1,
        IsNull::No => i32::try_from(buf.len() - at - 4)?,
    };
    buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(len < 0)
}

/// Column `k` of a group's rows, as one array parameter of the group INSERT.
pub(super) struct Column<'a> {
    pub(super) rows: &'a [Cells<'a>],
    pub(super) k: usize,
}

impl std::fmt::Debug for Column<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the values: they are the messages' own.
        write!(
            f,
            "column {} of {} rows",
            COLUMNS[self.k].0,
            self.rows.len()
        )
    }
}

impl ToSql for Column<'_> {
    /// The binary array: one dimension, whether it holds a NULL, the element type, the length
    /// and lower bound, then each element as [`encode`] writes it.
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, Failed> {
        let Kind::Array(member) = ty.kind() else {
            return Err(
                format!("column {} is sent as an array, not {ty}", COLUMNS[self.k].0).into(),
            );
        };
        out.put_i32(1);
        let flags = out.len();
        out.put_i32(0);
        out.put_u32(member.oid());
        out.put_i32(i32::try_from(self.rows.len())?);
        out.put_i32(1);
        let mut nulls = false;
        for cells in self.rows {
            nulls |= encode(out, cells.values()[self.k], member)?;
        }
        out[flags..flags + 4].copy_from_slice(&i32::from(nulls).to_be_bytes());
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        matches!(ty.kind(), Kind::Array(_))
    }

    to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::time::{Duration, SystemTime};

    fn row(
        at: u64,
        peer: String,
        fields: [Option<String>; 5],
        payload: Vec<u8>,
        dedupe: bool,
    ) -> Row {
        Row {
            received_at: SystemTime::UNIX_EPOCH + Duration::from_micros(at),
            peer,
            fields,
            payload: payload.into(),
            dedupe,
        }
    }

    fn bytes_of(value: &dyn ToSql, ty: &Type) -> Vec<u8> {
        let mut buf = BytesMut::new();
        value.to_sql_checked(ty, &mut buf).unwrap();
        buf.to_vec()
    }

    proptest! {
        /// Each column of a group, sent as one array, is the very array the typed vectors of its
        /// values make (the way the group INSERT used to build them, one vector a column).
        #[test]
        fn a_column_is_the_array_of_its_values(
            rows in proptest::collection::vec(
                (
                    0u64..4_000_000_000_000_000,
                    ".{0,8}",
                    proptest::array::uniform5(proptest::option::of(".{0,6}")),
                    proptest::collection::vec(any::<u8>(), 0..32),
                    any::<bool>(),
                ),
                0..6,
            ),
        ) {
            let rows: Vec<Row> = rows
                .into_iter()
                .map(|(at, peer, fields, payload, dedupe)| row(at, peer, fields, payload, dedupe))
                .collect();
            let cells: Vec<Cells> = rows.iter().enumerate().map(|(i, r)| Cells::new(r, i as i64 * 7)).collect();
            let ids: Vec<i64> = (0..rows.len() as i64).map(|i| i * 7).collect();
            let at: Vec<SystemTime> = rows.iter().map(|r| r.received_at).collect();
            let peer: Vec<&str> = rows.iter().map(|r| r.peer.as_str()).collect();
            let field = |n: usize| -> Vec<Option<&str>> { rows.iter().map(|r| r.fields[n].as_deref()).collect() };
            let bytes: Vec<i64> = rows.iter().map(|r| r.payload.len() as i64).collect();
            let payload: Vec<&[u8]> = rows.iter().map(|r| &r.payload[..]).collect();
            let dedupe: Vec<Option<bool>> = rows.iter().map(|r| r.dedupe.then_some(true)).collect();
            let typed: [&dyn ToSql; 11] = [
                &ids, &at, &peer, &field(0), &field(1), &field(2), &field(3), &field(4), &bytes,
                &payload, &dedupe,
            ];
            let arrays = [
                Type::INT8_ARRAY, Type::TIMESTAMPTZ_ARRAY, Type::TEXT_ARRAY, Type::TEXT_ARRAY,
                Type::TEXT_ARRAY, Type::TEXT_ARRAY, Type::TEXT_ARRAY, Type::TEXT_ARRAY,
                Type::INT8_ARRAY, Type::BYTEA_ARRAY, Type::BOOL_ARRAY,
            ];
            for (k, (expected, ty)) in typed.iter().zip(&arrays).enumerate() {
                let column = Column { rows: &cells, k };
                prop_assert_eq!(bytes_of(&column, ty), bytes_of(*expected, ty), "column {}", COLUMNS[k].0);
            }
        }
    }

    #[test]
    fn a_value_of_another_type_is_refused_not_sent() {
        let r = row(0, "p".into(), Default::default(), b"x".to_vec(), false);
        let cells = [Cells::new(&r, 1)];
        // Column 0, the id, as text: the element's own check refuses it.
        let column = Column { rows: &cells, k: 0 };
        let mut buf = BytesMut::new();
        assert!(column.to_sql_checked(&Type::TEXT_ARRAY, &mut buf).is_err());
        assert!(column.to_sql_checked(&Type::INT8, &mut buf).is_err());
    }
}
