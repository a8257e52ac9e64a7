//! Peak memory under load, measured from outside the process: the peak resident size (`VmHWM`
//! in /proc/PID/status) of a child `mllp listen` or `mllp relay` with default limits, while
//! 1,000 connections push far more than the budget at a stalled sink or upstream. A test target
//! of its own, so its thousands of sockets and its load share no process with other tests; the
//! cases run one at a time.

#![cfg(target_os = "linux")]

mod listen;
mod load;
mod proc;
mod relay;
mod sinks;
