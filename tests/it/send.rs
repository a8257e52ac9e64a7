//! Integration tests: send.
