//! The scheduling and acknowledgement segments: SCH, AIS, MSA, ERR.

use super::{f, typed, FieldDef, NM, SI, TS};

pub(super) const SCH: &[FieldDef] = &[
    f("Placer Appointment ID"),
    f("Filler Appointment ID"),
    typed("Occurrence Number", NM),
    f("Placer Group Number"),
    f("Schedule ID"),
    f("Event Reason"),
    f("Appointment Reason"),
    f("Appointment Type"),
    typed("Appointment Duration", NM),
    f("Appointment Duration Units"),
    f("Appointment Timing Quantity"),
    f("Placer Contact Person"),
    f("Placer Contact Phone Number"),
    f("Placer Contact Address"),
    f("Placer Contact Location"),
    f("Filler Contact Person"),
    f("Filler Contact Phone Number"),
    f("Filler Contact Address"),
    f("Filler Contact Location"),
    f("Entered By Person"),
    f("Entered By Phone Number"),
    f("Entered By Location"),
    f("Parent Placer Appointment ID"),
    f("Parent Filler Appointment ID"),
    f("Filler Status Code"),
    f("Placer Order Number"),
    f("Filler Order Number"),
];

pub(super) const AIS: &[FieldDef] = &[
    typed("Set ID - AIS", SI),
    f("Segment Action Code"),
    f("Universal Service Identifier"),
    typed("Start Date/Time", TS),
    typed("Start Date/Time Offset", NM),
    f("Start Date/Time Offset Units"),
    typed("Duration", NM),
    f("Duration Units"),
    f("Allow Substitution Code"),
    f("Filler Status Code"),
    f("Placer Supplemental Service Information"),
    f("Filler Supplemental Service Information"),
];

pub(super) const MSA: &[FieldDef] = &[
    f("Acknowledgment Code"),
    f("Message Control ID"),
    f("Text Message"),
    typed("Expected Sequence Number", NM),
    f("Delayed Acknowledgment Type"),
    f("Error Condition"),
];

pub(super) const ERR: &[FieldDef] = &[
    f("Error Code and Location"),
    f("Error Location"),
    f("HL7 Error Code"),
    f("Severity"),
    f("Application Error Code"),
    f("Application Error Parameter"),
    f("Diagnostic Information"),
    f("User Message"),
    f("Inform Person Indicator"),
    f("Override Type"),
    f("Override Reason Code"),
    f("Help Desk Contact Point"),
];
