//! Unit tests of ACK writing: escaping and the scanned path against the public builders.
use super::*;
use crate::ack::{AckCode, Disposition};
use proptest::prelude::*;

/// The escape without its plain-text shortcut, which must never change the output.
fn reference_escape(text: &[u8], d: &Delimiters) -> Vec<u8> {
    let mut out = Vec::new();
    escape_each(&mut out, text, d);
    out
}

/// HL7-looking payloads: header, batch and other segments with fields from a small
/// alphabet (delimiters, letters, digits, the MSH-15/16 codes), CR or LF between them.
fn payload() -> impl Strategy<Value = Vec<u8>> {
    let name = prop_oneof![
        4 => Just(&b"MSH"[..]),
        2 => Just(&b"PID"[..]),
        1 => Just(&b"BHS"[..]),
        1 => Just(&b"EVN"[..]),
    ];
    let field = prop_oneof![
        Just(b"AL".to_vec()),
        Just(b"SU".to_vec()),
        Just(b"ACK^A01".to_vec()),
        Just(b"^~\\&".to_vec()),
        proptest::collection::vec(proptest::sample::select(b"|^~\\&#AB1 ".to_vec()), 0..6),
    ];
    let segment = (name, proptest::collection::vec(field, 0..20), any::<bool>()).prop_map(
        |(name, fields, lf)| {
            let mut out = name.to_vec();
            for f in fields {
                out.push(b'|');
                out.extend(f);
            }
            out.push(if lf { b'\n' } else { b'\r' });
            out
        },
    );
    proptest::collection::vec(segment, 0..4).prop_map(|s| s.concat())
}

proptest! {
    /// The server's path (its own scan, a reused and dirty buffer) writes exactly what
    /// `build_ack` and `build_application_ack` write.
    #[test]
    fn the_scanned_path_writes_the_same_bytes(
        inbound in payload(),
        disposition in prop_oneof![
            Just(Disposition::Committed),
            Just(Disposition::CommitFailed),
            Just(Disposition::Rejected),
        ],
        damaged in any::<bool>(),
        forced in proptest::option::of(proptest::sample::select(vec![
            AckCode::AA, AckCode::AE, AckCode::CA, AckCode::CR,
        ])),
    ) {
        let ctx = AckContext {
            control_id: "1700000000000042".into(),
            timestamp: "20240101120000".into(),
            text: None,
            worded: false,
            forced,
        };
        let scan = crate::hl7::scan(&inbound);
        let is_ack = scan.msh.as_ref().is_some_and(|m| m.is_ack());
        let dirty = b"left over from the last ACK".to_vec();
        prop_assert_eq!(
            super::super::answer(&scan, is_ack, disposition, super::super::defect_of(&scan, damaged), &ctx, dirty.clone(), None)
                .map(|(built, _)| built),
            super::super::build_ack(&inbound, disposition, damaged, &ctx)
        );
        prop_assert_eq!(
            super::super::application_answer(&scan, disposition, damaged, &ctx, dirty),
            super::super::build_application_ack(&inbound, disposition, damaged, &ctx)
        );
    }

    #[test]
    fn escaping_matches_the_byte_by_byte_rules(
        text in "[A-Za-z0-9|^~\\\\&# \r\n-]{0,24}",
        field in any::<u8>(),
        encoding in proptest::collection::vec(any::<u8>(), 0..5),
    ) {
        let d = Delimiters::from_header(field, &encoding);
        prop_assert_eq!(escaped(&text, &d), reference_escape(text.as_bytes(), &d));
    }
}
