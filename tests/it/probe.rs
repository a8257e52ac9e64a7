//! Integration tests: probe.
