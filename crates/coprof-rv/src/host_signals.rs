//! Signals from outside: those another process, the terminal or the host
//! kernel sends the host process, which is the simulated one.
//!
//! While a program runs, the host's disposition of every signal that can
//! come from outside follows the program's own action for it:
//!
//! - a handler the program installed: coprof catches the signal, and the
//!   program's handler runs, with the sender's pid, uid, code and value
//!   in its siginfo;
//! - SIG_IGN: the host ignores it too;
//! - the default action: for the signals that kill (SIGINT at a Ctrl-C,
//!   SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, …) coprof catches the signal and
//!   the program dies of it as a simulated death, so that the run ends
//!   with its reports, as `perf record` keeps its profile at a Ctrl-C; the
//!   signals whose default is to stop, continue or be ignored keep the
//!   host's default (a Ctrl-Z stops coprof with the program).
//!
//! A caught signal is noted in atomics and a byte is written to a pipe;
//! the simulator takes it between blocks, as it takes its timers' signals,
//! and every wait of the program watches the pipe, so a signal ends a
//! `pause`, `sigsuspend`, `sigwait`, `poll` or `nanosleep` as under Linux.
//! The catcher is installed without SA_RESTART, so a host call the
//! simulator makes for the program (a `read` of the terminal) ends with
//! EINTR; if the program takes the signal, its call then ends with EINTR
//! or is restarted after the handler as its SA_RESTART says, and
//! otherwise the call is made again. A signal that a host thread other
//! than the simulator's (an engine's) catches is sent on to the
//! simulator's thread, to end its host call too.
//!
//! Left to the host: the signals of faults (SIGSEGV, SIGBUS, SIGILL,
//! SIGFPE, SIGTRAP, SIGSYS), which would be coprof's own; SIGPIPE, which
//! the host ignores while the program runs ([`ignore_sigpipe`]: the
//! simulator gives the program the EPIPE of its write and a SIGPIPE of
//! its own, as Linux does); SIGKILL and SIGSTOP; and the two
//! real-time signals the host's C library keeps for itself (32, 33).
//! Real-time signals from outside queue, as Linux queues them: each
//! instance with its own siginfo, in the order they came (up to
//! [`RT_RING`] waiting at once; more are lost, where Linux would refuse
//! the sender with EAGAIN); a standard one sent again before delivery
//! merges into the first. A child process's
//! end comes this way too, as the host's SIGCHLD (the `sim` module's
//! `fork`).

use crate::signal::{InheritedSignals, SigInfo, SIG_DFL, SIG_IGN};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

/// What a program started now would inherit of the host process's
/// signals, read from the calling thread: called first thing in `main`,
/// what coprof was started with (`nohup` ignores SIGHUP;
/// a shell without job control starts a background command ignoring
/// SIGINT and SIGQUIT; a parent may leave signals blocked). SIGPIPE's
/// action is left out: Rust's runtime ignores it before `main`, so a
/// caller that knows what the process was started with adds it (coprof
/// reads it among the C library's constructors). Its mask is not
/// touched, and is kept. SIGKILL and SIGSTOP can be neither ignored
/// nor blocked, and the C library's own 32 and 33 are not the
/// program's. The signals pending on the thread, which it blocks (one
/// an `execve` kept: [`pend_for_exec`]), are taken off it, to be the
/// program's.
pub fn inherited_now() -> InheritedSignals {
    let mut ignored = 0;
    for sig in 1..=64 {
        if !matches!(sig, libc::SIGKILL | libc::SIGSTOP | libc::SIGPIPE | 32 | 33)
            && host_action(sig).sa_sigaction == libc::SIG_IGN
        {
            ignored |= 1 << (sig - 1);
        }
    }
    let blocked = mask_bits(&thread_mask()) & !HOST_OWN;
    // SAFETY: a set filled by the call.
    let mut pending_set: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe { libc::sigpending(&mut pending_set) };
    let pending = take_pending(mask_bits(&pending_set) & blocked & !(1 << (libc::SIGPIPE - 1)));
    InheritedSignals {
        ignored,
        blocked,
        pending,
    }
}

/// Takes every instance of the signals of `set`, which the calling
/// thread blocks, off it: each with what it was sent with, lowest signal
/// first.
fn take_pending(set: u64) -> Vec<SigInfo> {
    let mut taken = Vec::new();
    for sig in (1..=64).filter(|sig| set & 1 << (sig - 1) != 0) {
        // SAFETY: a set filled by sigemptyset and sigaddset; the siginfo
        // filled by the call, which does not wait (a zero timeout).
        unsafe {
            let mut one: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut one);
            libc::sigaddset(&mut one, sig);
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            let mut info: libc::siginfo_t = std::mem::zeroed();
            while libc::sigtimedwait(&one, &mut info, &zero) == sig {
                taken.push(SigInfo::from_host(&info));
            }
        }
    }
    taken
}

/// Makes the program's pending signals `pending` that the calling thread
/// blocks (all of them, once [`mask_for_exec`] has given it the
/// program's mask) pending on it, each with what it was sent with, just
/// before an `execve`, which keeps them for the new program as Linux
/// keeps the program's own. Returns the signals made pending, for
/// [`take_back`] should the call fail.
pub fn pend_for_exec(pending: &[SigInfo]) -> u64 {
    let blocked = mask_bits(&thread_mask()) & !HOST_OWN;
    let mut carried = 0;
    // SAFETY: plain calls.
    let (pid, tid) = unsafe { (libc::getpid(), libc::syscall(libc::SYS_gettid) as i32) };
    for info in pending {
        let sig = info.signo;
        if !(1..=64).contains(&sig) || blocked & 1 << (sig - 1) == 0 {
            continue;
        }
        // SAFETY: 128 bytes of siginfo as the kernel reads them; to this
        // thread itself, any code may be sent.
        let sent = unsafe {
            libc::syscall(
                libc::SYS_rt_tgsigqueueinfo,
                pid,
                tid,
                sig,
                info.bytes().as_ptr(),
            )
        };
        if sent == 0 {
            carried |= 1 << (sig - 1);
        }
    }
    carried
}

/// Takes the signals `carried` that [`pend_for_exec`] made pending off
/// the calling thread again, after an `execve` that failed: the program
/// still holds them.
pub fn take_back(carried: u64) {
    take_pending(carried);
}

/// Signals the program can neither block nor ignore, or that are the
/// host C library's own (32 and 33), as a mask.
const HOST_OWN: u64 =
    1 << (libc::SIGKILL - 1) | 1 << (libc::SIGSTOP - 1) | 1 << (32 - 1) | 1 << (33 - 1);

/// The calling thread's blocked mask.
fn thread_mask() -> libc::sigset_t {
    set_thread_mask(libc::SIG_BLOCK, 0)
}

/// `set` as a mask (bit `sig - 1`).
fn mask_bits(set: &libc::sigset_t) -> u64 {
    (1..=64)
        // SAFETY: a valid sigset_t, read only.
        .filter(|&sig| unsafe { libc::sigismember(set, sig) } == 1)
        .fold(0, |m, sig| m | 1 << (sig - 1))
}

/// The host's action for `sig` now, unchanged (all zero, the default,
/// for a signal the call refuses).
fn host_action(sig: i32) -> libc::sigaction {
    // SAFETY: a zeroed sigaction is valid; the call only fills it.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    unsafe { libc::sigaction(sig, std::ptr::null(), &mut sa) };
    sa
}

/// Blocks in the calling thread what the program blocks (`mask`, bit
/// `sig - 1`), its other signals unblocked, and returns the mask to
/// restore with [`unblock`]: just before an `execve`, which keeps the
/// calling thread's mask for the new program, as Linux keeps the
/// program's own. The host C library's 32 and 33 stay as they are.
pub fn mask_for_exec(mask: u64) -> libc::sigset_t {
    let kept = mask_bits(&thread_mask()) & HOST_OWN;
    set_thread_mask(libc::SIG_SETMASK, mask & !HOST_OWN | kept)
}

/// Changes the calling thread's mask by `how` (SIG_BLOCK, SIG_UNBLOCK,
/// SIG_SETMASK) with the signals of `bits` (bit `sig - 1`), returning
/// the mask before.
fn set_thread_mask(how: i32, bits: u64) -> libc::sigset_t {
    // SAFETY: a set filled by sigemptyset and sigaddset; `old` filled by
    // the call.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in (1..=64).filter(|sig| bits & 1 << (sig - 1) != 0) {
            libc::sigaddset(&mut set, sig);
        }
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(how, &set, &mut old);
        old
    }
}

/// Sets the host's SIGPIPE to be ignored, for a run in which the
/// simulator gives the program its own (see `Kernel::syscall`); returns
/// the action before, for [`restore_sigpipe`].
pub fn ignore_sigpipe() -> libc::sighandler_t {
    // SAFETY: plain call.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) }
}

/// Puts back the host's SIGPIPE action that [`ignore_sigpipe`] returned.
pub fn restore_sigpipe(old: libc::sighandler_t) {
    if old != libc::SIG_ERR {
        // SAFETY: plain call with an action the process had.
        unsafe { libc::signal(libc::SIGPIPE, old) };
    }
}

/// Sets the host's SIGPIPE to what a program the host runs after an
/// `execve` inherits from the guest: ignored if the guest ignores it,
/// else the default (a handler does not survive an exec).
pub fn sigpipe_for_exec(guest_ignores: bool) {
    let action = if guest_ignores {
        libc::SIG_IGN
    } else {
        libc::SIG_DFL
    };
    // SAFETY: plain call.
    unsafe { libc::signal(libc::SIGPIPE, action) };
}

/// The signals that follow the program's action.
pub const MANAGED: [i32; 53] = {
    let mut out = [0i32; 53];
    let base = [
        1, 2, 3, 6, 10, 12, 14, 15, 16, 17, 18, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
    ];
    let mut i = 0;
    while i < base.len() {
        out[i] = base[i];
        i += 1;
    }
    let mut sig = 34;
    while sig <= 64 {
        out[i] = sig;
        i += 1;
        sig += 1;
    }
    out
};

/// The pipe's write end (−1: not installed).
static WRITE_END: AtomicI32 = AtomicI32::new(-1);
/// Whether a run of this process catches signals from outside now.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The host thread that runs the simulator (0: none).
static SIM_TID: AtomicI64 = AtomicI64::new(0);
/// Bit n − 1: signal n was caught and not yet taken.
static CAUGHT: AtomicU64 = AtomicU64::new(0);
/// Per signal: the sender's pid and uid (low and high halves).
static SENDER: [AtomicU64; 65] = [const { AtomicU64::new(0) }; 65];
/// Per signal: its `si_code`.
static CODE: [AtomicI32; 65] = [const { AtomicI32::new(0) }; 65];
/// Per signal: its `si_value` (a `sigqueue`'s).
static VALUE: [AtomicU64; 65] = [const { AtomicU64::new(0) }; 65];

/// The first real-time signal that comes from outside: those below are
/// standard (or the host C library's own, 32 and 33).
const FIRST_RT: i32 = 34;

/// Real-time signals caught and not taken, waiting at most at once.
pub const RT_RING: usize = 64;

/// One caught real-time signal: `sig` is set last (0 while its catcher
/// still writes it, or once it is taken).
struct RtSlot {
    sig: AtomicI32,
    code: AtomicI32,
    sender: AtomicU64,
    value: AtomicU64,
}

/// Real-time signals in the order they were caught: catchers (on any
/// host thread, at once) claim the slot at the tail, the simulator takes
/// them from the head.
static RT: [RtSlot; RT_RING] = [const {
    RtSlot {
        sig: AtomicI32::new(0),
        code: AtomicI32::new(0),
        sender: AtomicU64::new(0),
        value: AtomicU64::new(0),
    }
}; RT_RING];
static RT_HEAD: AtomicU32 = AtomicU32::new(0);
static RT_TAIL: AtomicU32 = AtomicU32::new(0);

/// Queues a caught real-time signal; `false` when [`RT_RING`] wait
/// already. Async-signal-safe: atomics only.
fn queue_rt(sig: i32, code: i32, sender: u64, value: u64) -> bool {
    let mut tail = RT_TAIL.load(Ordering::SeqCst);
    loop {
        if tail.wrapping_sub(RT_HEAD.load(Ordering::SeqCst)) as usize >= RT_RING {
            return false;
        }
        match RT_TAIL.compare_exchange(
            tail,
            tail.wrapping_add(1),
            Ordering::SeqCst,
            Ordering::SeqCst,
        ) {
            Ok(_) => break,
            Err(now) => tail = now,
        }
    }
    let slot = &RT[tail as usize % RT_RING];
    slot.code.store(code, Ordering::Relaxed);
    slot.sender.store(sender, Ordering::Relaxed);
    slot.value.store(value, Ordering::Relaxed);
    slot.sig.store(sig, Ordering::Release);
    true
}

/// Takes the queued real-time signals whose catchers have finished, in
/// order, into `out`.
fn take_rt(out: &mut Vec<SigInfo>) {
    let mut head = RT_HEAD.load(Ordering::SeqCst);
    while head != RT_TAIL.load(Ordering::SeqCst) {
        let slot = &RT[head as usize % RT_RING];
        let sig = slot.sig.load(Ordering::Acquire);
        if sig == 0 {
            // Claimed, still being written: taken at the next look (its
            // catcher writes the pipe after it).
            break;
        }
        out.push(SigInfo {
            signo: sig,
            code: slot.code.load(Ordering::Relaxed),
            word: slot.sender.load(Ordering::Relaxed),
            value: slot.value.load(Ordering::Relaxed),
        });
        slot.sig.store(0, Ordering::Relaxed);
        head = head.wrapping_add(1);
        RT_HEAD.store(head, Ordering::SeqCst);
    }
}

/// `si_code` of a signal one thread of this process sent another.
const SI_TKILL: i32 = -6;

/// The host's handler. Async-signal-safe: atomics, `write`, `gettid`,
/// `tgkill`; errno is kept for the code it interrupted.
extern "C" fn caught(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: errno is thread-local; the kernel passes a valid siginfo;
    // the calls are async-signal-safe.
    unsafe {
        let saved = *libc::__errno_location();
        let me = libc::syscall(libc::SYS_gettid);
        let pid = libc::getpid();
        let got = SigInfo::from_host(&*info);
        // A kill's or sigqueue's sender: si_pid, the union's low half.
        let forwarded = got.code == SI_TKILL && got.word as u32 as i32 == pid;
        if !forwarded && (1..=64).contains(&sig) {
            let i = sig as usize;
            if sig >= FIRST_RT {
                queue_rt(sig, got.code, got.word, got.value);
            } else {
                SENDER[i].store(got.word, Ordering::Relaxed);
                CODE[i].store(got.code, Ordering::Relaxed);
                VALUE[i].store(got.value, Ordering::Relaxed);
                CAUGHT.fetch_or(1 << (sig - 1), Ordering::SeqCst);
            }
            let fd = WRITE_END.load(Ordering::Relaxed);
            if fd >= 0 {
                libc::write(fd, [sig as u8].as_ptr() as *const _, 1);
            }
            let sim = SIM_TID.load(Ordering::Relaxed);
            if sim > 0 && sim != me {
                // End the simulator thread's host call too.
                libc::syscall(libc::SYS_tgkill, pid, sim, sig);
            }
        }
        *libc::__errno_location() = saved;
    }
}

/// The catching of signals from outside, for one run: the pipe's read
/// end and the host's dispositions from before, restored on drop.
#[derive(Debug)]
pub struct HostSignals {
    read: i32,
    saved: Vec<(i32, libc::sigaction)>,
    /// The signals of [`MANAGED`] the calling thread had blocked (bit
    /// `sig - 1`), which it catches while the run lasts and blocks again
    /// after.
    blocked_before: u64,
}

impl HostSignals {
    /// Installs the catching for a program whose actions are `actions`
    /// (handler, flags, mask per signal, as `rt_sigaction` set them), run
    /// by the calling thread. `None` if another run of this process
    /// catches them already (a process has one set of dispositions: a
    /// library running several simulators at once leaves signals from
    /// outside to the host for all but the first), or if the host gives no
    /// pipe; signals from outside then keep the host's dispositions.
    pub fn install(actions: &[[u64; 3]; 65]) -> Option<HostSignals> {
        if ACTIVE.swap(true, Ordering::SeqCst) {
            return None;
        }
        let mut p = [0i32; 2];
        // SAFETY: `p` has room for two descriptors.
        if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
            ACTIVE.store(false, Ordering::SeqCst);
            return None;
        }
        let old = WRITE_END.swap(p[1], Ordering::SeqCst);
        if old >= 0 {
            // SAFETY: a write end no reader is left for.
            unsafe { libc::close(old) };
        }
        // SAFETY: plain call.
        SIM_TID.store(unsafe { libc::syscall(libc::SYS_gettid) }, Ordering::SeqCst);
        let mut saved = Vec::with_capacity(MANAGED.len());
        for sig in MANAGED {
            saved.push((sig, host_action(sig)));
            follow(sig, actions[sig as usize]);
        }
        // The host catches what the program blocks (the program's mask is
        // the simulator's), so that a signal it blocks waits as pending
        // in the simulator: one coprof was started with blocked
        // ([`InheritedSignals`]) is caught from now on.
        let old = set_thread_mask(libc::SIG_UNBLOCK, managed_bits());
        let blocked_before = mask_bits(&old) & managed_bits();
        Some(HostSignals {
            read: p[0],
            saved,
            blocked_before,
        })
    }

    /// The descriptor that is readable once a signal was caught.
    pub fn fd(&self) -> i32 {
        self.read
    }

    /// Whether a signal was caught and not yet taken.
    pub fn news(&self) -> bool {
        CAUGHT.load(Ordering::SeqCst) != 0
            || RT_HEAD.load(Ordering::SeqCst) != RT_TAIL.load(Ordering::SeqCst)
    }

    /// The signals caught since the last look, with what their senders
    /// sent: the standard ones lowest first, then every real-time one in
    /// the order it came; the pipe drained.
    pub fn take(&self) -> Vec<SigInfo> {
        let mut buf = [0u8; 64];
        // SAFETY: reads into a local buffer from a non-blocking pipe.
        while unsafe { libc::read(self.read, buf.as_mut_ptr() as *mut _, buf.len()) } > 0 {}
        let caught = CAUGHT.swap(0, Ordering::SeqCst);
        let mut out: Vec<SigInfo> = (1..=64)
            .filter(|sig| caught & (1 << (sig - 1)) != 0)
            .map(|sig| SigInfo {
                signo: sig,
                code: CODE[sig as usize].load(Ordering::Relaxed),
                word: SENDER[sig as usize].load(Ordering::Relaxed),
                value: VALUE[sig as usize].load(Ordering::Relaxed),
            })
            .collect();
        take_rt(&mut out);
        out
    }

    /// Ends the catching in a forked child, whose signals are blocked
    /// ([`block`]): the parent's pipe is closed and what it caught but had
    /// not taken forgotten (the child installs its own catching before it
    /// unblocks them), and its dispositions stay.
    pub fn forget_in_child(mut self) {
        self.saved.clear();
        self.blocked_before = 0;
        CAUGHT.store(0, Ordering::SeqCst);
        for slot in &RT {
            slot.sig.store(0, Ordering::SeqCst);
        }
        RT_HEAD.store(RT_TAIL.load(Ordering::SeqCst), Ordering::SeqCst);
        ACTIVE.store(false, Ordering::SeqCst);
        let old = WRITE_END.swap(-1, Ordering::SeqCst);
        if old >= 0 {
            // SAFETY: this process's copy of the parent's write end.
            unsafe { libc::close(old) };
        }
    }
}

impl Drop for HostSignals {
    fn drop(&mut self) {
        for (sig, before) in &self.saved {
            // SAFETY: restoring a disposition read at install.
            unsafe { libc::sigaction(*sig, before, std::ptr::null_mut()) };
        }
        if self.blocked_before != 0 {
            set_thread_mask(libc::SIG_BLOCK, self.blocked_before);
        }
        if !self.saved.is_empty() {
            let old = WRITE_END.swap(-1, Ordering::SeqCst);
            if old >= 0 {
                // SAFETY: the write end this value's install made.
                unsafe { libc::close(old) };
            }
            SIM_TID.store(0, Ordering::SeqCst);
            CAUGHT.store(0, Ordering::SeqCst);
            ACTIVE.store(false, Ordering::SeqCst);
        }
        // SAFETY: the read end this value owns.
        unsafe { libc::close(self.read) };
    }
}

/// Blocks every signal that can come from outside in the calling thread,
/// returning the mask to restore: around a fork, so that a signal sent to
/// the child before it catches signals for itself waits in the host
/// kernel instead of being lost.
pub fn block() -> libc::sigset_t {
    set_thread_mask(libc::SIG_BLOCK, managed_bits())
}

/// [`MANAGED`] as a mask (bit `sig - 1`).
fn managed_bits() -> u64 {
    MANAGED.iter().fold(0, |m, sig| m | 1 << (sig - 1))
}

/// Restores the calling thread's mask from before [`block`] or
/// [`mask_for_exec`].
pub fn unblock(old: &libc::sigset_t) {
    // SAFETY: a mask pthread_sigmask gave.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old, std::ptr::null_mut()) };
}

/// What the host does with `sig` for a program whose action is `action`.
#[derive(Debug, PartialEq, Eq)]
enum Disposition {
    Catch,
    Ignore,
    Default,
}

fn disposition(sig: i32, action: [u64; 3]) -> Disposition {
    match action[0] {
        SIG_IGN => Disposition::Ignore,
        SIG_DFL => match sig {
            // Ignored, continued or stopped by default: the host's default
            // does the same to the whole process.
            17 | 18 | 20..=23 | 28 => Disposition::Default,
            _ => Disposition::Catch,
        },
        _ => Disposition::Catch,
    }
}

/// Sets the host's disposition of `sig` after the program's `action`
/// (nothing while no run catches signals, or for a signal left to the
/// host). Only the run that holds the [`HostSignals`] may call it. For
/// SIGCHLD, SA_NOCLDSTOP and SA_NOCLDWAIT are followed too: a child that
/// stops or goes on sends SIGCHLD unless the program said not to.
pub fn follow(sig: i32, action: [u64; 3]) {
    if WRITE_END.load(Ordering::SeqCst) < 0 || !MANAGED.contains(&sig) {
        return;
    }
    const SA_NOCLDSTOP: u64 = 1;
    const SA_NOCLDWAIT: u64 = 2;
    // SAFETY: a zeroed sigaction is valid; the handler is
    // async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = match disposition(sig, action) {
            Disposition::Ignore => libc::SIG_IGN,
            Disposition::Default => libc::SIG_DFL,
            Disposition::Catch => {
                sa.sa_flags = libc::SA_SIGINFO;
                caught as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                    as usize
            }
        };
        if sig == libc::SIGCHLD {
            if action[1] & SA_NOCLDSTOP != 0 {
                sa.sa_flags |= libc::SA_NOCLDSTOP;
            }
            if action[1] & SA_NOCLDWAIT != 0 {
                sa.sa_flags |= libc::SA_NOCLDWAIT;
            }
        }
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_follows_the_programs_action() {
        let handler = [0x1234, 0, 0];
        assert_eq!(disposition(2, [SIG_DFL, 0, 0]), Disposition::Catch);
        assert_eq!(disposition(2, [SIG_IGN, 0, 0]), Disposition::Ignore);
        assert_eq!(disposition(2, handler), Disposition::Catch);
        // Stop, continue and ignore by default stay the host's.
        for sig in [17, 18, 20, 21, 22, 23, 28] {
            assert_eq!(disposition(sig, [SIG_DFL, 0, 0]), Disposition::Default);
            assert_eq!(disposition(sig, handler), Disposition::Catch);
        }
        // Faults, SIGPIPE, SIGKILL, SIGSTOP and the C library's own
        // real-time signals are never the program's to take from outside.
        for sig in [4, 5, 7, 8, 9, 11, 13, 19, 31, 32, 33] {
            assert!(!MANAGED.contains(&sig), "{sig}");
        }
        assert!(MANAGED.contains(&64) && MANAGED.contains(&34) && MANAGED.contains(&2));
    }

    #[test]
    fn pending_signals_cross_an_exec_on_the_thread_with_what_they_were_sent_with() {
        // A real-time signal no other test sends, blocked on this thread.
        let sig = 44;
        let old = set_thread_mask(libc::SIG_BLOCK, 1 << (sig - 1));
        let first = SigInfo {
            signo: sig,
            code: crate::signal::code::SI_QUEUE,
            word: 77 | 5 << 32,
            value: 42,
        };
        let second = SigInfo { value: 43, ..first };
        // SIGUSR1 is not blocked here: not made pending, or it would
        // kill the test.
        let usr1 = SigInfo {
            signo: libc::SIGUSR1,
            ..first
        };
        let carried = pend_for_exec(&[first, usr1, second]);
        assert_eq!(carried, 1 << (sig - 1));
        // What a new simulator finds as it starts: both instances, in order.
        assert_eq!(inherited_now().pending, [first, second]);
        // After an exec that failed, taken back off the thread.
        take_back(pend_for_exec(&[first]));
        assert_eq!(inherited_now().pending, []);
        unblock(&old);
    }

    #[test]
    fn a_signal_from_outside_is_caught_once_per_process_and_the_host_restored() {
        let disposition = |sig| host_action(sig).sa_sigaction;
        // What the host had, to be restored: SIGINT is ignored already in
        // a test run in the background by a shell without job control.
        let (winch, int) = (disposition(libc::SIGWINCH), disposition(libc::SIGINT));
        let mut actions = [[SIG_DFL, 0, 0]; 65];
        actions[libc::SIGUSR2 as usize] = [0x1000, 0, 0];
        actions[libc::SIGWINCH as usize] = [SIG_IGN, 0, 0];
        let caught = HostSignals::install(&actions).expect("installs");
        // One run of a process catches at a time.
        assert!(HostSignals::install(&actions).is_none());
        assert!(!caught.news());
        // SAFETY: plain calls; SIGUSR2 is caught now, not fatal.
        let me = unsafe {
            libc::kill(libc::getpid(), libc::SIGUSR2);
            libc::getpid()
        };
        let start = std::time::Instant::now();
        while !caught.news() && start.elapsed() < std::time::Duration::from_secs(10) {
            std::thread::yield_now();
        }
        let mut p = [libc::pollfd {
            fd: caught.fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        // The byte follows the note (a waiter woken by it finds the note).
        assert_eq!(
            crate::syscall::host_poll(&mut p, Some(std::time::Duration::from_secs(10))),
            1
        );
        let infos = caught.take();
        assert_eq!(infos.len(), 1);
        assert_eq!(infos[0].signo, libc::SIGUSR2);
        assert_eq!(infos[0].code, 0, "SI_USER");
        assert_eq!(infos[0].word as u32, me as u32, "the sender's pid");
        assert!(!caught.news() && caught.take().is_empty());
        assert_eq!(disposition(libc::SIGWINCH), libc::SIG_IGN);
        assert!(
            ![libc::SIG_DFL, libc::SIG_IGN].contains(&disposition(libc::SIGINT)),
            "caught: its default kills"
        );
        drop(caught);
        assert_eq!(disposition(libc::SIGWINCH), winch);
        assert_eq!(disposition(libc::SIGINT), int);
        assert!(HostSignals::install(&actions).is_some(), "free again");
    }
}
