//! The process's memory while it serves, set before the runtime starts. The server's budget
//! counts every buffer it allocates; these settings make the process hold no more than that:
//! a freed buffer goes back to the system, and commits that block (an `--out-dir` fsync) share
//! a bounded set of threads.

/// Blocking work at once, at most: each thread is a stack and an allocator's cache held for as
/// long as it lives, and a thousand connections committing to a directory would otherwise
/// start one thread each (up to 512).
pub const BLOCKING_THREADS: usize = 64;

/// Buffers of this size and larger are mapped from the system and unmapped when freed. With
/// the allocator's default (a threshold that grows to 32 MiB as large buffers are freed), a
/// thousand connections' read buffers and frames, freed in turn on two worker threads, are
/// kept in per-thread heaps that never shrink: `listen --out-dir` under 1,000 connections x 32
/// frames of 64 KiB peaked at 550 MiB with a 256 MiB budget, and stayed there after every
/// connection closed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MAPPED_FROM: std::ffi::c_int = 64 * 1024;

/// glibc's `mallopt` parameter for that threshold (malloc.h).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const M_MMAP_THRESHOLD: std::ffi::c_int = -3;

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    /// glibc's allocator settings (malloc.h); one call, so no binding crate for it.
    fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
}

/// Return large buffers to the system when they are freed (glibc; other allocators already do).
pub fn return_freed_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes the allocator's parameters; called before any thread of
    // the runtime starts.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, MAPPED_FROM);
    }
}
