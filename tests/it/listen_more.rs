//! Integration tests: listen_more.
