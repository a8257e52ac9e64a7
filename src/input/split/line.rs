//! What a line is, by its first bytes: blank, an MSH, a batch header or trailer, or other.

/// What a line is, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LineKind {
    Blank,
    Msh,
    /// FHS or BHS.
    BatchHeader(Trailer),
    /// BTS or FTS.
    BatchTrailer(Trailer),
    Other,
}

/// The trailer that closes a batch: FTS closes FHS, BTS closes BHS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trailer {
    Fts,
    Bts,
}

pub(super) fn classify(line: &[u8]) -> LineKind {
    // Most lines are told by their first byte alone: no blank, MSH or batch line starts so.
    if line
        .first()
        .is_some_and(|b| !matches!(b, b' ' | b'\t' | b'M' | b'F' | b'B'))
    {
        return LineKind::Other;
    }
    if line.iter().all(|&b| b == b' ' || b == b'\t') {
        return LineKind::Blank;
    }
    let separator_ok = line.get(3).is_none_or(|b| !b.is_ascii_alphanumeric());
    match line.get(..3) {
        Some(b"MSH") if line.len() > 3 && separator_ok => LineKind::Msh,
        Some(b"FHS") if separator_ok => LineKind::BatchHeader(Trailer::Fts),
        Some(b"BHS") if separator_ok => LineKind::BatchHeader(Trailer::Bts),
        Some(b"FTS") if separator_ok => LineKind::BatchTrailer(Trailer::Fts),
        Some(b"BTS") if separator_ok => LineKind::BatchTrailer(Trailer::Bts),
        _ => LineKind::Other,
    }
}
