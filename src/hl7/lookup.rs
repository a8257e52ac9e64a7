//! The values a [`Path`] names in a [`Message`]: the segment occurrences it selects, then the
//! field, the repetitions it selects, the component and subcomponent.

use super::message::is_header_name;
use super::segments::Segments;
use super::{Delimiters, Message, Occurrence, Parts, Path, Segment, Value};
use std::fmt;

/// The values a path names in a message, in order; see [`Message::values`].
pub struct Values<'a, 'p> {
    path: &'p Path,
    segments: Segments<'a>,
    delimiters: Delimiters,
    /// Segments of the path's name seen so far.
    seen: usize,
    /// The repetitions of the current segment's field still to give, under `*`.
    repetitions: Option<Parts<'a>>,
    done: bool,
}

impl<'a, 'p> Values<'a, 'p> {
    pub(super) fn new(message: Message<'a>, path: &'p Path) -> Values<'a, 'p> {
        Values {
            path,
            segments: Segments::of(message.bytes()),
            delimiters: message.delimiters(),
            seen: 0,
            repetitions: None,
            done: false,
        }
    }

    /// The component and subcomponent the path names within one repetition.
    fn within(&self, repetition: Value<'a>) -> Value<'a> {
        let empty = Value::empty(repetition.delimiters());
        let Some(c) = self.path.component() else {
            return repetition;
        };
        let Some(component) = repetition.component(c) else {
            return empty;
        };
        match self.path.subcomponent() {
            None => component,
            Some(s) => component.subcomponent(s).unwrap_or(empty),
        }
    }

    /// The next segment of the path's name, under the delimiters of the header before it.
    fn next_named(&mut self) -> Option<Segment<'a>> {
        let name = self.path.segment();
        let delimiters = &mut self.delimiters;
        self.segments.by_ref().find_map(|(offset, bytes)| {
            if is_header_name(bytes) && bytes.len() > 3 {
                *delimiters = Delimiters::of_header(bytes);
            }
            let d = *delimiters;
            // The name ends at a field separator or the segment's end (`PIDX|` is no PID).
            let named = bytes.get(..3) == Some(&name[..])
                && bytes
                    .get(3)
                    .is_none_or(|&b| b == d.field || is_header(name));
            named.then(|| Segment::at(bytes, offset, d))
        })
    }

    /// The next segment the path's occurrence selects.
    fn next_segment(&mut self) -> Option<Segment<'a>> {
        match self.path.occurrence() {
            Occurrence::Every => self.next_named(),
            Occurrence::Nth(n) => {
                self.done = true;
                while self.seen + 1 < n {
                    self.next_named()?;
                    self.seen += 1;
                }
                self.next_named()
            }
        }
    }
}

impl<'a> Iterator for Values<'a, '_> {
    type Item = Value<'a>;

    fn next(&mut self) -> Option<Value<'a>> {
        loop {
            if let Some(parts) = &mut self.repetitions {
                match parts.next() {
                    Some(repetition) => return Some(self.within(repetition)),
                    None => self.repetitions = None,
                }
            }
            if self.done {
                return None;
            }
            let segment = self.next_segment()?;
            let field = segment.field(self.path.field());
            let d = self.delimiters;
            match self.path.repetition() {
                Occurrence::Every => {
                    // A field the segment does not reach has no repetitions.
                    self.repetitions = field.map(|f| f.repetitions());
                }
                Occurrence::Nth(r) => {
                    let value = field
                        .and_then(|f| f.repetition(r))
                        .map(|rep| self.within(rep));
                    return Some(value.unwrap_or(Value::empty(d)));
                }
            }
        }
    }
}

/// A header segment's name: its fourth byte is its own field separator.
fn is_header(name: &[u8; 3]) -> bool {
    matches!(name, b"MSH" | b"FHS" | b"BHS")
}

impl fmt::Debug for Values<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Values")
            .field("path", &self.path.to_string())
            .finish_non_exhaustive()
    }
}
