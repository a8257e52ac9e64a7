//! `mllp show`, and the reader behind it beside python-hl7.

mod corpus;
