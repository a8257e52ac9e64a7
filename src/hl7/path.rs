//! Field paths in the notation of the HL7 tables: `SEG[(n)]-F[(r)][.C[.S]]`, 1-based, with `*`
//! for every occurrence of a segment or every repetition of a field.

mod place;

pub use place::{Depth, Place};
use std::fmt;
use std::str::FromStr;

/// Which of several: the `n`th (from 1) or every one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Occurrence {
    /// The `n`th, from 1.
    Nth(usize),
    /// Every one, in order (`*`).
    Every,
}

/// Where a value lies in a message: `PID-5` (the first repetition of PID-5 as written),
/// `PID-5.1` (its first component), `PID-3(2).1` (the second repetition's first component),
/// `OBX(3)-5` (field 5 of the third OBX), `OBX(*)-5` and `PID-3(*).1` (one value for each
/// OBX, each repetition), `MSH-1` (the field separator), `MSH-2` (the encoding characters),
/// `MSH-9.2.1` (a subcomponent).
///
/// Written back by `Display` as it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Path {
    segment: [u8; 3],
    occurrence: Option<Occurrence>,
    field: usize,
    repetition: Option<Occurrence>,
    component: Option<usize>,
    subcomponent: Option<usize>,
}

impl Path {
    /// The segment's name (`PID`).
    pub fn segment(&self) -> &[u8; 3] {
        &self.segment
    }

    /// Which occurrence of the segment (the first unless the path says).
    pub fn occurrence(&self) -> Occurrence {
        self.occurrence.unwrap_or(Occurrence::Nth(1))
    }

    /// The field number, from 1, as the HL7 tables number it.
    pub fn field(&self) -> usize {
        self.field
    }

    /// Which repetition of the field (the first unless the path says).
    pub fn repetition(&self) -> Occurrence {
        self.repetition.unwrap_or(Occurrence::Nth(1))
    }

    /// The path names a repetition (`PID-3(2)`, `PID-3(*)`), not just the field (`PID-3`).
    #[cfg(feature = "sqlite")]
    pub(crate) fn names_repetition(&self) -> bool {
        self.repetition.is_some()
    }

    /// The component number, from 1; `None` for the whole repetition.
    pub fn component(&self) -> Option<usize> {
        self.component
    }

    /// The subcomponent number, from 1; `None` for the whole component.
    pub fn subcomponent(&self) -> Option<usize> {
        self.subcomponent
    }

    /// The first value the path names in `payload`, as written; `None` when the segment is not
    /// there (an absent field or component is the empty value).
    pub fn value<'a>(&self, payload: &'a [u8]) -> Option<&'a [u8]> {
        super::Message::new(payload)
            .values(self)
            .next()
            .map(|v| v.raw())
    }

    /// The path can name more than one value (it says `*`).
    pub fn is_multiple(&self) -> bool {
        self.occurrence == Some(Occurrence::Every) || self.repetition == Some(Occurrence::Every)
    }

    /// A path of the first occurrence, first repetition, of `segment`'s `field`, with an
    /// optional component and subcomponent. `None` when the name is not three upper-case
    /// letters or digits, or a number is 0.
    pub fn of(
        segment: &str,
        field: usize,
        component: Option<usize>,
        subcomponent: Option<usize>,
    ) -> Option<Path> {
        let segment: [u8; 3] = segment.as_bytes().try_into().ok()?;
        let valid_name = segment.iter().all(|&b| is_name_byte(b));
        let positive = field > 0 && component != Some(0) && subcomponent != Some(0);
        (valid_name && positive && (subcomponent.is_none() || component.is_some())).then_some(
            Path {
                segment,
                occurrence: None,
                field,
                repetition: None,
                component,
                subcomponent,
            },
        )
    }
}

/// A path that cannot be read: the path, where it goes wrong (a 1-based character position)
/// and what was wanted there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{path}` is not a field path: {}, {expected}", found_at(.found, .at))]
pub struct PathError {
    /// The path as given.
    pub path: String,
    /// The character where it goes wrong, 1-based; one past its end when it ends too soon.
    pub at: usize,
    /// That character; `None` when the path ends too soon.
    pub found: Option<char>,
    /// What the notation wants there.
    pub expected: &'static str,
}

fn found_at(found: &Option<char>, at: &usize) -> String {
    match found {
        Some(c) => format!("`{}` at character {at}", c.escape_debug()),
        None => "it ends too soon".to_string(),
    }
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

/// Reads a path one character at a time, naming the first that does not fit.
struct Reader<'s> {
    text: &'s str,
    chars: std::iter::Peekable<std::str::CharIndices<'s>>,
    /// Characters read so far.
    read: usize,
}

impl<'s> Reader<'s> {
    fn fail(&mut self, expected: &'static str) -> PathError {
        PathError {
            path: self.text.to_string(),
            at: self.read + 1,
            found: self.chars.peek().map(|&(_, c)| c),
            expected,
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().map(|&(_, c)| c)
    }

    fn bump(&mut self) {
        self.chars.next();
        self.read += 1;
    }

    fn eat(&mut self, c: char) -> bool {
        let here = self.peek() == Some(c);
        if here {
            self.bump();
        }
        here
    }

    /// A number from 1.
    fn number(&mut self, expected: &'static str) -> Result<usize, PathError> {
        if self.peek() == Some('0') {
            return Err(self.fail("numbers count from 1"));
        }
        let mut value: Option<usize> = None;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            let next = value.unwrap_or(0).checked_mul(10);
            value = next.and_then(|v| v.checked_add(d as usize));
            if value.is_none_or(|v| v > u32::MAX as usize) {
                return Err(self.fail("a number this large names nothing"));
            }
            self.bump();
        }
        value.ok_or_else(|| self.fail(expected))
    }

    /// `(n)` or `(*)`, when the next character opens one.
    fn occurrence(&mut self, expected: &'static str) -> Result<Option<Occurrence>, PathError> {
        if !self.eat('(') {
            return Ok(None);
        }
        let occurrence = if self.eat('*') {
            Occurrence::Every
        } else {
            Occurrence::Nth(self.number(expected)?)
        };
        if !self.eat(')') {
            return Err(self.fail("`)` to close the occurrence"));
        }
        Ok(Some(occurrence))
    }
}

impl FromStr for Path {
    type Err = PathError;

    fn from_str(text: &str) -> Result<Path, PathError> {
        let mut r = Reader {
            text,
            chars: text.char_indices().peekable(),
            read: 0,
        };
        let mut segment = [0u8; 3];
        for slot in &mut segment {
            match r.peek() {
                Some(c) if c.is_ascii() && is_name_byte(c as u8) => {
                    *slot = c as u8;
                    r.bump();
                }
                Some(c) if c.is_ascii_lowercase() => {
                    return Err(r.fail("segment names are upper-case (PID, not pid)"));
                }
                _ => {
                    return Err(
                        r.fail("a segment name of three upper-case letters or digits (PID, ZPI)")
                    )
                }
            }
        }
        let occurrence = r.occurrence("an occurrence number from 1, or `*`")?;
        if !r.eat('-') {
            return Err(r.fail("`-` before the field number (PID-5)"));
        }
        let field = r.number("a field number from 1")?;
        let repetition = r.occurrence("a repetition number from 1, or `*`")?;
        let component = match r.eat('.') {
            true => Some(r.number("a component number from 1")?),
            false => None,
        };
        let subcomponent = match component.is_some() && r.eat('.') {
            true => Some(r.number("a subcomponent number from 1")?),
            false => None,
        };
        if r.peek().is_some() {
            let expected = match subcomponent {
                Some(_) => "the end of the path (it goes no deeper than a subcomponent)",
                None => "`.`, `(` or the end of the path",
            };
            return Err(r.fail(expected));
        }
        Ok(Path {
            segment,
            occurrence,
            field,
            repetition,
            component,
            subcomponent,
        })
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let occurrence = |o: Option<Occurrence>| match o {
            None => String::new(),
            Some(Occurrence::Every) => "(*)".to_string(),
            Some(Occurrence::Nth(n)) => format!("({n})"),
        };
        let name = std::str::from_utf8(&self.segment).unwrap_or("???");
        write!(f, "{name}{}-{}", occurrence(self.occurrence), self.field)?;
        f.write_str(&occurrence(self.repetition))?;
        if let Some(c) = self.component {
            write!(f, ".{c}")?;
        }
        if let Some(s) = self.subcomponent {
            write!(f, ".{s}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_back_every_form() {
        for text in [
            "PID-5",
            "PID-5.1",
            "PID-3(2).1",
            "OBX(3)-5",
            "OBX(*)-5",
            "PID-3(*).1",
            "MSH-9.2.1",
            "ZP1-12",
            "MSH-1",
            "PID(1)-3(1).1.1",
        ] {
            let path: Path = text.parse().unwrap();
            assert_eq!(path.to_string(), text);
        }
        let p: Path = "OBX(*)-5(2).3.4".parse().unwrap();
        assert_eq!(p.segment(), b"OBX");
        assert_eq!(p.occurrence(), Occurrence::Every);
        assert_eq!(p.field(), 5);
        assert_eq!(p.repetition(), Occurrence::Nth(2));
        assert_eq!((p.component(), p.subcomponent()), (Some(3), Some(4)));
        assert!(p.is_multiple());
        assert!(!"PID-5".parse::<Path>().unwrap().is_multiple());
    }

    #[test]
    fn names_the_character_that_is_wrong() {
        for (text, at, found) in [
            ("pid-5", 1, Some('p')),
            ("PI-5", 3, Some('-')),
            ("PID", 4, None),
            ("PID.5", 4, Some('.')),
            ("PID-", 5, None),
            ("PID-0", 5, Some('0')),
            ("PID-x", 5, Some('x')),
            ("PID-5.", 7, None),
            ("PID-5.0", 7, Some('0')),
            ("PID-5.1.2.3", 10, Some('.')),
            ("PID(2-5", 6, Some('-')),
            ("PID()-5", 5, Some(')')),
            ("PID-5(x)", 7, Some('x')),
            ("PID-5 ", 6, Some(' ')),
            ("PID-99999999999", 14, Some('9')),
            ("PÍD-5", 2, Some('Í')),
        ] {
            let e = text.parse::<Path>().unwrap_err();
            assert_eq!((e.at, e.found), (at, found), "{text}: {e}");
            assert_eq!(e.path, text);
        }
        let e = "PID-x".parse::<Path>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "`PID-x` is not a field path: `x` at character 5, a field number from 1"
        );
    }

    #[test]
    fn builds_a_path_from_its_parts() {
        assert_eq!(
            Path::of("PID", 3, Some(1), None),
            Some("PID-3.1".parse().unwrap())
        );
        assert_eq!(Path::of("pid", 3, None, None), None);
        assert_eq!(Path::of("PID", 0, None, None), None);
        assert_eq!(Path::of("PID", 3, None, Some(1)), None);
    }
}
