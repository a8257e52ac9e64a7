//! A value of the same shape: digits for digits, letters for letters in the same case, every
//! other character kept, the length in characters kept. Never the original, when it has a
//! letter or digit to change.

use super::derive::{Deriver, Domain};

/// The replacement of `text` (escape sequences decoded) under `deriver`, appended to `out`.
pub(super) fn same_shape(deriver: &Deriver, text: &[u8], out: &mut Vec<u8>) {
    let from = out.len();
    for round in 0..=u8::MAX {
        out.truncate(from);
        let mut stream = deriver.stream(deriver.digest(Domain::Shape, round, text));
        fill(text, &mut || stream.next_byte(), out);
        if out[from..] != *text {
            break;
        }
    }
}

/// `text` with each letter and digit replaced from `bytes`. UTF-8 text is read by character
/// (a letter outside ASCII becomes an ASCII letter of its case); text in another character
/// set, byte by byte (a byte above ASCII becomes a lower-case letter).
fn fill(text: &[u8], bytes: &mut impl FnMut() -> u8, out: &mut Vec<u8>) {
    let letter = |b: u8, base: u8| base + b % 26;
    if text.is_ascii() || std::str::from_utf8(text).is_err() {
        for &c in text {
            out.push(match c {
                b'0'..=b'9' => b'0' + bytes() % 10,
                b'A'..=b'Z' => letter(bytes(), b'A'),
                b'a'..=b'z' => letter(bytes(), b'a'),
                0x80.. => letter(bytes(), b'a'),
                _ => c,
            });
        }
        return;
    }
    let text = std::str::from_utf8(text).unwrap_or_default();
    for c in text.chars() {
        if c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric()) {
            out.push(b'0' + bytes() % 10);
        } else if c.is_uppercase() {
            out.push(letter(bytes(), b'A'));
        } else if c.is_alphabetic() {
            out.push(letter(bytes(), b'a'));
        } else {
            let mut utf8 = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deid::Key;

    fn shape(text: &str) -> String {
        let d = Deriver::new(&Key::from_bytes([7; 32]));
        let mut out = b"kept".to_vec();
        same_shape(&d, text.as_bytes(), &mut out);
        assert_eq!(&out[..4], b"kept");
        String::from_utf8(out[4..].to_vec()).unwrap()
    }

    #[test]
    fn keeps_the_shape_and_changes_the_value() {
        for text in [
            "12345678",
            "(555)555-1234",
            "123 Main St.",
            "a@b.org",
            "Q",
            "7",
        ] {
            let out = shape(text);
            assert_ne!(out, text);
            assert_eq!(out.len(), text.len());
            for (o, t) in out.chars().zip(text.chars()) {
                assert_eq!(o.is_ascii_digit(), t.is_ascii_digit(), "{text} {out}");
                assert_eq!(
                    o.is_ascii_uppercase(),
                    t.is_ascii_uppercase(),
                    "{text} {out}"
                );
                assert_eq!(
                    o.is_ascii_lowercase(),
                    t.is_ascii_lowercase(),
                    "{text} {out}"
                );
                if !t.is_ascii_alphanumeric() {
                    assert_eq!(o, t);
                }
            }
            assert_eq!(shape(text), out);
        }
        // Nothing to change: kept.
        assert_eq!(shape("--"), "--");
        assert_eq!(shape("\"\""), "\"\"");
    }

    #[test]
    fn letters_outside_ascii_become_letters_of_their_case() {
        let out = shape("MÜLLER-ø");
        assert_eq!(out.chars().count(), 8);
        assert!(out.is_ascii());
        assert_eq!(&out[6..7], "-");
        assert!(out[..6].chars().all(|c| c.is_ascii_uppercase()));
        assert!(out[7..].chars().all(|c| c.is_ascii_lowercase()));
        // Latin-1 bytes: one letter each.
        let d = Deriver::new(&Key::from_bytes([7; 32]));
        let mut out = Vec::new();
        same_shape(&d, b"M\xdcLLER", &mut out);
        assert_eq!(out.len(), 6);
        assert!(out.is_ascii());
    }
}
