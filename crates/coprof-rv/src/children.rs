//! The program's child processes as a source of SIGCHLD.
//!
//! A child is a host process (see the `sim` module's `fork`), so its end
//! reaches the host process as a host SIGCHLD. Once the program has forked,
//! coprof catches that signal (with SA_RESTART, so that the host calls it
//! interrupts go on) and writes a byte to a pipe: the waits of the
//! simulated process (`sigsuspend`, `pause`, `nanosleep`, `sigtimedwait`,
//! `ppoll`, `select`, `epoll_wait`, and the simulator's own wait when no
//! thread can run) watch that pipe beside their timers and descriptors, so
//! that a child's end wakes them as it would under Linux. The simulator
//! then holds a SIGCHLD for the program, with the ended child's pid, uid
//! and status (looked at with `waitid`'s WNOWAIT, which leaves the child
//! for the program to reap), and delivers it like any other signal.
//!
//! The program's choice is followed on the host: SIGCHLD set to SIG_IGN,
//! or a handler with SA_NOCLDWAIT, makes the host reap ended children
//! itself, as Linux does. A child that stops or continues sends nothing
//! here (SA_NOCLDSTOP on the host side).

use crate::signal::SigInfo;
use std::sync::atomic::{AtomicI32, Ordering};

/// The pipe's write end, for the signal handler (−1: not watching).
static WRITE_END: AtomicI32 = AtomicI32::new(-1);

/// `si_code` values of SIGCHLD (include/uapi/asm-generic/siginfo.h).
const CLD_EXITED: i32 = 1;
const CLD_KILLED: i32 = 2;
const CLD_DUMPED: i32 = 3;

/// The host's SIGCHLD handler: one byte down the pipe. Async-signal-safe:
/// an atomic load and `write`, with errno kept for the code it interrupts.
extern "C" fn note_child(_: libc::c_int) {
    let fd = WRITE_END.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: errno is thread-local and restored; write is
        // async-signal-safe; the pipe is non-blocking, so a full pipe
        // (which already holds the news) drops the byte.
        unsafe {
            let saved = *libc::__errno_location();
            libc::write(fd, [1u8].as_ptr() as *const _, 1);
            *libc::__errno_location() = saved;
        }
    }
}

/// The read end of the pipe the host's SIGCHLD handler writes to.
#[derive(Debug)]
pub struct Children {
    read: i32,
    /// The children forked and not yet reaped, each with whether its
    /// SIGCHLD was sent.
    kids: Vec<(i32, bool)>,
}

impl Children {
    /// Starts watching: the pipe, and the host's SIGCHLD disposition
    /// following the program's SIGCHLD action `action` (handler, flags,
    /// mask as `rt_sigaction` set them). `None` if the host refuses a pipe.
    pub fn watch(action: [u64; 3]) -> Option<Children> {
        let mut p = [0i32; 2];
        // SAFETY: `p` has room for two descriptors.
        if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
            return None;
        }
        let old = WRITE_END.swap(p[1], Ordering::SeqCst);
        if old >= 0 {
            // SAFETY: the write end of a pipe this process no longer reads.
            unsafe { libc::close(old) };
        }
        follow(action);
        Some(Children {
            read: p[0],
            kids: Vec::new(),
        })
    }

    /// Stops watching in a forked child, whose children are its own: the
    /// parent's pipe is closed, and nothing is written until it forks.
    pub fn forget_in_child(self) {
        let old = WRITE_END.swap(-1, Ordering::SeqCst);
        if old >= 0 {
            // SAFETY: this process's copy of the parent's write end.
            unsafe { libc::close(old) };
        }
    }

    /// Counts `pid`, just forked, among the children.
    pub fn add(&mut self, pid: i32) {
        self.kids.push((pid, false));
    }

    /// The descriptor that is readable once a child has ended.
    pub fn fd(&self) -> i32 {
        self.read
    }

    /// The SIGCHLD to hold for the program if a child ended since the last
    /// look (the pipe says so): the first such child's pid, uid and status,
    /// looked at without reaping it. Several ends between two looks make
    /// one SIGCHLD, as Linux merges a standard signal.
    pub fn ended(&mut self) -> Option<SigInfo> {
        let mut buf = [0u8; 64];
        let mut news = false;
        // SAFETY: reads into a local buffer from a non-blocking pipe.
        while unsafe { libc::read(self.read, buf.as_mut_ptr() as *mut _, buf.len()) } > 0 {
            news = true;
        }
        if !news {
            return None;
        }
        let mut first = None;
        for (pid, sent) in self.kids.iter_mut().filter(|k| !k.1) {
            if let Some(info) = look(*pid).filter(|i| i.pid != 0) {
                *sent = true;
                first = first.or(Some(info));
            }
        }
        first.map(Ended::signal)
    }

    /// The program reaped `pid` (`wait4`, `waitid`) with the wait status
    /// `status`: the SIGCHLD it would have had at the child's end, if this
    /// child's was not sent yet (it ended and was reaped between two looks).
    pub fn reaped(&mut self, pid: i32, status: i32) -> Option<SigInfo> {
        let at = self.kids.iter().position(|k| k.0 == pid)?;
        let (_, sent) = self.kids.remove(at);
        let (code, value) = if libc::WIFEXITED(status) {
            (CLD_EXITED, libc::WEXITSTATUS(status))
        } else if libc::WIFSIGNALED(status) {
            let code = if libc::WCOREDUMP(status) {
                CLD_DUMPED
            } else {
                CLD_KILLED
            };
            (code, libc::WTERMSIG(status))
        } else {
            return None;
        };
        // SAFETY: plain call.
        let uid = unsafe { libc::getuid() };
        (!sent).then(|| {
            Ended {
                pid,
                uid,
                code,
                status: value,
            }
            .signal()
        })
    }

    /// Whether a child's end may still send the program SIGCHLD: a child
    /// that runs, or one that ended and whose SIGCHLD was not sent yet
    /// (the host's signal for it may still be on its way). Reaped children
    /// are forgotten.
    pub fn may_signal(&mut self) -> bool {
        self.kids.retain(|&(pid, _)| look(pid).is_some());
        self.kids.iter().any(|&(_, sent)| !sent)
    }
}

/// What `waitid` says of one child.
struct Ended {
    /// 0 while the child runs.
    pid: i32,
    uid: u32,
    code: i32,
    status: i32,
}

impl Ended {
    fn signal(self) -> SigInfo {
        SigInfo {
            signo: libc::SIGCHLD,
            code: self.code,
            word: self.pid as u32 as u64 | (self.uid as u64) << 32,
            value: self.status as u32 as u64,
        }
    }
}

/// The child `pid` looked at without reaping it (`waitid` with WNOWAIT):
/// `None` once it was reaped (or is not a child), pid 0 while it runs.
fn look(pid: i32) -> Option<Ended> {
    // SAFETY: a zeroed siginfo is valid; waitid fills it or fails.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: the fields of a siginfo waitid filled (all 0 while running).
    (r == 0).then(|| unsafe {
        Ended {
            pid: info.si_pid(),
            uid: info.si_uid(),
            code: info.si_code,
            status: info.si_status(),
        }
    })
}

impl Drop for Children {
    fn drop(&mut self) {
        // SAFETY: the read end this value owns.
        unsafe { libc::close(self.read) };
    }
}

/// Sets the host's SIGCHLD disposition after the program's action: SIG_IGN
/// when the program ignores SIGCHLD (the host then reaps ended children,
/// as Linux does for such a program), else the pipe's handler, with
/// SA_NOCLDWAIT if the program asked for it. Nothing while not watching.
pub fn follow(action: [u64; 3]) {
    if WRITE_END.load(Ordering::SeqCst) < 0 {
        return;
    }
    const SA_NOCLDWAIT: u64 = 2;
    // SAFETY: a zeroed sigaction is valid; the handler is async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        if action[0] == crate::signal::SIG_IGN {
            sa.sa_sigaction = libc::SIG_IGN;
        } else {
            sa.sa_sigaction = note_child as extern "C" fn(libc::c_int) as usize;
            sa.sa_flags = libc::SA_RESTART | libc::SA_NOCLDSTOP;
            if action[1] & SA_NOCLDWAIT != 0 {
                sa.sa_flags |= libc::SA_NOCLDWAIT;
            }
        }
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGCHLD, &sa, std::ptr::null_mut());
    }
}
