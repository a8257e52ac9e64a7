//! A message read in place: its segments and their fields, under the delimiters its first
//! header declares, without copying or allocating.

use super::{segments, Delimiters, Path, Value, Values};
use std::fmt;

/// A message (or a batch kept whole) read in place, never failing: whatever the bytes, each
/// segment and field is what the notation makes of them. `Debug` shows the length, never the
/// bytes.
///
/// Segments end at CR or LF (so at CRLF too); blank lines between them are no segments. Each
/// segment is read under the delimiters the header segment (MSH, FHS or BHS) before it
/// declares: the first one's for any segment before it, the defaults when there is none.
///
/// ```
/// use mllp::hl7::{Message, Path};
///
/// let bytes = b"MSH|^~\\&|LAB|FAC|||20240101||ORU^R01|C1|P|2.5\rPID|1||123^^^H~456||DOE^JANE\r";
/// let message = Message::new(bytes);
/// let path: Path = "PID-5.2".parse()?;
/// assert_eq!(message.get(&path).raw(), b"JANE");
/// let every: Path = "PID-3(*).1".parse()?;
/// let ids: Vec<_> = message.values(&every).map(|v| v.raw()).collect();
/// assert_eq!(ids, [&b"123"[..], b"456"]);
/// assert_eq!(message.get(&"MSH-1".parse()?).raw(), b"|");
/// assert!(message.get(&"OBX-5".parse()?).is_empty());
/// # Ok::<(), mllp::hl7::PathError>(())
/// ```
#[derive(Clone, Copy)]
pub struct Message<'a> {
    bytes: &'a [u8],
    delimiters: Delimiters,
}

impl<'a> Message<'a> {
    /// Read `bytes` as a message.
    pub fn new(bytes: &'a [u8]) -> Message<'a> {
        let delimiters = match bytes.get(..3) {
            // The usual start: the first segment is the header.
            Some(b"MSH" | b"FHS" | b"BHS") => Delimiters::of_header(bytes),
            _ => segments(bytes)
                .map(|(_, s)| s)
                .find(|s| is_header_name(s) || s.starts_with(b"MSH"))
                .map(Delimiters::of_header)
                .unwrap_or_default(),
        };
        Message { bytes, delimiters }
    }

    /// The bytes, as given.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The delimiters its first header segment declares.
    pub fn delimiters(&self) -> Delimiters {
        self.delimiters
    }

    /// The segments, in order, each under the delimiters of the header segment before it (the
    /// messages of a batch may each declare their own).
    pub fn segments(&self) -> impl Iterator<Item = Segment<'a>> + 'a {
        let mut delimiters = self.delimiters;
        segments(self.bytes).map(move |(offset, bytes)| {
            if is_header_name(bytes) && bytes.len() > 3 {
                delimiters = Delimiters::of_header(bytes);
            }
            Segment {
                bytes,
                offset,
                delimiters,
            }
        })
    }

    /// The `occurrence`th (from 1) segment named `name`.
    pub fn segment(&self, name: &[u8], occurrence: usize) -> Option<Segment<'a>> {
        self.segments()
            .filter(|s| s.name() == name)
            .nth(occurrence.checked_sub(1)?)
    }

    /// The first value `path` names, or the empty value when it names nothing.
    pub fn get(&self, path: &Path) -> Value<'a> {
        self.values(path)
            .next()
            .unwrap_or(Value::empty(self.delimiters))
    }

    /// Every value `path` names, in order. Without `*`: one value when the segment is there
    /// (empty when it has no such field, repetition or component), none when it is not. With
    /// `*`: one for each segment occurrence and repetition there is.
    pub fn values<'p>(&self, path: &'p Path) -> Values<'a, 'p> {
        Values::new(*self, path)
    }
}

impl fmt::Debug for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// A header segment's name: MSH, FHS or BHS, whose MSH-1 and MSH-2 declare the delimiters.
pub(super) fn is_header_name(segment: &[u8]) -> bool {
    matches!(segment.get(..3), Some(b"MSH" | b"FHS" | b"BHS"))
}

/// One segment of a message, without its terminator. `Debug` shows its name's length and its
/// own, never its bytes.
#[derive(Clone, Copy)]
pub struct Segment<'a> {
    bytes: &'a [u8],
    offset: usize,
    delimiters: Delimiters,
}

impl<'a> Segment<'a> {
    /// A segment read on its own (its terminator left off), under `delimiters`.
    pub fn new(bytes: &'a [u8], delimiters: Delimiters) -> Segment<'a> {
        Segment::at(bytes, 0, delimiters)
    }

    /// A header segment read on its own (MSH, FHS or BHS, its terminator left off), under the
    /// delimiters it declares.
    pub fn header(bytes: &'a [u8]) -> Segment<'a> {
        Segment::new(bytes, Delimiters::of_header(bytes))
    }

    pub(super) fn at(bytes: &'a [u8], offset: usize, delimiters: Delimiters) -> Segment<'a> {
        Segment {
            bytes,
            offset,
            delimiters,
        }
    }

    /// The bytes of the segment, without its terminator.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Where the segment starts in the message.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// A header segment (MSH, FHS, BHS): field 1 is the field separator, field 2 the encoding
    /// characters.
    pub fn is_header(&self) -> bool {
        is_header_name(self.bytes) && self.bytes.len() > 3
    }

    /// The segment's name: the bytes before the first field separator (the first three of a
    /// header segment).
    pub fn name(&self) -> &'a [u8] {
        if self.is_header() {
            return &self.bytes[..3];
        }
        let end = memchr::memchr(self.delimiters.field, self.bytes).unwrap_or(self.bytes.len());
        &self.bytes[..end]
    }

    /// The bytes after the name's separator, where fields 1 (2 in a header) and on lie; `None`
    /// when the segment is its name alone.
    fn after_name(&self) -> Option<&'a [u8]> {
        let from = if self.is_header() {
            4
        } else {
            self.name().len() + 1
        };
        self.bytes.get(from..)
    }

    /// Field `n` as the HL7 tables number it (`0` is the name; MSH-1 the field separator and
    /// MSH-2 the encoding characters); `None` when the segment ends before it.
    pub fn field(&self, n: usize) -> Option<Value<'a>> {
        let d = self.delimiters;
        match n {
            0 => return Some(Value::new(self.name(), d)),
            1 if self.is_header() => return Some(Value::literal(&self.bytes[3..4], d)),
            _ => {}
        }
        let rest = self.after_name()?;
        let (first, literal_first) = if self.is_header() {
            (2, true)
        } else {
            (1, false)
        };
        let raw = nth_piece(rest, d.field, n - first)?;
        Some(if literal_first && n == 2 {
            Value::literal(raw, d)
        } else {
            Value::new(raw, d)
        })
    }

    /// The number of the last field the segment has (0 when it is its name alone).
    pub fn field_count(&self) -> usize {
        let Some(rest) = self.after_name() else {
            return usize::from(self.is_header());
        };
        let first = if self.is_header() { 2 } else { 1 };
        first + memchr::memchr_iter(self.delimiters.field, rest).count()
    }

    /// Fields 1 to [`Segment::field_count`], each with its number.
    pub fn fields(&self) -> impl Iterator<Item = (usize, Value<'a>)> + 'a {
        let d = self.delimiters;
        let header = self.is_header();
        let separator = header.then(|| (1, Value::literal(&self.bytes[3..4], d)));
        let first = if header { 2 } else { 1 };
        let rest = self
            .after_name()
            .map(move |r| r.split(move |&b| b == d.field));
        let numbered = rest.into_iter().flatten().enumerate().map(move |(i, raw)| {
            let n = first + i;
            match header && n == 2 {
                true => (n, Value::literal(raw, d)),
                false => (n, Value::new(raw, d)),
            }
        });
        separator.into_iter().chain(numbered)
    }
}

/// Piece `k` (from 0) of `bytes` split at `separator`, as `split(..).nth(k)` gives it; the
/// separators found by `memchr` rather than a byte at a time.
#[inline]
pub(super) fn nth_piece(bytes: &[u8], separator: u8, k: usize) -> Option<&[u8]> {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(separator, bytes);
    for _ in 0..k {
        start = ends.next()? + 1;
    }
    let end = ends.next().unwrap_or(bytes.len());
    Some(&bytes[start..end])
}

impl fmt::Debug for Segment<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Segment")
            .field("offset", &self.offset)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}
