//! What a comparison leaves out: paths read as rules (`MSH-7`, `OBX-14`, `PID-3(2)`) and
//! whole segments (`ZXX`).

use crate::hl7::{Depth, Path, PathError, Place};
use std::str::FromStr;

/// One thing left out of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ignored {
    /// Every segment of this name.
    Segment([u8; 3]),
    /// The values a path takes in as a rule: a segment occurrence or a repetition it leaves
    /// out means every one.
    Path(Path),
}

impl FromStr for Ignored {
    type Err = PathError;

    fn from_str(text: &str) -> Result<Ignored, PathError> {
        let bytes = text.as_bytes();
        let is_name = |b: &u8| b.is_ascii_uppercase() || b.is_ascii_digit();
        if bytes.len() == 3 && bytes.iter().all(is_name) {
            return Ok(Ignored::Segment([bytes[0], bytes[1], bytes[2]]));
        }
        text.parse().map(Ignored::Path)
    }
}

/// All that a comparison leaves out.
#[derive(Debug, Clone, Default)]
pub struct Ignore {
    items: Vec<Ignored>,
}

impl Ignore {
    /// Leave these out.
    pub fn new(items: Vec<Ignored>) -> Ignore {
        Ignore { items }
    }

    /// Every segment named `name` is left out.
    pub(super) fn segment(&self, name: &[u8]) -> bool {
        self.items
            .iter()
            .any(|i| matches!(i, Ignored::Segment(s) if &s[..] == name))
    }

    /// `place` is left out whole.
    pub(super) fn covers(&self, place: &Place<'_>) -> bool {
        self.items.iter().any(|i| match i {
            Ignored::Segment(s) => &s[..] == place.segment,
            Ignored::Path(p) => p.covers(place),
        })
    }

    /// How deep a difference in this field must be told for the ignored paths in it to be
    /// left out: `PID-3.1` needs PID-3's differences told by component.
    pub(super) fn depth_in(&self, segment: &[u8], occurrence: usize, field: usize) -> Depth {
        self.items
            .iter()
            .filter_map(|i| match i {
                Ignored::Path(p) if p.reaches(segment, occurrence, field) => Some(p.depth()),
                _ => None,
            })
            .max()
            .unwrap_or(Depth::Field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_alone_is_a_segment_and_the_rest_a_path() {
        assert_eq!("ZXX".parse::<Ignored>().unwrap(), Ignored::Segment(*b"ZXX"));
        assert!(matches!(
            "MSH-7".parse::<Ignored>().unwrap(),
            Ignored::Path(_)
        ));
        assert!("zxx".parse::<Ignored>().is_err());
        assert!("PID-".parse::<Ignored>().is_err());
    }
}
