//! One stored row made a message exactly as a file holding its payload would be: split and
//! checked by the file input's own splitter (an HL7 header first, no VT or FS inside, the
//! largest message), and refused unless it holds exactly one message. A payload over the
//! largest message is read through a blob handle a block at a time, so the splitter refuses it
//! without the row ever being loaded whole.

use super::super::error::InputError;
use super::super::message::{Message, SplitOptions};
use super::super::split::Splitter;
use rusqlite::{Connection, DatabaseName};
use std::io::{BufRead, BufReader};

/// What a row's payload column holds, told by `typeof()` without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Text or bytes, this many bytes long.
    Bytes(i64),
    Null,
    Integer,
    Real,
}

impl Kind {
    /// From `typeof(payload)` and `octet_length(payload)`.
    pub(super) fn of(type_name: &str, len: Option<i64>) -> Kind {
        match type_name {
            "integer" => Kind::Integer,
            "real" => Kind::Real,
            "text" | "blob" => Kind::Bytes(len.unwrap_or(0)),
            _ => Kind::Null,
        }
    }
}

/// Where a row is, for reading its payload.
pub(super) struct At<'a> {
    pub db: &'a Connection,
    pub table: &'static str,
    pub id: i64,
    /// `rx.db#17`: how errors and results name the row.
    pub name: &'a str,
}

/// The one message the row at `at` holds, as the splitter makes it from the payload's bytes.
pub(super) fn message(
    at: &At<'_>,
    kind: Kind,
    options: SplitOptions,
) -> Result<Message, InputError> {
    let refused = |value| InputError::NotAMessage {
        name: at.name.to_string(),
        value,
    };
    let len = match kind {
        Kind::Null => return Err(refused("NULL")),
        Kind::Integer => return Err(refused("an integer")),
        Kind::Real => return Err(refused("a real number")),
        Kind::Bytes(len) => len,
    };
    let read_error = |e: rusqlite::Error| InputError::Read {
        name: at.name.to_string(),
        error: std::io::Error::other(e),
    };
    if usize::try_from(len).is_ok_and(|len| len <= options.max_message) {
        let sql = format!("SELECT payload FROM {} WHERE id = ?1", at.table);
        let mut query = at.db.prepare_cached(&sql).map_err(read_error)?;
        let bytes = query
            .query_row([at.id], |r| {
                Ok(match r.get_ref(0)? {
                    rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => {
                        b.to_vec()
                    }
                    _ => Vec::new(),
                })
            })
            .map_err(read_error)?;
        return one_message(at.name, &bytes[..], options);
    }
    // Larger than any message may be: read only as far as the splitter needs to say so (or
    // to find it smaller once its line ends are made CR).
    let blob = at
        .db
        .blob_open(DatabaseName::Main, at.table, "payload", at.id, true)
        .map_err(read_error)?;
    one_message(at.name, BufReader::with_capacity(64 * 1024, blob), options)
}

/// The only message `reader` holds, split as a file is; an error for none, or for more.
pub(super) fn one_message(
    name: &str,
    reader: impl BufRead,
    options: SplitOptions,
) -> Result<Message, InputError> {
    let mut split = Splitter::new(name, reader, options);
    let message = split.next().unwrap_or_else(|| {
        Err(InputError::NoMessages {
            name: name.to_string(),
        })
    })?;
    match split.next() {
        None => Ok(message),
        Some(Err(error)) => Err(error),
        Some(Ok(_)) => Err(InputError::SeveralMessages {
            name: name.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(bytes: &[u8]) -> Result<Message, InputError> {
        one_message("rx.db#7", bytes, SplitOptions::default())
    }

    #[test]
    fn a_payload_is_one_message_as_a_file_of_it_would_give() {
        let m = split(b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|X1|P|2.5\nPID|1\n").unwrap();
        assert_eq!(
            &m.payload[..],
            b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|X1|P|2.5\rPID|1\r"
        );
    }

    #[test]
    fn a_payload_that_is_not_one_message_is_refused_by_its_row() {
        let two =
            b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|X1|P|2.5\rMSH|^~\\&|A|B|C|D|2024||ADT^A01|X2|P|2.5\r";
        let injected = b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|X1|P|2.5\r\x1c\r\x0bMSH|^~\\&|A|B|C|D|2024||ADT^A01|X2|P|2.5\r";
        for (bytes, says) in [
            (&two[..], "more than one message"),
            (&injected[..], "FS byte"),
            (b"hello", "text before the first MSH"),
            (b"", "no HL7 message"),
            (b"MSH|^~\\&|A\x0b|B\r", "VT byte"),
        ] {
            let error = split(bytes).unwrap_err().to_string();
            assert!(error.starts_with("rx.db#7"), "{error}");
            assert!(error.contains(says), "{says}: {error}");
        }
    }
}
