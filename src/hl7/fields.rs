//! The names and data types of the fields of the common segments, as the HL7 v2 field
//! definitions give them (v2.5.1, and the fields later versions add, from the version that
//! adds them): what an outline shows beside a value, and what `check` validates.

mod clinical;
mod finance;
mod patient;
mod service;

/// The kind of data a field holds, as far as a check reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Anything else (strings, codes, composites).
    Other,
    /// A point in time (TS, DTM): `YYYY[MM[DD[HH[MM[SS[.S[S[S[S]]]]]]]]][+/-ZZZZ]`.
    Timestamp,
    /// A date (DT): `YYYY[MM[DD]]`.
    Date,
    /// A sequence ID (SI): a non-negative whole number.
    SequenceId,
    /// A number (NM): optional sign, digits, optional decimal point.
    Number,
}

/// One field of a segment: its name, its type and the version that adds it (`None`: v2.5.1
/// has it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDef {
    /// The name the field definitions give it.
    pub name: &'static str,
    /// Its data type, as a check reads it.
    pub kind: FieldType,
    /// The version that adds it, as MSH-12 writes it (`2.6`); `None` for the fields of
    /// v2.5.1.
    pub since: Option<&'static str>,
}

/// A field of v2.5.1 holding anything but the types a check reads.
pub(super) const fn f(name: &'static str) -> FieldDef {
    typed(name, FieldType::Other)
}

/// A field of v2.5.1 of a type a check reads.
pub(super) const fn typed(name: &'static str, kind: FieldType) -> FieldDef {
    FieldDef {
        name,
        kind,
        since: None,
    }
}

/// A field a later version adds.
pub(super) const fn since(version: &'static str, name: &'static str) -> FieldDef {
    FieldDef {
        name,
        kind: FieldType::Other,
        since: Some(version),
    }
}

use FieldType::{Date as DT, Number as NM, SequenceId as SI, Timestamp as TS};

/// The segments the table names, each with its fields from field 1.
const SEGMENTS: &[(&[u8; 3], &[FieldDef])] = &[
    (b"MSH", patient::MSH),
    (b"EVN", patient::EVN),
    (b"PID", patient::PID),
    (b"PD1", patient::PD1),
    (b"NK1", patient::NK1),
    (b"PV1", patient::PV1),
    (b"PV2", patient::PV2),
    (b"MRG", patient::MRG),
    (b"ORC", clinical::ORC),
    (b"OBR", clinical::OBR),
    (b"OBX", clinical::OBX),
    (b"NTE", clinical::NTE),
    (b"TXA", clinical::TXA),
    (b"AL1", finance::AL1),
    (b"DG1", finance::DG1),
    (b"IN1", finance::IN1),
    (b"GT1", finance::GT1),
    (b"SCH", service::SCH),
    (b"AIS", service::AIS),
    (b"MSA", service::MSA),
    (b"ERR", service::ERR),
];

/// The fields of `segment`, from field 1; `None` for a segment the table does not name.
pub(crate) fn segment_fields(segment: &[u8]) -> Option<&'static [FieldDef]> {
    SEGMENTS
        .iter()
        .find(|(name, _)| &name[..] == segment)
        .map(|(_, fields)| *fields)
}

/// Field `n` (from 1) of `segment` as the message's `version` (MSH-12) defines it: `None`
/// where the table does not name the segment, the field is past its last, or the version is
/// older than the one that adds it. An empty or unreadable version is taken as the newest.
pub fn field_def(segment: &[u8], n: usize, version: &[u8]) -> Option<FieldDef> {
    let def = *segment_fields(segment)?.get(n.checked_sub(1)?)?;
    match def.since {
        Some(added) if older(version, added.as_bytes()) => None,
        _ => Some(def),
    }
}

/// `version` (as MSH-12 writes it: `2.5.1`, `2.6`) is known and before `added`.
fn older(version: &[u8], added: &[u8]) -> bool {
    let parts = |v: &[u8]| -> Option<Vec<u32>> {
        std::str::from_utf8(v)
            .ok()?
            .split('.')
            .map(|p| p.parse().ok())
            .collect()
    };
    match (parts(version), parts(added)) {
        (Some(v), Some(a)) if !v.is_empty() => v < a,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fields_by_their_number_and_version() {
        let name = |s: &[u8], n, v: &[u8]| field_def(s, n, v).map(|d| d.name);
        assert_eq!(name(b"PID", 5, b"2.5.1"), Some("Patient Name"));
        assert_eq!(name(b"MSH", 10, b"2.3"), Some("Message Control ID"));
        assert_eq!(name(b"MSH", 9, b""), Some("Message Type"));
        assert_eq!(name(b"OBX", 5, b"2.5"), Some("Observation Value"));
        assert_eq!(name(b"PID", 40, b"2.5.1"), None);
        assert_eq!(
            name(b"PID", 40, b"2.7"),
            Some("Patient Telecommunication Information")
        );
        assert_eq!(name(b"ZPI", 1, b"2.5"), None);
        assert_eq!(name(b"PID", 0, b"2.5"), None);
        assert_eq!(
            field_def(b"MSH", 7, b"2.5").map(|d| d.kind),
            Some(FieldType::Timestamp)
        );
    }

    #[test]
    fn the_table_is_whole() {
        let counts: &[(&[u8; 3], usize)] = &[
            (b"MSH", 25),
            (b"EVN", 7),
            (b"PID", 40),
            (b"PD1", 21),
            (b"NK1", 39),
            (b"PV1", 54),
            (b"PV2", 49),
            (b"MRG", 7),
            (b"ORC", 31),
            (b"OBR", 50),
            (b"OBX", 25),
            (b"NTE", 8),
            (b"TXA", 23),
            (b"AL1", 6),
            (b"DG1", 21),
            (b"IN1", 53),
            (b"GT1", 57),
            (b"SCH", 27),
            (b"AIS", 12),
            (b"MSA", 6),
            (b"ERR", 12),
        ];
        for (segment, count) in counts {
            let fields = segment_fields(&segment[..]).unwrap();
            assert_eq!(
                fields.len(),
                *count,
                "{}",
                String::from_utf8_lossy(&segment[..])
            );
            assert!(fields.iter().all(|f| !f.name.is_empty()));
        }
        assert_eq!(SEGMENTS.len(), counts.len());
    }
}
