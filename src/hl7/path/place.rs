//! A path read as a rule (`diff`'s ignored paths, a de-identification policy): a segment
//! occurrence or a repetition it leaves out means every one, a component or subcomponent it
//! leaves out means all of them; and the one place in a message it is held against.

use super::{Occurrence, Path};

/// One place in a message: a segment occurrence's field, and within it a repetition, a
/// component and a subcomponent (each from 1; `None` for all of the level above).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place<'n> {
    /// The segment's name.
    pub segment: &'n [u8],
    /// Which segment of that name, from 1.
    pub occurrence: usize,
    /// The field, numbered as the HL7 tables number it.
    pub field: usize,
    /// One repetition, or the whole field.
    pub repetition: Option<usize>,
    /// One component of the repetition, or all of it.
    pub component: Option<usize>,
    /// One subcomponent of the component, or all of it.
    pub subcomponent: Option<usize>,
}

impl<'n> Place<'n> {
    /// The whole of field `field` of the `occurrence`th segment `segment`.
    pub fn field(segment: &'n [u8], occurrence: usize, field: usize) -> Place<'n> {
        Place {
            segment,
            occurrence,
            field,
            repetition: None,
            component: None,
            subcomponent: None,
        }
    }
}

/// How far below its field a rule reaches, shallowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Depth {
    /// The whole field.
    Field,
    /// One repetition.
    Repetition,
    /// One component.
    Component,
    /// One subcomponent.
    Subcomponent,
}

impl Path {
    /// As a rule, the path is about this field of this segment occurrence (some or all of it).
    pub fn reaches(&self, segment: &[u8], occurrence: usize, field: usize) -> bool {
        &self.segment[..] == segment
            && self.field == field
            && match self.occurrence {
                None | Some(Occurrence::Every) => true,
                Some(Occurrence::Nth(n)) => n == occurrence,
            }
    }

    /// As a rule, the path takes in all of `place`: `PID-3.1` takes in the first component of
    /// every repetition of PID-3 in every PID, `OBX(2)-5` all of field 5 of the second OBX.
    pub fn covers(&self, place: &Place<'_>) -> bool {
        let within = |rule: Option<usize>, at: Option<usize>| rule.is_none() || rule == at;
        let repetition = match self.repetition {
            None | Some(Occurrence::Every) => None,
            Some(Occurrence::Nth(r)) => Some(r),
        };
        self.reaches(place.segment, place.occurrence, place.field)
            && within(repetition, place.repetition)
            && within(self.component, place.component)
            && within(self.subcomponent, place.subcomponent)
    }

    /// As rules, this path takes in everything `other` does.
    pub(crate) fn takes_in(&self, other: &Path) -> bool {
        let every = |o: Option<Occurrence>| matches!(o, None | Some(Occurrence::Every));
        let same = |a: Option<Occurrence>, b: Option<Occurrence>| every(a) || a == b;
        let part = |a: Option<usize>, b: Option<usize>| a.is_none() || a == b;
        self.segment == other.segment
            && self.field == other.field
            && same(self.occurrence, other.occurrence)
            && same(self.repetition, other.repetition)
            && part(self.component, other.component)
            && part(self.subcomponent, other.subcomponent)
    }

    /// The path is a segment's name and a field number, nothing more (`OBX-2`).
    pub(crate) fn is_field(&self) -> bool {
        self.occurrence.is_none()
            && self.repetition.is_none()
            && self.component.is_none()
            && self.subcomponent.is_none()
    }

    /// How far below its field the rule reaches: a place must be at least this deep for
    /// [`Path::covers`] to say whether the rule takes it in.
    pub fn depth(&self) -> Depth {
        if self.subcomponent.is_some() {
            Depth::Subcomponent
        } else if self.component.is_some() {
            Depth::Component
        } else if matches!(self.repetition, Some(Occurrence::Nth(_))) {
            Depth::Repetition
        } else {
            Depth::Field
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(
        segment: &'static str,
        occurrence: usize,
        field: usize,
        r: Option<usize>,
        c: Option<usize>,
    ) -> Place<'static> {
        Place {
            component: c,
            repetition: r,
            ..Place::field(segment.as_bytes(), occurrence, field)
        }
    }

    #[test]
    fn a_part_left_out_takes_in_every_one() {
        let rule: Path = "PID-3.1".parse().unwrap();
        assert!(rule.covers(&place("PID", 1, 3, Some(2), Some(1))));
        assert!(rule.covers(&place("PID", 2, 3, None, Some(1))));
        assert!(!rule.covers(&place("PID", 1, 3, Some(1), Some(2))));
        assert!(!rule.covers(&place("PID", 1, 3, Some(1), None)));
        assert!(!rule.covers(&place("PID", 1, 4, None, Some(1))));
        assert_eq!(rule.depth(), Depth::Component);

        let rule: Path = "OBX(2)-5".parse().unwrap();
        assert!(rule.covers(&place("OBX", 2, 5, Some(3), None)));
        assert!(!rule.covers(&place("OBX", 1, 5, None, None)));
        assert_eq!(rule.depth(), Depth::Field);

        let rule: Path = "PID-3(2)".parse().unwrap();
        assert!(rule.covers(&place("PID", 1, 3, Some(2), Some(4))));
        assert!(!rule.covers(&place("PID", 1, 3, None, None)));
        assert_eq!(rule.depth(), Depth::Repetition);
        assert_eq!("OBX(*)-5(*)".parse::<Path>().unwrap().depth(), Depth::Field);
    }

    #[test]
    fn a_rule_takes_in_the_rules_below_it() {
        let p = |s: &str| s.parse::<Path>().unwrap();
        assert!(p("PID-11").takes_in(&p("PID-11(2).3")));
        assert!(p("PID-11").takes_in(&p("PID(2)-11")));
        assert!(p("PID(*)-11(*)").takes_in(&p("PID-11.3")));
        assert!(p("PID-11.3").takes_in(&p("PID-11.3.1")));
        assert!(!p("PID-11.3").takes_in(&p("PID-11")));
        assert!(!p("PID(2)-11").takes_in(&p("PID-11")));
        assert!(!p("PID-11(2)").takes_in(&p("PID-11.1")));
        assert!(!p("PID-12").takes_in(&p("PID-11")));
        assert!(p("OBX-2").is_field() && !p("OBX(1)-2").is_field() && !p("OBX-2.1").is_field());
    }
}
