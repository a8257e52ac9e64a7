//! Integration tests: client_flow.
