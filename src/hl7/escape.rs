//! Escape sequences decoded: a value as its text means, under the message's delimiters.
//!
//! `\F\ \S\ \T\ \R\ \E\` stand for the field, component, subcomponent and repetition
//! separators and the escape character, `\P\` for the truncation character where the message
//! declares one, `\Xhh..\` for the bytes its hexadecimal digits give, `\.br\` for a line break
//! (a CR). `\H\` and `\N\` only switch highlighting on and off: they decode to nothing. Any
//! other sequence (a character set switch, a site's own `\Z..\`, formatting other than `.br`)
//! and an escape character with no partner are kept as written: no byte is ever dropped.

use super::Delimiters;
use std::borrow::Cow;

/// `raw` with its escape sequences decoded; borrowed when it holds none.
pub(crate) fn decode<'a>(raw: &'a [u8], delimiters: &Delimiters) -> Cow<'a, [u8]> {
    let esc = delimiters.escape;
    let Some(first) = memchr::memchr(esc, raw) else {
        return Cow::Borrowed(raw);
    };
    let mut out = Vec::with_capacity(raw.len());
    out.extend_from_slice(&raw[..first]);
    let mut at = first;
    while at < raw.len() {
        // `raw[at]` is an escape character.
        let Some(len) = memchr::memchr(esc, &raw[at + 1..]) else {
            // No partner: the rest as written.
            out.extend_from_slice(&raw[at..]);
            break;
        };
        let end = at + 1 + len;
        let sequence = &raw[at + 1..end];
        if !expand(sequence, delimiters, &mut out) {
            out.extend_from_slice(&raw[at..=end]);
        }
        at = end + 1;
        match memchr::memchr(esc, &raw[at..]) {
            Some(next) => {
                out.extend_from_slice(&raw[at..at + next]);
                at += next;
            }
            None => {
                out.extend_from_slice(&raw[at..]);
                break;
            }
        }
    }
    Cow::Owned(out)
}

/// Append `text` written under `delimiters`: each delimiter byte as its escape sequence, a CR
/// as `\.br\`, an LF as `\X0A\`, the rest as it is. [`decode`] gives `text` back.
pub(crate) fn encode(text: &[u8], delimiters: &Delimiters, out: &mut Vec<u8>) {
    let esc = delimiters.escape;
    for &b in text {
        let sequence: &[u8] = match b {
            b'\r' => b".br",
            b'\n' => b"X0A",
            _ if b == delimiters.field => b"F",
            _ if b == delimiters.component => b"S",
            _ if b == delimiters.subcomponent => b"T",
            _ if b == delimiters.repetition => b"R",
            _ if b == esc => b"E",
            _ if Some(b) == delimiters.truncation => b"P",
            _ => {
                out.push(b);
                continue;
            }
        };
        out.push(esc);
        out.extend_from_slice(sequence);
        out.push(esc);
    }
}

/// Append what `sequence` (between two escape characters) stands for; false when it is not one
/// this reader decodes.
fn expand(sequence: &[u8], delimiters: &Delimiters, out: &mut Vec<u8>) -> bool {
    let byte = match sequence {
        b"F" => delimiters.field,
        b"S" => delimiters.component,
        b"T" => delimiters.subcomponent,
        b"R" => delimiters.repetition,
        b"E" => delimiters.escape,
        b"P" => match delimiters.truncation {
            Some(t) => t,
            None => return false,
        },
        b".br" => b'\r',
        b"H" | b"N" => return true,
        [b'X', hex @ ..] => return hex_bytes(hex, out),
        _ => return false,
    };
    out.push(byte);
    true
}

/// The bytes of an even, non-zero number of hexadecimal digits; false (nothing appended) for
/// anything else.
fn hex_bytes(hex: &[u8], out: &mut Vec<u8>) -> bool {
    if hex.is_empty() || !hex.len().is_multiple_of(2) || !hex.iter().all(u8::is_ascii_hexdigit) {
        return false;
    }
    let digit = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
    out.extend(hex.chunks_exact(2).map(|p| digit(p[0]) << 4 | digit(p[1])));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(raw: &[u8]) -> Vec<u8> {
        decode(raw, &Delimiters::default()).into_owned()
    }

    #[test]
    fn decodes_each_sequence() {
        assert_eq!(d(b"A\\F\\B\\S\\C\\T\\D\\R\\E\\E\\"), b"A|B^C&D~E\\");
        assert_eq!(d(b"line\\.br\\next"), b"line\rnext");
        assert_eq!(d(b"\\X41C3A9\\x"), b"A\xc3\xa9x");
        assert_eq!(d(b"\\H\\bold\\N\\"), b"bold");
        assert!(matches!(
            decode(b"plain", &Delimiters::default()),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn keeps_what_it_does_not_decode() {
        for raw in [
            &b"a\\Zsite\\b"[..],
            b"\\X4\\",
            b"\\XZZ\\",
            b"\\X\\",
            b"\\\\",
            b"open \\F",
            b"\\P\\",
            b"\\.sp\\",
            b"\\C2842\\",
        ] {
            assert_eq!(d(raw), raw, "{:?}", String::from_utf8_lossy(raw));
        }
    }

    #[test]
    fn encoding_gives_back_what_decoding_reads() {
        for d in [
            Delimiters::default(),
            Delimiters::from_header(b'#', b"*%$@!"),
        ] {
            let text = b"a|b^c~d\\e&f#g*h%i$j@k!l\rm\nn";
            let mut out = Vec::new();
            encode(text, &d, &mut out);
            assert!(!out
                .iter()
                .any(|&b| b == d.field || b == b'\r' || b == b'\n'));
            assert_eq!(decode(&out, &d).as_ref(), text);
        }
    }

    #[test]
    fn follows_the_declared_characters() {
        let odd = Delimiters::from_header(b'#', b"*%$@!");
        assert_eq!(decode(b"$F$$S$$P$$E$", &odd).as_ref(), b"#*!$");
        // The default escape means nothing here.
        assert_eq!(decode(b"\\F\\", &odd).as_ref(), b"\\F\\");
    }
}
