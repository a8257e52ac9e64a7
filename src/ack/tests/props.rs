//! Property tests: scanning and building never panic, and MSA-2 always echoes MSH-10.

use super::*;
use proptest::prelude::*;

fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(
        any::<u8>().prop_filter("no CR/LF", |b| *b != b'\r' && *b != b'\n'),
        0..12,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn scanning_and_building_never_panic(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = scan(&data);
        let _ = scan_ack(&data);
        let _ = crate::hl7::split_batch(&data);
        for d in [Committed, CommitFailed, Rejected] {
            if let Some(a) = build_ack(&data, d, false, &ctx()) {
                prop_assert!(d == Committed || !a.code.is_positive());
                prop_assert!(scan_ack(&a.payload).is_some());
            }
            let _ = build_application_ack(&data, d, true, &ctx());
            let _ = build_batch_ack(&data, d, false, &ctx());
        }
    }

    #[test]
    fn msa2_echoes_msh10(
        sep in prop::sample::select(b"|!#$%*;/,:".to_vec()),
        enc in header_bytes(),
        fields in proptest::collection::vec(header_bytes(), 7),
        control_id in header_bytes(),
        msh15 in prop::sample::select(vec!["", "AL", "ER", "SU", "NE", "Q"]),
        damaged in any::<bool>(),
    ) {
        let clean = |v: &Vec<u8>| v.iter().copied().filter(|b| *b != sep).collect::<Vec<u8>>();
        let control_id = clean(&control_id);
        prop_assume!(!control_id.is_empty());
        let enc: Vec<u8> = clean(&enc).into_iter().filter(|b| !b.is_ascii_alphanumeric()).collect();
        let mut inbound = b"MSH".to_vec();
        inbound.push(sep);
        inbound.extend_from_slice(&enc);
        for f in &fields {
            inbound.push(sep);
            inbound.extend_from_slice(&clean(f));
        }
        inbound.push(sep);
        inbound.extend_from_slice(&control_id);
        inbound.extend_from_slice(format!("{0}P{0}2.5{0}{0}{0}{1}\rPID{0}1\r", sep as char, msh15).as_bytes());
        let is_ack = scan(&inbound).msh.unwrap().is_ack();
        for d in [Committed, CommitFailed, Rejected] {
            match build_ack(&inbound, d, damaged, &ctx()) {
                None => prop_assert!(is_ack),
                Some(a) => {
                    let v = scan_ack(&a.payload).unwrap();
                    prop_assert_eq!(v.control_id, &control_id[..]);
                    prop_assert_eq!(v.code, a.code.as_str().as_bytes());
                    prop_assert!(!a.code.is_positive() || (d == Committed && !damaged));
                }
            }
        }
    }
}

/// Header-like payloads whose delimiters collide, repeat or are missing: MSH-1 and MSH-2 from
/// a small alphabet, MSH-10, MSH-11 and MSH-12 present, empty or absent, sometimes wrapped in a
/// batch or followed by a second message.
fn odd_header() -> impl Strategy<Value = Vec<u8>> {
    let sep = prop::sample::select(b"|!#^~\\&A".to_vec());
    let enc = proptest::collection::vec(prop::sample::select(b"^~\\&|#C!".to_vec()), 0..6);
    let field = prop::sample::select(vec!["", "X1", "a b", "\"\"", "AL", "SU", "2.5"]);
    let fields = proptest::collection::vec(field, 0..14);
    let wrap = prop::sample::select(vec!["", "batch", "twice"]);
    (sep, enc, fields, wrap).prop_map(|(sep, enc, fields, wrap)| {
        let enc: Vec<u8> = enc.into_iter().filter(|b| *b != sep).collect();
        let mut m = b"MSH".to_vec();
        m.push(sep);
        m.extend_from_slice(&enc);
        for (i, f) in fields.iter().enumerate() {
            m.push(sep);
            // MSH-9 is never ACK here: an ACK is never answered.
            m.extend_from_slice(if i == 6 { b"ADT" } else { f.as_bytes() });
        }
        m.push(b'\r');
        match wrap {
            "batch" => [&b"BHS|^~\\&\r"[..], &m, b"BTS|1\r"].concat(),
            "twice" => [m.clone(), m].concat(),
            _ => m,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Every answer the builders write can be read by a strict reader, and MSA-2 is the
    /// inbound's MSH-10 whenever there is one to echo.
    #[test]
    fn every_ack_has_its_required_fields(
        inbound in odd_header(),
        damaged in any::<bool>(),
        forced in proptest::option::of(prop::sample::select(vec![AA, AE, AR, CA, CE, CR])),
    ) {
        let c = AckContext { forced, ..ctx() };
        let msh = scan(&inbound).msh;
        let echo = msh
            .as_ref()
            .filter(|m| !m.delimiters.field.is_ascii_alphanumeric())
            .and_then(|m| m.control_id())
            .unwrap_or_default()
            .to_vec();
        for d in [Committed, CommitFailed, Rejected] {
            let first = build_ack(&inbound, d, damaged, &c).expect("not an ACK");
            let msa2 = super::fields::required_fields(&first.payload);
            prop_assert_eq!(msa2, Ok(vec![echo.clone()]));
            if let Some(app) = build_application_ack(&inbound, d, damaged, &c) {
                prop_assert!(super::fields::required_fields(&app.payload).is_ok());
            }
            if let Some(batch) = build_batch_ack(&inbound, d, damaged, &c) {
                prop_assert!(super::fields::required_fields(&batch.payload).is_ok());
            }
        }
    }
}
