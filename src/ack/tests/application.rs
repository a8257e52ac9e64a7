//! Unit tests for application ACKs: whether one follows is MSH-16's call.

use super::*;

#[test]
fn application_acks_follow_msh16() {
    let with16 =
        |msh16: &str| format!("MSH|^~\\&|S||R||T||ORU^R01|P7|P|2.5|||AL|{msh16}\r").into_bytes();
    let table: &[(&str, [bool; 3])] = &[
        ("AL", [true, true, true]),
        ("ER", [false, true, true]),
        ("SU", [true, false, false]),
        ("NE", [false, false, false]),
        ("", [false, false, false]),
        ("ZZ", [false, false, false]),
    ];
    for (msh16, wanted) in table {
        for (d, want) in [Committed, CommitFailed, Rejected].into_iter().zip(wanted) {
            let got = build_application_ack(&with16(msh16), d, false, &ctx());
            assert_eq!(got.is_some(), *want, "MSH-16 {msh16:?} {d:?}");
            if let Some(a) = got {
                let code = [AA, AE, AR][d as usize];
                assert_eq!(a.code, code);
                assert_eq!(scan_ack(&a.payload).unwrap().control_id, b"P7");
            }
        }
    }
    let damaged = build_application_ack(&with16("AL"), Committed, true, &ctx()).unwrap();
    assert_eq!(damaged.code, AE);
    let su = with16("SU");
    let msh = scan(&su).msh.unwrap();
    assert!(wants_application_ack(&msh, true));
    assert!(!wants_application_ack(&msh, false));
}
