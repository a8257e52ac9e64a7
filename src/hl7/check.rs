//! Is a message well formed? The rules every message is held to (MSH first with valid
//! delimiters, segment IDs, the header's required fields, the types of the common segments'
//! fields, batch envelopes, control bytes) and the ones a site adds in a [`Profile`]. Each
//! finding has a stable code, a severity and where it is, and keeps the value it is about
//! apart: values are payload, shown only when asked for.

mod batch;
mod profile;
mod rules;
pub(crate) mod syntax;

pub use profile::{Allowed, Profile, ProfileError, RawAllowed, RawProfile};

use serde::Serialize;
use std::fmt;

/// What a finding is about. The strings are part of the public interface: never rename one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[non_exhaustive]
pub enum Code {
    /// The first segment is not MSH (or FHS/BHS of a batch), or there is no MSH.
    #[serde(rename = "HL7_MSH_NOT_FIRST")]
    MshNotFirst,
    /// MSH-1 or MSH-2 does not declare usable delimiters.
    #[serde(rename = "HL7_DELIMITERS_INVALID")]
    DelimitersInvalid,
    /// A segment ID that is not three upper-case letters or digits.
    #[serde(rename = "HL7_SEGMENT_ID_INVALID")]
    SegmentIdInvalid,
    /// A field the header must have is empty or absent (MSH-7, MSH-9, MSH-10, MSH-11, MSH-12).
    #[serde(rename = "HL7_REQUIRED_FIELD_MISSING")]
    RequiredFieldMissing,
    /// A TS or DTM field that is not an HL7 timestamp.
    #[serde(rename = "HL7_TIMESTAMP_INVALID")]
    TimestampInvalid,
    /// A DT field that is not an HL7 date.
    #[serde(rename = "HL7_DATE_INVALID")]
    DateInvalid,
    /// MSH-9 without a message code or trigger event.
    #[serde(rename = "HL7_MESSAGE_TYPE_INVALID")]
    MessageTypeInvalid,
    /// MSH-11 not `P`, `D` or `T`, or a processing mode outside HL7 Table 0207.
    #[serde(rename = "HL7_PROCESSING_ID_INVALID")]
    ProcessingIdInvalid,
    /// MSH-12 names no HL7 v2 version.
    #[serde(rename = "HL7_VERSION_UNKNOWN")]
    VersionUnknown,
    /// An SI field that is not a whole number.
    #[serde(rename = "HL7_SET_ID_INVALID")]
    SetIdInvalid,
    /// An NM field (or OBX-5 where OBX-2 is `NM`) that is not a number.
    #[serde(rename = "HL7_NUMBER_INVALID")]
    NumberInvalid,
    /// Batch envelope segments that do not pair up, or a BTS-1/FTS-1 count that is wrong.
    #[serde(rename = "HL7_BATCH_UNBALANCED")]
    BatchUnbalanced,
    /// A control byte other than the segment terminator.
    #[serde(rename = "HL7_CONTROL_BYTE")]
    ControlByte,
    /// MSH-18 names a character set that is not known.
    #[serde(rename = "HL7_CHARSET_UNKNOWN")]
    CharsetUnknown,
    /// A field holds bytes the character set MSH-18 names (UTF-8 when it is empty) cannot
    /// decode.
    #[serde(rename = "HL7_TEXT_NOT_IN_CHARSET")]
    TextNotInCharset,
    /// A path the profile requires is empty.
    #[serde(rename = "HL7_PROFILE_FIELD_MISSING")]
    ProfileFieldMissing,
    /// A value outside what the profile allows.
    #[serde(rename = "HL7_PROFILE_VALUE_NOT_ALLOWED")]
    ProfileValueNotAllowed,
    /// A value longer than the profile allows.
    #[serde(rename = "HL7_PROFILE_VALUE_TOO_LONG")]
    ProfileValueTooLong,
    /// A segment the profile requires for the message's type is absent.
    #[serde(rename = "HL7_PROFILE_SEGMENT_MISSING")]
    ProfileSegmentMissing,
}

impl Code {
    /// The stable code string, e.g. `HL7_MSH_NOT_FIRST`; the same as its serialized form.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::MshNotFirst => "HL7_MSH_NOT_FIRST",
            Code::DelimitersInvalid => "HL7_DELIMITERS_INVALID",
            Code::SegmentIdInvalid => "HL7_SEGMENT_ID_INVALID",
            Code::RequiredFieldMissing => "HL7_REQUIRED_FIELD_MISSING",
            Code::TimestampInvalid => "HL7_TIMESTAMP_INVALID",
            Code::DateInvalid => "HL7_DATE_INVALID",
            Code::MessageTypeInvalid => "HL7_MESSAGE_TYPE_INVALID",
            Code::ProcessingIdInvalid => "HL7_PROCESSING_ID_INVALID",
            Code::VersionUnknown => "HL7_VERSION_UNKNOWN",
            Code::SetIdInvalid => "HL7_SET_ID_INVALID",
            Code::NumberInvalid => "HL7_NUMBER_INVALID",
            Code::BatchUnbalanced => "HL7_BATCH_UNBALANCED",
            Code::ControlByte => "HL7_CONTROL_BYTE",
            Code::CharsetUnknown => "HL7_CHARSET_UNKNOWN",
            Code::TextNotInCharset => "HL7_TEXT_NOT_IN_CHARSET",
            Code::ProfileFieldMissing => "HL7_PROFILE_FIELD_MISSING",
            Code::ProfileValueNotAllowed => "HL7_PROFILE_VALUE_NOT_ALLOWED",
            Code::ProfileValueTooLong => "HL7_PROFILE_VALUE_TOO_LONG",
            Code::ProfileSegmentMissing => "HL7_PROFILE_SEGMENT_MISSING",
        }
    }

    /// Every code, in the order of the list above.
    pub const ALL: &'static [Code] = &[
        Code::MshNotFirst,
        Code::DelimitersInvalid,
        Code::SegmentIdInvalid,
        Code::RequiredFieldMissing,
        Code::TimestampInvalid,
        Code::DateInvalid,
        Code::MessageTypeInvalid,
        Code::ProcessingIdInvalid,
        Code::VersionUnknown,
        Code::SetIdInvalid,
        Code::NumberInvalid,
        Code::BatchUnbalanced,
        Code::ControlByte,
        Code::CharsetUnknown,
        Code::TextNotInCharset,
        Code::ProfileFieldMissing,
        Code::ProfileValueNotAllowed,
        Code::ProfileValueTooLong,
        Code::ProfileSegmentMissing,
    ];
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How bad a finding is: an error makes the message ill-formed, a warning does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The message breaks a rule.
    Error,
    /// Worth knowing; the message is still well formed.
    Warning,
}

/// One thing wrong with a message. `Debug` leaves the value out.
#[derive(Clone, PartialEq, Eq)]
pub struct Finding {
    /// What it is about.
    pub code: Code,
    /// Error or warning.
    pub severity: Severity,
    /// Where: a path (`MSH-7`, `PID(2)-7`, `OBX(3)-5(2)`), `segment 4`, or empty for the whole
    /// payload.
    pub at: String,
    /// Which message of a batch read whole (from 1); `None` for the payload itself.
    pub message: Option<usize>,
    /// What is wrong, in words that hold no value of the message.
    pub what: String,
    /// The value it is about, as written: payload, for showing only when asked.
    pub value: Option<Vec<u8>>,
}

impl fmt::Debug for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Finding")
            .field("code", &self.code)
            .field("severity", &self.severity)
            .field("at", &self.at)
            .field("message", &self.message)
            .field("what", &self.what)
            .finish_non_exhaustive()
    }
}

/// Checks messages against the rules and, when given, a site's profile.
#[derive(Debug, Clone, Default)]
pub struct Checker {
    profile: Option<Profile>,
}

impl Checker {
    /// The rules, and the profile's when there is one.
    pub fn new(profile: Option<Profile>) -> Checker {
        Checker { profile }
    }

    /// What is wrong with `payload`: one message, or a batch (FHS/BHS ... BTS/FTS) whose
    /// envelope is checked and then each message in it. Empty when it is well formed.
    ///
    /// ```
    /// use mllp::hl7::{Checker, Code};
    ///
    /// let findings = Checker::default().check(b"MSH|^~\\&|A|B|C|D|2024130112||ADT^A01|1|P|2.5\r");
    /// assert_eq!(findings.len(), 1);
    /// assert_eq!((findings[0].code, findings[0].at.as_str()), (Code::TimestampInvalid, "MSH-7"));
    /// ```
    pub fn check(&self, payload: &[u8]) -> Vec<Finding> {
        let mut findings = Vec::new();
        match batch::envelope(payload) {
            Some(messages) => {
                batch::check_envelope(payload, &mut findings);
                for (i, message) in messages.into_iter().enumerate() {
                    let start = findings.len();
                    self.check_message(message, &mut findings);
                    for f in &mut findings[start..] {
                        f.message = Some(i + 1);
                    }
                }
            }
            None => self.check_message(payload, &mut findings),
        }
        findings
    }

    fn check_message(&self, payload: &[u8], findings: &mut Vec<Finding>) {
        let found = rules::check(payload, findings);
        if let (Some(profile), true) = (&self.profile, found) {
            profile.check(payload, findings);
        }
    }
}

/// A finding at `at`, its value kept apart.
pub(crate) fn finding(
    code: Code,
    severity: Severity,
    at: impl Into<String>,
    what: impl Into<String>,
    value: Option<&[u8]>,
) -> Finding {
    Finding {
        code,
        severity,
        at: at.into(),
        message: None,
        what: what.into(),
        value: value.map(<[u8]>::to_vec),
    }
}

/// Where a field is, as a path: `PID-7`, `PID(2)-7`, `OBX(3)-5(2)`.
pub(crate) fn field_at(name: &[u8], occurrence: usize, field: usize, repetition: usize) -> String {
    let name = String::from_utf8_lossy(name);
    let occurrence = match occurrence {
        1 => String::new(),
        n => format!("({n})"),
    };
    let repetition = match repetition {
        1 => String::new(),
        n => format!("({n})"),
    };
    format!("{name}{occurrence}-{field}{repetition}")
}

#[cfg(test)]
mod tests;
