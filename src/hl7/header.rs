//! The header segment (MSH, and FHS and BHS, laid out alike) with its first field separators
//! indexed once, so the fields a transport reads again and again cost no rescan: a fast path
//! of the reader ([`Segment`]), which its tests hold it to.

use super::mask;
use super::{Delimiters, Segment};

/// The first nine field separators of a header after MSH-1, where MSH-3 to MSH-10 lie.
#[derive(Debug, Clone, Copy)]
pub(crate) struct IndexedFields<'i>(&'i [u32; 9]);

impl IndexedFields<'_> {
    /// Where MSH-n (3 to 10) lies in the segment, as [`Msh::span`] finds it: between the
    /// (n-3)th and the (n-2)th separator.
    #[inline]
    pub(crate) fn span(self, n: usize) -> (usize, usize) {
        debug_assert!((3..=10).contains(&n));
        (self.0[n - 3] as usize + 1, self.0[n - 2] as usize)
    }
}

/// The MSH segment of a payload, its fields as byte slices. Field `n` is HL7's MSH-n
/// (MSH-1 is the field separator itself, MSH-2 the encoding characters).
///
/// The same layout serves FHS and BHS, which declare their delimiters the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msh<'a> {
    /// Declared in MSH-1 and MSH-2, defaults for what MSH-2 leaves out.
    pub delimiters: Delimiters,
    /// MSH-2 exactly as written.
    pub encoding_characters: &'a [u8],
    /// The MSH segment, without its terminator.
    pub segment: &'a [u8],
    /// Where the fields end, found once: reading a field does not rescan the segment.
    fields: FieldIndex,
}

/// Separators indexed per header: fields up to MSH-21 are read without a rescan.
const INDEXED: usize = 20;

/// The offsets of the first field separators after MSH-1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FieldIndex {
    seps: [u32; INDEXED],
    len: u8,
    /// `seps` holds every separator of the segment.
    complete: bool,
}

impl FieldIndex {
    fn of(segment: &[u8], field: u8) -> FieldIndex {
        FieldIndex::within(segment, 0, segment.len(), field)
    }

    /// The index of the segment `bytes[at..at + len]`, whose blocks are read from `bytes` as
    /// they lie there: past the segment's end too, the bits beyond it cleared (a block short of
    /// the segment's end costs a copy, one of the bytes around it none).
    fn within(bytes: &[u8], at: usize, len: usize, field: u8) -> FieldIndex {
        let mut index = FieldIndex {
            seps: [0; INDEXED],
            len: 0,
            complete: false,
        };
        // Offsets are u32: a longer segment is read without the index.
        if len < 4 || len > u32::MAX as usize {
            return index;
        }
        // The count is kept in a local while the separators are found: in the struct it would
        // be stored and reloaded at each one.
        let mut found = 0usize;
        // A block at a time into a mask of the separators (fields are short: a memchr call per
        // field costs more than it saves).
        let mut base = 4;
        while base < len {
            let mut hits = mask::one_from(bytes, at + base, field);
            if len - base < mask::BLOCK {
                hits &= (1u64 << (len - base)) - 1;
            }
            while hits != 0 {
                let Some(slot) = index.seps.get_mut(found) else {
                    index.len = found as u8;
                    return index;
                };
                *slot = (base + hits.trailing_zeros() as usize) as u32;
                found += 1;
                hits &= hits - 1;
            }
            base += mask::BLOCK;
        }
        index.len = found as u8;
        index.complete = true;
        index
    }

    /// Field `i` counted from MSH-2 (`i == 0`), as a range of the segment; `Err` when the index
    /// does not reach it.
    #[inline]
    fn range(&self, i: usize, segment_len: usize) -> Result<Option<(usize, usize)>, ()> {
        let len = usize::from(self.len);
        let start = match i {
            0 => 4,
            _ if i - 1 < len => self.seps[i - 1] as usize + 1,
            _ if self.complete => return Ok(None),
            _ => return Err(()),
        };
        let end = match i {
            _ if i < len => self.seps[i] as usize,
            _ if self.complete => segment_len,
            _ => return Err(()),
        };
        Ok(Some((start, end)))
    }
}

impl<'a> Msh<'a> {
    /// Read a header segment (MSH, BHS or FHS layout); `None` when it is shorter than its name.
    /// A segment that ends right after its name gets the default delimiters and no fields.
    pub fn parse(segment: &'a [u8]) -> Option<Msh<'a>> {
        Msh::parse_in(segment, 0, segment)
    }

    /// [`Msh::parse`] of `segment`, which lies at `at` in `payload`: the separators are found
    /// in the payload's blocks as they lie.
    #[inline]
    pub(super) fn parse_in(payload: &[u8], at: usize, segment: &'a [u8]) -> Option<Msh<'a>> {
        debug_assert!(payload.get(at..at + segment.len()) == Some(segment));
        if segment.len() < 3 {
            return None;
        }
        let Some(&field) = segment.get(3) else {
            return Some(Msh {
                delimiters: Delimiters::default(),
                encoding_characters: &[],
                segment,
                fields: FieldIndex::of(segment, b'|'),
            });
        };
        let fields = FieldIndex::within(payload, at, segment.len(), field);
        let rest = segment.get(4..).unwrap_or_default();
        let end = match fields.len {
            0 if !fields.complete => memchr::memchr(field, rest).unwrap_or(rest.len()),
            0 => rest.len(),
            _ => fields.seps[0] as usize - 4,
        };
        let encoding_characters = &rest[..end];
        Some(Msh {
            delimiters: Delimiters::from_header(field, encoding_characters),
            encoding_characters,
            segment,
            fields,
        })
    }

    /// MSH-n as written; `None` when the segment is too short. Never reads past the segment.
    /// `field(0)` is the segment name.
    #[inline]
    pub fn field(&self, n: usize) -> Option<&'a [u8]> {
        match n {
            0 => self.segment.get(..3),
            1 => self.segment.get(3..4),
            _ => {
                if self.segment.len() < 4 {
                    return None;
                }
                match self.fields.range(n - 2, self.segment.len()) {
                    Ok(range) => range.map(|(start, end)| &self.segment[start..end]),
                    // Past the index: the reader's own reading.
                    Err(()) => Segment::new(self.segment, self.delimiters)
                        .field(n)
                        .map(|v| v.raw()),
                }
            }
        }
    }
    /// Where MSH-n (`n >= 2`) lies in the segment, as [`Msh::field`] finds it.
    #[inline]
    pub(crate) fn span(&self, n: usize) -> Option<(usize, usize)> {
        if n >= 2 && self.segment.len() >= 4 {
            if let Ok(range) = self.fields.range(n - 2, self.segment.len()) {
                return range;
            }
        }
        let field = self.field(n)?;
        let start = (field.as_ptr() as usize).checked_sub(self.segment.as_ptr() as usize)?;
        Some((start, start + field.len()))
    }
    /// MSH-3 to MSH-10 read straight off the index; `None` when it does not reach MSH-10's end,
    /// where [`Msh::span`] places each field on its own.
    #[inline]
    pub(crate) fn indexed_to_msh10(&self) -> Option<IndexedFields<'_>> {
        let seps = self.fields.seps[..usize::from(self.fields.len)].get(..9)?;
        seps.try_into().ok().map(IndexedFields)
    }
    /// Component `c` (1-based) of MSH-n; `None` when absent.
    pub fn component(&self, n: usize, c: usize) -> Option<&'a [u8]> {
        let field = self.field(n)?;
        field
            .split(|&b| b == self.delimiters.component)
            .nth(c.checked_sub(1)?)
    }
    /// MSH-10, the message control ID an ACK's MSA-2 must echo.
    pub fn control_id(&self) -> Option<&'a [u8]> {
        self.field(10)
    }
    /// MSH-9, the message type (e.g. `ADT^A01^ADT_A01`).
    pub fn message_type(&self) -> Option<&'a [u8]> {
        self.field(9)
    }
    /// MSH-7, the date and time of the message.
    pub(crate) fn date_time(&self) -> Option<&'a [u8]> {
        self.field(7)
    }
    /// MSH-15, the accept acknowledgement type (`AL`, `NE`, `ER`, `SU`, or absent).
    pub(crate) fn accept_ack_type(&self) -> Option<&'a [u8]> {
        self.field(15)
    }
    /// MSH-16, the application acknowledgement type (`AL`, `NE`, `ER`, `SU`, or absent).
    pub(crate) fn application_ack_type(&self) -> Option<&'a [u8]> {
        self.field(16)
    }
    /// MSH-9's first component is `ACK`.
    pub fn is_ack(&self) -> bool {
        // The first component is `ACK`: the field opens with it, no component separator is
        // among its letters, and the field ends or its next component starts right after it.
        let Some(field) = self.field(9) else {
            return false;
        };
        let component = self.delimiters.component;
        field.get(..3) == Some(b"ACK")
            && !matches!(component, b'A' | b'C' | b'K')
            && field.get(3).is_none_or(|&b| b == component)
    }
}
