//! The client core: one link state machine, reconnect with backoff, ACK correlation, backpressure, drain, and per-message fate.
