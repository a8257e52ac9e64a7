//! One message de-identified: its bytes copied, each value a rule takes in replaced where it
//! lies, everything else (delimiters, segment order and terminators, MSH) byte for byte.

use super::derive::Deriver;
use super::policy::{Method, Policy};
use super::replace::{date_offset, replace};
use super::Key;
use crate::hl7::{escape, Message, Path, Place, Segment, Value};
use std::fmt;

/// The patient's identifier a date offset comes from: the first ID of PID-3.
fn patient_path() -> Path {
    Path::of("PID", 3, Some(1), None).unwrap_or_else(|| unreachable!("PID-3.1 is a path"))
}

/// Replaces the values a [`Policy`] names, under a [`Key`]. `Debug` never shows the key.
///
/// ```
/// use mllp::deid::{Deidentifier, Key, Policy};
///
/// let deid = Deidentifier::new(&Key::from_bytes([9; 32]), Policy::standard());
/// let message = b"MSH|^~\\&|ADT|H|||20240101||ADT^A01|C1|P|2.5\rPID|1||100234^^^H||DOE^JANE||19800101\r";
/// let mut out = Vec::new();
/// let mut report = deid.report();
/// deid.apply(message, &mut out, &mut report);
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.starts_with("MSH|^~\\&|ADT|H|||20240101||ADT^A01|C1|P|2.5\rPID|1||"));
/// assert!(!text.contains("100234") && !text.contains("DOE") && !text.contains("19800101"));
/// assert_eq!(report.replaced("PID-5.1"), 1);
/// ```
pub struct Deidentifier {
    deriver: Deriver,
    policy: Policy,
    /// For each segment a rule names: its rules' indexes, by field.
    segments: Vec<([u8; 3], Vec<usize>)>,
    patient: Path,
}

/// What a run replaced: values per rule, never a value itself.
#[derive(Debug, Clone, Default)]
pub struct Report {
    paths: Vec<String>,
    counts: Vec<u64>,
}

impl Report {
    /// Values replaced under each rule's path, in the policy's order; rules that replaced
    /// nothing left out.
    pub fn counts(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.paths
            .iter()
            .zip(&self.counts)
            .filter(|(_, &n)| n > 0)
            .map(|(p, &n)| (p.as_str(), n))
    }

    /// Values replaced under the rule of `path`, as the policy writes it.
    pub fn replaced(&self, path: &str) -> u64 {
        self.paths
            .iter()
            .position(|p| p == path)
            .map_or(0, |i| self.counts[i])
    }

    /// Values replaced in all.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

impl Deidentifier {
    /// Replace under `key` what `policy` names.
    pub fn new(key: &Key, policy: Policy) -> Deidentifier {
        let mut segments: Vec<([u8; 3], Vec<usize>)> = Vec::new();
        for (i, rule) in policy.rules().iter().enumerate() {
            let name = *rule.path.segment();
            match segments.iter_mut().find(|(n, _)| *n == name) {
                Some((_, rules)) => rules.push(i),
                None => segments.push((name, vec![i])),
            }
        }
        for (_, rules) in &mut segments {
            rules.sort_by_key(|&i| (policy.rules()[i].path.field(), i));
        }
        Deidentifier {
            deriver: Deriver::new(key),
            policy,
            segments,
            patient: patient_path(),
        }
    }

    /// The policy applied.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// An empty report for this policy's rules.
    pub fn report(&self) -> Report {
        let rules = self.policy.rules();
        Report {
            paths: rules.iter().map(|r| r.path.to_string()).collect(),
            counts: vec![0; rules.len()],
        }
    }

    /// Append `message` de-identified to `out`, counting into `report` (made by
    /// [`Deidentifier::report`]).
    pub fn apply(&self, message: &[u8], out: &mut Vec<u8>, report: &mut Report) {
        let parsed = Message::new(message);
        let mut pass = Pass {
            deid: self,
            message,
            out,
            copied: 0,
            days: None,
            patient: parsed,
            report,
        };
        let mut seen: Vec<(&[u8], usize)> = Vec::new();
        for segment in parsed.segments() {
            let name = segment.name();
            let Some((_, rules)) = self.segments.iter().find(|(n, _)| &n[..] == name) else {
                continue;
            };
            let occurrence = match seen.iter_mut().find(|(n, _)| *n == name) {
                Some((_, count)) => {
                    *count += 1;
                    *count
                }
                None => {
                    seen.push((name, 1));
                    1
                }
            };
            pass.segment(segment, occurrence, rules);
        }
        pass.out.extend_from_slice(&message[pass.copied..]);
    }
}

/// One message's pass: what is copied so far, and the patient's date offset once needed.
struct Pass<'a, 'o> {
    deid: &'a Deidentifier,
    message: &'a [u8],
    out: &'o mut Vec<u8>,
    copied: usize,
    days: Option<i64>,
    patient: Message<'a>,
    report: &'o mut Report,
}

impl<'a> Pass<'a, '_> {
    fn segment(&mut self, segment: Segment<'a>, occurrence: usize, rules: &[usize]) {
        let policy = &self.deid.policy;
        let name = segment.name();
        // The rules for this occurrence whose condition holds, still in field order.
        let mut here: Vec<usize> = Vec::with_capacity(rules.len());
        for &i in rules {
            let rule = &policy.rules()[i];
            if !rule.path.reaches(name, occurrence, rule.path.field()) {
                continue;
            }
            if let Some(when) = &rule.when {
                let value = segment.field(when.field).and_then(|f| f.component(1));
                let value = value.map(|v| v.decoded()).unwrap_or_default();
                if !when.holds(&value) {
                    continue;
                }
            }
            here.push(i);
        }
        let Some(&last) = here.last() else {
            return;
        };
        let last_field = policy.rules()[last].path.field();
        let mut from = 0;
        for (n, field) in segment.fields() {
            if n > last_field {
                break;
            }
            // The delimiters themselves are never replaced.
            if segment.is_header() && n <= 2 {
                continue;
            }
            let start = from;
            while from < here.len() && policy.rules()[here[from]].path.field() == n {
                from += 1;
            }
            if start < from && !field.is_empty() {
                self.field(Place::field(name, occurrence, n), field, &here[start..from]);
            }
        }
    }

    fn field(&mut self, at: Place<'_>, field: Value<'a>, rules: &[usize]) {
        let policy = &self.deid.policy;
        // One rule blanking the whole field: the field goes, separators and all.
        if let [only] = rules {
            let rule = &policy.rules()[*only];
            if rule.method == Method::Blank && rule.path.depth() == crate::hl7::Depth::Field {
                self.put(field, Vec::new(), *only);
                return;
            }
        }
        for (r, repetition) in field.repetitions().enumerate() {
            for (c, component) in repetition.components().enumerate() {
                for (s, leaf) in component.subcomponents().enumerate() {
                    // Empty, or HL7's explicit null: nothing to replace.
                    if leaf.is_empty() || leaf.raw() == b"\"\"" {
                        continue;
                    }
                    let place = Place {
                        repetition: Some(r + 1),
                        component: Some(c + 1),
                        subcomponent: Some(s + 1),
                        ..at
                    };
                    if let Some(rule) = policy.decide(rules, &place) {
                        self.leaf(leaf, rule);
                    }
                }
            }
        }
    }

    fn leaf(&mut self, leaf: Value<'a>, rule: usize) {
        let method = self.deid.policy.rules()[rule].method;
        let text = leaf.decoded();
        let deriver = &self.deid.deriver;
        let (days, patient, path) = (&mut self.days, &self.patient, &self.deid.patient);
        let offset =
            || *days.get_or_insert_with(|| date_offset(deriver, &patient.get(path).decoded()));
        let Some(replacement) = replace(method, deriver, &text, offset) else {
            return;
        };
        let mut encoded = Vec::with_capacity(replacement.len());
        escape::encode(&replacement, &leaf.delimiters(), &mut encoded);
        if encoded != leaf.raw() {
            self.put(leaf, encoded, rule);
        }
    }

    /// Write `replacement` where `value` lies.
    fn put(&mut self, value: Value<'a>, replacement: Vec<u8>, rule: usize) {
        let start = value.raw().as_ptr() as usize - self.message.as_ptr() as usize;
        self.out
            .extend_from_slice(&self.message[self.copied..start]);
        self.out.extend_from_slice(&replacement);
        self.copied = start + value.raw().len();
        self.report.counts[rule] += 1;
    }
}

impl fmt::Debug for Deidentifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deidentifier")
            .field("rules", &self.policy.rules().len())
            .finish_non_exhaustive()
    }
}
