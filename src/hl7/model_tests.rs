//! The reader against a model anyone can check by eye: the message split at each separator in
//! turn, with `Vec`s and `split`, then the path's numbers used as indexes.

use super::*;
use proptest::prelude::*;

/// The segments, split at CR and LF, blank ones left out.
fn model_segments(payload: &[u8]) -> Vec<&[u8]> {
    payload
        .split(|&b| b == b'\r' || b == b'\n')
        .filter(|s| !s.is_empty())
        .collect()
}

fn is_header(segment: &[u8]) -> bool {
    segment.len() > 3 && [&b"MSH"[..], b"FHS", b"BHS"].contains(&&segment[..3])
}

/// Field, component, repetition and subcomponent separators.
type Seps = (u8, u8, u8, u8);

/// A segment's fields (index 0 its name) and the separators it is read under.
type Read = (Vec<Vec<u8>>, Seps);

/// Separators from the first header segment: MSH-1, then MSH-2's characters in order.
fn model_delimiters(payload: &[u8]) -> Seps {
    let Some(header) = model_segments(payload)
        .into_iter()
        .find(|s| s.starts_with(b"MSH") || is_header(s))
        .filter(|s| s.len() > 3)
    else {
        return (b'|', b'^', b'~', b'&');
    };
    let field = header[3];
    let msh2 = header[4..]
        .split(|&b| b == field)
        .next()
        .unwrap_or_default();
    let at = |i: usize, d: u8| msh2.get(i).copied().unwrap_or(d);
    (field, at(0, b'^'), at(1, b'~'), at(3, b'&'))
}

/// The fields of a segment numbered as HL7 numbers them: index 0 the name.
fn model_fields(segment: &[u8], field: u8) -> Vec<Vec<u8>> {
    if is_header(segment) {
        let mut fields = vec![segment[..3].to_vec(), vec![segment[3]]];
        fields.extend(segment[4..].split(|&b| b == field).map(<[u8]>::to_vec));
        fields
    } else {
        segment.split(|&b| b == field).map(<[u8]>::to_vec).collect()
    }
}

fn pieces(value: &[u8], separator: u8) -> Vec<Vec<u8>> {
    value
        .split(|&b| b == separator)
        .map(<[u8]>::to_vec)
        .collect()
}

/// Each segment with the delimiters it is read under: the last header segment's at or before
/// it, the first header's before any.
fn model_read(payload: &[u8]) -> Vec<(&[u8], Seps)> {
    let mut current = model_delimiters(payload);
    model_segments(payload)
        .into_iter()
        .map(|s| {
            if is_header(s) {
                current = model_delimiters(s);
            }
            (s, current)
        })
        .collect()
}

/// What the path names, by the model.
fn model_values(payload: &[u8], path: &Path) -> Vec<Vec<u8>> {
    let named: Vec<Read> = model_read(payload)
        .into_iter()
        .map(|(s, d)| (model_fields(s, d.0), d))
        .filter(|(fields, _)| fields[0] == path.segment())
        .collect();
    let chosen: Vec<&Read> = match path.occurrence() {
        Occurrence::Every => named.iter().collect(),
        Occurrence::Nth(n) => named.get(n - 1).into_iter().collect(),
    };
    let header = matches!(path.segment(), b"MSH" | b"FHS" | b"BHS");
    let literal = header && path.field() <= 2;
    let mut out = Vec::new();
    for (fields, (_, component, repetition, subcomponent)) in chosen {
        let (component, repetition, subcomponent) = (*component, *repetition, *subcomponent);
        let Some(value) = fields.get(path.field()) else {
            if path.repetition() != Occurrence::Every {
                out.push(Vec::new());
            }
            continue;
        };
        let repetitions = match literal {
            true => vec![value.clone()],
            false => pieces(value, repetition),
        };
        let chosen_reps: Vec<Vec<u8>> = match path.repetition() {
            Occurrence::Every => repetitions.clone(),
            Occurrence::Nth(r) => vec![repetitions.get(r - 1).cloned().unwrap_or_default()],
        };
        for rep in chosen_reps {
            let Some(c) = path.component() else {
                out.push(rep);
                continue;
            };
            let components = match literal {
                true => vec![rep.clone()],
                false => pieces(&rep, component),
            };
            let comp = components.get(c - 1).cloned().unwrap_or_default();
            let value = match path.subcomponent() {
                None => comp,
                Some(s) => {
                    let subs = match literal {
                        true => vec![comp.clone()],
                        false => pieces(&comp, subcomponent),
                    };
                    subs.get(s - 1).cloned().unwrap_or_default()
                }
            };
            out.push(value);
        }
    }
    out
}

fn separators() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => Just(b"|^~\\&".to_vec()),
        1 => Just(b"#*%$@".to_vec()),
        1 => Just(b"|^~\\&#".to_vec()),
        1 => Just(b"|^~".to_vec()),
    ]
}

/// A message of a few segments, their bytes drawn mostly from the separators, with now and
/// then a stray CR or LF, a blank line or any byte.
fn message() -> impl Strategy<Value = Vec<u8>> {
    separators().prop_flat_map(|seps| {
        let field = seps[0];
        let byte = prop_oneof![
            6 => prop::sample::select(b"ABC12".to_vec()),
            4 => prop::sample::select(seps.clone()),
            1 => prop::sample::select(b"\r\n".to_vec()),
            1 => any::<u8>(),
        ];
        let name = prop::sample::select(vec![&b"PID"[..], b"OBX", b"MSH", b"NTE", b"PIDX", b"ZZ"]);
        let segment = (name, prop::collection::vec(byte, 0..24)).prop_map(move |(n, body)| {
            let mut s = n.to_vec();
            s.push(field);
            s.extend(body);
            s
        });
        (
            Just(seps),
            prop::collection::vec(segment, 0..6),
            any::<bool>(),
        )
            .prop_map(|(seps, segments, lf)| {
                let mut m = b"MSH".to_vec();
                m.extend_from_slice(&seps);
                m.extend_from_slice(&[seps[0], b'A', seps[0]]);
                for s in segments {
                    m.push(if lf { b'\n' } else { b'\r' });
                    m.extend(s);
                }
                m
            })
    })
}

fn path() -> impl Strategy<Value = Path> {
    let occurrence = prop_oneof![
        3 => Just(None),
        2 => (1usize..4).prop_map(|n| Some(format!("({n})"))),
        1 => Just(Some("(*)".to_string())),
    ];
    (
        prop::sample::select(vec!["PID", "OBX", "MSH", "NTE", "ZZZ"]),
        occurrence.clone(),
        1usize..8,
        occurrence,
        prop::option::of(1usize..4),
        prop::option::of(1usize..4),
    )
        .prop_map(|(seg, occ, field, rep, c, s)| {
            let mut text = format!(
                "{seg}{}-{field}{}",
                occ.unwrap_or_default(),
                rep.unwrap_or_default()
            );
            if let Some(c) = c {
                text.push_str(&format!(".{c}"));
                if let Some(s) = s {
                    text.push_str(&format!(".{s}"));
                }
            }
            text.parse().unwrap()
        })
}

/// Escape every delimiter of `text` as the notation writes it.
fn escape_text(text: &[u8], d: &Delimiters) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in text {
        let code = match b {
            _ if b == d.escape => Some(b'E'),
            _ if b == d.field => Some(b'F'),
            _ if b == d.component => Some(b'S'),
            _ if b == d.subcomponent => Some(b'T'),
            _ if b == d.repetition => Some(b'R'),
            _ => None,
        };
        match code {
            Some(c) => out.extend_from_slice(&[d.escape, c, d.escape]),
            None => out.push(b),
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Every path names in the reader what it names in the model, value for value.
    #[test]
    fn the_reader_reads_as_the_model(payload in message(), path in path()) {
        let message = Message::new(&payload);
        let got: Vec<Vec<u8>> = message.values(&path).map(|v| v.raw().to_vec()).collect();
        prop_assert_eq!(&got, &model_values(&payload, &path), "{:?} {}", String::from_utf8_lossy(&payload), path);
        let first = got.first().cloned().unwrap_or_default();
        prop_assert_eq!(message.get(&path).raw(), &first[..]);
    }

    /// Each segment's fields, by number and all at once, are the model's.
    #[test]
    fn fields_are_the_models(payload in message()) {
        let message = Message::new(&payload);
        let model: Vec<Vec<Vec<u8>>> = model_read(&payload).into_iter().map(|(s, d)| model_fields(s, d.0)).collect();
        let segments: Vec<Segment<'_>> = message.segments().collect();
        prop_assert_eq!(segments.len(), model.len());
        for (segment, fields) in segments.iter().zip(&model) {
            prop_assert_eq!(segment.name(), &fields[0][..]);
            prop_assert_eq!(segment.field_count() + 1, fields.len());
            let all: Vec<(usize, Vec<u8>)> = segment.fields().map(|(n, v)| (n, v.raw().to_vec())).collect();
            let want: Vec<(usize, Vec<u8>)> = fields.iter().cloned().enumerate().skip(1).collect();
            prop_assert_eq!(all, want);
            for (n, f) in fields.iter().enumerate() {
                prop_assert_eq!(segment.field(n).map(|v| v.raw()), Some(&f[..]));
            }
            prop_assert!(segment.field(fields.len()).is_none());
        }
    }

    /// Any bytes, any path: the reader never panics.
    #[test]
    fn any_bytes_read_without_panic(payload in prop::collection::vec(any::<u8>(), 0..200), path in path()) {
        let message = Message::new(&payload);
        for v in message.values(&path) {
            let _ = v.decoded();
            let _ = v.text(Charset::UTF_8);
        }
        for s in message.segments() {
            for (_, v) in s.fields() {
                let _ = v.repetitions().count();
            }
        }
    }

    /// Text with its delimiters escaped decodes back to itself, under any delimiters.
    #[test]
    fn escaped_text_decodes_to_itself(
        text in prop::collection::vec(prop::sample::select(b"AB |^~\\&#*%$@".to_vec()), 0..30),
        seps in separators(),
    ) {
        let d = Delimiters::from_header(seps[0], &seps[1..]);
        let escaped = escape_text(&text, &d);
        let decoded = escape::decode(&escaped, &d).into_owned();
        prop_assert_eq!(decoded, text);
    }
}

#[test]
fn the_paths_of_the_notation() {
    let bytes = b"MSH|^~\\&|SND|FAC|||20240101||ORU^R01^ORU_R01|C1|P|2.7\r\
        PID|1||123^^^H^MR~456^^^S||DOE^JANE^Q\rOBX|1|NM|GLU||5.4\rOBX|2|ST|NOTE||a\\T\\b&c\r";
    let m = Message::new(bytes);
    let get = |p: &str| m.get(&p.parse().unwrap()).raw().to_vec();
    let all = |p: &str| {
        m.values(&p.parse().unwrap())
            .map(|v| v.raw().to_vec())
            .collect::<Vec<_>>()
    };
    assert_eq!(get("MSH-1"), b"|");
    assert_eq!(get("MSH-2"), b"^~\\&");
    assert_eq!(get("MSH-3"), b"SND");
    assert_eq!(get("MSH-9.2"), b"R01");
    assert_eq!(get("PID-3"), b"123^^^H^MR");
    assert_eq!(get("PID-3(2).1"), b"456");
    assert_eq!(get("PID-5.2"), b"JANE");
    assert_eq!(get("OBX(2)-5"), b"a\\T\\b&c");
    assert_eq!(get("OBX(2)-5.1.2"), b"c");
    assert_eq!(
        m.get(&"OBX(2)-5.1.1".parse().unwrap()).decoded().as_ref(),
        b"a&b"
    );
    assert_eq!(all("OBX(*)-5"), [&b"5.4"[..], b"a\\T\\b&c"]);
    assert_eq!(all("PID-3(*).1"), [&b"123"[..], b"456"]);
    assert!(all("AL1(*)-3").is_empty());
    assert_eq!(get("OBX(3)-5"), b"");
    assert_eq!(get("PID-30"), b"");
    assert_eq!(get("MSH-2.2"), b"");
    assert_eq!(get("MSH-2.1"), b"^~\\&");
}
