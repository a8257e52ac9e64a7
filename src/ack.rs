//! Acknowledgement building that can never lie: the code follows MSH-15 and the commit outcome,
//! and is downgraded whenever the inbound cannot be correlated or was damaged.

mod batch;
mod ids;
mod policy;
pub(crate) mod render;
mod template;
#[cfg(test)]
pub(crate) mod tests;

pub use batch::{build_batch_ack, BuiltBatchAck};
pub(crate) use ids::{hl7_timestamp, next_control_id};
pub(crate) use template::AckTemplate;

use crate::hl7::{self, Shape};
use crate::warning::WarningCode;
use policy::AcceptAckType;
pub(crate) use policy::Defect;
use serde::Serialize;
use std::fmt;

/// HL7 Table 0008.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum AckCode {
    /// Application accept: the message was processed. Positive.
    AA,
    /// Application error: the message was not processed.
    AE,
    /// Application reject: the receiving application refused the message.
    AR,
    /// Commit accept: the message was committed (enhanced mode). Positive.
    CA,
    /// Commit error: the message was not committed.
    CE,
    /// Commit reject: the message was refused, not committed.
    CR,
}

impl AckCode {
    /// Every code, in declaration order: `code as usize` indexes it.
    pub const ALL: [AckCode; 6] = [
        AckCode::AA,
        AckCode::AE,
        AckCode::AR,
        AckCode::CA,
        AckCode::CE,
        AckCode::CR,
    ];

    /// The code as it appears in MSA-1.
    pub fn as_str(self) -> &'static str {
        match self {
            AckCode::AA => "AA",
            AckCode::AE => "AE",
            AckCode::AR => "AR",
            AckCode::CA => "CA",
            AckCode::CE => "CE",
            AckCode::CR => "CR",
        }
    }
    /// The code MSA-1 holds, byte for byte; `None` for anything outside this table.
    pub fn parse(bytes: &[u8]) -> Option<AckCode> {
        match bytes {
            b"AA" => Some(AckCode::AA),
            b"AE" => Some(AckCode::AE),
            b"AR" => Some(AckCode::AR),
            b"CA" => Some(AckCode::CA),
            b"CE" => Some(AckCode::CE),
            b"CR" => Some(AckCode::CR),
            _ => None,
        }
    }
    /// `AA` or `CA`: the only codes that credit a message.
    pub fn is_positive(self) -> bool {
        matches!(self, AckCode::AA | AckCode::CA)
    }
    /// An accept (commit) acknowledgement code: CA, CE, CR.
    pub(crate) fn is_commit_level(self) -> bool {
        matches!(self, AckCode::CA | AckCode::CE | AckCode::CR)
    }
    /// The same answer at application level (`CA` -> `AA`, `CE` -> `AE`, `CR` -> `AR`).
    pub(crate) fn application_level(self) -> AckCode {
        match self {
            AckCode::CA => AckCode::AA,
            AckCode::CE => AckCode::AE,
            AckCode::CR => AckCode::AR,
            other => other,
        }
    }
}

impl fmt::Display for AckCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What became of the inbound at the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// The sink kept the message.
    Committed,
    /// The sink failed to keep it (or it could not be kept truthfully); nothing holds it.
    CommitFailed,
    /// The receiving application refused it; nothing holds it.
    Rejected,
}

/// Why a positive code was not given. Reason strings are public.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NackReason {
    /// The receiving application refused the message, or a reject code was forced
    /// (`handler-rejected`).
    HandlerRejected,
    /// The inbound cannot be correlated: no MSH, unusable delimiters, empty MSH-10, a batch not
    /// answered per message, or several messages in one frame (`uncorrelatable-inbound`).
    UncorrelatableInbound,
    /// The frame was damaged in transit, bytes were discarded (`discarded-bytes`).
    DiscardedBytes,
}

impl NackReason {
    /// The stable reason string, as in JSON `reason` fields.
    pub fn as_str(self) -> &'static str {
        match self {
            NackReason::HandlerRejected => "handler-rejected",
            NackReason::UncorrelatableInbound => "uncorrelatable-inbound",
            NackReason::DiscardedBytes => "discarded-bytes",
        }
    }
}

/// Inputs the builder cannot derive from the inbound.
#[derive(Debug, Clone, Default)]
pub struct AckContext {
    /// MSH-10 of the ACK itself (must be fresh per ACK).
    pub control_id: String,
    /// MSH-7 of the ACK, `YYYYMMDDHHMMSS` style.
    pub timestamp: String,
    /// MSA-3 text for a negative ACK; a fixed phrase, never payload content.
    pub text: Option<String>,
    /// `text` is the committing program's own words (made safe): MSA-3 whatever the code, and
    /// ERR-8 (user message) too when the answer is negative.
    pub worded: bool,
    /// Force this code (testing); still bound by the commit contract and the downgrades.
    pub forced: Option<AckCode>,
}

impl AckContext {
    /// A context with a fresh control ID and the current time.
    pub fn fresh() -> AckContext {
        AckContext {
            control_id: next_control_id(),
            timestamp: hl7_timestamp(std::time::SystemTime::now()),
            text: None,
            worded: false,
            forced: None,
        }
    }
}

/// A built acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltAck {
    /// The ACK message, unframed, segments ending in CR.
    pub payload: Vec<u8>,
    /// Its MSA-1.
    pub code: AckCode,
    /// Set when the answer is non-positive for a reason other than a plain commit failure.
    pub reason: Option<NackReason>,
    /// Warnings about the inbound found while answering it (e.g. an unknown MSH-15).
    pub warnings: Vec<WarningCode>,
}

/// Build the accept-level answer to `inbound`. `None` when the inbound is itself an ACK.
/// `damaged` is true when the frame carried `MLLP_TRAILING_BYTES`.
pub fn build_ack(
    inbound: &[u8],
    disposition: Disposition,
    damaged: bool,
    ctx: &AckContext,
) -> Option<BuiltAck> {
    let scan = hl7::scan(inbound);
    let is_ack = scan.msh.as_ref().is_some_and(|m| m.is_ack());
    let answer = answer(
        &scan,
        is_ack,
        disposition,
        defect_of(&scan, damaged),
        ctx,
        Vec::with_capacity(256),
        None,
    );
    answer.map(|(built, _)| built)
}

/// [`build_ack`] for an inbound already scanned (the server scans each message once; `is_ack`
/// is whether its MSH says it is an ACK), written into `payload` (cleared first) so a caller can
/// reuse one buffer; `defect` is [`defect_of`] the scan (a caller that has already found none
/// need not look again); with `template`, patched from the last answer when the header allows, and
/// kept as the next template. With the answer comes whether it is known to hold neither VT nor
/// FS, so framing it needs no search.
pub(crate) fn answer(
    scan: &hl7::Scan<'_>,
    is_ack: bool,
    disposition: Disposition,
    defect: Option<Defect>,
    ctx: &AckContext,
    mut payload: Vec<u8>,
    template: Option<&mut AckTemplate>,
) -> Option<(BuiltAck, bool)> {
    payload.clear();
    let (answered, unframed) = answer_into(
        scan,
        is_ack,
        disposition,
        defect,
        ctx,
        &mut payload,
        template,
    )?;
    let built = BuiltAck {
        payload,
        code: answered.code,
        reason: answered.reason,
        warnings: answered.warnings,
    };
    Some((built, unframed))
}

/// What an answer written by [`answer_into`] says, besides its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answered {
    /// Its MSA-1.
    pub(crate) code: AckCode,
    /// As [`BuiltAck::reason`].
    pub(crate) reason: Option<NackReason>,
    /// As [`BuiltAck::warnings`].
    pub(crate) warnings: Vec<WarningCode>,
}

/// [`answer`], appended to `out` as it stands (a write buffer that frames it there, so the ACK
/// is not copied again); nothing is written for an inbound ACK.
pub(crate) fn answer_into(
    scan: &hl7::Scan<'_>,
    is_ack: bool,
    disposition: Disposition,
    defect: Option<Defect>,
    ctx: &AckContext,
    out: &mut Vec<u8>,
    template: Option<&mut AckTemplate>,
) -> Option<(Answered, bool)> {
    if is_ack {
        return None;
    }
    let msh = scan.msh.as_ref();
    let ack_type = AcceptAckType::from_field(msh.and_then(|m| m.accept_ack_type()));
    let decision = policy::decide(ack_type.codes(), disposition, defect, ctx.forced);
    let mut warnings = Vec::new();
    if ack_type == AcceptAckType::Unknown {
        warnings.push(WarningCode::UnknownAcceptAckType);
    }
    let unframed = render_appended(out, msh, &decision, ctx, template);
    let answered = Answered {
        code: decision.code,
        reason: decision.reason,
        warnings,
    };
    Some((answered, unframed))
}

/// MSH-16 (application acknowledgement type) asks for an application ACK for this outcome:
/// `AL` always, `ER` only on failure, `SU` only on success; `NE`, empty or anything else never.
pub(crate) fn wants_application_ack(msh: &hl7::Msh<'_>, success: bool) -> bool {
    match msh.application_ack_type() {
        Some(b"AL") => true,
        Some(b"ER") => !success,
        Some(b"SU") => success,
        _ => false,
    }
}

/// Build the enhanced-mode application acknowledgement (`AA`/`AE`/`AR`, same MSA-2 as the
/// accept ACK), bound by the same contract and downgrades as [`build_ack`]. `None` when the
/// inbound is an ACK, has no MSH, or its MSH-16 does not ask for one for this outcome.
pub fn build_application_ack(
    inbound: &[u8],
    disposition: Disposition,
    damaged: bool,
    ctx: &AckContext,
) -> Option<BuiltAck> {
    application_answer(
        &hl7::scan(inbound),
        disposition,
        damaged,
        ctx,
        Vec::with_capacity(256),
    )
}

/// [`build_application_ack`] for an inbound already scanned, written into `payload`.
pub(crate) fn application_answer(
    scan: &hl7::Scan<'_>,
    disposition: Disposition,
    damaged: bool,
    ctx: &AckContext,
    payload: Vec<u8>,
) -> Option<BuiltAck> {
    let msh = scan.msh.as_ref()?;
    if msh.is_ack() {
        return None;
    }
    let decision = policy::decide(
        AcceptAckType::Original.codes(),
        disposition,
        defect_of(scan, damaged),
        ctx.forced.map(AckCode::application_level),
    );
    if !wants_application_ack(msh, decision.code.is_positive()) {
        return None;
    }
    let (built, _) = render_into(payload, Some(msh), &decision, ctx, Vec::new(), None);
    Some(built)
}

/// The answer for `decision`, written into `payload` (cleared first), and whether it is known
/// to hold neither VT nor FS (only a template says so).
fn render_into(
    mut payload: Vec<u8>,
    msh: Option<&hl7::Msh<'_>>,
    decision: &policy::Decision,
    ctx: &AckContext,
    warnings: Vec<WarningCode>,
    template: Option<&mut AckTemplate>,
) -> (BuiltAck, bool) {
    payload.clear();
    let unframed = render_appended(&mut payload, msh, decision, ctx, template);
    let built = BuiltAck {
        payload,
        code: decision.code,
        reason: decision.reason,
        warnings,
    };
    (built, unframed)
}

/// The answer for `decision`, appended to `out`, and whether it is known to hold neither VT nor
/// FS (only a template says so).
fn render_appended(
    out: &mut Vec<u8>,
    msh: Option<&hl7::Msh<'_>>,
    decision: &policy::Decision,
    ctx: &AckContext,
    template: Option<&mut AckTemplate>,
) -> bool {
    let (Some(template), Some(msh)) = (template, msh) else {
        render::ack_into(out, msh, decision, ctx);
        return false;
    };
    if let Some(known) = template.write(out, msh, decision, ctx) {
        return known;
    }
    let start = out.len();
    render::ack_into(out, Some(msh), decision, ctx);
    template.learn(&out[start..], msh, decision, ctx);
    false
}

/// How an inbound that cannot be acknowledged truthfully is answered instead of being committed:
/// `Rejected` for a batch frame the receiver does not answer per message, `CommitFailed` for
/// anything else it cannot correlate or that was damaged (and, with `batch_ack`, for a batch
/// holding such a message or none at all). `None` when it may reach the sink: it is sound, or it
/// is itself an acknowledgement (`is_ack`: its MSH says so), which is never answered.
pub(crate) fn refusal(
    payload: &[u8],
    scan: &hl7::Scan<'_>,
    is_ack: bool,
    damaged: bool,
    batch_ack: bool,
) -> Option<Disposition> {
    if is_ack {
        return None;
    }
    if batch_ack && scan.shape == Shape::Batch {
        let messages = hl7::split_batch(payload);
        let unsound = |m: &&[u8]| {
            let inner = hl7::scan(m);
            let is_ack = inner.msh.as_ref().is_some_and(|m| m.is_ack());
            !is_ack && defect_of(&inner, false).is_some()
        };
        let refused = damaged || messages.is_empty() || messages.iter().any(unsound);
        return refused.then_some(Disposition::CommitFailed);
    }
    match defect_of(scan, damaged)? {
        Defect::Batch => Some(Disposition::Rejected),
        _ => Some(Disposition::CommitFailed),
    }
}

/// What stops a positive answer regardless of the commit: the inbound cannot be correlated,
/// or the frame was damaged.
pub(crate) fn defect_of(scan: &hl7::Scan<'_>, damaged: bool) -> Option<Defect> {
    let uncorrelatable = match (&scan.msh, scan.shape) {
        (_, Shape::Batch) => Some(Defect::Batch),
        (_, Shape::Concatenated) => Some(Defect::Concatenated),
        (None, _) => Some(Defect::NoMsh),
        (Some(msh), _) if !render::usable(&msh.delimiters) => Some(Defect::UnusableDelimiters),
        (Some(msh), _) if msh.control_id().is_none_or(|c| c.is_empty()) => {
            Some(Defect::EmptyControlId)
        }
        _ => None,
    };
    uncorrelatable.or(damaged.then_some(Defect::Damaged))
}
