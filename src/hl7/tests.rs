//! Unit tests for header scanning.

use super::*;

const ADT: &[u8] = b"MSH|^~\\&|SND|SFAC|RCV|RFAC|20240101120000||ADT^A01^ADT_A01|CTL-1|P|2.5|||AL|NE\rPID|1||123\r";

#[test]
fn msh_fields_follow_hl7_numbering() {
    let s = scan(ADT);
    assert_eq!(s.shape, Shape::Single);
    let msh = s.msh.unwrap();
    assert_eq!(msh.field(0), Some(&b"MSH"[..]));
    assert_eq!(msh.field(1), Some(&b"|"[..]));
    assert_eq!(msh.field(2), Some(&b"^~\\&"[..]));
    assert_eq!(msh.field(3), Some(&b"SND"[..]));
    assert_eq!(msh.date_time(), Some(&b"20240101120000"[..]));
    assert_eq!(msh.message_type(), Some(&b"ADT^A01^ADT_A01"[..]));
    assert_eq!(msh.component(9, 2), Some(&b"A01"[..]));
    assert_eq!(msh.control_id(), Some(&b"CTL-1"[..]));
    assert_eq!(msh.accept_ack_type(), Some(&b"AL"[..]));
    assert_eq!(msh.application_ack_type(), Some(&b"NE"[..]));
    assert_eq!(msh.field(17), None);
    assert!(!msh.is_ack());
    assert_eq!(msh.delimiters, Delimiters::default());
}

#[test]
fn any_field_separator_and_its_encoding_characters() {
    for sep in [b'!', b'#', b'|', b';'] {
        let mut p = b"MSH".to_vec();
        p.push(sep);
        p.extend_from_slice(b"*%$@");
        for f in [&b"A"[..], b"B", b"C", b"D", b"T", b"", b"ORU*R01", b"X*Y"] {
            p.push(sep);
            p.extend_from_slice(f);
        }
        p.extend_from_slice(b"\rOBX\r");
        let msh = scan(&p).msh.unwrap();
        assert_eq!(msh.delimiters.field, sep);
        assert_eq!(msh.delimiters.component, b'*');
        assert_eq!(msh.delimiters.subcomponent, b'@');
        assert_eq!(msh.message_type(), Some(&b"ORU*R01"[..]));
        assert_eq!(msh.component(9, 2), Some(&b"R01"[..]));
        assert_eq!(msh.control_id(), Some(&b"X*Y"[..]));
    }
}

#[test]
fn short_encoding_characters_fall_back_to_defaults() {
    let msh = scan(b"MSH|*~|A").msh.unwrap();
    assert_eq!(msh.encoding_characters, b"*~");
    assert_eq!(msh.delimiters.component, b'*');
    assert_eq!(msh.delimiters.escape, b'\\');
    assert_eq!(msh.delimiters.subcomponent, b'&');
    let bare = scan(b"MSH").msh.unwrap();
    assert_eq!(bare.delimiters, Delimiters::default());
    assert_eq!(bare.field(1), None);
    assert_eq!(bare.field(2), None);
}

#[test]
fn a_short_msh_never_borrows_from_the_next_segment() {
    for terminator in [&b"\r"[..], b"\n", b"\r\n"] {
        let mut p = b"MSH|^~\\&|A|B".to_vec();
        p.extend_from_slice(terminator);
        p.extend_from_slice(b"PID|1|2|3|4|5|6|7|8|9|10|11|12\r");
        let msh = scan(&p).msh.unwrap();
        assert_eq!(msh.field(4), Some(&b"B"[..]));
        assert_eq!(msh.field(5), None);
        assert_eq!(msh.control_id(), None);
    }
}

#[test]
fn msh_is_found_after_other_segments_and_lf_or_crlf() {
    let s = scan(b"\r\nZZZ|1\nMSH|^~\\&|A||||||ADT^A01|X1\r\nPID\r\n");
    assert_eq!(s.shape, Shape::Single);
    assert_eq!(s.msh.unwrap().control_id(), Some(&b"X1"[..]));
}

#[test]
fn shapes() {
    assert_eq!(scan(b"PID|1\rOBX|2").shape, Shape::NoMsh);
    assert_eq!(scan(b"").shape, Shape::NoMsh);
    assert_eq!(
        scan(b"MSH|^~\\&\rPID\rMSH|^~\\&\r").shape,
        Shape::Concatenated
    );
    assert_eq!(
        scan(b"BHS|^~\\&\rMSH|^~\\&\rMSH|^~\\&\rBTS|2").shape,
        Shape::Batch
    );
    assert_eq!(
        scan(b"FHS|^~\\&\rBHS|^~\\&\rBTS|0\rFTS|1").shape,
        Shape::Batch
    );
    assert_eq!(scan(b"MSH|^~\\&\rBTS|1").shape, Shape::Batch);
}

#[test]
fn ack_detection_reads_the_first_component_only() {
    assert!(scan(b"MSH|^~\\&|||||||ACK|1").msh.unwrap().is_ack());
    assert!(scan(b"MSH|^~\\&|||||||ACK^A01^ACK|1").msh.unwrap().is_ack());
    assert!(!scan(b"MSH|^~\\&|||||||ACKX|1").msh.unwrap().is_ack());
    assert!(!scan(b"MSH|^~\\&|||||||ADT^ACK|1").msh.unwrap().is_ack());
    assert!(!scan(b"MSH|^~\\&|||||||").msh.unwrap().is_ack());
}

#[test]
fn split_batch_yields_each_message() {
    let p = b"FHS|^~\\&\rBHS|^~\\&\rMSH|^~\\&|1\rPID|a\rMSH|^~\\&|2\rBTS|2\rFTS|1\r";
    let parts = split_batch(p);
    assert_eq!(
        parts,
        vec![&b"MSH|^~\\&|1\rPID|a\r"[..], &b"MSH|^~\\&|2\r"[..]]
    );
    assert!(split_batch(b"BHS\rBTS|0").is_empty());
}

#[test]
fn scan_ack_reads_msa_and_err_under_the_acks_separator() {
    let ack = b"MSH#^~\\&#R#RF#S#SF#2024##ACK^A01#A9#P#2.5\rMSA#AE#C\\E\\1 ^x#Boom\rERR###207^Application internal error^HL70357#E\r";
    let v = scan_ack(ack).unwrap();
    assert_eq!(v.code, b"AE");
    assert_eq!(v.control_id, b"C\\E\\1 ^x");
    assert_eq!(v.text, Some(&b"Boom"[..]));
    assert_eq!(v.error_code, Some(&b"207"[..]));
    let plain = scan_ack(b"MSH|^~\\&\rMSA|AA|1").unwrap();
    assert_eq!((plain.code, plain.control_id), (&b"AA"[..], &b"1"[..]));
    assert_eq!((plain.text, plain.error_code), (None, None));
    assert_eq!(scan_ack(b"MSA|AA|1"), None);
    assert_eq!(scan_ack(b"MSH|^~\\&\rPID"), None);
    let bare = scan_ack(b"MSH|^~\\&\rMSA").unwrap();
    assert_eq!((bare.code, bare.control_id), (&b""[..], &b""[..]));
}

#[test]
fn segments_skip_empty_lines() {
    let got: Vec<_> = segments(b"\r\nA\r\rB\nC").collect();
    assert_eq!(got, vec![(2, &b"A"[..]), (5, &b"B"[..]), (7, &b"C"[..])]);
}

/// MSH-n as the plain definition reads it: split everything after MSH-1 on the field separator.
fn reference_field(segment: &[u8], field: u8, n: usize) -> Option<&[u8]> {
    match n {
        0 => segment.get(..3),
        1 => segment.get(3..4),
        _ => segment.get(4..)?.split(|&b| b == field).nth(n - 2),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// The field index agrees with a plain split for every field, however many separators
    /// (beyond the indexed ones too) and whatever the separator.
    #[test]
    fn indexed_fields_match_a_plain_split(
        separator in proptest::prelude::prop_oneof![
            proptest::prelude::Just(b'|'),
            proptest::prelude::any::<u8>()
        ],
        body in proptest::collection::vec(
            proptest::prelude::prop_oneof![
                3 => proptest::prelude::Just(b'|'),
                5 => b'A'..=b'C',
                1 => proptest::prelude::any::<u8>(),
            ],
            0..90,
        ),
        bare in proptest::prelude::any::<bool>(),
    ) {
        let mut segment = b"MSH".to_vec();
        if !bare {
            segment.push(separator);
            segment.extend(body.iter().map(|&b| if b == b'|' { separator } else { b }));
        }
        let segment = &segment[..];
        let msh = Msh::parse(segment).unwrap();
        let field = segment.get(3).copied().unwrap_or(b'|');
        for n in 0..40 {
            proptest::prop_assert_eq!(msh.field(n), reference_field(segment, field, n), "MSH-{}", n);
            if n >= 2 {
                let spanned = msh.span(n).map(|(start, end)| &segment[start..end]);
                proptest::prop_assert_eq!(spanned, msh.field(n), "span of MSH-{}", n);
            }
        }
        if let Some(fields) = msh.indexed_to_msh10() {
            for n in 3..=10 {
                proptest::prop_assert_eq!(Some(fields.span(n)), msh.span(n), "indexed MSH-{}", n);
            }
        } else {
            // Only a header whose index stops short of MSH-10's end is placed field by field.
            proptest::prop_assert!(reference_field(segment, field, 11).is_none() || segment.len() < 4);
        }
        let declared = reference_field(segment, field, 2).unwrap_or_default();
        proptest::prop_assert_eq!(msh.encoding_characters, declared);
    }

    #[test]
    fn zero_bytes_flags_exactly_the_zero_bytes(
        bytes in proptest::collection::vec(
            proptest::prelude::prop_oneof![
                proptest::prelude::Just(0u8),
                proptest::prelude::Just(1u8),
                proptest::prelude::Just(0x80u8),
                proptest::prelude::any::<u8>(),
            ],
            8,
        ),
    ) {
        let word = u64::from_le_bytes(bytes.clone().try_into().unwrap());
        let want = bytes
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == 0)
            .fold(0u64, |m, (i, _)| m | 0x80 << (8 * i));
        proptest::prop_assert_eq!(super::mask::zero_bytes(word), want);
    }
}

#[test]
fn header_delimiters_agree_with_msh() {
    for segment in [
        &b"MSH|^~\\&|A|B"[..],
        b"MSH|^~",
        b"MSH#^~\\&#A",
        b"MSH|",
        b"MSH",
        b"MSH|||",
    ] {
        assert_eq!(
            Some(Delimiters::of_header(segment)),
            Msh::parse(segment).map(|m| m.delimiters),
            "{segment:?}"
        );
    }
}

#[test]
fn ack_reply_agrees_with_scan_ack() {
    for ack in [
        &b"MSH|^~\\&|A|B|C|D|T||ACK|1|P|2.5\rMSA|AA|CTL-1\r"[..],
        b"MSH|^~\\&|A|B\rMSA|AE|CTL-2|text\rERR|||207^x\r",
        b"MSA|AA|1\rMSH#^~\\&#A\rMSA#CA#7",
        b"MSH|^~\\&\nMSA|AR",
        b"MSH|^~\\&\rMSA",
        b"MSH|^~\\&\rPID|1",
        b"MSA|AA|1",
        b"",
        b"MSH",
        b"MSH\rMSA|AA|1",
        b"MSH|\r\n\rMSA|AA|CTL|text\r",
        b"MSH|^~\\&\rMSA|",
        b"MSH|^~\\&\rMSA|AA",
        b"MSH|^~\\&\rMSA|AA|",
        b"MSH|^~\\&\rMSAX|AA|1",
        b"MSH|^~\\&\rMSA||\rMSA|AA|2",
        b"MSH|^~\\&\rEVN\rMSA|AA|3",
        b"MSHA^~\\&AxAMSAAAAAA7",
        b"MSHM^~\\&\rMSAMAAM7",
    ] {
        let want = scan_ack(ack).map(|v| (v.code, v.control_id));
        assert_eq!(ack_reply(ack), want, "{ack:?}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

    /// The ACK reader's in-place path reads what the general reader reads, whatever the
    /// separator, segment breaks and segments around the MSA.
    #[test]
    fn ack_reply_in_place_agrees_with_scan_ack(
        body in proptest::collection::vec(
            proptest::prelude::prop_oneof![
                4 => proptest::prelude::Just(b'|'),
                2 => proptest::prelude::Just(b'\r'),
                1 => proptest::prelude::Just(b'\n'),
                3 => proptest::prelude::prop_oneof![
                    proptest::prelude::Just(b'M'),
                    proptest::prelude::Just(b'S'),
                    proptest::prelude::Just(b'A'),
                    proptest::prelude::Just(b'H'),
                ],
                2 => b'0'..=b'9',
                1 => proptest::prelude::any::<u8>(),
            ],
            0..60,
        ),
        msa_at in 0usize..60,
        prefix in proptest::prelude::any::<bool>(),
    ) {
        let mut ack = if prefix { b"MSH".to_vec() } else { Vec::new() };
        ack.extend_from_slice(&body);
        let at = msa_at.min(ack.len());
        ack.splice(at..at, b"\rMSA".iter().copied());
        let want = scan_ack(&ack).map(|v| (v.code, v.control_id));
        proptest::prop_assert_eq!(ack_reply(&ack), want, "{:?}", ack);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]

    /// `is_ack` reads MSH-9's first component as the plain split does, whatever the separator
    /// and component characters (letters of `ACK` among them) and the field's shape.
    #[test]
    fn is_ack_agrees_with_the_first_component(
        separator in proptest::sample::select(b"|#A^".to_vec()),
        encoding in proptest::collection::vec(proptest::sample::select(b"^~\\&ACK|#".to_vec()), 0..5),
        message_type in proptest::collection::vec(proptest::sample::select(b"ACK^&~X|#".to_vec()), 0..7),
        fields_before in 0usize..9,
        terminator in proptest::sample::select(vec![&b""[..], b"\r", b"\n", b"\rPID|1"]),
    ) {
        let mut payload = b"MSH".to_vec();
        payload.push(separator);
        payload.extend_from_slice(&encoding);
        for _ in 0..fields_before {
            payload.push(separator);
        }
        payload.extend_from_slice(&message_type);
        payload.extend_from_slice(terminator);
        if let Some(msh) = scan(&payload).msh {
            proptest::prop_assert_eq!(msh.is_ack(), msh.component(9, 1) == Some(&b"ACK"[..]), "{:?}", payload);
        }
    }
}

/// The segments as a search per segment finds them: the reading the mask replaces.
fn segments_by_search(payload: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < payload.len() {
        let rest = &payload[start..];
        let len = memchr::memchr2(b'\r', b'\n', rest).unwrap_or(rest.len());
        if len > 0 {
            out.push((start, &rest[..len]));
        }
        start += len + 1;
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// Any payload (terminators in runs, at block edges, at either end, none at all, segments
    /// starting MSH or an envelope's name): the segments and the scan of a search per segment.
    #[test]
    fn segments_and_scan_are_the_search(
        pieces in proptest::collection::vec(
            proptest::prelude::prop_oneof![
                3 => proptest::prelude::Just(&b"\r"[..]),
                1 => proptest::prelude::Just(&b"\n"[..]),
                1 => proptest::prelude::Just(&b"\r\n"[..]),
                2 => proptest::prelude::Just(&b"MSH|^~\\&|A|B||||ADT^A01|C1|P|2.5"[..]),
                // Past a block, past the indexed separators, its last field in the next block.
                1 => proptest::prelude::Just(&b"MSH|^~\\&|SENDAPP|SENDFAC|RECVAPP|RECVFAC|20240101|x|ADT^A01|C2|P|2.5|||||||||||||LAST"[..]),
                1 => proptest::prelude::Just(&b"BHS|^~\\&"[..]),
                1 => proptest::prelude::Just(&b"PID|1||123"[..]),
                1 => proptest::prelude::Just(&b"x"[..]),
                1 => proptest::prelude::Just(&b"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"[..]),
            ],
            0..40,
        ),
        noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..70),
    ) {
        let mut payload = pieces.concat();
        payload.extend_from_slice(&noise);
        let want = segments_by_search(&payload);
        proptest::prop_assert_eq!(segments(&payload).collect::<Vec<_>>(), want.clone());
        // The scan as it read the same segments.
        let mut msh = None;
        let mut msh_count = 0;
        let mut envelope = false;
        for &(_, segment) in &want {
            if segment.starts_with(b"MSH") {
                msh_count += 1;
                if msh.is_none() {
                    msh = Msh::parse(segment);
                }
            } else if is_envelope_segment(segment) {
                envelope = true;
            }
        }
        let shape = match (envelope, msh_count > 1, msh.is_some()) {
            (true, _, _) => Shape::Batch,
            (false, true, _) => Shape::Concatenated,
            (false, false, true) => Shape::Single,
            (false, false, false) => Shape::NoMsh,
        };
        proptest::prop_assert_eq!(scan(&payload), Scan { msh, shape });
    }
}

/// A header segment of a few fields (some past the index), its bytes mostly separators,
/// encoding characters and letters.
fn header_segment() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let name = prop::sample::select(vec![&b"MSH"[..], b"FHS", b"BHS"]);
    let separator = prop::sample::select(b"|#^~A".to_vec());
    (name, separator).prop_flat_map(|(name, sep)| {
        let byte = prop_oneof![
            4 => Just(sep),
            2 => prop::sample::select(b"^~\\&#".to_vec()),
            4 => prop::sample::select(b"ACK01".to_vec()),
            1 => any::<u8>().prop_filter("no line end", |b| *b != b'\r' && *b != b'\n'),
        ];
        prop::collection::vec(byte, 0..120).prop_map(move |body| {
            let mut s = name.to_vec();
            s.push(sep);
            s.extend(body);
            s
        })
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]

    /// The indexed header reads every field, its delimiters and each field's place as the
    /// reader does.
    #[test]
    fn msh_reads_as_the_reader(segment in header_segment()) {
        let msh = Msh::parse(&segment).unwrap();
        let reader = Segment::header(&segment);
        proptest::prop_assert_eq!(msh.delimiters, Delimiters::of_header(&segment));
        for n in 0..30 {
            let want = reader.field(n).map(|v| v.raw());
            proptest::prop_assert_eq!(msh.field(n), want, "field {}", n);
            if n >= 2 {
                let span = msh.span(n).map(|(a, b)| &segment[a..b]);
                proptest::prop_assert_eq!(span, want, "span {}", n);
            }
        }
        if let Some(fields) = msh.indexed_to_msh10() {
            for n in 3..=10 {
                let (a, b) = fields.span(n);
                proptest::prop_assert_eq!(Some(&segment[a..b]), reader.field(n).map(|v| v.raw()));
            }
        }
        // Within a payload, as `scan` finds it.
        let mut payload = segment.clone();
        payload.extend_from_slice(b"\rPID|1\r");
        if segment.starts_with(b"MSH") {
            let scanned = scan(&payload).msh.unwrap();
            proptest::prop_assert_eq!(scanned.field(10), reader.field(10).map(|v| v.raw()));
        }
    }
}
