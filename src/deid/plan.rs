//! The policy resolved once for the pass over messages: for each segment a rule names, the
//! fields its rules touch, in order, and for a field whose rules hold in every segment and
//! reach no deeper than a component, which rule decides each component, so a value is never
//! held against the rules one by one.

use super::policy::Policy;
use super::rule::Method;
use crate::hl7::{Depth, Path, Place};

/// One segment's rules, by field.
pub(super) struct SegmentPlan {
    pub(super) name: [u8; 3],
    /// Rule indexes, in field order (and policy order within a field).
    pub(super) rules: Vec<usize>,
    /// The fields the rules touch, in order.
    pub(super) fields: Vec<FieldPlan>,
}

/// One field's rules.
pub(super) struct FieldPlan {
    pub(super) field: usize,
    /// Where the field's rules lie in [`SegmentPlan::rules`].
    pub(super) rules: std::ops::Range<usize>,
    /// What the rules decide, when they hold in every segment alike; `None` when a rule
    /// depends on the segment's occurrence or another field, or reaches a repetition or a
    /// subcomponent: the rules are then held against each value.
    pub(super) table: Option<Table>,
}

/// What a field's rules decide, by component.
pub(super) enum Table {
    /// One rule blanks the whole field, separators and all.
    Blank(usize),
    /// The rule replacing each component (from 1), `None` for one left as it is; components
    /// past the list are decided by `beyond`.
    Components {
        by_component: Vec<Option<usize>>,
        beyond: Option<usize>,
    },
}

impl Table {
    /// The rule that replaces component `c` (from 1), if any.
    #[inline]
    pub(super) fn component(&self, c: usize) -> Option<usize> {
        match self {
            Table::Blank(_) => None,
            Table::Components {
                by_component,
                beyond,
            } => match by_component.get(c - 1) {
                Some(rule) => *rule,
                None => *beyond,
            },
        }
    }
}

/// The plans of every segment a rule of `policy` names.
pub(super) fn plans(policy: &Policy) -> Vec<SegmentPlan> {
    let mut segments: Vec<SegmentPlan> = Vec::new();
    for (i, rule) in policy.rules().iter().enumerate() {
        let name = *rule.path.segment();
        match segments.iter_mut().find(|s| s.name == name) {
            Some(segment) => segment.rules.push(i),
            None => segments.push(SegmentPlan {
                name,
                rules: vec![i],
                fields: Vec::new(),
            }),
        }
    }
    for segment in &mut segments {
        segment
            .rules
            .sort_by_key(|&i| (policy.rules()[i].path.field(), i));
        let mut from = 0;
        while from < segment.rules.len() {
            let field = policy.rules()[segment.rules[from]].path.field();
            let to = from
                + segment.rules[from..]
                    .iter()
                    .take_while(|&&i| policy.rules()[i].path.field() == field)
                    .count();
            segment.fields.push(FieldPlan {
                field,
                rules: from..to,
                table: table(policy, &segment.rules[from..to]),
            });
            from = to;
        }
    }
    segments
}

/// The table of a field's `rules`, when they hold alike everywhere and reach no deeper than a
/// component: each component decided as [`Policy::decide`] would decide each of its values.
fn table(policy: &Policy, rules: &[usize]) -> Option<Table> {
    let everywhere = rules.iter().all(|&i| {
        let rule = &policy.rules()[i];
        rule.when.is_none() && rule.path.subcomponent().is_none() && everywhere(&rule.path)
    });
    if !everywhere {
        return None;
    }
    if let [only] = rules {
        let rule = &policy.rules()[*only];
        if rule.method == Method::Blank && rule.path.depth() == Depth::Field {
            return Some(Table::Blank(*only));
        }
    }
    let last = rules
        .iter()
        .filter_map(|&i| policy.rules()[i].path.component())
        .max()
        .unwrap_or(0);
    let first = &policy.rules()[rules[0]].path;
    let decide = |c: usize| {
        let place = Place {
            repetition: Some(1),
            component: Some(c),
            subcomponent: Some(1),
            ..Place::field(first.segment(), 1, first.field())
        };
        policy
            .decide(rules, &place)
            .filter(|&i| policy.rules()[i].method != Method::Keep)
    };
    Some(Table::Components {
        by_component: (1..=last).map(decide).collect(),
        beyond: decide(last + 1),
    })
}

/// The path takes in every occurrence of its segment and every repetition of its field.
fn everywhere(path: &Path) -> bool {
    let at = |occurrence, repetition| Place {
        repetition: Some(repetition),
        component: Some(path.component().unwrap_or(1)),
        subcomponent: Some(1),
        ..Place::field(path.segment(), occurrence, path.field())
    };
    [(1, 1), (1, 2), (2, 1), (2, 2)]
        .into_iter()
        .all(|(o, r)| path.covers(&at(o, r)))
}
