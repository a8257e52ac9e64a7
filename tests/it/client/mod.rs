//! Integration tests: the client core as a library, over real loopback sockets: flow against the
//! scripted peer, and establishing links (with every way that fails classified).

mod flow;
mod link;
