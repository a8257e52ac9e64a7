//! Peak memory under load, measured from outside the process: the peak resident size (`VmHWM`
//! in /proc/PID/status) of a child `mllp listen` or `mllp relay` with default limits, while
//! 1,000 connections push far more than the budget at a stalled sink or upstream. A test target
//! of its own, so its thousands of sockets and its load share no process with other tests; the
//! cases run one at a time. Four of the nine are long runs kept for `-- --ignored` (the stdout,
//! acknowledgement-reader, relay-queue and non-reading command cases), so a default run stays short.

#![cfg(target_os = "linux")]

mod listen;
mod load;
mod proc;
mod relay;
mod sinks;
