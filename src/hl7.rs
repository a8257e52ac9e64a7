//! HL7 v2 header scanning without a full parser: MSH fields a transport needs, MSA of an ACK,
//! batch and concatenation detection. Works on any bytes and never panics.

/// The delimiters an HL7 message declares in MSH-1 and MSH-2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delimiters {
    /// MSH-1, the field separator (`|` by default).
    pub field: u8,
    /// Separates components of a field (`^` by default).
    pub component: u8,
    /// Separates repetitions of a field (`~` by default).
    pub repetition: u8,
    /// Introduces an escape sequence (`\` by default).
    pub escape: u8,
    /// Separates subcomponents of a component (`&` by default).
    pub subcomponent: u8,
}

impl Default for Delimiters {
    fn default() -> Self {
        Delimiters {
            field: b'|',
            component: b'^',
            repetition: b'~',
            escape: b'\\',
            subcomponent: b'&',
        }
    }
}

impl Delimiters {
    /// Delimiters from a field separator and MSH-2; characters MSH-2 leaves out take the defaults.
    pub fn from_header(field: u8, encoding_characters: &[u8]) -> Delimiters {
        let defaults = Delimiters::default();
        let at = |i: usize, default: u8| encoding_characters.get(i).copied().unwrap_or(default);
        Delimiters {
            field,
            component: at(0, defaults.component),
            repetition: at(1, defaults.repetition),
            escape: at(2, defaults.escape),
            subcomponent: at(3, defaults.subcomponent),
        }
    }

    /// The four encoding characters, as an MSH-2 that declares all of them.
    pub fn encoding_characters(&self) -> [u8; 4] {
        [
            self.component,
            self.repetition,
            self.escape,
            self.subcomponent,
        ]
    }
}

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
    fn parse_in(payload: &[u8], at: usize, segment: &'a [u8]) -> Option<Msh<'a>> {
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
                    Err(()) => self.segment[4..]
                        .split(|&b| b == self.delimiters.field)
                        .nth(n - 2),
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
    pub fn date_time(&self) -> Option<&'a [u8]> {
        self.field(7)
    }
    /// MSH-15, the accept acknowledgement type (`AL`, `NE`, `ER`, `SU`, or absent).
    pub fn accept_ack_type(&self) -> Option<&'a [u8]> {
        self.field(15)
    }
    /// MSH-16, the application acknowledgement type (`AL`, `NE`, `ER`, `SU`, or absent).
    pub fn application_ack_type(&self) -> Option<&'a [u8]> {
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
    /// MSH-15 or MSH-16 present and not empty.
    pub fn is_enhanced(&self) -> bool {
        let present = |f: Option<&[u8]>| f.is_some_and(|v| !v.is_empty());
        present(self.accept_ack_type()) || present(self.application_ack_type())
    }
}

/// The segments of a payload with their byte offsets. CR and LF each end a segment (so CRLF
/// does too); the empty segments between consecutive terminators are skipped.
pub fn segments(payload: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    Segments {
        payload,
        start: 0,
        base: 0,
        ends: mask::either_from(payload, 0, b'\r', b'\n'),
    }
}

/// The segments of a payload, their ends found 64 bytes at a time into a bit mask of the CRs
/// and LFs (segments are short: a search per segment costs more to start than to run).
struct Segments<'a> {
    payload: &'a [u8],
    /// Where the next segment starts.
    start: usize,
    /// Where the bytes `ends` stands for start.
    base: usize,
    /// One bit for each CR or LF from `base` on not reached yet.
    ends: u64,
}

impl<'a> Segments<'a> {
    /// The next CR or LF, or `None` past the last.
    #[inline(always)]
    fn next_end(&mut self) -> Option<usize> {
        while self.ends == 0 {
            self.base += mask::BLOCK;
            if self.base >= self.payload.len() {
                return None;
            }
            self.ends = mask::either_from(self.payload, self.base, b'\r', b'\n');
        }
        let at = self.base + self.ends.trailing_zeros() as usize;
        self.ends &= self.ends - 1;
        Some(at)
    }
}

impl<'a> Iterator for Segments<'a> {
    type Item = (usize, &'a [u8]);

    // Inlined into the loops over the segments: a call per segment costs more than its work.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let at = self.start;
            let Some(end) = self.next_end() else {
                // The last segment, when no terminator follows it.
                self.start = self.payload.len();
                return self
                    .payload
                    .get(at..)
                    .filter(|s| !s.is_empty())
                    .map(|s| (at, s));
            };
            self.start = end + 1;
            if end > at {
                return Some((at, &self.payload[at..end]));
            }
        }
    }
}

/// The segment is a batch or file envelope segment (FHS, BHS, BTS, FTS).
pub fn is_envelope_segment(segment: &[u8]) -> bool {
    matches!(segment.get(..3), Some(b"FHS" | b"BHS" | b"BTS" | b"FTS"))
}

/// How a payload is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One message.
    Single,
    /// FHS or BHS envelope (or a stray BTS/FTS), even when it holds no MSH.
    Batch,
    /// More than one MSH without a batch envelope.
    Concatenated,
    /// No MSH segment found (and no envelope).
    NoMsh,
}

/// The scan of one payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan<'a> {
    /// The first MSH of the payload.
    pub msh: Option<Msh<'a>>,
    /// Single message, batch, concatenated messages or no MSH.
    pub shape: Shape,
}

/// Find the first segment starting `MSH` (segments end in CR or LF) and classify the payload.
pub fn scan(payload: &[u8]) -> Scan<'_> {
    let mut msh = None;
    let mut msh_count = 0usize;
    let mut envelope = false;
    for (at, segment) in segments(payload) {
        if segment.starts_with(b"MSH") {
            msh_count += 1;
            if msh.is_none() {
                msh = Msh::parse_in(payload, at, segment);
            }
        } else if is_envelope_segment(segment) {
            envelope = true;
        }
    }
    let shape = if envelope {
        Shape::Batch
    } else if msh_count > 1 {
        Shape::Concatenated
    } else if msh.is_some() {
        Shape::Single
    } else {
        Shape::NoMsh
    };
    Scan { msh, shape }
}

/// The messages of a batch (or of concatenated messages): each runs from its MSH segment to the
/// next MSH or envelope segment, terminators included. Bytes before the first MSH and envelope
/// segments belong to no message.
pub fn split_batch(payload: &[u8]) -> Vec<&[u8]> {
    let mut messages = Vec::new();
    let mut current: Option<usize> = None;
    for (at, segment) in segments(payload) {
        let is_msh = segment.starts_with(b"MSH");
        if is_msh || is_envelope_segment(segment) {
            if let Some(start) = current.take() {
                messages.push(&payload[start..at]);
            }
            if is_msh {
                current = Some(at);
            }
        }
    }
    if let Some(start) = current {
        messages.push(&payload[start..]);
    }
    messages
}

/// Field `n` of a non-header segment (the segment name is field 0), split on `field_separator`.
pub fn segment_field(segment: &[u8], field_separator: u8, n: usize) -> Option<&[u8]> {
    segment.split(|&b| b == field_separator).nth(n)
}

/// What an ACK says: MSA-1, MSA-2, MSA-3 under the ACK's own field separator, and ERR-3's code if present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckView<'a> {
    /// MSA-1, the acknowledgement code as written; empty when absent.
    pub code: &'a [u8],
    /// MSA-2, the control ID of the message acknowledged; empty when absent.
    pub control_id: &'a [u8],
    /// MSA-3, the text; `None` when absent or empty.
    pub text: Option<&'a [u8]>,
    /// ERR-3's first component, the HL7 error code; `None` when absent or empty.
    pub error_code: Option<&'a [u8]>,
}

/// The delimiters a header segment declares, as [`Msh::parse`] reads them, without indexing
/// its fields: an ACK's reader needs nothing else from its header.
fn header_delimiters(segment: &[u8]) -> Delimiters {
    let Some(&field) = segment.get(3) else {
        return Delimiters::default();
    };
    let rest = segment.get(4..).unwrap_or_default();
    let end = memchr::memchr(field, rest).unwrap_or(rest.len());
    Delimiters::from_header(field, &rest[..end])
}

/// The delimiters of the first MSH, the first MSA and (with `want_err`) the first ERR of an
/// acknowledgement, reading no further than needed to find them.
fn ack_segments(
    payload: &[u8],
    want_err: bool,
) -> (Option<Delimiters>, Option<&[u8]>, Option<&[u8]>) {
    let mut delimiters = None;
    let mut msa = None;
    let mut err = None;
    for (_, segment) in segments(payload) {
        if delimiters.is_none() && segment.starts_with(b"MSH") {
            delimiters = Some(header_delimiters(segment));
        } else if msa.is_none() && segment.starts_with(b"MSA") {
            msa = Some(segment);
        } else if want_err && err.is_none() && segment.starts_with(b"ERR") {
            err = Some(segment);
        }
        if delimiters.is_some() && msa.is_some() && (err.is_some() || !want_err) {
            break;
        }
    }
    (delimiters, msa, err)
}

/// Read MSA of an acknowledgement payload; `None` when there is no MSH or no MSA.
/// Only the first MSA (and first ERR) is read.
pub fn scan_ack(payload: &[u8]) -> Option<AckView<'_>> {
    let (delimiters, msa, err) = ack_segments(payload, true);
    let delimiters = delimiters?;
    let msa = msa?;
    let field = |n| segment_field(msa, delimiters.field, n);
    let error_code = err
        .and_then(|e| segment_field(e, delimiters.field, 3))
        .and_then(|f| f.split(|&b| b == delimiters.component).next())
        .filter(|c| !c.is_empty());
    Some(AckView {
        code: field(1).unwrap_or_default(),
        control_id: field(2).unwrap_or_default(),
        text: field(3).filter(|t| !t.is_empty()),
        error_code,
    })
}

/// MSA-1 and MSA-2 of an acknowledgement, as [`scan_ack`] reads them (empty when absent),
/// reading no further than the MSA: a client credits every ACK it gets with these two alone.
pub fn ack_reply(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    if let Some(reply) = ack_reply_in_place(payload) {
        return Some(reply);
    }
    let (delimiters, msa, _) = ack_segments(payload, false);
    let separator = delimiters?.field;
    let mut fields = msa?.split(|&b| b == separator).skip(1);
    let code = fields.next().unwrap_or_default();
    let control_id = fields.next().unwrap_or_default();
    Some((code, control_id))
}

/// [`ack_reply`] of the usual ACK, MSA right behind MSH, read in one pass over the payload
/// in place: the header's end, then the ends of MSA's first three fields, found sixteen bytes
/// at a time in a mask of the bytes that end them (a search costs more to start than to run
/// on fields this short, and a byte at a time costs more than a mask). `None` for any other
/// shape, which the general reader handles.
fn ack_reply_in_place(payload: &[u8]) -> Option<(&[u8], &[u8])> {
    /// The first `N` places from `from` on that hold `a`, `b` or `c`, the payload's end for
    /// those that are not there.
    #[inline(always)]
    fn find<const N: usize>(payload: &[u8], from: usize, a: u8, b: u8, c: u8) -> [usize; N] {
        let len = payload.len();
        let mut ends = [len; N];
        let mut found = 0;
        let hits = |chunk: &[u8; 16]| mask::either16(chunk, a, b) | mask::either16(chunk, c, c);
        let mut take = |base: usize, mut m: u32| {
            while m != 0 && found < N {
                ends[found] = base + m.trailing_zeros() as usize;
                found += 1;
                m &= m - 1;
            }
            found == N
        };
        let mut at = from;
        // Thirty-two bytes a step while they last (a header is longer than that), then sixteen.
        while let Some(chunk) = payload.get(at..).and_then(<[u8]>::first_chunk::<32>) {
            let (low, high) = chunk.split_at(16);
            let (Some(low), Some(high)) = (low.first_chunk(), high.first_chunk()) else {
                break;
            };
            if take(at, hits(low) | hits(high) << 16) {
                return ends;
            }
            at += 32;
        }
        while let Some(chunk) = payload.get(at..).and_then(<[u8]>::first_chunk::<16>) {
            if take(at, hits(chunk)) {
                return ends;
            }
            at += 16;
        }
        if at < len {
            match payload.last_chunk::<16>() {
                // The last few bytes: the sixteen that end the payload, those before `at`
                // shifted out.
                Some(chunk) => {
                    take(at, hits(chunk) >> (at - (len - 16)));
                }
                None => {
                    let m = payload[at..]
                        .iter()
                        .enumerate()
                        .filter(|(_, &x)| x == a || x == b || x == c)
                        .fold(0u32, |m, (i, _)| m | 1 << i);
                    take(at, m);
                }
            }
        }
        ends
    }
    if !payload.starts_with(b"MSH") {
        return None;
    }
    let [header_end] = find::<1>(payload, 3, b'\r', b'\n', b'\n');
    // A bare `MSH` declares nothing: the default separator, as `header_delimiters` reads it.
    let separator = if header_end > 3 { payload[3] } else { b'|' };
    let mut at = header_end;
    while at < payload.len() && matches!(payload[at], b'\r' | b'\n') {
        at += 1;
    }
    if !payload[at..].starts_with(b"MSA") {
        return None;
    }
    // A separator among `MSA`'s own letters would split the segment's name: the general reader.
    if matches!(separator, b'M' | b'S' | b'A') {
        return None;
    }
    // Fields 1 and 2 of the MSA segment, split as `segment_field` splits it; the segment ends
    // at the first CR or LF, so each field ends at the first separator, CR or LF after the
    // one before, and only a separator there lets another field follow.
    let ends = find::<3>(payload, at + 3, separator, b'\r', b'\n');
    let more = |n: usize| payload.get(n) == Some(&separator);
    if !more(ends[0]) {
        return Some((&[], &[]));
    }
    let code = &payload[ends[0] + 1..ends[1]];
    if !more(ends[1]) {
        return Some((code, &[]));
    }
    Some((code, &payload[ends[1] + 1..ends[2]]))
}

pub(crate) mod mask;
pub(crate) mod msh_read;

#[cfg(test)]
mod tests;
