//! Text of a message in the character set MSH-18 names (HL7 Table 0211: `ASCII`, `8859/1` to
//! `8859/16`, `UNICODE UTF-8`, ...), decoded with `encoding_rs`. The bytes are never changed:
//! this is only how they read as text, and a byte the character set cannot decode is shown
//! escaped as `\Xhh\` and counted, never dropped.

use super::{Message, Path};
use encoding_rs::{DecoderResult, Encoding};
use std::borrow::Cow;
use std::fmt;

/// A character set text can be decoded in. `Display` gives its HL7 name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Charset {
    kind: Kind,
    name: &'static str,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ascii,
    Utf8,
    /// ISO 8859-1: each byte its own code point.
    Latin1,
    /// A Windows code page that is an ISO 8859 part outside 0x80-0x9F, where the ISO part
    /// has the C1 controls (8859/9 is Windows-1254 there).
    IsoAsWindows(&'static Encoding),
    Other(&'static Encoding),
}

/// HL7 Table 0211's names, with the decoders that read them.
const TABLE_0211: &[(&str, Kind)] = &[
    ("ASCII", Kind::Ascii),
    ("ISO IR6", Kind::Ascii),
    ("8859/1", Kind::Latin1),
    ("ISO IR100", Kind::Latin1),
    ("8859/2", Kind::Other(encoding_rs::ISO_8859_2)),
    ("8859/3", Kind::Other(encoding_rs::ISO_8859_3)),
    ("8859/4", Kind::Other(encoding_rs::ISO_8859_4)),
    ("8859/5", Kind::Other(encoding_rs::ISO_8859_5)),
    ("8859/6", Kind::Other(encoding_rs::ISO_8859_6)),
    ("8859/7", Kind::Other(encoding_rs::ISO_8859_7)),
    ("8859/8", Kind::Other(encoding_rs::ISO_8859_8)),
    ("8859/9", Kind::IsoAsWindows(encoding_rs::WINDOWS_1254)),
    ("8859/10", Kind::Other(encoding_rs::ISO_8859_10)),
    ("8859/13", Kind::Other(encoding_rs::ISO_8859_13)),
    ("8859/14", Kind::Other(encoding_rs::ISO_8859_14)),
    ("8859/15", Kind::Other(encoding_rs::ISO_8859_15)),
    ("8859/16", Kind::Other(encoding_rs::ISO_8859_16)),
    ("ISO IR14", Kind::Other(encoding_rs::SHIFT_JIS)),
    ("ISO IR87", Kind::Other(encoding_rs::ISO_2022_JP)),
    ("GB 18030-2000", Kind::Other(encoding_rs::GB18030)),
    ("KS X 1001", Kind::Other(encoding_rs::EUC_KR)),
    ("BIG-5", Kind::Other(encoding_rs::BIG5)),
    ("UNICODE", Kind::Utf8),
    ("UNICODE UTF-8", Kind::Utf8),
];

/// MSH-18, the message's character set.
fn msh18() -> Path {
    Path::of("MSH", 18, None, None).unwrap_or_else(|| unreachable!("MSH-18 is a path"))
}

/// MSH-18 names a character set this reader does not know (or one text cannot be read in
/// byte by byte, as UTF-16). Says nothing of the name: it is the message's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("MSH-18 names a character set that is not known here")]
pub struct UnknownCharset;

impl Charset {
    /// UTF-8, HL7's `UNICODE UTF-8`.
    pub const UTF_8: Charset = Charset {
        kind: Kind::Utf8,
        name: "UNICODE UTF-8",
    };

    /// ASCII, HL7's default when MSH-18 is empty.
    pub const ASCII: Charset = Charset {
        kind: Kind::Ascii,
        name: "ASCII",
    };

    /// The character set a name gives: an HL7 Table 0211 name (`8859/1`, `UNICODE UTF-8`,
    /// any case), or a common label (`UTF-8`, `ISO-8859-1`, `latin1`, `windows-1252`).
    /// `None` for a name it does not know and for encodings that are not ASCII-compatible
    /// (UTF-16), which no HL7 reader can split.
    pub fn from_name(name: &str) -> Option<Charset> {
        let name = name.trim();
        if let Some(&(hl7, kind)) = TABLE_0211
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            return Some(Charset { kind, name: hl7 });
        }
        let latin1 = ["ISO-8859-1", "ISO8859-1", "ISO_8859-1", "LATIN1", "L1"];
        if latin1.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            return Charset::from_name("8859/1");
        }
        let encoding = Encoding::for_label_no_replacement(name.as_bytes())?;
        if !encoding.is_ascii_compatible() {
            return None;
        }
        let kind = match encoding {
            e if e == encoding_rs::UTF_8 => Kind::Utf8,
            e => Kind::Other(e),
        };
        Some(Charset {
            kind,
            name: encoding.name(),
        })
    }

    /// The character set to read `message` in: `chosen` when given, else the first
    /// repetition of MSH-18, else UTF-8 (empty MSH-18 means ASCII, which UTF-8 reads alike).
    pub fn for_message(
        message: &Message<'_>,
        chosen: Option<Charset>,
    ) -> Result<Charset, UnknownCharset> {
        if let Some(chosen) = chosen {
            return Ok(chosen);
        }
        let named = message.get(&msh18());
        if named.is_empty() {
            return Ok(Charset::UTF_8);
        }
        std::str::from_utf8(named.raw())
            .ok()
            .and_then(Charset::from_name)
            .ok_or(UnknownCharset)
    }

    /// The name HL7 Table 0211 gives it (or the encoding's own name).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// `bytes` as text: borrowed when they read as they are, every byte that does not decode
    /// shown as `\Xhh\` and counted.
    pub fn decode<'b>(&self, bytes: &'b [u8]) -> Text<'b> {
        let ascii_compatible = match self.kind {
            Kind::Other(e) | Kind::IsoAsWindows(e) => e.is_ascii_compatible(),
            _ => true,
        };
        if ascii_compatible && bytes.is_ascii() {
            // ASCII reads alike in every ASCII-compatible set.
            if let Ok(text) = std::str::from_utf8(bytes) {
                return Text::borrowed(text);
            }
        }
        match self.kind {
            Kind::Utf8 => decode_utf8(bytes),
            Kind::Ascii => {
                let mut t = Text::building(bytes.len());
                for &b in bytes {
                    match b.is_ascii() {
                        true => t.text.to_mut().push(b as char),
                        false => t.escape(b),
                    }
                }
                t
            }
            Kind::Latin1 => Text::owned(bytes.iter().map(|&b| b as char).collect()),
            Kind::IsoAsWindows(e) => {
                let mut t = Text::building(bytes.len());
                for run in bytes.split_inclusive(|b| (0x80..=0x9f).contains(b)) {
                    let (body, c1) = match run.split_last() {
                        Some((&last, body)) if (0x80..=0x9f).contains(&last) => (body, Some(last)),
                        _ => (run, None),
                    };
                    t.append(decode_with(e, body));
                    if let Some(c) = c1 {
                        t.text.to_mut().push(c as char);
                    }
                }
                t
            }
            Kind::Other(e) => decode_with(e, bytes),
        }
    }
}

impl fmt::Display for Charset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl fmt::Debug for Charset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Charset({})", self.name)
    }
}

/// Text decoded from a message's bytes, and how many bytes did not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'a> {
    text: Cow<'a, str>,
    undecodable: usize,
}

impl<'a> Text<'a> {
    fn borrowed(text: &'a str) -> Text<'a> {
        Text {
            text: Cow::Borrowed(text),
            undecodable: 0,
        }
    }

    fn owned(text: String) -> Text<'a> {
        Text {
            text: Cow::Owned(text),
            undecodable: 0,
        }
    }

    fn building(capacity: usize) -> Text<'a> {
        Text::owned(String::with_capacity(capacity))
    }

    /// A byte that does not decode, as `\Xhh\`.
    fn escape(&mut self, byte: u8) {
        use fmt::Write;
        let _ = write!(self.text.to_mut(), "\\X{byte:02X}\\");
        self.undecodable += 1;
    }

    fn append(&mut self, other: Text<'_>) {
        self.text.to_mut().push_str(&other.text);
        self.undecodable += other.undecodable;
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The text, borrowed where it could be.
    pub(crate) fn into_cow(self) -> Cow<'a, str> {
        self.text
    }

    /// The text, owned.
    pub fn into_string(self) -> String {
        self.text.into_owned()
    }

    /// Bytes that did not decode (each shown as `\Xhh\`).
    pub fn undecodable(&self) -> usize {
        self.undecodable
    }

    /// The same text, owning its characters.
    pub fn into_owned(self) -> Text<'static> {
        Text {
            text: Cow::Owned(self.text.into_owned()),
            undecodable: self.undecodable,
        }
    }
}

fn decode_utf8(bytes: &[u8]) -> Text<'_> {
    let mut rest = bytes;
    let mut t: Option<Text<'_>> = None;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                return match t {
                    None => Text::borrowed(valid),
                    Some(mut t) => {
                        t.text.to_mut().push_str(valid);
                        t
                    }
                };
            }
            Err(e) => {
                let t = t.get_or_insert_with(|| Text::building(bytes.len() + 8));
                let (valid, after) = rest.split_at(e.valid_up_to());
                t.text
                    .to_mut()
                    .push_str(std::str::from_utf8(valid).unwrap_or_default());
                let bad = e.error_len().unwrap_or(after.len());
                for &b in &after[..bad] {
                    t.escape(b);
                }
                rest = &after[bad..];
            }
        }
    }
}

fn decode_with<'b>(encoding: &'static Encoding, bytes: &'b [u8]) -> Text<'b> {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut t = Text::building(bytes.len() * 2);
    let mut at = 0;
    loop {
        let out = t.text.to_mut();
        let need = decoder
            .max_utf8_buffer_length_without_replacement(bytes.len() - at)
            .unwrap_or(bytes.len() * 4);
        out.reserve(need);
        let (result, read) = decoder.decode_to_string_without_replacement(&bytes[at..], out, true);
        at += read;
        match result {
            DecoderResult::InputEmpty => return t,
            DecoderResult::OutputFull => {}
            DecoderResult::Malformed(bad, after) => {
                let end = at.saturating_sub(usize::from(after));
                let start = end.saturating_sub(usize::from(bad));
                for &b in &bytes[start..end] {
                    t.escape(b);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str, bytes: &[u8]) -> (String, usize) {
        let t = Charset::from_name(name).unwrap().decode(bytes);
        (t.as_str().to_string(), t.undecodable())
    }

    #[test]
    fn reads_each_table_name() {
        assert_eq!(read("8859/1", b"M\xfcller"), ("Müller".into(), 0));
        assert_eq!(read("8859/1", b"\x80"), ("\u{80}".into(), 0));
        assert_eq!(read("8859/9", b"\xfe\x85"), ("ş\u{85}".into(), 0));
        assert_eq!(read("8859/15", b"\xa4"), ("€".into(), 0));
        assert_eq!(read("8859/5", b"\xb0"), ("А".into(), 0));
        assert_eq!(
            read("unicode utf-8", "Ärzte".as_bytes()),
            ("Ärzte".into(), 0)
        );
        assert_eq!(read("ASCII", b"plain"), ("plain".into(), 0));
        assert_eq!(read("GB 18030-2000", b"\xd6\xd0"), ("中".into(), 0));
        assert_eq!(read("latin1", b"\xe9"), ("é".into(), 0));
        assert_eq!(Charset::from_name("UNICODE UTF-16"), None);
        assert_eq!(Charset::from_name("utf-16le"), None);
        assert_eq!(Charset::from_name("KLINGON"), None);
    }

    #[test]
    fn escapes_and_counts_what_does_not_decode() {
        assert_eq!(read("ASCII", b"M\xfcller"), ("M\\XFC\\ller".into(), 1));
        assert_eq!(
            read("UNICODE UTF-8", b"M\xfcl\xc3"),
            ("M\\XFC\\l\\XC3\\".into(), 2)
        );
        assert_eq!(read("8859/3", b"a\xa5b"), ("a\\XA5\\b".into(), 1));
    }

    #[test]
    fn msh18_names_the_set_and_a_choice_overrides_it() {
        let latin = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5||||||8859/1\rPID|1\r";
        let m = Message::new(latin);
        assert_eq!(Charset::for_message(&m, None).unwrap().name(), "8859/1");
        let ascii = Charset::ASCII;
        assert_eq!(Charset::for_message(&m, Some(ascii)), Ok(ascii));
        let none = Message::new(b"MSH|^~\\&|A\r");
        assert_eq!(Charset::for_message(&none, None), Ok(Charset::UTF_8));
        let odd = Message::new(b"MSH|^~\\&|A|B|C|D|1||X|1|P|2.5||||||EBCDIC\r");
        assert_eq!(Charset::for_message(&odd, None), Err(UnknownCharset));
        let repeated = Message::new(b"MSH|^~\\&|A|B|C|D|1||X|1|P|2.5||||||8859/15~ISO IR87\r");
        assert_eq!(
            Charset::for_message(&repeated, None).unwrap().name(),
            "8859/15"
        );
    }
}
