//! Integration tests: soak.
