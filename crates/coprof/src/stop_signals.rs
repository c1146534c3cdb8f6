//! Ctrl-C, SIGTERM, SIGHUP and the end of a set time, each turned into a
//! request to let a process coprof attached to go (`coprof record
//! --attach`), rather than the end of coprof: killed, coprof would leave
//! the process traced until the kernel let it go, and its trace unwritten.
//!
//! The handlers set one flag, and interrupt the sampling thread's wait
//! for the process's next change (installed without `SA_RESTART`), so
//! that a process asleep is let go too. A signal that reaches another
//! thread of coprof's is passed on to the sampling thread. The race of a
//! signal that comes just before the wait begins is closed by an alarm
//! the handler sets: a second later, it interrupts the wait again.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

/// Set once a stop has been asked for.
static STOP: AtomicBool = AtomicBool::new(false);
/// The sampling thread, whose wait a signal must interrupt.
static SAMPLER: AtomicI32 = AtomicI32::new(0);

/// The signals that ask to stop: the terminal's Ctrl-C, a polite kill,
/// a hang-up, and the alarm of a set time.
const SIGNALS: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGALRM];

extern "C" fn asked_to_stop(sig: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
    // SAFETY: gettid, getpid, tgkill and alarm are async-signal-safe
    // system calls.
    unsafe {
        let sampler = SAMPLER.load(Ordering::SeqCst);
        if sampler != 0 && libc::gettid() != sampler {
            libc::syscall(libc::SYS_tgkill, libc::getpid(), sampler, sig);
        }
        libc::alarm(1);
    }
}

/// The handlers, installed on the calling thread (the sampling one) for
/// as long as this lives; the former ones are put back on drop.
pub struct StopSignals {
    former: Vec<(i32, libc::sigaction)>,
}

impl StopSignals {
    /// Installs the handlers, with an alarm after `duration` if given.
    pub fn install(duration: Option<Duration>) -> std::io::Result<StopSignals> {
        STOP.store(false, Ordering::SeqCst);
        // SAFETY: plain call.
        SAMPLER.store(unsafe { libc::gettid() }, Ordering::SeqCst);
        let mut former = Vec::new();
        for sig in SIGNALS {
            // SAFETY: a handler that only touches atomics and makes
            // async-signal-safe calls; no SA_RESTART, so that it
            // interrupts a wait.
            let old = unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = asked_to_stop as *const () as usize;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, &action, &mut old) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                old
            };
            former.push((sig, old));
        }
        let installed = StopSignals { former };
        if let Some(d) = duration {
            set_alarm(d);
        }
        Ok(installed)
    }

    /// The flag the handlers set.
    pub fn flag(&self) -> &'static AtomicBool {
        &STOP
    }
}

impl Drop for StopSignals {
    fn drop(&mut self) {
        set_alarm(Duration::ZERO);
        SAMPLER.store(0, Ordering::SeqCst);
        for (sig, old) in &self.former {
            // SAFETY: the action this value replaced.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
    }
}

/// Sets the real-time alarm `d` from now; zero cancels it.
fn set_alarm(d: Duration) {
    let value = libc::timeval {
        tv_sec: d.as_secs() as libc::time_t,
        tv_usec: d.subsec_micros() as libc::suseconds_t,
    };
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: value,
    };
    // SAFETY: a timer of this process, from a local.
    unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) };
}
