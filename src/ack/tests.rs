//! Unit tests for ACK building: the MSH-15 table, downgrades, echoing MSH-10, and never
//! answering an ACK. Application ACKs, batch ACKs and the property tests have modules of their
//! own.

mod application;
mod batch;
pub(crate) mod fields;
mod props;

use super::*;
use crate::hl7::{scan, scan_ack};
use AckCode::*;
use Disposition::*;

fn ctx() -> AckContext {
    AckContext {
        control_id: "ACK1".into(),
        timestamp: "20240102030405".into(),
        text: None,
        worded: false,
        forced: None,
    }
}

fn msg(msh15: &str, control_id: &[u8]) -> Vec<u8> {
    let mut m = b"MSH|^~\\&|SND|SFAC|RCV|RFAC|20240101||ADT^A01^ADT_A01|".to_vec();
    m.extend_from_slice(control_id);
    m.extend_from_slice(format!("|P|2.5.1|||{msh15}|||8859/1\rPID|1\r").as_bytes());
    m
}

fn ack(inbound: &[u8], d: Disposition) -> BuiltAck {
    build_ack(inbound, d, false, &ctx()).expect("an answer")
}

#[test]
fn msh15_table_crossed_with_every_disposition() {
    let table: &[(&str, [AckCode; 3], bool)] = &[
        ("", [AA, AE, AR], false),
        ("NE", [AA, AE, AR], false),
        // HL7 null: as if empty, no warning.
        ("\"\"", [AA, AE, AR], false),
        ("AL", [CA, CE, CR], false),
        ("ER", [AA, CE, CR], false),
        ("SU", [CA, AE, AR], false),
        ("XX", [AA, AE, AR], true),
        ("al", [AA, AE, AR], true),
    ];
    for (msh15, codes, warned) in table {
        for (d, want) in [Committed, CommitFailed, Rejected].into_iter().zip(codes) {
            let a = ack(&msg(msh15, b"C1"), d);
            assert_eq!(a.code, *want, "MSH-15 {msh15:?} {d:?}");
            let v = scan_ack(&a.payload).unwrap();
            assert_eq!(v.code, want.as_str().as_bytes());
            assert_eq!(v.control_id, b"C1");
            assert_eq!(
                a.warnings.contains(&WarningCode::UnknownAcceptAckType),
                *warned
            );
            let reason = (d == Rejected).then_some(NackReason::HandlerRejected);
            assert_eq!(a.reason, reason, "MSH-15 {msh15:?} {d:?}");
            match d {
                Committed => assert_eq!((v.text, v.error_code), (None, None)),
                _ => {
                    assert!(v.text.is_some());
                    assert_eq!(v.error_code, Some(&b"207"[..]));
                }
            }
        }
    }
    // MSH-15 absent altogether.
    let short = b"MSH|^~\\&|S||R||T||ADT^A01|C2|P|2.5\r";
    assert_eq!(ack(short, Committed).code, AA);
    assert_eq!(ack(short, CommitFailed).code, AE);
}

#[test]
fn the_header_is_swapped_copied_and_written_under_the_inbound_delimiters() {
    let a = ack(&msg("AL", b"C1"), Committed);
    let text = String::from_utf8(a.payload).unwrap();
    assert_eq!(
        text,
        "MSH|^~\\&|RCV|RFAC|SND|SFAC|20240102030405||ACK^A01|ACK1|P|2.5.1||||||8859/1\rMSA|CA|C1\r"
    );
    let bang = b"MSH!*~\\&!S!SF!R!RF!T!!ORU*R01!Z1!T!2.3\r";
    let text = String::from_utf8(ack(bang, CommitFailed).payload).unwrap();
    assert_eq!(
        text,
        "MSH!*~\\&!R!RF!S!SF!20240102030405!!ACK*R01!ACK1!T!2.3\rMSA!AE!Z1!Message could not be committed\rERR!!!207*Application internal error*HL70357!E\r"
    );
    let no_trigger = b"MSH|^~\\&|S||R||T||ADT|Q|P|2.5";
    let a = ack(no_trigger, Committed);
    assert!(a
        .payload
        .starts_with(b"MSH|^~\\&|R||S||20240102030405||ACK|ACK1|P|2.5\r"));
}

#[test]
fn control_ids_are_echoed_byte_for_byte() {
    let ids: &[&[u8]] = &[
        b"A\\E\\B",
        b"ID  ",
        b"  lead",
        b"12^34^56",
        b"X\x8bY",
        b"\xff\xfe",
        b"a~b&c",
    ];
    for id in ids {
        for d in [Committed, CommitFailed, Rejected] {
            let a = ack(&msg("", id), d);
            assert_eq!(scan_ack(&a.payload).unwrap().control_id, *id);
        }
    }
    for sep in [b'!', b'#'] {
        let inbound = [
            &b"MSH"[..],
            &[sep],
            b"^~\\&",
            &[sep; 7],
            b"ADT^A04",
            &[sep],
            b"I\x8bD |x^y",
            &[sep],
            b"P",
        ]
        .concat();
        let a = ack(&inbound, Committed);
        assert_eq!(a.code, AA);
        assert_eq!(a.payload[3], sep);
        assert_eq!(scan_ack(&a.payload).unwrap().control_id, b"I\x8bD |x^y");
    }
}

#[test]
fn uncorrelatable_inbound_is_never_positive() {
    let cases: &[(&[u8], &[u8], &str)] = &[
        (&msg("", b""), b"", "101"),
        (b"MSH|^~\\&|S||R||T||ADT^A01", b"", "101"),
        (b"PID|1||x\rOBX|1", b"", "100"),
        (b"", b"", "100"),
        (
            b"BHS|^~\\&\rMSH|^~\\&|||||||ADT^A01|B1\rBTS|1",
            b"B1",
            "100",
        ),
        (
            b"MSH|^~\\&|||||||ADT^A01|M1\rMSH|^~\\&|||||||ADT^A01|M2\r",
            b"M1",
            "100",
        ),
        (b"MSHA^~\\&AAAAAAADT^A01AX1", b"", "102"),
        (b"MSH|C~\\&|||||||ADT^A01|X1", b"X1", "102"),
    ];
    for (inbound, echoed, err) in cases {
        let a = ack(inbound, Committed);
        assert_eq!(a.code, AE);
        assert_eq!(a.reason, Some(NackReason::UncorrelatableInbound));
        let v = scan_ack(&a.payload).unwrap();
        assert_eq!(v.control_id, *echoed);
        assert_eq!(v.error_code, Some(err.as_bytes()));
        let failed = ack(inbound, CommitFailed);
        assert_eq!(
            (failed.code, failed.reason),
            (AE, Some(NackReason::UncorrelatableInbound))
        );
        // The defect, not the disposition, is what the answer names.
        let rejected = ack(inbound, Rejected);
        assert_eq!(
            (rejected.code, rejected.reason),
            (AR, Some(NackReason::UncorrelatableInbound))
        );
        let v = scan_ack(&rejected.payload).unwrap();
        assert_eq!(v.error_code, Some(err.as_bytes()));
    }
    let al_empty = ack(&msg("AL", b""), Committed);
    assert_eq!(al_empty.code, CE);
}

#[test]
fn short_msh2_is_completed_without_colliding_with_the_field_separator() {
    let a = ack(b"MSH|^~|S||R||T||ADT^A01|K1", Committed);
    assert!(a.payload.starts_with(b"MSH|^~\\&|R||S||"));
    // MSH-1 `^` and no MSH-2: the default component separator collides, a spare takes its place.
    let a = ack(b"MSH^^S^^R^^T^^ADT^K2", Committed);
    assert!(
        a.payload.starts_with(b"MSH^#~\\&^R^^S^^"),
        "{:?}",
        String::from_utf8_lossy(&a.payload)
    );
    let again = scan(&a.payload).msh.unwrap();
    assert!(again.is_ack());
    assert_eq!(scan_ack(&a.payload).unwrap().control_id, b"K2");
}

#[test]
fn no_msh_gets_a_minimal_ack_under_default_delimiters() {
    let a = ack(b"garbage", Committed);
    let text = String::from_utf8(a.payload).unwrap();
    assert_eq!(
        text,
        "MSH|^~\\&|||||20240102030405||ACK|ACK1|P|2.5\rMSA|AE||No MSH segment\rERR|||100^Segment sequence error^HL70357|E\r"
    );
}

#[test]
fn damaged_frames_are_downgraded() {
    for (msh15, want) in [("", AE), ("AL", CE), ("SU", CE), ("ER", AE)] {
        let a = build_ack(&msg(msh15, b"D1"), Committed, true, &ctx()).unwrap();
        assert_eq!((a.code, a.reason), (want, Some(NackReason::DiscardedBytes)));
        assert_eq!(scan_ack(&a.payload).unwrap().control_id, b"D1");
    }
}

#[test]
fn forced_codes_stay_bound_by_the_contract() {
    let forced = |code, d, damaged| {
        let c = AckContext {
            forced: Some(code),
            ..ctx()
        };
        build_ack(&msg("", b"F1"), d, damaged, &c).unwrap().code
    };
    assert_eq!(forced(AA, Committed, false), AA);
    assert_eq!(forced(CA, Committed, false), CA);
    assert_eq!(forced(AE, Committed, false), AE);
    assert_eq!(forced(AR, Committed, false), AR);
    assert_eq!(forced(AA, CommitFailed, false), AE);
    assert_eq!(forced(CA, CommitFailed, false), CE);
    assert_eq!(forced(AA, Rejected, false), AR);
    assert_eq!(forced(CA, Rejected, false), CR);
    assert_eq!(forced(AA, Committed, true), AE);
    assert_eq!(forced(CA, Committed, true), CE);
    assert_eq!(forced(CE, CommitFailed, false), CE);
}

#[test]
fn text_is_ours_and_escaped() {
    let c = AckContext {
        text: Some("bad|thing^here\rnow".into()),
        worded: false,
        ..ctx()
    };
    let a = build_ack(&msg("", b"T1"), CommitFailed, false, &c).unwrap();
    let v = scan_ack(&a.payload).unwrap();
    assert_eq!(v.text, Some(&b"bad\\F\\thing\\S\\here now"[..]));
    assert_eq!(v.control_id, b"T1");
    // The inbound's content never reaches MSA-3.
    let secret = b"MSH|^~\\&|||||||ADT^A01|\rPID|1||SECRET-PATIENT\r";
    let a = ack(secret, Committed);
    assert!(!a.payload.windows(6).any(|w| w == b"SECRET"));
}

#[test]
fn an_inbound_ack_is_never_answered() {
    for inbound in [
        &b"MSH|^~\\&|R||S||T||ACK^A01|X|P|2.5\rMSA|AA|1\r"[..],
        b"MSH|^~\\&|R||S||T||ACK|X\rMSA|AE|1\r",
        b"MSH!^~\\&!!!!!!!ACK!X\r",
    ] {
        for d in [Committed, CommitFailed, Rejected] {
            assert_eq!(build_ack(inbound, d, false, &ctx()), None);
            assert_eq!(build_ack(inbound, d, true, &ctx()), None);
            assert_eq!(build_application_ack(inbound, d, false, &ctx()), None);
        }
    }
    let own = ack(&msg("AL", b"C9"), Committed);
    assert_eq!(build_ack(&own.payload, Committed, false, &ctx()), None);
}
