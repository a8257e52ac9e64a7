//! The standard rules: the identifying fields of the common segments, by the data type that
//! says which of a field's components identify someone.

use super::rule::{Method, Rule, When};
use crate::hl7::Path;

/// How one field identifies someone.
#[derive(Clone, Copy)]
enum Kind {
    /// Person name (XPN): family, given and middle names.
    Person,
    /// Person with an ID first (XCN): the ID, then family, given and middle names.
    PersonWithId,
    /// Identifier (CX), or an organisation's name (XON): the first component.
    Id,
    /// Address (XAD): street, other designation, city, postal code, other geographic
    /// designation, county; the state and country stay.
    Address,
    /// Telephone (XTN): the number as written, e-mail, area code, local number, extension,
    /// the free-text comment, unformatted.
    Phone,
    /// A date or timestamp, moved by the patient's offset.
    Date,
    /// Text or a number, every part of it.
    Whole,
}

/// Each segment's identifying fields.
const FIELDS: &[(&str, &[(usize, Kind)])] = {
    use Kind::*;
    &[
        (
            "PID",
            &[
                (2, Id),
                (3, Id),
                (4, Id),
                (5, Person),
                (6, Person),
                (7, Date),
                (9, Person),
                (11, Address),
                (12, Whole),
                (13, Phone),
                (14, Phone),
                (18, Id),
                (19, Whole),
                (20, Id),
                (21, Id),
                (23, Whole),
                (29, Date),
            ],
        ),
        ("PD1", &[(4, PersonWithId)]),
        (
            "NK1",
            &[
                (2, Person),
                (4, Address),
                (5, Phone),
                (6, Phone),
                (12, Id),
                (13, Id),
                (16, Date),
                (30, Person),
                (31, Phone),
                (32, Address),
                (33, Id),
                (37, Whole),
            ],
        ),
        (
            "PV1",
            &[
                (7, PersonWithId),
                (8, PersonWithId),
                (9, PersonWithId),
                (17, PersonWithId),
                (19, Id),
                (44, Date),
                (45, Date),
                (50, Id),
                (52, PersonWithId),
            ],
        ),
        (
            "GT1",
            &[
                (2, Id),
                (3, Person),
                (4, Person),
                (5, Address),
                (6, Phone),
                (7, Phone),
                (8, Date),
                (12, Whole),
                (16, Person),
                (17, Address),
                (18, Phone),
                (19, Id),
                (21, Id),
            ],
        ),
        (
            "IN1",
            &[
                (10, Id),
                (11, Id),
                (16, Person),
                (18, Date),
                (19, Address),
                (36, Whole),
                (49, Id),
            ],
        ),
        (
            "IN2",
            &[
                (1, Id),
                (2, Whole),
                (3, PersonWithId),
                (6, Whole),
                (7, Person),
                (8, Whole),
                (9, Person),
                (10, Whole),
                (61, Id),
                (63, Phone),
                (64, Phone),
            ],
        ),
        (
            "MRG",
            &[
                (1, Id),
                (2, Id),
                (3, Id),
                (4, Id),
                (5, Id),
                (6, Id),
                (7, Person),
            ],
        ),
        ("NTE", &[(3, Whole)]),
        // The ordering provider and the callback phone of an order, as PV1-7 and PID-13.
        ("ORC", &[(12, PersonWithId), (14, Phone)]),
        ("OBR", &[(16, PersonWithId), (17, Phone)]),
    ]
};

/// The standard rules, segment by segment.
pub(super) fn rules() -> Vec<Rule> {
    let mut rules = Vec::new();
    for (segment, fields) in FIELDS {
        for &(field, kind) in *fields {
            let (components, method): (&[usize], Method) = match kind {
                Kind::Person => (&[1, 2, 3], Method::Name),
                Kind::PersonWithId => {
                    rules.push(rule(segment, field, Some(1), Method::Hash));
                    (&[2, 3, 4], Method::Name)
                }
                Kind::Id => (&[1], Method::Hash),
                Kind::Address => (&[1, 2, 3, 5, 8, 9], Method::Hash),
                Kind::Phone => (&[1, 4, 6, 7, 8, 9, 12], Method::Hash),
                Kind::Date => (&[1], Method::ShiftDate),
                Kind::Whole => (&[], Method::Hash),
            };
            if components.is_empty() {
                rules.push(rule(segment, field, None, method));
            }
            for &c in components {
                rules.push(rule(segment, field, Some(c), method));
            }
        }
    }
    // Observation values that are free text; coded and numeric results stay.
    let mut text = rule("OBX", 5, None, Method::Hash);
    text.when = Some(When {
        field: 2,
        values: ["TX", "FT", "ST"].map(String::from).to_vec(),
    });
    rules.push(text);
    // An encapsulated document (a scanned letter, a PDF report): its data goes, its type stays.
    let mut document = rule("OBX", 5, Some(5), Method::Blank);
    document.when = Some(When {
        field: 2,
        values: vec!["ED".to_string()],
    });
    rules.push(document);
    rules
}

fn rule(segment: &str, field: usize, component: Option<usize>, method: Method) -> Rule {
    let path = Path::of(segment, field, component, None);
    Rule {
        path: path.unwrap_or_else(|| unreachable!("a standard rule's path is valid")),
        method,
        when: None,
    }
}
