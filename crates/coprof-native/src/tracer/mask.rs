//! Threads' signal masks, as they bear on the clock's signal: which
//! signal a thread's clock sends it, whether one is pending for it, and
//! the mask read and set while the thread is stopped.
//!
//! A clock signals its thread with [`SAMPLE_SIGNAL`], which stops it
//! under ptrace when the signal is delivered. A thread that blocks that
//! signal would never take it, and so never be sampled, nor have its
//! ring buffer read. Many programs start their worker threads that way:
//! all signals blocked around `pthread_create`, so that only the main
//! thread takes the process's signals (xz's threads, GLib's and libuv's
//! thread pools). A thread that starts with [`SAMPLE_SIGNAL`] blocked is
//! signalled with SIGSTOP instead, which no mask blocks: ptrace stops the
//! thread at its delivery as at any other, the tracer knows it for the
//! clock's by its `si_code`, and the thread never takes it.

use crate::perf::SAMPLE_SIGNAL;

/// The bit of [`SAMPLE_SIGNAL`] in a signal set.
pub(super) const SAMPLE_BIT: u64 = 1 << (SAMPLE_SIGNAL - 1);
/// The bit of SIGSTOP in a signal set.
const STOP_BIT: u64 = 1 << (libc::SIGSTOP - 1);

/// The signal thread `tid`'s clock is to send it, from the mask of
/// `mask_of`, which `tid` started with (itself, or the thread that
/// started it, stopped at its clone event): [`SAMPLE_SIGNAL`], or
/// SIGSTOP if that blocks [`SAMPLE_SIGNAL`] (the module's doc).
///
/// The kernel discards a SIGCONT that is pending for the process when it
/// sends a stop signal, so one whose handler had not run yet when such a
/// thread's clock fires is lost to the program: the price of sampling a
/// thread that would otherwise not be sampled at all.
pub(super) fn clock_signal(mask_of: i32) -> i32 {
    match blocked(mask_of) {
        Some(mask) if mask & SAMPLE_BIT != 0 => libc::SIGSTOP,
        _ => SAMPLE_SIGNAL,
    }
}

/// Whether `sig` is one a clock sends ([`clock_signal`]).
pub(super) fn may_be_the_clocks(sig: i32) -> bool {
    sig == SAMPLE_SIGNAL || sig == libc::SIGSTOP
}

/// The signals thread `tid` blocks: from ptrace when it is stopped under
/// this tracer, else from `/proc/TID/status`.
fn blocked(tid: i32) -> Option<u64> {
    signal_mask(tid).or_else(|| status_field(tid, "SigBlk:"))
}

/// Whether a signal a clock may send is pending for thread `tid` itself
/// (its `SigPnd` in `/proc/TID/status`, as a clock signals a thread).
pub(super) fn clock_signal_pending(tid: i32) -> bool {
    status_field(tid, "SigPnd:").is_some_and(|pending| pending & (SAMPLE_BIT | STOP_BIT) != 0)
}

/// A signal set of `/proc/TID/status`, the line starting with `field`.
fn status_field(tid: i32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let value = status.lines().find_map(|l| l.strip_prefix(field))?;
    u64::from_str_radix(value.trim(), 16).ok()
}

/// The signals the stopped thread `tid` blocks.
pub(super) fn signal_mask(tid: i32) -> Option<u64> {
    let mut mask = 0u64;
    // SAFETY: the kernel writes 8 bytes, the size given, into a local.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_GETSIGMASK,
            tid,
            std::mem::size_of::<u64>(),
            &mut mask as *mut u64,
        )
    };
    (r == 0).then_some(mask)
}

/// Sets the signals the stopped thread `tid` blocks; whether it could.
pub(super) fn set_signal_mask(tid: i32, mask: u64) -> bool {
    // SAFETY: the kernel reads 8 bytes, the size given, from a local.
    let r = unsafe {
        libc::ptrace(
            libc::PTRACE_SETSIGMASK,
            tid,
            std::mem::size_of::<u64>(),
            &mask as *const u64,
        )
    };
    r == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_blocks_the_sample_signal_is_sent_sigstop() {
        // This test's own thread, read from /proc (it is not traced).
        let me = unsafe { libc::gettid() };
        // SAFETY: sets and restores this thread's own mask.
        let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
        let mut prof: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe {
            libc::sigemptyset(&mut prof);
            libc::sigaddset(&mut prof, SAMPLE_SIGNAL);
            libc::pthread_sigmask(libc::SIG_BLOCK, &prof, &mut old);
        }
        let blocking = clock_signal(me);
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &prof, std::ptr::null_mut()) };
        let not_blocking = clock_signal(me);
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
        assert_eq!(blocking, libc::SIGSTOP);
        assert_eq!(not_blocking, SAMPLE_SIGNAL);
        assert!(may_be_the_clocks(blocking) && may_be_the_clocks(not_blocking));
        assert!(!may_be_the_clocks(libc::SIGUSR1));
    }
}
