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
//!
//! A trace streamed into a pipe whose reader has gone asks the same
//! ([`UnreadPipe`]).

use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
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
///
/// SIGPIPE is ignored meanwhile: a write of the trace into a pipe whose
/// reader has gone would otherwise end coprof with the process traced,
/// and a clock's SIGSTOP pending would then stop it for good. The write
/// fails instead, the process is let go ([`UnreadPipe`]), and the error
/// ends coprof by SIGPIPE afterwards.
pub struct StopSignals {
    former: Vec<(i32, libc::sigaction)>,
    former_sigpipe: libc::sighandler_t,
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
        // SAFETY: plain call.
        let former_sigpipe = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
        let installed = StopSignals {
            former,
            former_sigpipe,
        };
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
        if self.former_sigpipe != libc::SIG_ERR {
            // SAFETY: the action this value replaced.
            unsafe { libc::signal(libc::SIGPIPE, self.former_sigpipe) };
        }
    }
}

/// A thread that acts once the reader of the pipe a trace streams into
/// has gone (`coprof record -o - | reader`, and the reader ends): it
/// asks to let a process attached to go ([`ask_to_stop`]), or ends
/// coprof with the program it started. Without it the program would run
/// on sampled, and slowed, for a trace nobody reads, until coprof's next
/// write into the pipe, seconds of samples later (a chunk of the trace
/// holds 65,536), or never if the process sleeps. A pipe tells its
/// writer that its reader has gone by POLLERR, without a write.
pub struct UnreadPipe {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl UnreadPipe {
    /// How often the thread looks whether it is done.
    const TICK_MS: i32 = 100;

    /// Watches `pipe`, the writing end of a pipe or a socket, until
    /// dropped, and calls `gone` once its reader has gone; nothing if
    /// `pipe` is neither.
    pub fn watch(pipe: OwnedFd, gone: fn()) -> std::io::Result<Option<UnreadPipe>> {
        use std::os::unix::fs::FileTypeExt;
        let fd = std::fs::File::from(pipe);
        let kind = fd.metadata()?.file_type();
        if !(kind.is_fifo() || kind.is_socket()) {
            return Ok(None);
        }
        let done = Arc::new(AtomicBool::new(false));
        let seen = done.clone();
        let thread = std::thread::Builder::new()
            .name("coprof pipe".into())
            .spawn(move || {
                while !seen.load(Ordering::SeqCst) {
                    let mut p = libc::pollfd {
                        fd: fd.as_raw_fd(),
                        events: 0,
                        revents: 0,
                    };
                    // SAFETY: one pollfd of a descriptor this thread owns.
                    let n = unsafe { libc::poll(&mut p, 1, Self::TICK_MS) };
                    if n > 0 && p.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                        gone();
                        return;
                    }
                }
            })?;
        Ok(Some(UnreadPipe {
            done,
            thread: Some(thread),
        }))
    }
}

impl Drop for UnreadPipe {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Asks to let the process go from a thread other than the sampling one,
/// as a signal's handler does: sets the flag, and interrupts the
/// sampling thread's wait with SIGALRM, whose handler is ours while
/// [`StopSignals`] are installed.
pub fn ask_to_stop() {
    STOP.store(true, Ordering::SeqCst);
    let sampler = SAMPLER.load(Ordering::SeqCst);
    if sampler != 0 {
        // SAFETY: a signal to the sampling thread of this process.
        unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), sampler, libc::SIGALRM) };
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
