//! The template path against the full builder: over sequences of generated headers, codes and
//! contexts, every answer the template writes is byte for byte the one built in full.

use super::super::policy::{decide, AcceptAckType};
use super::super::{defect_of, render, AckCode, AckContext, Disposition};
use super::AckTemplate;
use crate::framing::{FS, VT};
use crate::hl7;
use proptest::prelude::*;

/// A field from a small alphabet (delimiters, letters, the framing bytes, empty), so headers
/// often repeat.
fn field() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(prop::sample::select(b"ab1^~&\\#|\x0b\x1c".to_vec()), 0..3)
}

/// Two candidate values per field; each message picks one of them per field, so consecutive
/// headers often match outside MSH-7 and MSH-10 and often differ in one field.
fn fields() -> impl Strategy<Value = Vec<[Vec<u8>; 2]>> {
    proptest::collection::vec([field(), field()], 16)
}

fn header(
    sep: u8,
    encoding: &[u8],
    fields: &[[Vec<u8>; 2]],
    picks: &[bool],
    count: usize,
) -> Vec<u8> {
    let mut out = b"MSH".to_vec();
    out.push(sep);
    out.extend_from_slice(encoding);
    for (f, &pick) in fields.iter().zip(picks).take(count) {
        out.push(sep);
        let f = &f[usize::from(pick)];
        out.extend(f.iter().map(|&b| if b == b'|' { sep } else { b }));
    }
    out.push(b'\r');
    out
}

/// An empty timestamp or control ID means "now" and "a fresh one": not comparable, left out.
fn context() -> impl Strategy<Value = AckContext> {
    let timestamp = prop::sample::select(vec!["20240101120000", "20240101120001", "2024 01"]);
    let control = prop::sample::select(vec!["ACK1", "ACK22", "A|1"]);
    let forced = prop::sample::select(vec![None, Some(AckCode::AA), Some(AckCode::CA)]);
    (timestamp, control, forced).prop_map(|(t, c, forced)| AckContext {
        timestamp: t.into(),
        control_id: c.into(),
        forced,
        ..AckContext::default()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn template_answers_equal_full_answers(
        sep in prop::sample::select(b"|!#".to_vec()),
        encoding in prop::sample::select(vec![&b"^~\\&"[..], b"^~\\&#", b"^~", b"^^\\&", b"A~\\&"]),
        fields in fields(),
        steps in proptest::collection::vec(
            (
                proptest::collection::vec(prop::bool::weighted(0.1), 16),
                prop::sample::select(vec![10, 16]),
                context(),
                prop::sample::select(vec![
                    Disposition::Committed, Disposition::CommitFailed, Disposition::Rejected,
                ]),
            ),
            1..8,
        ),
    ) {
        let mut template = AckTemplate::default();
        for (picks, count, ctx, disposition) in &steps {
            let payload = header(sep, encoding, &fields, picks, *count);
            let scan = hl7::scan(&payload);
            let Some(msh) = scan.msh.as_ref() else { continue };
            let row = AcceptAckType::from_field(msh.accept_ack_type()).codes();
            let decision = decide(row, *disposition, defect_of(&scan, false), ctx.forced);
            let mut full = Vec::new();
            render::ack_into(&mut full, Some(msh), &decision, ctx);
            let mut patched = Vec::new();
            match template.write(&mut patched, msh, &decision, ctx) {
                Some(unframed) => prop_assert!(
                    !unframed || memchr::memchr2(VT, FS, &patched).is_none(),
                    "an answer said to hold no framing byte holds one"
                ),
                None => {
                    render::ack_into(&mut patched, Some(msh), &decision, ctx);
                    template.learn(&patched, msh, &decision, ctx);
                }
            }
            prop_assert_eq!(&patched, &full);
        }
    }
}

/// The template is used at all: a second message differing in MSH-7 and MSH-10 is patched.
#[test]
fn a_repeat_sender_is_patched() {
    let first = b"MSH|^~\\&|A|F|R|G|20240101||ADT^A01|ID1|P|2.5\r";
    let second = b"MSH|^~\\&|A|F|R|G|20240102||ADT^A01|ID22|P|2.5\r";
    let ctx = AckContext {
        timestamp: "20240101120000".into(),
        control_id: "ACK1".into(),
        ..AckContext::default()
    };
    let mut template = AckTemplate::default();
    let (a, b) = (hl7::scan(first), hl7::scan(second));
    let row = AcceptAckType::Original.codes();
    let decision = decide(row, Disposition::Committed, None, None);
    let mut out = Vec::new();
    assert!(template
        .write(&mut out, a.msh.as_ref().unwrap(), &decision, &ctx)
        .is_none());
    render::ack_into(&mut out, a.msh.as_ref(), &decision, &ctx);
    template.learn(&out, a.msh.as_ref().unwrap(), &decision, &ctx);
    out.clear();
    let unframed = template.write(&mut out, b.msh.as_ref().unwrap(), &decision, &ctx);
    assert_eq!(unframed, Some(true));
    let mut full = Vec::new();
    render::ack_into(&mut full, b.msh.as_ref(), &decision, &ctx);
    assert_eq!(out, full);
}

/// A patched answer echoing an MSH-10 that holds a framing byte is not said to hold none, so it
/// is framed by the searching path, which refuses it.
#[test]
fn an_echoed_framing_byte_is_not_framed_unchecked() {
    let first = b"MSH|^~\\&|A|F|R|G|20240101||ADT^A01|ID1|P|2.5\r";
    let ctx = AckContext {
        timestamp: "20240101120000".into(),
        control_id: "ACK1".into(),
        ..AckContext::default()
    };
    let decision = decide(
        AcceptAckType::Original.codes(),
        Disposition::Committed,
        None,
        None,
    );
    let mut template = AckTemplate::default();
    let a = hl7::scan(first);
    let mut out = Vec::new();
    render::ack_into(&mut out, a.msh.as_ref(), &decision, &ctx);
    template.learn(&out, a.msh.as_ref().unwrap(), &decision, &ctx);
    for (second, byte) in [
        &b"MSH|^~\\&|A|F|R|G|20240102||ADT^A01|I\x0bD|P|2.5\r"[..],
        &b"MSH|^~\\&|A|F|R|G|20240102||ADT^A01|ID\x1c|P|2.5\r"[..],
    ]
    .iter()
    .zip([VT, FS])
    {
        let b = hl7::scan(second);
        out.clear();
        let unframed = template.write(&mut out, b.msh.as_ref().unwrap(), &decision, &ctx);
        assert_eq!(unframed, Some(false));
        assert!(out.contains(&byte));
    }
}
