//! Which code answers: the MSH-15 table, the binding of a forced code, and the downgrades that
//! keep a positive code from ever covering an uncorrelatable or damaged inbound.

use super::{AckCode, Disposition, NackReason};

/// MSH-15, accept acknowledgement type (HL7 Table 0155), as far as it chooses the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AcceptAckType {
    /// Absent, empty, `""` (HL7 null) or `NE`: original-mode answers.
    Original,
    /// `AL`.
    Always,
    /// `ER`.
    ErrorOnly,
    /// `SU`.
    SuccessOnly,
    /// Anything else: answered as `Original`, with a warning.
    Unknown,
}

impl AcceptAckType {
    pub(crate) fn from_field(field: Option<&[u8]>) -> AcceptAckType {
        match field {
            None | Some(b"") | Some(b"\"\"") | Some(b"NE") => AcceptAckType::Original,
            Some(b"AL") => AcceptAckType::Always,
            Some(b"ER") => AcceptAckType::ErrorOnly,
            Some(b"SU") => AcceptAckType::SuccessOnly,
            Some(_) => AcceptAckType::Unknown,
        }
    }

    /// This value's row of the MSH-15 table: codes for committed, commit failed, rejected.
    pub(crate) fn codes(self) -> [AckCode; 3] {
        use AckCode::*;
        match self {
            AcceptAckType::Original | AcceptAckType::Unknown => [AA, AE, AR],
            AcceptAckType::Always => [CA, CE, CR],
            AcceptAckType::ErrorOnly => [AA, CE, CR],
            AcceptAckType::SuccessOnly => [CA, AE, AR],
        }
    }
}

/// Why the inbound cannot have a positive answer, whatever became of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Defect {
    NoMsh,
    /// MSH-1 or MSH-2 declares a letter or digit: no answer written under it could be read back.
    UnusableDelimiters,
    EmptyControlId,
    Batch,
    Concatenated,
    Damaged,
}

impl Defect {
    fn reason(self) -> NackReason {
        match self {
            Defect::Damaged => NackReason::DiscardedBytes,
            _ => NackReason::UncorrelatableInbound,
        }
    }
}

/// What a negative answer says in MSA-3 and ERR-3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NegativeCause {
    CommitFailed,
    Rejected,
    Defect(Defect),
    /// A negative code forced on a committed, sound message.
    Forced,
}

impl NegativeCause {
    /// HL7 Table 0357 code and its name.
    pub(crate) fn error(self) -> (&'static str, &'static str) {
        match self {
            NegativeCause::CommitFailed | NegativeCause::Rejected | NegativeCause::Forced => {
                ("207", "Application internal error")
            }
            NegativeCause::Defect(Defect::EmptyControlId) => ("101", "Required field missing"),
            NegativeCause::Defect(Defect::UnusableDelimiters) => ("102", "Data type error"),
            NegativeCause::Defect(_) => ("100", "Segment sequence error"),
        }
    }

    /// The fixed MSA-3 phrase; never payload content.
    pub(crate) fn text(self) -> &'static str {
        match self {
            NegativeCause::CommitFailed => "Message could not be committed",
            NegativeCause::Rejected => "Message rejected by the receiving application",
            NegativeCause::Forced => "Negative acknowledgement forced by the receiver",
            NegativeCause::Defect(defect) => match defect {
                Defect::NoMsh => "No MSH segment",
                Defect::UnusableDelimiters => "Unusable delimiters in MSH-1 or MSH-2",
                Defect::EmptyControlId => "Empty message control ID (MSH-10)",
                Defect::Batch => "Batch frame not acknowledged per message",
                Defect::Concatenated => "More than one message in one frame",
                Defect::Damaged => "Frame damaged in transit: bytes were discarded",
            },
        }
    }
}

/// The answer decided: the code, its public reason, and what a negative one says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Decision {
    pub(crate) code: AckCode,
    pub(crate) reason: Option<NackReason>,
    /// `Some` exactly when the code is not positive.
    pub(crate) negative: Option<NegativeCause>,
    /// The inbound's MSH-10 cannot be echoed (no usable MSH): MSA-2 stays empty.
    pub(crate) headerless: bool,
}

/// Decide the code. `row` is the MSH-15 row; a forced code is honoured only as far as the
/// disposition allows (never positive for a failed or rejected message), and every positive code
/// meets the downgrades.
pub(crate) fn decide(
    row: [AckCode; 3],
    disposition: Disposition,
    defect: Option<Defect>,
    forced: Option<AckCode>,
) -> Decision {
    let natural = row[match disposition {
        Disposition::Committed => 0,
        Disposition::CommitFailed => 1,
        Disposition::Rejected => 2,
    }];
    let mut code = match forced {
        Some(f) if f.is_positive() => bind(f, disposition),
        Some(f) => f,
        None => natural,
    };
    if code.is_positive() && defect.is_some() {
        code = downgrade(code);
    }
    // A defect is why such an inbound was never kept, so it is what the answer names.
    let cause = match (defect, disposition, forced) {
        (Some(d), _, _) => NegativeCause::Defect(d),
        (None, _, Some(f)) if !f.is_positive() => NegativeCause::Forced,
        (None, Disposition::Rejected, _) => NegativeCause::Rejected,
        (None, Disposition::CommitFailed, _) => NegativeCause::CommitFailed,
        (None, Disposition::Committed, _) => NegativeCause::Forced,
    };
    let negative = (!code.is_positive()).then_some(cause);
    let reason = negative.and_then(|cause| match (cause, defect) {
        (_, Some(d)) => Some(d.reason()),
        (NegativeCause::Rejected, _) => Some(NackReason::HandlerRejected),
        (NegativeCause::Forced, None) if matches!(code, AckCode::AR | AckCode::CR) => {
            Some(NackReason::HandlerRejected)
        }
        _ => None,
    });
    Decision {
        code,
        reason,
        negative,
        headerless: matches!(defect, Some(Defect::NoMsh | Defect::UnusableDelimiters)),
    }
}

/// A positive code at the same level, made to tell the truth about the disposition.
fn bind(positive: AckCode, disposition: Disposition) -> AckCode {
    use AckCode::*;
    match (disposition, positive.is_commit_level()) {
        (Disposition::Committed, _) => positive,
        (Disposition::CommitFailed, false) => AE,
        (Disposition::CommitFailed, true) => CE,
        (Disposition::Rejected, false) => AR,
        (Disposition::Rejected, true) => CR,
    }
}

/// `AA` -> `AE`, `CA` -> `CE`; other codes unchanged.
pub(crate) fn downgrade(code: AckCode) -> AckCode {
    match code {
        AckCode::AA => AckCode::AE,
        AckCode::CA => AckCode::CE,
        other => other,
    }
}
