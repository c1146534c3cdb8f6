//! Signals: actions, masks, pending sets, the alternate stack,
//! `rt_sigreturn`, `rt_sigsuspend`, `rt_sigtimedwait`, and signals sent
//! with `kill`, `tgkill`, `tkill` and `rt_sigqueueinfo` to the program
//! itself or, through the host, to other processes.

use super::{
    read_timespec, ret, Blocked, Kernel, Outcome, EFAULT, EINVAL, ESRCH, NO_SIGNAL_CAN_COME,
    SIGSET_BYTES,
};
use crate::error::SimError;
use crate::host_signals;
use crate::mem::{perm, Memory};
use crate::signal::{code, SigInfo};
use crate::sysno as nr;

/// The calls this module answers.
pub(super) const CALLS: &[u64] = &[
    nr::RT_SIGACTION,
    nr::RT_SIGPROCMASK,
    nr::RT_SIGPENDING,
    nr::SIGALTSTACK,
    nr::RT_SIGRETURN,
    nr::RT_SIGSUSPEND,
    nr::RT_SIGTIMEDWAIT,
    nr::KILL,
    nr::TGKILL,
    nr::TKILL,
    nr::RT_SIGQUEUEINFO,
    nr::RT_TGSIGQUEUEINFO,
];

impl Kernel {
    /// One of [`CALLS`], number `a[7]`, made at `pc`.
    pub(super) fn signal_call(
        &mut self,
        mem: &mut Memory,
        a: [u64; 8],
        pc: u64,
    ) -> Result<Outcome, SimError> {
        let num = a[7];
        let r: i64 = match num {
            // The three calls below check what Linux checks, in its order
            // (kernel/signal.c): the size of the signal set first, then
            // the new value read, then its validity, then the old value
            // written back.
            nr::RT_SIGACTION => {
                let sig = a[0] as usize;
                if a[3] != SIGSET_BYTES {
                    return Ok(Outcome::Ret(EINVAL));
                }
                // RV64 struct sigaction: handler, flags, mask (no restorer).
                let new = match a[1] {
                    0 => None,
                    at => {
                        let raw = tryf!(mem.slice(at, 24, perm::R));
                        let w = |i: usize| {
                            u64::from_le_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap_or_default())
                        };
                        Some([w(0), w(1), w(2)])
                    }
                };
                if sig == 0 || sig > 64 || ((sig == 9 || sig == 19) && new.is_some()) {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let old = self.signals.actions[sig];
                if let Some(new) = new {
                    self.signals.actions[sig] = new;
                    if self.outside.is_some() {
                        host_signals::follow(sig as i32, new);
                    }
                }
                if a[2] != 0 {
                    let buf = tryf!(mem.slice_mut(a[2], 24));
                    for (i, v) in old.iter().enumerate() {
                        buf[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
                    }
                }
                0
            }
            nr::RT_SIGPROCMASK => {
                if a[3] != SIGSET_BYTES {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let old = self.signals.mask;
                if a[1] != 0 {
                    let set = tryf!(mem.load::<8>(a[1]));
                    let mask = match a[0] {
                        0 => old | set,
                        1 => old & !set,
                        2 => set,
                        _ => return Ok(Outcome::Ret(EINVAL)),
                    };
                    self.signals.set_mask(mask);
                }
                if a[2] != 0 {
                    tryf!(mem.slice_mut(a[2], 8)).copy_from_slice(&old.to_le_bytes());
                }
                // A signal this unblocks is delivered on the way back
                // (Simulator::deliver_pending).
                0
            }
            nr::RT_SIGPENDING => {
                // Signals raised while blocked wait here (kill/tgkill above).
                if a[1] > SIGSET_BYTES {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let set = self.signals.pending().to_le_bytes();
                tryf!(mem.slice_mut(a[0], a[1])).copy_from_slice(&set[..a[1] as usize]);
                0
            }
            nr::SIGALTSTACK => {
                // Linux's order (kernel/signal.c, do_sigaltstack): the new
                // stack read and judged, then the old one written back,
                // its flags saying whether the stack pointer is on it.
                let [old_sp, _, old_size] = self.signals.altstack;
                let old = [old_sp, self.signals.altstack_flags(self.sp), old_size];
                if a[0] != 0 {
                    let raw = tryf!(mem.slice(a[0], 24, perm::R));
                    let w = |i: usize| {
                        u64::from_le_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap_or_default())
                    };
                    let (sp, flags, size) = (w(0), w(1) & 0xffff_ffff, w(2));
                    errno!(self.signals.set_altstack(sp, flags, size, self.sp));
                }
                if a[1] != 0 {
                    let buf = tryf!(mem.slice_mut(a[1], 24));
                    for (i, v) in old.iter().enumerate() {
                        buf[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
                    }
                }
                0
            }
            nr::RT_SIGRETURN => return Ok(Outcome::Sigreturn),
            nr::RT_SIGSUSPEND => {
                // kernel/signal.c, sigsuspend: the mask replaced until a
                // signal comes; the first handler's frame saves the old
                // one. Only the program itself sends signals here, so one
                // must be pending already.
                if a[1] != SIGSET_BYTES {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let set = tryf!(mem.load::<8>(a[0]));
                let old = self.signals.mask;
                self.signals.set_mask(set);
                if !self.signals.wakes() && self.beside_threads() {
                    // Another thread may send one: wait off the hart.
                    let mask = self.signals.mask;
                    self.signals.set_mask(old);
                    return Ok(Outcome::Block(Blocked {
                        mask,
                        ..Blocked::default()
                    }));
                }
                // Only ITIMER_REAL and signals from outside can come while
                // the program waits: sleep until one does.
                while !self.signals.wakes() {
                    let wait = self.timers.until_real();
                    if wait.is_none() && self.outside.is_none() {
                        break;
                    }
                    self.nap(wait);
                }
                if !self.signals.wakes() {
                    self.signals.set_mask(old);
                    return Err(SimError::Unsupported {
                        what: format!(
                            "rt_sigsuspend with no pending signal that its mask lets through, \
                             {NO_SIGNAL_CAN_COME}"
                        ),
                        pc,
                    });
                }
                self.signals.saved_mask = Some(old);
                -(libc::EINTR as i64)
            }
            nr::RT_SIGTIMEDWAIT => {
                // Linux's order: the set's size, the set, the timeout and
                // its validity, then a pending signal of the set (blocked
                // or not) taken, its siginfo written.
                if a[3] != SIGSET_BYTES {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let set = tryf!(mem.load::<8>(a[0]));
                let timeout = match a[2] {
                    0 => None,
                    at => Some(errno!(read_timespec(mem, at))),
                };
                let deadline = self.deadline(timeout);
                loop {
                    if let Some(info) = self.signals.take_pending_in(set) {
                        self.timers.posix.delivered(&info);
                        if a[1] != 0 {
                            tryf!(mem.slice_mut(a[1], 128)).copy_from_slice(&info.bytes());
                        }
                        break info.signo as i64;
                    }
                    let what = "rt_sigtimedwait without a timeout for signals none of which \
                                is pending";
                    if let Some(end) = self.wait_for_signal(set, deadline, what, pc)? {
                        return Ok(end);
                    }
                }
            }
            nr::KILL | nr::TGKILL | nr::TKILL => {
                let me = self.pids.own();
                let (target, sig) = match num {
                    nr::KILL => (a[0] as i32 as i64, a[1]),
                    nr::TGKILL => (a[1] as i32 as i64, a[2]),
                    _ => (a[0] as i32 as i64, a[1]),
                };
                if sig > 64 {
                    EINVAL
                } else if !(if num == nr::KILL {
                    target == me || target == 0 || target == -1
                } else {
                    // A thread of this process.
                    self.tids.contains(&target)
                }) {
                    // Another process: the host's kill, as under qemu-user.
                    let host = self.pids.host(target) as i32;
                    // SAFETY: plain call.
                    ret(unsafe { libc::kill(host, sig as i32) } as i64)
                } else if sig == 0 {
                    0
                } else {
                    // Pending until the way back to the program, which
                    // delivers it unless it is blocked
                    // (Simulator::deliver_pending): the process's for
                    // kill, the thread's own for tkill and tgkill.
                    let sig = sig as i32;
                    let code = if num == nr::KILL {
                        code::SI_USER
                    } else {
                        code::SI_TKILL
                    };
                    let to = (num != nr::KILL).then_some(target);
                    self.send_own(SigInfo::sent(sig, code, &self.pids), to)
                }
            }
            nr::RT_SIGQUEUEINFO | nr::RT_TGSIGQUEUEINFO => {
                // rt_sigqueueinfo(tgid, sig, info), rt_tgsigqueueinfo(tgid,
                // tid, sig, info): `sigqueue` and `pthread_sigqueue`. The
                // siginfo is the sender's, but for its signal number; to
                // another process only a code below zero (not SI_TKILL)
                // may be sent (kernel/signal.c, do_rt_sigqueueinfo).
                let tg = num == nr::RT_TGSIGQUEUEINFO;
                let (pid, tid, sig, at) = if tg {
                    (a[0] as i32, Some(a[1] as i32 as i64), a[2], a[3])
                } else {
                    (a[0] as i32, None, a[1], a[2])
                };
                let mut raw = [0u8; 128];
                raw.copy_from_slice(tryf!(mem.slice(at, 128, perm::R)));
                raw[..4].copy_from_slice(&(sig as i32).to_le_bytes());
                let info = SigInfo::from_bytes(&raw);
                let me = self.pids.own() as i32;
                let host = self.pids.host(pid as i64) as i32;
                if sig > 64 || (tg && (pid <= 0 || tid.is_some_and(|t| t <= 0))) {
                    EINVAL
                } else if pid != me {
                    if info.code >= 0 || info.code == code::SI_TKILL {
                        -(libc::EPERM as i64)
                    } else {
                        // Another process: the host's, with the same siginfo.
                        // SAFETY: a 128-byte siginfo the call reads.
                        ret(unsafe {
                            match tid {
                                Some(t) => libc::syscall(
                                    libc::SYS_rt_tgsigqueueinfo,
                                    host,
                                    self.pids.host(t) as i32,
                                    sig as i32,
                                    raw.as_ptr(),
                                ),
                                None => libc::syscall(
                                    libc::SYS_rt_sigqueueinfo,
                                    host,
                                    sig as i32,
                                    raw.as_ptr(),
                                ),
                            }
                        })
                    }
                } else if tid.is_some_and(|t| !self.tids.contains(&t)) {
                    ESRCH
                } else if sig == 0 {
                    0
                } else {
                    self.send_own(info, tid)
                }
            }
            _ => unreachable!("signal_call of a call not in CALLS"),
        };
        Ok(Outcome::Ret(r))
    }

    /// Sends the process (`to` `None`) or one of its threads a signal:
    /// pending until the way back to the program, which delivers it unless
    /// it is blocked (the simulator's `deliver_pending`). 0, or EAGAIN
    /// when a real-time signal's queue is full.
    pub(super) fn send_own(&mut self, info: SigInfo, to: Option<i64>) -> i64 {
        let held = match to {
            None => self.signals.hold(info),
            Some(t) if t == self.tid => self.signals.hold_own(info),
            Some(t) => {
                self.directed.push((t, info));
                true
            }
        };
        if held {
            0
        } else {
            -(libc::EAGAIN as i64)
        }
    }
}
