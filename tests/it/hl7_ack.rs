//! Integration tests: hl7_ack.
