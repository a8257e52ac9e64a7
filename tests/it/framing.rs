//! Integration tests: framing.
