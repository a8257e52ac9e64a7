//! Batch acknowledgement for `--batch-ack`: one ACK per message of the batch, inside BHS/BTS
//! (and FHS/FTS when the inbound had them), with the envelope's senders swapped.

use super::render::{self, SegmentWriter};
use super::{build_ack, AckCode, AckContext, BuiltAck, Disposition, NackReason};
use crate::hl7::{self, Msh, Shape};
use crate::warning::WarningCode;

/// A built batch acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltBatchAck {
    /// The whole answer, unframed: the ACKs inside the batch envelope.
    pub payload: Vec<u8>,
    /// The first non-positive code among the ACKs, else the (positive) first one.
    pub code: AckCode,
    /// The reason of the ACK that gave [`BuiltBatchAck::code`].
    pub reason: Option<NackReason>,
    /// Every warning of the ACKs inside, each once, sorted.
    pub warnings: Vec<WarningCode>,
    /// The ACKs inside, in message order (messages that are themselves ACKs get none).
    pub acks: Vec<BuiltAck>,
}

/// Answer a batch message by message; the batch was committed (or not) as one unit, so
/// `disposition` and `damaged` apply to each message. A payload that is not a batch gets the
/// plain [`build_ack`] answer; an empty batch an envelope around one negative ACK. `None` only
/// when every message is itself an ACK.
pub fn build_batch_ack(
    inbound: &[u8],
    disposition: Disposition,
    damaged: bool,
    ctx: &AckContext,
) -> Option<BuiltBatchAck> {
    if hl7::scan(inbound).shape != Shape::Batch {
        let ack = build_ack(inbound, disposition, damaged, ctx)?;
        return Some(BuiltBatchAck {
            payload: ack.payload.clone(),
            code: ack.code,
            reason: ack.reason,
            warnings: ack.warnings.clone(),
            acks: vec![ack],
        });
    }
    let messages = hl7::split_batch(inbound);
    let mut acks = Vec::with_capacity(messages.len());
    for (i, message) in messages.iter().enumerate() {
        let inner = AckContext {
            control_id: format!("{}.{}", ctx.control_id, i + 1),
            ..ctx.clone()
        };
        if let Some(ack) = build_ack(message, disposition, damaged, &inner) {
            acks.push(ack);
        }
    }
    if acks.is_empty() {
        if !messages.is_empty() {
            return None;
        }
        // Nothing to correlate: the whole-payload answer is downgraded and carries no MSA-2.
        acks.extend(build_ack(inbound, disposition, damaged, ctx));
    }
    let headline = acks
        .iter()
        .find(|a| !a.code.is_positive())
        .or(acks.first())?;
    let (code, reason) = (headline.code, headline.reason);
    let mut warnings: Vec<WarningCode> = acks.iter().flat_map(|a| a.warnings.clone()).collect();
    warnings.sort();
    warnings.dedup();
    Some(BuiltBatchAck {
        payload: envelope(inbound, &acks, ctx),
        code,
        reason,
        warnings,
        acks,
    })
}

fn envelope(inbound: &[u8], acks: &[BuiltAck], ctx: &AckContext) -> Vec<u8> {
    let header = |name: &[u8]| {
        hl7::segments(inbound)
            .find(|(_, s)| s.starts_with(name))
            .and_then(|(_, s)| Msh::parse(s))
            .filter(|h| render::usable(&h.delimiters))
    };
    let (fhs, bhs) = (header(b"FHS"), header(b"BHS"));
    let size: usize = acks.iter().map(|a| a.payload.len()).sum();
    let mut out = Vec::with_capacity(size + 256);
    if let Some(fhs) = &fhs {
        envelope_header(&mut out, b"FHS", fhs, &format!("{}.F", ctx.control_id), ctx);
    }
    match bhs.as_ref().or(fhs.as_ref()) {
        Some(h) => envelope_header(&mut out, b"BHS", h, &format!("{}.B", ctx.control_id), ctx),
        None => {
            let mut w = SegmentWriter::start(&mut out, b"BHS", hl7::Delimiters::default());
            w.raw(b"^~\\&").empty(4).text(&ctx.timestamp).empty(3);
            w.text(&format!("{}.B", ctx.control_id)).end();
        }
    }
    for ack in acks {
        out.extend_from_slice(&ack.payload);
    }
    let d = bhs
        .as_ref()
        .or(fhs.as_ref())
        .map(|h| render::answer_delimiters(h).0)
        .unwrap_or_default();
    SegmentWriter::start(&mut out, b"BTS", d)
        .text(&acks.len().to_string())
        .end();
    if let Some(fhs) = &fhs {
        SegmentWriter::start(&mut out, b"FTS", fhs.delimiters)
            .text("1")
            .end();
    }
    out
}

/// FHS/BHS of the answer: senders swapped, a fresh control ID in -11, and the inbound's -11 as
/// the reference in -12.
fn envelope_header(out: &mut Vec<u8>, name: &[u8], inbound: &Msh<'_>, id: &str, ctx: &AckContext) {
    let (d, encoding) = render::answer_delimiters(inbound);
    let field = |n| inbound.field(n).unwrap_or_default();
    let mut w = SegmentWriter::start(out, name, d);
    w.raw(encoding.as_bytes());
    w.raw(field(5)).raw(field(6)).raw(field(3)).raw(field(4));
    w.text(&ctx.timestamp).empty(3).text(id);
    let reference = field(11);
    if !reference.is_empty() {
        w.raw(reference);
    }
    w.end();
}
