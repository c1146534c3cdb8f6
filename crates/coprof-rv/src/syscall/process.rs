//! The process and its threads: exits, thread ids and robust lists,
//! `rseq`, resource limits, ids, scheduling, resource use, futexes,
//! `clone` of threads and processes, `execve`, and waits for children.

use super::{
    clone_flags, instant_at, put_struct, read_timespec, ret, CloneArgs, Kernel, Outcome, EFAULT,
    EINVAL, ESRCH,
};
use crate::error::SimError;
use crate::mem::{perm, Memory};
use crate::sysno as nr;

/// The calls this module answers.
pub(super) const CALLS: &[u64] = &[
    nr::EXIT,
    nr::EXIT_GROUP,
    nr::SET_TID_ADDRESS,
    nr::SET_ROBUST_LIST,
    nr::RSEQ,
    nr::PRLIMIT64,
    nr::GETRLIMIT,
    nr::GETPID,
    nr::GETTID,
    nr::GETPPID,
    nr::GETUID,
    nr::GETEUID,
    nr::GETGID,
    nr::GETEGID,
    nr::SCHED_YIELD,
    nr::SCHED_GETAFFINITY,
    nr::SYSINFO,
    nr::TIMES,
    nr::GETRUSAGE,
    nr::FUTEX,
    nr::CLONE,
    nr::CLONE3,
    nr::EXECVE,
    nr::WAIT4,
    nr::WAITID,
];

impl Kernel {
    /// One of [`CALLS`], number `a[7]`, made at `pc`.
    pub(super) fn process_call(
        &mut self,
        mem: &mut Memory,
        a: [u64; 8],
        pc: u64,
    ) -> Result<Outcome, SimError> {
        let num = a[7];
        let r: i64 = match num {
            nr::EXIT => return Ok(Outcome::ThreadExit((a[0] & 0xff) as i32)),
            nr::EXIT_GROUP => return Ok(Outcome::Exit((a[0] & 0xff) as i32)),
            nr::SET_TID_ADDRESS => {
                self.clear_tid = a[0];
                self.tid
            }
            nr::SET_ROBUST_LIST => 0,
            nr::RSEQ => {
                // Registration (one per thread): the kernel fills
                // cpu_id_start and cpu_id; the simulator's one hart is
                // CPU 0.
                if a[2] & 1 != 0 {
                    self.rseq = 0;
                    0
                } else if self.rseq != 0 {
                    -(libc::EBUSY as i64)
                } else if a[1] < 32 {
                    EINVAL
                } else {
                    tryf!(mem.slice_mut(a[0], 8)).copy_from_slice(&[0; 8]);
                    self.rseq = a[0];
                    0
                }
            }
            nr::PRLIMIT64 | nr::GETRLIMIT => {
                // struct rlimit64 is the same on both sides.
                let (res, new, old) = if num == nr::GETRLIMIT {
                    (a[0], 0, a[1])
                } else {
                    (a[1], a[2], a[3])
                };
                // Linux's order: the new limit read, the process found, the
                // limit set, the old one written back.
                let newp = if new != 0 {
                    tryf!(mem.slice(new, 16, perm::R)).as_ptr()
                } else {
                    std::ptr::null()
                };
                if num == nr::PRLIMIT64 && !self.is_me(a[0]) {
                    return Ok(Outcome::Ret(ESRCH));
                }
                let mut was = [0u8; 16];
                let oldp = if old != 0 {
                    was.as_mut_ptr()
                } else {
                    std::ptr::null_mut()
                };
                // SAFETY: pointers are null or 16 valid bytes.
                let r =
                    ret(unsafe { libc::syscall(libc::SYS_prlimit64, 0, res as u32, newp, oldp) });
                if r == 0 && old != 0 {
                    tryf!(mem.slice_mut(old, 16)).copy_from_slice(&was);
                }
                r
            }
            // SAFETY (the four below): plain calls without arguments.
            nr::GETPID => self.pids.own(),
            nr::GETTID => self.tid,
            nr::GETPPID => self.pids.seen((unsafe { libc::getppid() }) as i64),
            nr::GETUID => (unsafe { libc::getuid() }) as i64,
            nr::GETEUID => (unsafe { libc::geteuid() }) as i64,
            nr::GETGID => (unsafe { libc::getgid() }) as i64,
            nr::GETEGID => (unsafe { libc::getegid() }) as i64,
            nr::SCHED_YIELD => return Ok(Outcome::Yield),
            nr::SCHED_GETAFFINITY if !self.is_me(a[0]) => ESRCH,
            nr::SCHED_GETAFFINITY => {
                let buf = tryf!(mem.slice_mut(a[2], a[1]));
                // SAFETY: valid buffer.
                ret(unsafe {
                    libc::syscall(libc::SYS_sched_getaffinity, 0, buf.len(), buf.as_mut_ptr())
                })
            }
            nr::SYSINFO | nr::TIMES | nr::GETRUSAGE => {
                // struct sysinfo, tms and rusage agree between the two
                // 64-bit ABIs.
                let (len, ptr) = match num {
                    nr::SYSINFO => (112, a[0]),
                    nr::TIMES => (32, a[0]),
                    _ => (144, a[1]),
                };
                let p = if ptr != 0 {
                    tryf!(mem.slice_mut(ptr, len)).as_mut_ptr()
                } else {
                    std::ptr::null_mut()
                };
                // SAFETY: null (times) or a buffer of the structure's size.
                ret(unsafe {
                    match num {
                        nr::SYSINFO => libc::syscall(libc::SYS_sysinfo, p),
                        nr::TIMES => libc::syscall(libc::SYS_times, p),
                        _ => libc::syscall(libc::SYS_getrusage, a[0] as i32, p),
                    }
                })
            }
            nr::FUTEX => {
                // WAIT, WAKE and their bitset forms; the simulator parks
                // and wakes the threads (crate::threads). Checked in
                // Linux's order: FUTEX_CLOCK_REALTIME only on a bitset
                // wait, a non-empty bitset, an aligned word.
                const PRIVATE: u64 = 128;
                const CLOCK_REALTIME: u64 = 256;
                let cmd = a[1] as u32 as u64 & !(PRIVATE | CLOCK_REALTIME);
                let bitset = matches!(cmd, 9 | 10);
                if !matches!(cmd, 0 | 1 | 9 | 10) || (a[1] & CLOCK_REALTIME != 0 && cmd != 9) {
                    return Ok(Outcome::Ret(-(libc::ENOSYS as i64)));
                }
                if (bitset && a[5] as u32 == 0) || !a[0].is_multiple_of(4) {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let bitset = if bitset { a[5] as u32 } else { u32::MAX };
                match cmd {
                    0 | 9 => {
                        // The timeout is read before the word, as Linux's
                        // futex_init_timeout does: FUTEX_WAIT's is
                        // relative, FUTEX_WAIT_BITSET's an absolute time
                        // of CLOCK_MONOTONIC or, with the flag, of
                        // CLOCK_REALTIME.
                        let until = match a[3] {
                            0 => None,
                            at => {
                                let t = errno!(read_timespec(mem, at));
                                Some(match cmd {
                                    0 => std::time::Instant::now() + t,
                                    _ if a[1] & CLOCK_REALTIME != 0 => {
                                        instant_at(libc::CLOCK_REALTIME, t)
                                    }
                                    _ => instant_at(libc::CLOCK_MONOTONIC, t),
                                })
                            }
                        };
                        let v = tryf!(mem.load::<4>(a[0]));
                        if v as u32 != a[2] as u32 {
                            -(libc::EAGAIN as i64)
                        } else {
                            // The simulator parks the thread until a wake
                            // or the timeout; an untimed wait that no
                            // other thread can end is a deadlock.
                            return Ok(Outcome::FutexWait {
                                addr: a[0],
                                val: v as u32,
                                bitset,
                                until,
                            });
                        }
                    }
                    _ => {
                        return Ok(Outcome::FutexWake {
                            addr: a[0],
                            count: a[2].min(i32::MAX as u64) as u32,
                            bitset,
                        })
                    }
                }
            }
            nr::CLONE | nr::CLONE3 => {
                // RV64 clone(flags, stack, parent_tid, tls, child_tid);
                // clone3(struct clone_args *, size): flags, pidfd,
                // child_tid, parent_tid, exit_signal, stack, stack_size,
                // tls, … (include/uapi/linux/sched.h).
                let args = if num == nr::CLONE {
                    CloneArgs {
                        flags: a[0],
                        stack: a[1],
                        parent_tid: a[2],
                        tls: a[3],
                        child_tid: a[4],
                        exit_signal: a[0] & clone_flags::CSIGNAL,
                    }
                } else {
                    if a[1] < 64 || a[1] > 4096 {
                        return Ok(Outcome::Ret(EINVAL));
                    }
                    let raw = tryf!(mem.slice(a[0], 64, perm::R));
                    let w = |i: usize| {
                        u64::from_le_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap_or_default())
                    };
                    CloneArgs {
                        flags: w(0),
                        stack: if w(5) != 0 { w(5) + w(6) } else { 0 },
                        parent_tid: w(3),
                        tls: w(7),
                        child_tid: w(2),
                        exit_signal: w(4),
                    }
                };
                return self.clone_outcome(args, num, pc);
            }
            nr::EXECVE => return self.execve(mem, a, pc),
            nr::WAIT4 => {
                // wait4(pid, wstatus, options, rusage): the host's, since a
                // child is a host process; the status and `struct rusage`
                // have the same layout on RV64 and x86-64.
                let mut status = 0i32;
                // SAFETY: an all-zero rusage is valid.
                let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
                let pid = self.pids.host(a[0] as i32 as i64) as i32;
                // SAFETY: both pointers are to locals.
                let r = unsafe { libc::wait4(pid, &mut status, a[2] as i32, &mut usage) };
                if r > 0 {
                    if a[1] != 0 {
                        tryf!(mem.store::<4>(a[1], status as u32 as u64));
                    }
                    if a[3] != 0 {
                        errno!(put_struct(mem, a[3], &usage));
                    }
                    self.pids.seen(r as i64)
                } else {
                    ret(r as i64)
                }
            }
            nr::WAITID => {
                // waitid(idtype, id, infop, options, rusage): the host's,
                // its siginfo and rusage copied as they are (same layout).
                // SAFETY: all-zero siginfo and rusage are valid.
                let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
                let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
                // P_PID's and P_PGID's id is a process's or group's.
                let id = match a[0] as u32 {
                    libc::P_PID | libc::P_PGID => self.pids.host(a[1] as i32 as i64) as i32,
                    _ => a[1] as i32,
                };
                // SAFETY: the raw call, with pointers to locals.
                let r = unsafe {
                    libc::syscall(
                        libc::SYS_waitid,
                        a[0] as i32,
                        id,
                        &mut info as *mut libc::siginfo_t,
                        a[3] as i32,
                        &mut usage as *mut libc::rusage,
                    )
                };
                if r == 0 {
                    if a[2] != 0 {
                        errno!(put_struct(mem, a[2], &info));
                        // si_pid, the child's (0: none), as the program sees it.
                        self.pids.swap_raw(tryf!(mem.slice_mut(a[2] + 16, 4)));
                    }
                    if a[4] != 0 {
                        errno!(put_struct(mem, a[4], &usage));
                    }
                }
                ret(r)
            }
            _ => unreachable!("process_call of a call not in CALLS"),
        };
        Ok(Outcome::Ret(r))
    }

    /// What a `clone` or `clone3` with `args` makes: a thread (CLONE_VM |
    /// CLONE_SIGHAND | CLONE_THREAD, as `pthread_create` asks), or a
    /// process with a copy of the address space (`fork`: no CLONE_VM) or
    /// whose parent waits for its exec or exit (`posix_spawn`'s CLONE_VM |
    /// CLONE_VFORK, which a copy serves as well, see [`crate::sim`]'s
    /// `fork`). Anything that would share more between two processes
    /// (memory without CLONE_VFORK, descriptors, namespaces) stops the run,
    /// naming the flags.
    fn clone_outcome(&self, args: CloneArgs, num: u64, pc: u64) -> Result<Outcome, SimError> {
        use clone_flags as cf;
        let thread = cf::VM | cf::SIGHAND | cf::THREAD;
        if args.flags & thread == thread {
            return Ok(Outcome::Clone(args));
        }
        let process = cf::CSIGNAL
            | cf::VM
            | cf::VFORK
            | cf::SETTLS
            | cf::PARENT_SETTID
            | cf::CHILD_SETTID
            | cf::CHILD_CLEARTID
            | cf::CLEAR_SIGHAND;
        let shares_memory = args.flags & cf::VM != 0 && args.flags & cf::VFORK == 0;
        let signal_ok = matches!(args.exit_signal, 0 | 17);
        if args.flags & !process == 0 && !shares_memory && signal_ok {
            return Ok(Outcome::Fork(args));
        }
        Err(SimError::Unsupported {
            what: format!(
                "{} (system call {num}) with flags {:#x} and exit signal {}: coprof makes threads \
                 (CLONE_VM | CLONE_SIGHAND | CLONE_THREAD) and processes that share nothing \
                 but what fork and vfork share",
                nr::name(num),
                args.flags,
                args.exit_signal
            ),
            pc,
        })
    }
}
