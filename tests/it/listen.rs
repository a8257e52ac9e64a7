//! Integration tests: listen.
