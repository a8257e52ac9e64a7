//! Header scanner and ACK builder target: any bytes in, invariants of the answers checked.

use crate::ack::render::escaped;
use crate::ack::{
    build_ack, build_application_ack, build_batch_ack, AckCode, AckContext, Disposition,
};
use crate::framing::{FS, VT};
use crate::hl7::{scan, scan_ack, split_batch, Shape};

/// The phrases MSA-3 may carry when the caller gives none; anything else would be leaked content.
const PHRASES: &[&str] = &[
    "Message could not be committed",
    "Message rejected by the receiving application",
    "Negative acknowledgement forced by the receiver",
    "No MSH segment",
    "Unusable delimiters in MSH-1 or MSH-2",
    "Empty message control ID (MSH-10)",
    "Batch frame not acknowledged per message",
    "More than one message in one frame",
    "Frame damaged in transit: bytes were discarded",
];

/// Scan `data`, answer it under every disposition (sound and damaged, forced or not) and check
/// that no answer is positive where it may not be, that MSA-2 echoes MSH-10, that every answer
/// reads back as an ACK and is never itself answered.
pub fn header_and_ack(data: &[u8]) {
    let scanned = scan(data);
    match scanned.shape {
        Shape::Single | Shape::Concatenated => assert!(scanned.msh.is_some()),
        Shape::NoMsh => assert!(scanned.msh.is_none()),
        Shape::Batch => {}
    }
    if let Some(msh) = &scanned.msh {
        for n in 0..24 {
            if let Some(field) = msh.field(n) {
                assert!(memchr::memchr2(b'\r', b'\n', field).is_none());
                if n >= 2 {
                    assert!(!field.contains(&msh.delimiters.field));
                }
            }
        }
    }
    let _ = scan_ack(data);
    for message in split_batch(data) {
        assert!(message.starts_with(b"MSH"));
    }

    let inbound_is_ack = scanned.msh.as_ref().is_some_and(|m| m.is_ack());
    let framable = memchr::memchr2(VT, FS, data).is_none();
    let correlatable = scanned.shape == Shape::Single;
    for disposition in [
        Disposition::Committed,
        Disposition::CommitFailed,
        Disposition::Rejected,
    ] {
        for damaged in [false, true] {
            for forced in [
                None,
                Some(AckCode::AA),
                Some(AckCode::CA),
                Some(AckCode::AE),
            ] {
                let ctx = AckContext {
                    control_id: "F1".into(),
                    timestamp: "20240101000000".into(),
                    text: None,
                    worded: false,
                    forced,
                };
                let may_be_positive =
                    disposition == Disposition::Committed && !damaged && correlatable;
                let built = build_ack(data, disposition, damaged, &ctx);
                assert_eq!(built.is_none(), inbound_is_ack, "only ACKs go unanswered");
                if let Some(ack) = built {
                    assert!(may_be_positive || !ack.code.is_positive());
                    check_answer(&ack.payload, ack.code, framable);
                    if ack.code.is_positive() {
                        let control_id = scanned.msh.as_ref().and_then(|m| m.control_id());
                        let echoed = scan_ack(&ack.payload).map(|v| v.control_id);
                        assert_eq!(echoed, control_id, "MSA-2 echoes MSH-10");
                    }
                }
                if let Some(app) = build_application_ack(data, disposition, damaged, &ctx) {
                    assert!(!inbound_is_ack);
                    assert!(may_be_positive || !app.code.is_positive());
                    assert!(!app.code.is_commit_level());
                    check_answer(&app.payload, app.code, framable);
                }
                if let Some(batch) = build_batch_ack(data, disposition, damaged, &ctx) {
                    assert!(!batch.acks.is_empty());
                    let sound = disposition == Disposition::Committed && !damaged;
                    assert!(sound || !batch.code.is_positive());
                    for ack in &batch.acks {
                        assert!(sound || !ack.code.is_positive());
                        check_answer(&ack.payload, ack.code, framable);
                    }
                }
            }
        }
    }
}

/// An answer reads back as a single ACK with its code, carries only our phrases, can be framed
/// whenever the inbound could, and is never itself answered.
fn check_answer(payload: &[u8], code: AckCode, framable: bool) {
    let view = scan_ack(payload).expect("an answer reads back as an ACK");
    assert_eq!(view.code, code.as_str().as_bytes());
    assert_eq!(view.error_code.is_some(), !code.is_positive());
    let again = scan(payload);
    assert_eq!(again.shape, Shape::Single);
    let msh = again.msh.expect("an answer has an MSH");
    assert!(msh.is_ack());
    if let Some(text) = view.text {
        let ours = PHRASES.iter().any(|p| escaped(p, &msh.delimiters) == text);
        assert!(ours, "MSA-3 is one of our phrases");
    }
    if framable {
        assert!(memchr::memchr2(VT, FS, payload).is_none());
    }
    for disposition in [Disposition::Committed, Disposition::Rejected] {
        assert!(build_ack(payload, disposition, false, &AckContext::default()).is_none());
    }
}
