//! One value of a message, at any depth (a field, a repetition, a component, a subcomponent),
//! borrowed from the message's bytes, and the parts it splits into.

use super::{escape, Charset, Delimiters, Text};
use std::borrow::Cow;
use std::fmt;

/// A value borrowed from a message: a field, one of its repetitions, a component or a
/// subcomponent, exactly as written. `Debug` shows its length, never its bytes.
///
/// Each split is one level down: [`Value::repetitions`] of a field, [`Value::components`] of
/// a repetition, [`Value::subcomponents`] of a component. MSH-1 and MSH-2 (and FHS/BHS-1 and -2)
/// hold the delimiters themselves: they split into nothing but themselves and are never
/// escape-decoded.
#[derive(Clone, Copy)]
pub struct Value<'a> {
    raw: &'a [u8],
    delimiters: Delimiters,
    literal: bool,
}

impl<'a> Value<'a> {
    pub(super) fn new(raw: &'a [u8], delimiters: Delimiters) -> Value<'a> {
        Value {
            raw,
            delimiters,
            literal: false,
        }
    }

    /// A value that holds delimiters as plain bytes (MSH-1, MSH-2).
    pub(super) fn literal(raw: &'a [u8], delimiters: Delimiters) -> Value<'a> {
        Value {
            raw,
            delimiters,
            literal: true,
        }
    }

    /// The empty value: what a path that names nothing gives.
    pub fn empty(delimiters: Delimiters) -> Value<'a> {
        Value::new(&[], delimiters)
    }

    /// The bytes as the message has them, escape sequences and separators included.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// No bytes at all.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// The delimiters the value is read under.
    pub fn delimiters(&self) -> Delimiters {
        self.delimiters
    }

    /// The bytes with escape sequences decoded; MSH-1 and MSH-2 as
    /// written. Borrowed when nothing needed decoding.
    pub fn decoded(&self) -> Cow<'a, [u8]> {
        if self.literal {
            return Cow::Borrowed(self.raw);
        }
        escape::decode(self.raw, &self.delimiters)
    }

    /// The decoded bytes as text in `charset`; bytes it cannot decode are shown escaped and
    /// counted.
    pub fn text(&self, charset: Charset) -> Text<'a> {
        match self.decoded() {
            Cow::Borrowed(bytes) => charset.decode(bytes),
            Cow::Owned(bytes) => charset.decode(&bytes).into_owned(),
        }
    }

    fn parts(&self, separator: u8) -> Parts<'a> {
        Parts {
            rest: Some(self.raw),
            separator: (!self.literal).then_some(separator),
            delimiters: self.delimiters,
            literal: self.literal,
        }
    }

    /// The repetitions of a field (one, itself, when it does not repeat).
    pub fn repetitions(&self) -> Parts<'a> {
        self.parts(self.delimiters.repetition)
    }

    /// The components of a repetition (one, itself, when it has no component separator).
    pub fn components(&self) -> Parts<'a> {
        self.parts(self.delimiters.component)
    }

    /// The subcomponents of a component.
    pub fn subcomponents(&self) -> Parts<'a> {
        self.parts(self.delimiters.subcomponent)
    }

    /// Part `n` (from 1) split at `separator`; `None` when there are fewer.
    fn part(&self, separator: u8, n: usize) -> Option<Value<'a>> {
        let k = n.checked_sub(1)?;
        let raw = match self.literal {
            true => (k == 0).then_some(self.raw)?,
            false => super::message::nth_piece(self.raw, separator, k)?,
        };
        Some(Value { raw, ..*self })
    }

    /// Repetition `n` (from 1); `None` when there are fewer.
    pub fn repetition(&self, n: usize) -> Option<Value<'a>> {
        self.part(self.delimiters.repetition, n)
    }

    /// Component `n` (from 1); `None` when there are fewer.
    pub fn component(&self, n: usize) -> Option<Value<'a>> {
        self.part(self.delimiters.component, n)
    }

    /// Subcomponent `n` (from 1); `None` when there are fewer.
    pub fn subcomponent(&self, n: usize) -> Option<Value<'a>> {
        self.part(self.delimiters.subcomponent, n)
    }
}

impl fmt::Debug for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Value")
            .field("bytes", &self.raw.len())
            .finish()
    }
}

impl PartialEq for Value<'_> {
    /// Values are equal when their bytes are.
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

/// The parts of a value split at one separator, in order (an empty value is one empty part).
#[derive(Clone)]
pub struct Parts<'a> {
    rest: Option<&'a [u8]>,
    separator: Option<u8>,
    delimiters: Delimiters,
    literal: bool,
}

impl<'a> Iterator for Parts<'a> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Value<'a>> {
        let rest = self.rest?;
        let (part, next) = match self.separator.and_then(|s| memchr::memchr(s, rest)) {
            Some(at) => (&rest[..at], Some(&rest[at + 1..])),
            None => (rest, None),
        };
        self.rest = next;
        Some(Value {
            raw: part,
            delimiters: self.delimiters,
            literal: self.literal,
        })
    }
}

impl fmt::Debug for Parts<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parts").finish_non_exhaustive()
    }
}
