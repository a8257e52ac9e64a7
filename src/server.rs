//! The server core: accept loop, per-connection containment, sinks and the commit contract.
