//! Integration tests: client_link.
