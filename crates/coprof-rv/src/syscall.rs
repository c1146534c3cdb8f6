//! Linux system calls for an RV64 process and its threads.
//!
//! Calling convention (RISC-V psABI / Linux): number in a7, arguments in
//! a0–a5, result in a0, errors as −errno. Semantics and errno values are
//! Linux's: file calls go to the host kernel through the guest's own
//! descriptor table ([`FdTable`]) with guest buffers passed in place (the
//! guest memory is host memory); memory calls (`brk`, `mmap`, `munmap`,
//! `mprotect`, `mremap`, `madvise`) manage the guest address space;
//! signals sent by the process to itself run the handlers it installed
//! ([`crate::signal`]) or take their default action.
//! Structures whose RV64 layout differs from the host's (`struct stat`,
//! `struct sigaction`) are converted. An unknown call stops the run with
//! its number, name and PC, or returns ENOSYS when asked to.

use crate::error::SimError;
use crate::fdtable::{FdTable, MAX_FDS};
use crate::host_signals::{self, HostSignals};
use crate::itimer::{earlier, Itimers, Setting};
use crate::mem::{page_down, page_up, perm, Memory, PAGE};
use crate::posix_timer::{Clock, Notify, Spec};
use crate::process::MMAP_TOP;
use crate::random::GuestRandom;
use crate::signal::{code, SigInfo, Signals};
use crate::sysno as nr;
use crate::threads::Redo;
use std::ffi::CString;
use std::path::PathBuf;

/// What a system call did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Continue with this value in a0.
    Ret(i64),
    /// Continue with this value in a0; pre-decoded code may be stale.
    RetFlush(i64),
    /// The process exited with this status.
    Exit(i32),
    /// `rt_sigreturn`: restore the state saved in the signal frame at sp.
    Sigreturn,
    /// `clone` or `clone3` of a thread: start one.
    Clone(CloneArgs),
    /// `clone` or `clone3` of a process (`fork`, `vfork`, `posix_spawn`):
    /// a host process of its own ([`crate::sim`]'s `fork`).
    Fork(CloneArgs),
    /// The calling thread ends (`exit`) with this status.
    ThreadExit(i32),
    /// `futex` wait: the thread sleeps until a wake on the word at
    /// `addr` whose bitset meets `bitset`, or its timeout if it has one.
    FutexWait {
        /// The futex word.
        addr: u64,
        /// The value it held, which the wait was for.
        val: u32,
        /// Which wakes it takes.
        bitset: u32,
        /// The end of its timeout on the host's clock, if it has one.
        until: Option<std::time::Instant>,
    },
    /// `futex` wake: up to `count` threads waiting on `addr` whose bitset
    /// meets `bitset`; a0 gets how many.
    FutexWake {
        /// The futex word.
        addr: u64,
        /// Most threads to wake.
        count: u32,
        /// Which waiters it wakes.
        bitset: u32,
    },
    /// `sched_yield`: let another thread run.
    Yield,
    /// The call cannot finish before another thread (or the interval
    /// timer) does something: the thread leaves the hart, still in the
    /// call, which is made again when the wait is over.
    Block(Blocked),
    /// The call would wait, but a signal is there to take first: EINTR,
    /// or the call made again after the handler if its action has
    /// SA_RESTART (Linux's ERESTARTSYS).
    Interrupted,
}

/// What ends the wait of a call that blocked a thread ([`Outcome::Block`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// Host descriptors with the poll events they wait for: one ready ends
    /// the wait.
    pub fds: Vec<(i32, i16)>,
    /// Signals whose arrival ends the wait without a handler
    /// (`rt_sigtimedwait`'s set).
    pub set: u64,
    /// The mask while the call waits (`rt_sigsuspend`'s and `ppoll`'s
    /// own): a signal it lets through that runs a handler or kills
    /// interrupts the wait.
    pub mask: u64,
    /// Bytes a `write` already wrote before it had to wait: the call
    /// goes on with the rest and returns the sum.
    pub done: u64,
    /// The end of the call's timeout on the host's clock, if it has one:
    /// then the call is made again, finds no time left and returns as
    /// its timeout says.
    pub until: Option<std::time::Instant>,
    /// Whether the call waits for a host object that no descriptor shows
    /// (a System V semaphore or message queue): it then looks again at
    /// `until`, or as soon as another thread makes a System V call, and
    /// the end of its own timeout is `timeout_end`, not `until`.
    pub looks_again: bool,
    /// The end of the call's own timeout when it looks again.
    pub timeout_end: Option<std::time::Instant>,
}

impl Blocked {
    /// How the call is made again once its wait is over.
    pub(crate) fn redo(&self) -> Redo {
        Redo {
            done: self.done,
            until: if self.looks_again {
                self.timeout_end
            } else {
                self.until
            },
            looked: self.looks_again,
        }
    }
}

/// What `clone`/`clone3` asked for a new thread.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub struct CloneArgs {
    /// The clone flags.
    pub flags: u64,
    /// The new thread's stack pointer (0: the caller's).
    pub stack: u64,
    /// Where to write the new thread's id (CLONE_PARENT_SETTID).
    pub parent_tid: u64,
    /// Its thread pointer (CLONE_SETTLS).
    pub tls: u64,
    /// Where to write (CLONE_CHILD_SETTID) or clear and wake at its exit
    /// (CLONE_CHILD_CLEARTID) its id.
    pub child_tid: u64,
    /// The signal a new process's parent gets when it ends (`clone`'s
    /// low byte, `clone3`'s `exit_signal`).
    pub exit_signal: u64,
}

/// `clone` flags (include/uapi/linux/sched.h).
pub mod clone_flags {
    /// Share the address space.
    pub const VM: u64 = 0x100;
    /// Share signal handlers.
    pub const SIGHAND: u64 = 0x800;
    /// The parent sleeps until the child execs or exits (`vfork`).
    pub const VFORK: u64 = 0x4000;
    /// The exit signal (`clone` only; `clone3` has a field for it).
    pub const CSIGNAL: u64 = 0xff;
    /// A thread of the same process.
    pub const THREAD: u64 = 0x10000;
    /// Set the thread pointer.
    pub const SETTLS: u64 = 0x80000;
    /// Write the id to the parent's word.
    pub const PARENT_SETTID: u64 = 0x100000;
    /// Clear the child's word and wake it at exit.
    pub const CHILD_CLEARTID: u64 = 0x200000;
    /// Write the id to the child's word.
    pub const CHILD_SETTID: u64 = 0x1000000;
    /// Reset the child's signal handlers to their defaults (`clone3`
    /// only, Linux 5.5), as Python's `subprocess` and glibc's
    /// `posix_spawn` ask.
    pub const CLEAR_SIGHAND: u64 = 0x1_0000_0000;
}

const AT_FDCWD: i64 = -100;

/// Per-process kernel state.
pub struct Kernel {
    /// The guest's descriptors.
    pub fds: FdTable,
    /// Start of the program break.
    pub brk_start: u64,
    /// Current program break.
    pub brk: u64,
    /// Host path of the executable, for `/proc/self/exe`.
    pub exe: PathBuf,
    /// Absolute guest paths are looked up under this directory.
    pub root: Option<PathBuf>,
    /// Absolute guest paths are looked up under this directory first, and
    /// on the host when it has no such file ([`crate::sysroot`]).
    pub sysroot: Option<PathBuf>,
    /// The files whose code is mapped: the program, its dynamic loader and
    /// the libraries mapped executable, in the order they were mapped.
    pub modules: Vec<crate::process::Module>,
    /// The address ranges mapped from files, for `/proc/self/maps`.
    pub file_maps: proc_self::FileMaps,
    /// The program's own `/proc/self/cmdline`, `environ` and `auxv`.
    pub own_files: proc_self::OwnFiles,
    /// Return ENOSYS for unknown calls instead of stopping.
    pub enosys: bool,
    /// Dispositions, mask, pending signals and the alternate stack.
    pub signals: Signals,
    /// `setitimer`'s three timers.
    pub timers: Itimers,
    /// The stack pointer when the current system call was made (for
    /// `sigaltstack`, which asks whether it is on the alternate stack).
    pub sp: u64,
    /// The running thread's `rseq` area (0: none registered).
    pub rseq: u64,
    /// The running thread's id (the process id for the first thread).
    pub tid: i64,
    /// Ids of every live thread, the running one included.
    pub tids: Vec<i64>,
    /// The running thread's `set_tid_address` / CLONE_CHILD_CLEARTID word.
    pub clear_tid: u64,
    /// Signals sent by `tgkill` to threads off the hart, for the
    /// simulator to hand to them.
    pub directed: Vec<(i64, SigInfo)>,
    /// Unknown calls answered with ENOSYS (number, count).
    pub enosys_calls: Vec<(u64, u64)>,
    /// Where `getrandom`'s bytes come from.
    random: GuestRandom,
    /// The command that runs a RISC-V program in this simulator, for an
    /// `execve` of one ([`crate::Config::runner`]).
    pub runner: Option<Vec<std::ffi::OsString>>,
    /// The command that runs a RISC-V program a followed child `execve`s
    /// ([`crate::Simulator::follow_children`]); it becomes the child's
    /// [`Kernel::runner`] at the fork.
    pub follow_runner: Option<Vec<std::ffi::OsString>>,
    /// This process is a child the program forked that a
    /// [`crate::sim::ChildRun`] observes.
    pub followed_child: bool,
    /// How the process coprof watches may replace itself with a RISC-V
    /// program ([`crate::Simulator::follow_exec`]).
    pub exec_follower: Option<crate::sim::ExecFollower>,
    /// Nothing observes this process (a child the program forked, or a
    /// run with [`crate::Config::exec_in_place`]): it may replace itself
    /// with `execve`.
    pub unobserved: bool,
    /// Names threads gave themselves (`prctl(PR_SET_NAME)`), by id.
    names: Vec<(i64, [u8; 16])>,
    /// The catching of signals from outside while the program runs
    /// ([`crate::host_signals`]).
    pub outside: Option<HostSignals>,
    /// Child processes the program started (`fork`, `posix_spawn`).
    pub children_started: u64,
    /// Set by the simulator while a call that waited off the hart is made
    /// again: the end its timeout had ([`Redo::until`]).
    pub(crate) resumed_until: Option<std::time::Instant>,
    /// Set by the simulator while a call that waited off the hart on a
    /// System V semaphore or queue is made again ([`Redo::looked`]).
    pub(crate) resumed_look: bool,
    /// Set by a System V call that may have let another thread's wait
    /// on a semaphore or queue through: the simulator then makes the
    /// threads that wait so look again ([`Blocked::looks_again`]).
    pub(crate) sysv_moved: bool,
    /// System V shared memory segments attached, by address.
    sysv: sysv_ipc::Attached,
    /// The program's signalfds.
    signalfds: signalfd::SignalFds,
}

fn errno() -> i64 {
    -(std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO) as i64)
}

fn ret(r: i64) -> i64 {
    if r < 0 {
        errno()
    } else {
        r
    }
}

/// `ppoll` of the host's descriptors `fds`, waiting at most `wait` (for
/// ever when `None`): how many are ready, or −1 on an error.
pub(crate) fn host_poll(fds: &mut [libc::pollfd], wait: Option<std::time::Duration>) -> i32 {
    let ts = wait.map(|w| libc::timespec {
        tv_sec: w.as_secs() as i64,
        tv_nsec: w.subsec_nanos() as i64,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `fds` holds that many pollfds; `tsp` is null or a valid
    // timespec.
    unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            tsp,
            std::ptr::null(),
        )
    }
}

/// Whether the host says one of `fds` (descriptor, poll events) is ready
/// for its events (or in error, which the call reports), without waiting.
pub(crate) fn host_ready(fds: &[(i32, i16)]) -> bool {
    if fds.is_empty() {
        return false;
    }
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .map(|&(fd, events)| libc::pollfd {
            fd,
            events,
            revents: 0,
        })
        .collect();
    host_poll(&mut polled, Some(std::time::Duration::ZERO)) > 0
}

const EFAULT: i64 = -(libc::EFAULT as i64);
const EBADF: i64 = -(libc::EBADF as i64);
const EINVAL: i64 = -(libc::EINVAL as i64);
const ENOMEM: i64 = -(libc::ENOMEM as i64);
const ESRCH: i64 = -(libc::ESRCH as i64);
/// The `struct timespec` at `at` as a duration: EFAULT when it cannot be
/// read, EINVAL when negative or its nanoseconds are out of range
/// (`timespec64_valid`).
fn read_timespec(mem: &Memory, at: u64) -> Result<std::time::Duration, i64> {
    let t = mem.slice(at, 16, perm::R).map_err(|_| EFAULT)?;
    let sec = i64::from_le_bytes(t[..8].try_into().unwrap_or_default());
    let nsec = i64::from_le_bytes(t[8..].try_into().unwrap_or_default());
    if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
        return Err(EINVAL);
    }
    Ok(std::time::Duration::new(sec as u64, nsec as u32))
}

/// `struct itimerspec` at `at` (an interval, then a value, each a
/// timespec): EFAULT when it cannot be read, EINVAL when a time is
/// negative or its nanoseconds out of range.
fn read_itimerspec(mem: &Memory, at: u64) -> Result<Spec, i64> {
    Ok(Spec {
        interval: read_timespec(mem, at)?,
        value: read_timespec(mem, at + 16)?,
    })
}

/// Writes `spec` as a `struct itimerspec` at `at`.
fn write_itimerspec(mem: &mut Memory, at: u64, spec: Spec) -> Result<(), i64> {
    mem.slice_mut(at, 32).map_err(|_| EFAULT)?;
    write_timespec(mem, at, spec.interval)?;
    write_timespec(mem, at + 16, spec.value)
}

/// Writes `d` as a `struct timespec` at `at` (EFAULT when it cannot).
/// The moment on the host's monotonic clock at which `clock` reads `at`
/// (now, if it has passed): the end of an absolute timeout.
fn instant_at(clock: libc::clockid_t, at: std::time::Duration) -> std::time::Instant {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill; a clock the caller checked.
    unsafe { libc::clock_gettime(clock, &mut now) };
    let now = std::time::Duration::new(now.tv_sec.max(0) as u64, now.tv_nsec as u32);
    std::time::Instant::now() + at.saturating_sub(now)
}

fn write_timespec(mem: &mut Memory, at: u64, d: std::time::Duration) -> Result<(), i64> {
    let buf = mem.slice_mut(at, 16).map_err(|_| EFAULT)?;
    buf[..8].copy_from_slice(&d.as_secs().to_le_bytes());
    buf[8..].copy_from_slice(&(d.subsec_nanos() as u64).to_le_bytes());
    Ok(())
}

/// The guest range of `len` bytes at `at` as a host pointer, checked for
/// writing (`write`) or reading; null for address 0 (an optional
/// argument); EFAULT when the guest may not touch it so.
fn guest_ptr(mem: &mut Memory, at: u64, len: u64, write: bool) -> Result<*mut u8, i64> {
    if at == 0 {
        return Ok(std::ptr::null_mut());
    }
    if write {
        mem.slice_mut(at, len).map(|s| s.as_mut_ptr())
    } else {
        mem.slice(at, len, perm::R).map(|s| s.as_ptr() as *mut u8)
    }
    .map_err(|_| EFAULT)
}

/// The guest's array of `count` iovecs at `at` as host iovecs, each
/// segment checked for writing (`write`) or reading, up to the first that
/// cannot be: those segments, and whether that was all of them. EFAULT
/// when the array itself cannot be read.
fn host_iovecs(
    mem: &mut Memory,
    at: u64,
    count: u64,
    write: bool,
) -> Result<(Vec<libc::iovec>, bool), i64> {
    let raw = mem
        .slice(at, count * 16, perm::R)
        .map_err(|_| EFAULT)?
        .to_vec();
    let mut iov = Vec::with_capacity(count as usize);
    for c in raw.chunks_exact(16) {
        let base = u64::from_le_bytes(c[..8].try_into().unwrap_or_default());
        let len = u64::from_le_bytes(c[8..].try_into().unwrap_or_default());
        let p = if write {
            mem.slice_mut(base, len).map(|s| s.as_mut_ptr())
        } else {
            mem.slice(base, len, perm::R).map(|s| s.as_ptr() as *mut u8)
        };
        match p {
            Ok(p) => iov.push(libc::iovec {
                iov_base: p as *mut _,
                iov_len: len as usize,
            }),
            Err(_) => return Ok((iov, false)),
        }
    }
    Ok((iov, true))
}

/// Copies `v`, a host structure whose layout RV64 shares (`struct
/// rusage`, `siginfo_t`), to the guest at `at`.
fn put_struct<T: Copy>(mem: &mut Memory, at: u64, v: &T) -> Result<(), i64> {
    let n = std::mem::size_of::<T>();
    let buf = mem.slice_mut(at, n as u64).map_err(|_| EFAULT)?;
    // SAFETY: `v` is a plain C structure of `n` bytes.
    buf.copy_from_slice(unsafe { std::slice::from_raw_parts(v as *const T as *const u8, n) });
    Ok(())
}

/// `sigev_notify` values (include/uapi/asm-generic/siginfo.h).
const SIGEV_SIGNAL: i32 = 0;
const SIGEV_NONE: i32 = 1;
const SIGEV_THREAD_ID: i32 = 4;
/// `timer_settime`'s flag for an absolute time.
const TIMER_ABSTIME: u64 = 1;

/// Why a wait for a signal that nothing can send is a deadlock: the words
/// after the call's own in its message. Only a run that catches no
/// signals from outside ([`crate::host_signals`]) gets there.
const NO_SIGNAL_CAN_COME: &str = "no timer armed and signals from outside not caught in this run \
     (only the program itself sends signals here, so none will come: deadlock)";

/// Bytes of the kernel's signal set on RV64 (64 signals): the size every
/// rt_sig* call must be given.
const SIGSET_BYTES: u64 = 8;

macro_rules! tryf {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(_) => return Ok(Outcome::Ret(EFAULT)),
        }
    };
}

/// The value of a `Result<T, i64>`, or its error returned to the program
/// as the system call's result (a negative errno).
macro_rules! errno {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(e) => return Ok(Outcome::Ret(e)),
        }
    };
}

macro_rules! fd {
    ($k:expr, $fd:expr) => {
        match $k.fds.host($fd as i64) {
            Some(h) => h,
            None => return Ok(Outcome::Ret(EBADF)),
        }
    };
}

mod epoll;
mod exec;
mod host_calls;
mod hwprobe;
pub mod proc_self;
mod signalfd;
mod sockets;
mod sysv_ipc;

impl Kernel {
    /// State for a new process whose break starts at `brk`.
    pub fn new(
        brk: u64,
        exe: PathBuf,
        root: Option<PathBuf>,
        enosys: bool,
        random: GuestRandom,
    ) -> Kernel {
        Kernel {
            random,
            fds: FdTable::new(),
            brk_start: brk,
            brk,
            exe,
            root,
            sysroot: None,
            modules: Vec::new(),
            file_maps: proc_self::FileMaps::default(),
            own_files: proc_self::OwnFiles::default(),
            enosys,
            signals: Signals::default(),
            timers: Itimers::default(),
            sp: 0,
            rseq: 0,
            // SAFETY: plain call.
            tid: unsafe { libc::getpid() } as i64,
            tids: vec![unsafe { libc::getpid() } as i64],
            clear_tid: 0,
            directed: Vec::new(),
            enosys_calls: Vec::new(),
            runner: None,
            follow_runner: None,
            followed_child: false,
            exec_follower: None,
            unobserved: false,
            names: Vec::new(),
            outside: None,
            children_started: 0,
            resumed_until: None,
            resumed_look: false,
            sysv_moved: false,
            sysv: sysv_ipc::Attached::default(),
            signalfds: signalfd::SignalFds::default(),
        }
    }

    /// A guest path as a host path: absolute paths move under `--root`.
    fn path(&self, mem: &Memory, addr: u64) -> Result<CString, i64> {
        self.host_path(mem.read_cstr(addr, 4096).map_err(|_| EFAULT)?)
    }

    /// The guest path `bytes` as a host path (see [`path`](Self::path)).
    /// `/proc/self/exe` is the program's file, not coprof's.
    fn host_path(&self, bytes: Vec<u8>) -> Result<CString, i64> {
        if bytes == b"/proc/self/exe" {
            return CString::new(self.exe.as_os_str().as_encoded_bytes()).map_err(|_| EINVAL);
        }
        let mapped = match (&self.root, bytes.first()) {
            (None, Some(b'/')) if self.sysroot.is_some() => {
                match self
                    .sysroot
                    .as_deref()
                    .and_then(|s| crate::sysroot::under(s, &bytes))
                {
                    Some(p) => p.into_os_string().into_encoded_bytes(),
                    None => bytes,
                }
            }
            (Some(root), Some(b'/')) => {
                let mut p = root.as_os_str().as_encoded_bytes().to_vec();
                p.extend_from_slice(&bytes);
                p
            }
            _ => bytes,
        };
        CString::new(mapped).map_err(|_| EINVAL)
    }

    /// The host directory and path of an `*at` call's (dirfd, pathname)
    /// pair. The name is read first, as Linux does: a bad pointer is
    /// EFAULT even beside a bad descriptor.
    fn at_path(&self, mem: &Memory, dirfd: u64, addr: u64) -> Result<(i32, CString), i64> {
        let path = self.path(mem, addr)?;
        Ok((self.dirfd(dirfd)?, path))
    }

    fn dirfd(&self, fd: u64) -> Result<i32, i64> {
        let fd = fd as i32 as i64;
        if fd == AT_FDCWD {
            return Ok(libc::AT_FDCWD);
        }
        self.fds.host(fd).ok_or(EBADF)
    }

    /// Executes system call `a[7]` with arguments `a[0..6]`. A host call
    /// that a signal from outside interrupted (EINTR) ends with EINTR, or
    /// is restarted after the handler as SA_RESTART says, if the program
    /// takes that signal; otherwise it is made again, as Linux goes on with
    /// a call that an ignored or blocked signal does not concern. The
    /// waits that take signals themselves are left as they answer.
    pub fn syscall(&mut self, mem: &mut Memory, a: [u64; 8], pc: u64) -> Result<Outcome, SimError> {
        const OWN_WAITS: [u64; 8] = [
            nr::RT_SIGSUSPEND,
            nr::RT_SIGTIMEDWAIT,
            nr::PPOLL,
            nr::PSELECT6,
            nr::EPOLL_PWAIT,
            nr::EPOLL_PWAIT2,
            nr::NANOSLEEP,
            nr::CLOCK_NANOSLEEP,
        ];
        loop {
            let outcome = self.syscall_once(mem, a, pc)?;
            // The call may have sent, taken or blocked a signal.
            self.sync_signalfds();
            let interrupted = outcome == Outcome::Ret(-(libc::EINTR as i64))
                && self.outside.as_ref().is_some_and(HostSignals::news)
                && !OWN_WAITS.contains(&a[7]);
            if !interrupted {
                return Ok(outcome);
            }
            self.fire_timers();
            if self.signals.wakes() {
                return Ok(Outcome::Interrupted);
            }
        }
    }

    fn syscall_once(
        &mut self,
        mem: &mut Memory,
        a: [u64; 8],
        pc: u64,
    ) -> Result<Outcome, SimError> {
        let num = a[7];
        let r: i64 = match num {
            nr::READ => {
                let h = fd!(self, a[0]);
                if let Some(i) = self.signalfd_of(h) {
                    return self.read_signalfd(mem, i, h, a[1], a[2], pc);
                }
                let buf = tryf!(mem.slice_mut(a[1], a[2]));
                if let Some(wait) = self.must_wait(h, libc::POLLIN) {
                    return Ok(wait);
                }
                // SAFETY: buf is a valid writable guest range of that length.
                ret(unsafe { libc::read(h, buf.as_mut_ptr() as *mut _, buf.len()) } as i64)
            }
            nr::WRITE => {
                let h = fd!(self, a[0]);
                let buf = tryf!(mem.slice(a[1], a[2], perm::R));
                if self.tids.len() > 1 {
                    return Ok(self.write_beside_threads(h, buf));
                }
                // SAFETY: buf is a valid readable guest range.
                ret(unsafe { libc::write(h, buf.as_ptr() as *const _, buf.len()) } as i64)
            }
            nr::PREAD64 | nr::PWRITE64 => {
                let h = fd!(self, a[0]);
                if num == nr::PREAD64 {
                    let buf = tryf!(mem.slice_mut(a[1], a[2]));
                    // SAFETY: valid writable range.
                    ret(unsafe {
                        libc::pread(h, buf.as_mut_ptr() as *mut _, buf.len(), a[3] as i64)
                    } as i64)
                } else {
                    let buf = tryf!(mem.slice(a[1], a[2], perm::R));
                    // SAFETY: valid readable range.
                    ret(
                        unsafe { libc::pwrite(h, buf.as_ptr() as *const _, buf.len(), a[3] as i64) }
                            as i64,
                    )
                }
            }
            nr::READV | nr::WRITEV => {
                let h = fd!(self, a[0]);
                let n = a[2];
                if n > 1024 {
                    EINVAL
                } else {
                    let (iov, whole) = errno!(host_iovecs(mem, a[1], n, num == nr::READV));
                    // Linux copies segment by segment and stops at the
                    // first bad one: a short transfer of the good ones
                    // before it, EFAULT if there are none (as qemu-user and
                    // regular files do).
                    if !whole && !iov.iter().any(|v| v.iov_len > 0) {
                        return Ok(Outcome::Ret(EFAULT));
                    }
                    let events = if num == nr::READV {
                        libc::POLLIN
                    } else {
                        libc::POLLOUT
                    };
                    if let Some(wait) = self.must_wait(h, events) {
                        return Ok(wait);
                    }
                    // SAFETY: every iovec points into a validated guest range.
                    ret(unsafe {
                        if num == nr::READV {
                            libc::readv(h, iov.as_ptr(), iov.len() as i32)
                        } else {
                            libc::writev(h, iov.as_ptr(), iov.len() as i32)
                        }
                    } as i64)
                }
            }
            nr::OPENAT => {
                // The name is read once, first (a bad pointer is EFAULT
                // even beside a bad descriptor, as in `at_path`).
                let guest = errno!(mem.read_cstr(a[1], 4096).map_err(|_| EFAULT));
                let cloexec = a[2] as i32 & libc::O_CLOEXEC != 0;
                if let Some(file) = self.proc_self(mem, &guest, cloexec) {
                    let h = errno!(file);
                    return Ok(Outcome::Ret(self.install(h, 0)));
                }
                let path = errno!(self.host_path(guest));
                let dir = errno!(self.dirfd(a[0]));
                // SAFETY: path is a valid C string; flags are Linux's.
                let h =
                    unsafe { libc::openat(dir, path.as_ptr(), a[2] as i32, a[3] as libc::c_uint) };
                if h < 0 {
                    errno()
                } else {
                    match self.fds.insert(h, 0) {
                        Some(g) => g,
                        None => {
                            // SAFETY: closing the descriptor we just opened.
                            unsafe { libc::close(h) };
                            -(libc::EMFILE as i64)
                        }
                    }
                }
            }
            nr::CLOSE => match self.fds.remove(a[0] as i64) {
                // Never close the host's own standard streams.
                Some(h) if h <= 2 => 0,
                // SAFETY: a descriptor the guest owned.
                Some(h) => ret(unsafe { libc::close(h) } as i64),
                None => EBADF,
            },
            nr::LSEEK => {
                let h = fd!(self, a[0]);
                // SAFETY: plain descriptor call.
                ret(unsafe { libc::lseek(h, a[1] as i64, a[2] as i32) })
            }
            nr::DUP => {
                let h = fd!(self, a[0]);
                // SAFETY: plain descriptor call.
                let n = unsafe { libc::dup(h) };
                self.install(n, 0)
            }
            nr::DUP3 => {
                let h = fd!(self, a[0]);
                let (old, new) = (a[0] as i64, a[1] as i32 as i64);
                if old == new || a[2] & !(libc::O_CLOEXEC as u64) != 0 {
                    EINVAL
                } else if !(0..MAX_FDS as i64).contains(&new) {
                    EBADF
                } else {
                    // The host descriptor carries the guest's FD_CLOEXEC,
                    // for an exec (crate::syscall's `exec`).
                    let cmd = if a[2] & libc::O_CLOEXEC as u64 != 0 {
                        libc::F_DUPFD_CLOEXEC
                    } else {
                        libc::F_DUPFD
                    };
                    // SAFETY: plain descriptor call.
                    let n = unsafe { libc::fcntl(h, cmd, 3) };
                    if n < 0 {
                        errno()
                    } else {
                        if let Some(prev) = self.fds.insert_at(new as usize, n) {
                            if prev > 2 {
                                // SAFETY: the replaced guest descriptor.
                                unsafe { libc::close(prev) };
                            }
                        }
                        new
                    }
                }
            }
            nr::FCNTL => {
                let h = fd!(self, a[0]);
                let cmd = a[1] as i32;
                match cmd {
                    libc::F_DUPFD | libc::F_DUPFD_CLOEXEC if a[2] >= MAX_FDS as u64 => EINVAL,
                    libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => {
                        // SAFETY: plain descriptor call (host numbers from 3
                        // up: 0, 1 and 2 are the host's own).
                        let n = unsafe { libc::fcntl(h, cmd, 3) };
                        self.install(n, a[2] as usize)
                    }
                    libc::F_GETFD | libc::F_GETFL => {
                        // SAFETY: plain descriptor call.
                        ret(unsafe { libc::fcntl(h, cmd) } as i64)
                    }
                    libc::F_SETFD | libc::F_SETFL => {
                        // SAFETY: plain descriptor call.
                        ret(unsafe { libc::fcntl(h, cmd, a[2] as i32) } as i64)
                    }
                    libc::F_GETLK | libc::F_SETLK | libc::F_SETLKW => {
                        // struct flock has the same layout on RV64 and x86-64.
                        let buf = tryf!(mem.slice_mut(a[2], 32));
                        // SAFETY: 32 valid bytes, the size of struct flock.
                        ret(unsafe { libc::fcntl(h, cmd, buf.as_mut_ptr()) } as i64)
                    }
                    _ => EINVAL,
                }
            }
            nr::IOCTL => {
                let h = fd!(self, a[0]);
                // Requests whose argument points to a structure of the
                // same layout on both sides, of this many bytes: TCGETS
                // and TCSETS* (the kernel's struct termios), TIOCGWINSZ
                // and TIOCSWINSZ (struct winsize), and an int for
                // TIOCGPGRP, TIOCSPGRP, FIONREAD, FIONBIO,
                // FS_IOC_GETFLAGS and FS_IOC_SETFLAGS (whose `long` in
                // the request's size the kernel reads as an int).
                let len = match a[1] {
                    0x5401..=0x5404 => Some(36),
                    0x5413 | 0x5414 => Some(8),
                    0x540f | 0x5410 | 0x541b | 0x5421 | 0x8008_6601 | 0x4008_6602 => Some(4),
                    _ => None,
                };
                match len {
                    Some(len) => {
                        let mut tmp = [0u8; 64];
                        let guest = tryf!(mem.slice_mut(a[2], len));
                        tmp[..len as usize].copy_from_slice(guest);
                        // SAFETY: tmp is larger than either structure.
                        let r = unsafe { libc::ioctl(h, a[1] as _, tmp.as_mut_ptr()) };
                        if r >= 0 {
                            guest.copy_from_slice(&tmp[..len as usize]);
                        }
                        ret(r as i64)
                    }
                    // Others: as a descriptor that knows none of them.
                    None => -(libc::ENOTTY as i64),
                }
            }
            nr::PIPE2 => {
                let mut p = [0i32; 2];
                // SAFETY: p has room for two descriptors.
                let r = unsafe { libc::pipe2(p.as_mut_ptr(), a[1] as i32) };
                if r < 0 {
                    errno()
                } else {
                    let g0 = self.fds.insert(p[0], 0).unwrap_or(-1);
                    let g1 = self.fds.insert(p[1], 0).unwrap_or(-1);
                    let mut out = [0u8; 8];
                    out[..4].copy_from_slice(&(g0 as i32).to_le_bytes());
                    out[4..].copy_from_slice(&(g1 as i32).to_le_bytes());
                    tryf!(mem.slice_mut(a[0], 8)).copy_from_slice(&out);
                    0
                }
            }
            nr::FSTAT => {
                let h = fd!(self, a[0]);
                // SAFETY: st is a valid out-parameter.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                let r = unsafe { libc::fstat(h, &mut st) };
                self.put_stat(mem, r, &st, a[1])
            }
            nr::NEWFSTATAT => {
                let (dir, path) = errno!(self.at_path(mem, a[0], a[1]));
                // SAFETY: valid C string and out-parameter.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                let r = unsafe { libc::fstatat(dir, path.as_ptr(), &mut st, a[3] as i32) };
                self.put_stat(mem, r, &st, a[2])
            }
            nr::STATX => {
                let (dir, path) = errno!(self.at_path(mem, a[0], a[1]));
                // struct statx is the same on every architecture.
                let buf = tryf!(mem.slice_mut(a[4], 256));
                // SAFETY: valid C string and a 256-byte buffer.
                ret(unsafe {
                    libc::syscall(
                        libc::SYS_statx,
                        dir,
                        path.as_ptr(),
                        a[2] as i32,
                        a[3] as u32,
                        buf.as_mut_ptr(),
                    )
                })
            }
            nr::READLINKAT => {
                // Linux refuses a buffer of no bytes before it reads the name.
                if a[3] as i32 <= 0 {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let raw = tryf!(mem.read_cstr(a[1], 4096));
                if raw == b"/proc/self/exe" {
                    let exe = self.exe.as_os_str().as_encoded_bytes().to_vec();
                    let n = exe.len().min(a[3] as usize);
                    tryf!(mem.slice_mut(a[2], n as u64)).copy_from_slice(&exe[..n]);
                    n as i64
                } else {
                    let (dir, path) = errno!(self.at_path(mem, a[0], a[1]));
                    let buf = tryf!(mem.slice_mut(a[2], a[3]));
                    // SAFETY: valid C string and buffer.
                    ret(unsafe {
                        libc::readlinkat(dir, path.as_ptr(), buf.as_mut_ptr() as *mut _, buf.len())
                    } as i64)
                }
            }
            nr::GETCWD => {
                let buf = tryf!(mem.slice_mut(a[0], a[1]));
                // SAFETY: the raw call returns the length including the NUL.
                ret(unsafe { libc::syscall(libc::SYS_getcwd, buf.as_mut_ptr(), buf.len()) })
            }
            nr::CHDIR => match self.path(mem, a[0]) {
                // SAFETY: valid C string.
                Ok(p) => ret(unsafe { libc::chdir(p.as_ptr()) } as i64),
                Err(e) => e,
            },
            nr::FCHDIR => {
                let h = fd!(self, a[0]);
                // SAFETY: plain descriptor call.
                ret(unsafe { libc::fchdir(h) } as i64)
            }
            nr::FACCESSAT
            | nr::FACCESSAT2
            | nr::UNLINKAT
            | nr::MKDIRAT
            | nr::FCHMODAT
            | nr::TRUNCATE => {
                let (dir, pa) = if num == nr::TRUNCATE {
                    (Ok(libc::AT_FDCWD), a[0])
                } else {
                    (self.dirfd(a[0]), a[1])
                };
                let path = errno!(self.path(mem, pa));
                let dir = errno!(dir);
                // SAFETY: valid C strings; plain calls.
                ret(unsafe {
                    match num {
                        nr::FACCESSAT => libc::faccessat(dir, path.as_ptr(), a[2] as i32, 0),
                        nr::FACCESSAT2 => {
                            libc::faccessat(dir, path.as_ptr(), a[2] as i32, a[3] as i32)
                        }
                        nr::UNLINKAT => libc::unlinkat(dir, path.as_ptr(), a[2] as i32),
                        nr::MKDIRAT => libc::mkdirat(dir, path.as_ptr(), a[2] as libc::mode_t),
                        nr::FCHMODAT => libc::fchmodat(dir, path.as_ptr(), a[2] as libc::mode_t, 0),
                        _ => libc::truncate(path.as_ptr(), a[1] as i64),
                    }
                } as i64)
            }
            nr::RENAMEAT2 | nr::LINKAT => {
                // Linux reads both names before it looks at either directory.
                let (p1, p2) = (errno!(self.path(mem, a[1])), errno!(self.path(mem, a[3])));
                let (d1, d2) = (errno!(self.dirfd(a[0])), errno!(self.dirfd(a[2])));
                // SAFETY: valid C strings.
                ret(unsafe {
                    if num == nr::RENAMEAT2 {
                        libc::syscall(
                            libc::SYS_renameat2,
                            d1,
                            p1.as_ptr(),
                            d2,
                            p2.as_ptr(),
                            a[4] as u32,
                        )
                    } else {
                        libc::linkat(d1, p1.as_ptr(), d2, p2.as_ptr(), a[4] as i32) as i64
                    }
                })
            }
            nr::SYMLINKAT => {
                let target = match mem
                    .read_cstr(a[0], 4096)
                    .ok()
                    .and_then(|t| CString::new(t).ok())
                {
                    Some(t) => t,
                    None => return Ok(Outcome::Ret(EFAULT)),
                };
                let (dir, path) = errno!(self.at_path(mem, a[1], a[2]));
                // SAFETY: valid C strings.
                ret(unsafe { libc::symlinkat(target.as_ptr(), dir, path.as_ptr()) } as i64)
            }
            nr::GETDENTS64 => {
                let h = fd!(self, a[0]);
                // struct linux_dirent64 is the same on every architecture.
                let buf = tryf!(mem.slice_mut(a[1], a[2]));
                // SAFETY: valid buffer.
                ret(unsafe { libc::syscall(libc::SYS_getdents64, h, buf.as_mut_ptr(), buf.len()) })
            }
            nr::FSYNC | nr::FDATASYNC | nr::FTRUNCATE | nr::FCHMOD => {
                let h = fd!(self, a[0]);
                // SAFETY: plain descriptor calls.
                ret(unsafe {
                    match num {
                        nr::FSYNC => libc::fsync(h),
                        nr::FDATASYNC => libc::fdatasync(h),
                        nr::FTRUNCATE => libc::ftruncate(h, a[1] as i64),
                        _ => libc::fchmod(h, a[1] as libc::mode_t),
                    }
                } as i64)
            }
            nr::UMASK => {
                // SAFETY: plain call.
                (unsafe { libc::umask(a[0] as libc::mode_t) }) as i64
            }
            nr::BRK => return Ok(self.brk(mem, a[0])),
            nr::MMAP => return self.mmap(mem, a),
            nr::MUNMAP => {
                if !a[0].is_multiple_of(PAGE) || a[1] == 0 {
                    EINVAL
                } else {
                    let len = page_up(a[1]);
                    let code = mem.range_has(a[0], len, perm::X);
                    self.file_maps.forget(a[0], len);
                    match mem.unmap(a[0], len) {
                        Ok(()) if code => return Ok(Outcome::RetFlush(0)),
                        Ok(()) => 0,
                        Err(_) => EINVAL,
                    }
                }
            }
            nr::MPROTECT => {
                // Bits beyond read, write, exec, PROT_SEM and the two grow
                // flags are refused, as is asking to grow both ways.
                let grows = libc::PROT_GROWSDOWN as u64 | libc::PROT_GROWSUP as u64;
                let known = 0xf | grows;
                if !a[0].is_multiple_of(PAGE) || a[2] & !known != 0 || a[2] & grows == grows {
                    EINVAL
                } else {
                    let code = mem.range_has(a[0], page_up(a[1]), perm::X);
                    match mem.protect(a[0], page_up(a[1]), (a[2] & 7) as u8) {
                        Ok(()) if code => return Ok(Outcome::RetFlush(0)),
                        Ok(()) => 0,
                        Err(e) => -(e.raw_os_error().unwrap_or(libc::ENOMEM) as i64),
                    }
                }
            }
            nr::MREMAP => return self.mremap(mem, a, pc),
            // Nothing to write back (file mappings are private, or shared
            // read-only) and nothing to lock: these check their arguments
            // as Linux does and succeed on mapped memory.
            nr::MSYNC => {
                let (async_, invalidate, sync) = (1u64, 2u64, 4u64);
                let flags = a[2];
                if !a[0].is_multiple_of(PAGE)
                    || flags & !(async_ | invalidate | sync) != 0
                    || flags & (async_ | sync) == async_ | sync
                {
                    EINVAL
                } else if !mem.is_mapped(a[0], page_up(a[1])) {
                    ENOMEM
                } else {
                    match mem.sync(a[0], page_up(a[1]), flags as i32) {
                        Ok(()) => 0,
                        Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
                    }
                }
            }
            nr::MLOCK | nr::MUNLOCK | nr::MLOCK2 => {
                if num == nr::MLOCK2 && a[2] & !1 != 0 {
                    EINVAL
                } else if !mem.is_mapped(page_down(a[0]), page_up(a[1].saturating_add(a[0] % PAGE)))
                {
                    ENOMEM
                } else {
                    0
                }
            }
            nr::MLOCKALL => {
                // MCL_CURRENT, MCL_FUTURE, MCL_ONFAULT (not alone).
                if a[0] == 0 || a[0] & !7 != 0 || a[0] == 4 {
                    EINVAL
                } else {
                    0
                }
            }
            nr::MUNLOCKALL => 0,
            nr::MINCORE => {
                // Every mapped page is resident: one byte of 1 per page.
                if !a[0].is_multiple_of(PAGE) {
                    EINVAL
                } else if !mem.is_mapped(a[0], page_up(a[1])) {
                    ENOMEM
                } else {
                    let pages = page_up(a[1]) / PAGE;
                    tryf!(mem.slice_mut(a[2], pages)).fill(1);
                    0
                }
            }
            nr::MADVISE => {
                // MADV_DONTNEED on private anonymous memory reads back as
                // zeros afterwards; other advice changes nothing visible.
                if !a[0].is_multiple_of(PAGE) {
                    EINVAL
                } else if a[2] == 4 {
                    let len = page_up(a[1]);
                    let mut at = a[0];
                    while at < a[0].saturating_add(len) {
                        let p = mem.perm_at(at);
                        // Shared pages keep their contents, as under Linux.
                        if p & perm::MAPPED != 0 && p & perm::SHARED == 0 {
                            let _ = mem.map(at, PAGE, p);
                        }
                        at += PAGE;
                    }
                    0
                } else {
                    0
                }
            }
            nr::EXIT => return Ok(Outcome::ThreadExit((a[0] & 0xff) as i32)),
            nr::EXIT_GROUP => return Ok(Outcome::Exit((a[0] & 0xff) as i32)),
            nr::SET_TID_ADDRESS => {
                self.clear_tid = a[0];
                self.tid
            }
            nr::SET_ROBUST_LIST => 0,
            // What `fence.i` does for one hart, for every hart of the
            // process, as JIT compilers (PCRE2's, behind `grep -P`) ask
            // after writing code. Linux refuses flag bits other than
            // SYS_RISCV_FLUSH_ICACHE_LOCAL (1) and does not check the
            // range; the simulator forgets every decoded block.
            nr::RISCV_FLUSH_ICACHE => {
                if a[2] & !1 != 0 {
                    EINVAL
                } else {
                    return Ok(Outcome::RetFlush(0));
                }
            }
            // Landlock sandboxes (xz, since 5.6, restricts itself) are
            // answered as by a kernel built without Landlock, which every
            // caller must expect: a sandbox would hold coprof's own
            // process, whose files (a trace, a profile) the program never
            // named.
            nr::LANDLOCK_CREATE_RULESET | nr::LANDLOCK_ADD_RULE | nr::LANDLOCK_RESTRICT_SELF => {
                -(libc::ENOSYS as i64)
            }
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
            nr::GETRANDOM => {
                let buf = tryf!(mem.slice_mut(a[0], a[1]));
                ret(self.random.fill(buf, a[2] as u32))
            }
            nr::UNAME => {
                // SAFETY: valid out-parameter.
                let mut u: libc::utsname = unsafe { std::mem::zeroed() };
                unsafe { libc::uname(&mut u) };
                let mut out = [0u8; 65 * 6];
                let fields = [
                    &u.sysname,
                    &u.nodename,
                    &u.release,
                    &u.version,
                    &u.machine,
                    &u.domainname,
                ];
                for (i, f) in fields.iter().enumerate() {
                    for (j, c) in f.iter().take(64).enumerate() {
                        out[i * 65 + j] = *c as u8;
                    }
                }
                let machine = b"riscv64\0";
                out[4 * 65..4 * 65 + 65].fill(0);
                out[4 * 65..4 * 65 + machine.len()].copy_from_slice(machine);
                tryf!(mem.slice_mut(a[0], out.len() as u64)).copy_from_slice(&out);
                0
            }
            nr::CLOCK_GETTIME | nr::CLOCK_GETRES => {
                // struct timespec is the same on both sides.
                if a[1] == 0 {
                    // SAFETY: a null result pointer is allowed.
                    ret(unsafe {
                        libc::syscall(num_host(num), a[0] as i32, std::ptr::null_mut::<u8>())
                    })
                } else {
                    let buf = tryf!(mem.slice_mut(a[1], 16));
                    // SAFETY: 16 valid bytes.
                    ret(unsafe { libc::syscall(num_host(num), a[0] as i32, buf.as_mut_ptr()) })
                }
            }
            nr::GETTIMEOFDAY => {
                let tv = if a[0] != 0 {
                    tryf!(mem.slice_mut(a[0], 16)).as_mut_ptr()
                } else {
                    std::ptr::null_mut()
                };
                // SAFETY: null or 16 valid bytes; the time zone is not used.
                ret(unsafe {
                    libc::syscall(libc::SYS_gettimeofday, tv, std::ptr::null_mut::<u8>())
                })
            }
            nr::NANOSLEEP | nr::CLOCK_NANOSLEEP => {
                let (req, rem) = if num == nr::NANOSLEEP {
                    (a[0], a[1])
                } else {
                    (a[2], a[3])
                };
                let (clock, absolute) = if num == nr::NANOSLEEP {
                    (libc::CLOCK_MONOTONIC, false)
                } else {
                    (a[0] as i32, a[1] & libc::TIMER_ABSTIME as u64 != 0)
                };
                // Beside other threads, which go on meanwhile.
                if self.tids.len() > 1 {
                    if let Some(outcome) = self.sleep_off_hart(mem, clock, absolute, req, rem) {
                        return Ok(outcome);
                    }
                }
                // A sleep on the real-time or monotonic clock that
                // ITIMER_REAL's signal or one from outside would end early,
                // as it would under Linux: relative, or to an absolute time
                // (TIMER_ABSTIME, as Python's `time.sleep` asks), whose
                // `rem` Linux leaves alone.
                let on_wall_clock = num == nr::NANOSLEEP || (a[0] <= 1 && a[1] & !1 == 0);
                if on_wall_clock && (self.timers.until_real().is_some() || self.outside.is_some()) {
                    let end = match read_timespec(mem, req) {
                        Ok(t) if absolute => instant_at(clock, t),
                        Ok(t) => std::time::Instant::now() + t,
                        Err(e) => return Ok(Outcome::Ret(e)),
                    };
                    let rem = if absolute { 0 } else { rem };
                    return Ok(Outcome::Ret(self.sleep_until_signal(mem, end, rem)));
                }
                let reqp = tryf!(mem.slice(req, 16, perm::R)).as_ptr();
                let remp = if rem != 0 {
                    tryf!(mem.slice_mut(rem, 16)).as_mut_ptr()
                } else {
                    std::ptr::null_mut()
                };
                // SAFETY: valid timespec pointers.
                if num == nr::NANOSLEEP {
                    ret(unsafe { libc::syscall(libc::SYS_nanosleep, reqp, remp) })
                } else {
                    loop {
                        let r = unsafe {
                            libc::clock_nanosleep(
                                a[0] as i32,
                                a[1] as i32,
                                reqp as *const _,
                                remp as *mut _,
                            )
                        };
                        // A signal from outside ends the host's sleep: only
                        // one the program takes ends the program's.
                        if r == libc::EINTR && self.outside.is_some() {
                            self.fire_timers();
                            if !self.signals.wakes() {
                                continue;
                            }
                        }
                        break -(r as i64);
                    }
                }
            }
            // SAFETY (the four below): plain calls without arguments.
            nr::GETPID => (unsafe { libc::getpid() }) as i64,
            nr::GETTID => self.tid,
            nr::GETPPID => (unsafe { libc::getppid() }) as i64,
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
                if !self.signals.wakes() && self.tids.len() > 1 {
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
            nr::PPOLL => {
                // fs/select.c, do_sys_poll: the count, the timeout (read
                // and checked), the signal mask, then the descriptors.
                if a[1] > MAX_FDS as u64 {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let timeout = match a[2] {
                    0 => None,
                    at => Some(errno!(read_timespec(mem, at))),
                };
                let mask = match a[3] {
                    0 => None,
                    _ if a[4] != SIGSET_BYTES => return Ok(Outcome::Ret(EINVAL)),
                    at => Some(tryf!(mem.load::<8>(at))),
                };
                return self.ppoll(mem, a[0], a[1] as usize, timeout, mask, pc);
            }
            nr::PSELECT6 => return self.pselect6(mem, a, pc),
            nr::TIMER_CREATE
            | nr::TIMER_SETTIME
            | nr::TIMER_GETTIME
            | nr::TIMER_GETOVERRUN
            | nr::TIMER_DELETE => self.posix_timer(mem, num, a),
            nr::GETITIMER | nr::SETITIMER => {
                // kernel/time/itimer.c: the new value read and checked,
                // then the timer, then the old value written back.
                // struct itimerval: the interval, then the value, each a
                // timeval of two longs.
                let which = a[0] as i64;
                let new = if num == nr::SETITIMER && a[1] != 0 {
                    let raw = tryf!(mem.slice(a[1], 32, perm::R));
                    let w = |i: usize| {
                        i64::from_le_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap_or_default())
                    };
                    let valid = |sec: i64, usec: i64| sec >= 0 && (0..1_000_000).contains(&usec);
                    if !valid(w(0), w(1)) || !valid(w(2), w(3)) {
                        return Ok(Outcome::Ret(EINVAL));
                    }
                    let d = |sec: i64, usec: i64| {
                        std::time::Duration::new(sec as u64, usec as u32 * 1000)
                    };
                    Some(Setting {
                        interval: d(w(0), w(1)),
                        value: d(w(2), w(3)),
                    })
                } else {
                    None
                };
                if !(0..3).contains(&which) {
                    return Ok(Outcome::Ret(EINVAL));
                }
                let which = which as usize;
                let old = if num == nr::GETITIMER {
                    self.timers.get(which)
                } else {
                    // A null new value disarms, as Linux still allows.
                    let zero = std::time::Duration::ZERO;
                    let new = new.unwrap_or(Setting {
                        value: zero,
                        interval: zero,
                    });
                    self.timers.set(which, new)
                };
                let out = if num == nr::GETITIMER { a[1] } else { a[2] };
                if out != 0 {
                    let buf = tryf!(mem.slice_mut(out, 32));
                    for (i, d) in [old.interval, old.value].iter().enumerate() {
                        buf[i * 16..i * 16 + 8].copy_from_slice(&d.as_secs().to_le_bytes());
                        buf[i * 16 + 8..i * 16 + 16]
                            .copy_from_slice(&(d.subsec_micros() as u64).to_le_bytes());
                    }
                }
                0
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
                // SAFETY: plain call.
                let me = unsafe { libc::getpid() } as i64;
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
                    // SAFETY: plain call.
                    ret(unsafe { libc::kill(target as i32, sig as i32) } as i64)
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
                    self.send_own(SigInfo::sent(sig, code), to)
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
                let info = SigInfo {
                    signo: sig as i32,
                    code: i32::from_le_bytes(raw[8..12].try_into().unwrap_or_default()),
                    word: u64::from_le_bytes(raw[16..24].try_into().unwrap_or_default()),
                    value: u64::from_le_bytes(raw[24..32].try_into().unwrap_or_default()),
                };
                // SAFETY: plain call.
                let me = unsafe { libc::getpid() };
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
                                    pid,
                                    t as i32,
                                    sig as i32,
                                    raw.as_ptr(),
                                ),
                                None => libc::syscall(
                                    libc::SYS_rt_sigqueueinfo,
                                    pid,
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
                // SAFETY: both pointers are to locals.
                let r = unsafe { libc::wait4(a[0] as i32, &mut status, a[2] as i32, &mut usage) };
                if r > 0 {
                    if a[1] != 0 {
                        tryf!(mem.store::<4>(a[1], status as u32 as u64));
                    }
                    if a[3] != 0 {
                        errno!(put_struct(mem, a[3], &usage));
                    }
                }
                ret(r as i64)
            }
            nr::WAITID => {
                // waitid(idtype, id, infop, options, rusage): the host's,
                // its siginfo and rusage copied as they are (same layout).
                // SAFETY: all-zero siginfo and rusage are valid.
                let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
                let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
                // SAFETY: the raw call, with pointers to locals.
                let r = unsafe {
                    libc::syscall(
                        libc::SYS_waitid,
                        a[0] as i32,
                        a[1] as i32,
                        &mut info as *mut libc::siginfo_t,
                        a[3] as i32,
                        &mut usage as *mut libc::rusage,
                    )
                };
                if r == 0 {
                    if a[2] != 0 {
                        errno!(put_struct(mem, a[2], &info));
                    }
                    if a[4] != 0 {
                        errno!(put_struct(mem, a[4], &usage));
                    }
                }
                ret(r)
            }
            nr::RISCV_HWPROBE => return Ok(hwprobe::riscv_hwprobe(mem, a)),
            nr::SIGNALFD4 => self.signalfd4(mem, a),
            n if host_calls::CALLS.contains(&n) => return self.host_call(mem, a),
            n if epoll::CALLS.contains(&n) => return self.epoll_call(mem, a, pc),
            n if sockets::CALLS.contains(&n) => return self.socket_call(mem, a),
            n if sysv_ipc::CALLS.contains(&n) => return self.sysv_call(mem, a),
            _ => {
                if self.enosys {
                    match self.enosys_calls.iter_mut().find(|(n, _)| *n == num) {
                        Some(e) => e.1 += 1,
                        None => self.enosys_calls.push((num, 1)),
                    }
                    -(libc::ENOSYS as i64)
                } else {
                    return Err(SimError::UnknownSyscall {
                        num,
                        name: nr::name(num),
                        pc,
                    });
                }
            }
        };
        Ok(Outcome::Ret(r))
    }

    /// When a wait of `timeout` that starts now ends; for a call made
    /// again after it waited off the hart, the end it had then.
    pub(crate) fn deadline(
        &self,
        timeout: Option<std::time::Duration>,
    ) -> Option<std::time::Instant> {
        self.resumed_until
            .or_else(|| timeout.map(|t| std::time::Instant::now() + t))
    }

    /// `nanosleep` or `clock_nanosleep` on `clock` beside other threads:
    /// off the hart until the sleep's end, which a signal that runs a
    /// handler or kills cuts short with EINTR (and, for a relative sleep,
    /// the time left in `rem`), as Linux's hrtimer_nanosleep. `None` for
    /// a clock whose time the host's monotonic clock cannot follow (a
    /// CPU-time clock): the caller sleeps on the host.
    fn sleep_off_hart(
        &mut self,
        mem: &mut Memory,
        clock: libc::clockid_t,
        absolute: bool,
        req: u64,
        rem: u64,
    ) -> Option<Outcome> {
        let follows = matches!(
            clock,
            libc::CLOCK_REALTIME | libc::CLOCK_MONOTONIC | libc::CLOCK_BOOTTIME | libc::CLOCK_TAI
        );
        if !follows {
            return None;
        }
        let until = match self.resumed_until {
            Some(u) => u,
            None => match read_timespec(mem, req) {
                Ok(t) if absolute => instant_at(clock, t),
                Ok(t) => std::time::Instant::now() + t,
                Err(e) => return Some(Outcome::Ret(e)),
            },
        };
        if self.signals.wakes() {
            if !absolute && rem != 0 {
                let left = until.saturating_duration_since(std::time::Instant::now());
                if let Err(e) = write_timespec(mem, rem, left) {
                    return Some(Outcome::Ret(e));
                }
            }
            return Some(Outcome::Ret(-(libc::EINTR as i64)));
        }
        if std::time::Instant::now() >= until {
            return Some(Outcome::Ret(0));
        }
        Some(Outcome::Block(Blocked {
            mask: self.signals.mask,
            until: Some(until),
            ..Blocked::default()
        }))
    }

    /// Sleeps until `end` or until ITIMER_REAL's signal or one from
    /// outside comes that is delivered (not blocked, not ignored): then
    /// EINTR, with the time left written to `rem` if given.
    fn sleep_until_signal(&mut self, mem: &mut Memory, end: std::time::Instant, rem: u64) -> i64 {
        loop {
            let left = end.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return 0;
            }
            self.nap(earlier(Some(left), self.timers.until_real()));
            if self.signals.wakes() {
                if rem != 0 {
                    let left = end.saturating_duration_since(std::time::Instant::now());
                    if let Err(e) = write_timespec(mem, rem, left) {
                        return e;
                    }
                }
                return -(libc::EINTR as i64);
            }
        }
    }

    /// `ppoll` after its arguments are read: the descriptors polled on the
    /// host (a guest descriptor that is not open reads POLLNVAL) as
    /// [`Self::poll_host`] waits for them, their `revents` written back.
    fn ppoll(
        &mut self,
        mem: &mut Memory,
        fds_at: u64,
        nfds: usize,
        timeout: Option<std::time::Duration>,
        mask: Option<u64>,
        pc: u64,
    ) -> Result<Outcome, SimError> {
        // struct pollfd: int fd, short events, short revents.
        let Ok(guest) = mem.slice_mut(fds_at, nfds as u64 * 8) else {
            return Ok(Outcome::Ret(EFAULT));
        };
        // Guest descriptors that are not open answer POLLNVAL at once, as
        // on Linux; the host polls them as ignored (-1).
        let mut closed = Vec::with_capacity(nfds);
        let mut host: Vec<libc::pollfd> = guest
            .chunks(8)
            .map(|p| {
                let fd = i32::from_le_bytes(p[..4].try_into().unwrap_or_default());
                let h = if fd < 0 {
                    None
                } else {
                    Some(self.fds.host(fd as i64))
                };
                closed.push(h == Some(None));
                libc::pollfd {
                    fd: h.flatten().unwrap_or(-1),
                    events: i16::from_le_bytes(p[4..6].try_into().unwrap_or_default()),
                    revents: 0,
                }
            })
            .collect();
        let deadline = self.deadline(timeout);
        let ready = match self.poll_host(&mut host, &closed, deadline, mask, "ppoll", pc)? {
            Ok(n) => n,
            Err(outcome) => return Ok(outcome),
        };
        let Ok(guest) = mem.slice_mut(fds_at, nfds as u64 * 8) else {
            return Ok(Outcome::Ret(EFAULT));
        };
        for (p, h) in guest.chunks_mut(8).zip(&host) {
            p[6..8].copy_from_slice(&h.revents.to_le_bytes());
        }
        Ok(Outcome::Ret(ready))
    }

    /// `pselect6` (glibc's `select` and `pselect`): Linux's order of
    /// checks (`nfds`, the timeout, the signal mask's size, the sets, a
    /// descriptor in a set that is not open: EBADF), then the wait of
    /// [`Self::poll_host`] on the descriptors of the three sets (POLLIN
    /// for reading, POLLOUT for writing, POLLPRI for exceptions), and
    /// the sets written back with only the ready descriptors, as
    /// `core_sys_select` does; the time left goes back into the timeout.
    fn pselect6(&mut self, mem: &mut Memory, a: [u64; 8], pc: u64) -> Result<Outcome, SimError> {
        let n = a[0] as i32;
        if n < 0 {
            return Ok(Outcome::Ret(EINVAL));
        }
        let n = (n as usize).min(MAX_FDS);
        let timeout = match a[4] {
            0 => None,
            at => Some(errno!(read_timespec(mem, at))),
        };
        // The sixth argument: { const sigset_t *ss; size_t ss_len }.
        let mask = match a[5] {
            0 => None,
            at => {
                let [ss, len] = [tryf!(mem.load::<8>(at)), tryf!(mem.load::<8>(at + 8))];
                match ss {
                    0 => None,
                    _ if len != SIGSET_BYTES => return Ok(Outcome::Ret(EINVAL)),
                    ss => Some(tryf!(mem.load::<8>(ss))),
                }
            }
        };
        // fd_set: an array of 64-bit words, bit fd % 64 of word fd / 64.
        let words = n.div_ceil(64);
        let mut sets = [vec![0u64; words], vec![0u64; words], vec![0u64; words]];
        for (set, &at) in sets.iter_mut().zip(&a[1..4]) {
            if at == 0 {
                continue;
            }
            let bytes = tryf!(mem.slice(at, words as u64 * 8, perm::R));
            for (w, b) in set.iter_mut().zip(bytes.chunks_exact(8)) {
                *w = u64::from_le_bytes(b.try_into().unwrap_or_default());
            }
            if let Some(last) = set.last_mut() {
                if !n.is_multiple_of(64) {
                    *last &= (1u64 << (n % 64)) - 1;
                }
            }
        }
        const EVENTS: [i16; 3] = [libc::POLLIN, libc::POLLOUT, libc::POLLPRI];
        let mut guest_fds = Vec::new();
        let mut host = Vec::new();
        for fd in 0..n {
            let bit = |set: &Vec<u64>| set[fd / 64] >> (fd % 64) & 1 != 0;
            let events = sets
                .iter()
                .zip(EVENTS)
                .filter(|(set, _)| bit(set))
                .fold(0, |e, (_, ev)| e | ev);
            if events == 0 {
                continue;
            }
            let h = fd!(self, fd);
            guest_fds.push(fd);
            host.push(libc::pollfd {
                fd: h,
                events,
                revents: 0,
            });
        }
        let deadline = self.deadline(timeout);
        let closed = vec![false; host.len()];
        if let Err(outcome) = self.poll_host(&mut host, &closed, deadline, mask, "pselect6", pc)? {
            return Ok(outcome);
        }
        // POLLIN_SET, POLLOUT_SET and POLLEX_SET of fs/select.c.
        const READY: [i16; 3] = [
            libc::POLLIN | libc::POLLRDNORM | libc::POLLRDBAND | libc::POLLHUP | libc::POLLERR,
            libc::POLLOUT | libc::POLLWRNORM | libc::POLLWRBAND | libc::POLLERR,
            libc::POLLPRI,
        ];
        let mut ready = 0;
        let mut out = [vec![0u64; words], vec![0u64; words], vec![0u64; words]];
        for (&fd, h) in guest_fds.iter().zip(&host) {
            for k in 0..3 {
                if h.events & EVENTS[k] != 0 && h.revents & READY[k] != 0 {
                    out[k][fd / 64] |= 1 << (fd % 64);
                    ready += 1;
                }
            }
        }
        for (set, &at) in out.iter().zip(&a[1..4]) {
            if at == 0 {
                continue;
            }
            let bytes = tryf!(mem.slice_mut(at, words as u64 * 8));
            for (b, w) in bytes.chunks_exact_mut(8).zip(set) {
                b.copy_from_slice(&w.to_le_bytes());
            }
        }
        if let Some(d) = deadline {
            // The time left, as Linux writes it back (a timeout in memory
            // that cannot be written is left as it was).
            let left = d.saturating_duration_since(std::time::Instant::now());
            let _ = write_timespec(mem, a[4], left);
        }
        Ok(Outcome::Ret(ready))
    }

    /// The wait of `ppoll` and `pselect6` (`call`) for the host
    /// descriptors `host` (those marked `closed` answer POLLNVAL at
    /// once), with `mask` in place while it waits: the number of ready
    /// descriptors, or what the call does instead (EINTR, an error, or a
    /// wait off the hart). Only the program's interval timer can send a
    /// signal meanwhile, so a wait is cut into slices that end when
    /// ITIMER_REAL does; a signal it sends that will be delivered ends
    /// the wait with EINTR, and the handler's frame saves the mask from
    /// before. The wait ends at `deadline` ([`Self::deadline`] of the
    /// call's timeout; never when `None`). Beside other threads it leaves
    /// the hart instead, until then. With no descriptor and no timeout
    /// (glibc's `pause`), no timer and no other thread, nothing can end
    /// the wait: the run stops.
    pub(crate) fn poll_host(
        &mut self,
        host: &mut [libc::pollfd],
        closed: &[bool],
        deadline: Option<std::time::Instant>,
        mask: Option<u64>,
        call: &str,
        pc: u64,
    ) -> Result<Result<i64, Outcome>, SimError> {
        let invalid = closed.iter().filter(|&&c| c).count() as i64;
        let old = self.signals.mask;
        if let Some(m) = mask {
            self.signals.set_mask(m);
        }
        let interrupted = |signals: &mut Signals| {
            // The handler's frame restores the mask from before.
            if mask.is_some() {
                signals.saved_mask = Some(old);
            }
            Ok(Err(Outcome::Ret(-(libc::EINTR as i64))))
        };
        if self.signals.wakes() {
            return interrupted(&mut self.signals);
        }
        // The signalfds as the thread on the hart sees them; after each
        // look at the timers below, `fire_timers` brings them up to date.
        self.sync_signalfds();
        let ready = loop {
            let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
            let slice = earlier(left, self.timers.until_real());
            // Beside other threads, which may make a descriptor ready or
            // send a signal, the wait leaves the hart.
            let off_hart = self.tids.len() > 1;
            let wait = if invalid > 0 || off_hart {
                Some(std::time::Duration::ZERO)
            } else {
                slice
            };
            if host.is_empty() && wait.is_none() && self.outside.is_none() {
                self.signals.set_mask(old);
                return Err(SimError::Unsupported {
                    what: format!(
                        "{call} of no descriptor without a timeout (pause), {NO_SIGNAL_CAN_COME}"
                    ),
                    pc,
                });
            }
            let n = self.poll_with_outside(host, wait);
            if n < 0 {
                self.signals.set_mask(old);
                return Ok(Err(Outcome::Ret(errno())));
            }
            for (h, &c) in host.iter_mut().zip(closed) {
                if c {
                    h.revents = libc::POLLNVAL;
                }
            }
            if n > 0 || invalid > 0 {
                break n as i64 + invalid;
            }
            let over = deadline.is_some_and(|d| std::time::Instant::now() >= d);
            if off_hart && !over {
                let mask = self.signals.mask;
                self.signals.set_mask(old);
                return Ok(Err(Outcome::Block(Blocked {
                    fds: host.iter().map(|h| (h.fd, h.events)).collect(),
                    mask,
                    until: deadline,
                    ..Blocked::default()
                })));
            }
            self.fire_timers();
            if self.signals.wakes() {
                return interrupted(&mut self.signals);
            }
            if over || deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                break 0;
            }
        };
        self.signals.set_mask(old);
        Ok(Ok(ready))
    }

    /// Sends the process (`to` `None`) or one of its threads a signal:
    /// pending until the way back to the program, which delivers it unless
    /// it is blocked (the simulator's `deliver_pending`). 0, or EAGAIN
    /// when a real-time signal's queue is full.
    fn send_own(&mut self, info: SigInfo, to: Option<i64>) -> i64 {
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

    /// Marks the signals of the interval timers whose time has come, and
    /// those caught from outside (a child's SIGCHLD, a Ctrl-C), as pending,
    /// to be delivered on the way back to the program.
    pub fn fire_timers(&mut self) {
        for (info, tid) in self.timers.expire() {
            match tid {
                None => self.signals.hold_timer(info, false),
                Some(t) if t == self.tid => self.signals.hold_timer(info, true),
                Some(t) => self.directed.push((t, info)),
            }
        }
        if let Some(outside) = self.outside.as_ref().filter(|o| o.news()) {
            for info in outside.take() {
                self.signals.hold(info);
            }
        }
        self.sync_signalfds();
    }

    /// Whether the simulator should look at the timers and the signals
    /// from outside between blocks ([`fire_timers`](Self::fire_timers)).
    pub fn looks_wanted(&self) -> bool {
        self.timers.armed() || self.outside.is_some()
    }

    /// The descriptor that is readable once a signal came from outside,
    /// to wait on beside the program's descriptors.
    pub(crate) fn outside_fd(&self) -> Option<i32> {
        self.outside.as_ref().map(HostSignals::fd)
    }

    /// One turn of a wait for a signal of `set`, none of which is pending
    /// (`rt_sigtimedwait`, a signalfd's `read`), until `deadline` if it
    /// has one. The call ends with EINTR when a signal outside the set has
    /// a handler to run (or kills), with EAGAIN once the deadline is past,
    /// or waits off the hart beside other threads, which may send one:
    /// `Some` of that outcome. Otherwise only a timer or a signal from
    /// outside can come: this sleeps until the next wall-clock timer, a
    /// signal or the deadline, whichever is first, and returns `None` for
    /// the caller to look again. `what` names the wait in the error when
    /// nothing can end it.
    fn wait_for_signal(
        &mut self,
        set: u64,
        deadline: Option<std::time::Instant>,
        what: &str,
        pc: u64,
    ) -> Result<Option<Outcome>, SimError> {
        if self.signals.wakes() {
            return Ok(Some(Outcome::Ret(-(libc::EINTR as i64))));
        }
        let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            return Ok(Some(Outcome::Ret(-(libc::EAGAIN as i64))));
        }
        if self.tids.len() > 1 {
            return Ok(Some(Outcome::Block(Blocked {
                set,
                mask: self.signals.mask,
                until: deadline,
                ..Blocked::default()
            })));
        }
        let slice = earlier(left, self.timers.until_real());
        if slice.is_none() && self.outside.is_none() {
            return Err(SimError::Unsupported {
                what: format!("{what}, {NO_SIGNAL_CAN_COME}"),
                pc,
            });
        }
        self.nap(slice);
        Ok(None)
    }

    /// Waits `wait` (for ever when `None`), or less if a signal comes from
    /// outside, then looks at the timers and those signals.
    /// The caller makes sure that one of the two can end the wait.
    fn nap(&mut self, wait: Option<std::time::Duration>) {
        self.poll_with_outside(&mut [], wait);
        self.fire_timers();
    }

    /// `host_poll` of `fds` and the pipe of signals from outside: how many
    /// of `fds` are ready (0 when only a signal came, or it interrupted the
    /// wait: the caller looks at its signals), or −1 on an error.
    pub(crate) fn poll_with_outside(
        &mut self,
        fds: &mut [libc::pollfd],
        wait: Option<std::time::Duration>,
    ) -> i32 {
        let Some(fd) = self.outside_fd() else {
            return host_poll(fds, wait);
        };
        let mut all: Vec<libc::pollfd> = fds.to_vec();
        all.push(libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        let n = host_poll(&mut all, wait);
        if n < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return n;
        }
        for (f, a) in fds.iter_mut().zip(&all) {
            f.revents = a.revents;
        }
        fds.iter().filter(|f| f.revents != 0).count() as i32
    }

    /// `timer_create`, `timer_settime`, `timer_gettime`,
    /// `timer_getoverrun` and `timer_delete` ([`crate::posix_timer`]), with
    /// Linux's checks: EINVAL for a clock a timer cannot count, a
    /// `sigevent` that names no signal or a thread not of this process
    /// (or SIGEV_THREAD, which the C library turns into SIGEV_THREAD_ID),
    /// a bad `itimerspec` or an unknown timer; EFAULT for memory that
    /// cannot be read or written.
    fn posix_timer(&mut self, mem: &mut Memory, num: u64, a: [u64; 8]) -> i64 {
        let result = match num {
            nr::TIMER_CREATE => (|| {
                let clock = Clock::of(a[0] as i32 as i64, |id| {
                    self.is_me(id as u64) || self.tids.contains(&id)
                })
                .ok_or(EINVAL)?;
                // struct sigevent: sigev_value, sigev_signo, sigev_notify,
                // then the thread id of SIGEV_THREAD_ID.
                let notify = match a[1] {
                    0 => None,
                    at => {
                        let b = mem.slice(at, 20, perm::R).map_err(|_| EFAULT)?;
                        let int = |o: usize| {
                            i32::from_le_bytes(b[o..o + 4].try_into().unwrap_or_default())
                        };
                        let value = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
                        let (signo, how, tid) = (int(8), int(12), int(16));
                        let signal_ok = (1..=64).contains(&signo);
                        Some(match how {
                            SIGEV_NONE => Notify {
                                signo: 0,
                                value,
                                tid: None,
                            },
                            SIGEV_SIGNAL if signal_ok => Notify {
                                signo,
                                value,
                                tid: None,
                            },
                            SIGEV_THREAD_ID if signal_ok && self.tids.contains(&(tid as i64)) => {
                                Notify {
                                    signo,
                                    value,
                                    tid: Some(tid as i64),
                                }
                            }
                            _ => return Err(EINVAL),
                        })
                    }
                };
                mem.slice(a[2], 4, perm::W).map_err(|_| EFAULT)?;
                let id = self.timers.posix.create(clock, notify)?;
                mem.store::<4>(a[2], id as u64).map_err(|_| EFAULT)?;
                Ok(0)
            })(),
            nr::TIMER_SETTIME => (|| {
                let new = read_itimerspec(mem, a[2])?;
                let old =
                    self.timers
                        .posix
                        .set(a[0] as i32 as i64, new, a[1] & TIMER_ABSTIME != 0)?;
                if a[3] != 0 {
                    write_itimerspec(mem, a[3], old)?;
                }
                Ok(0)
            })(),
            nr::TIMER_GETTIME => (|| {
                let now = self.timers.posix.get(a[0] as i32 as i64)?;
                write_itimerspec(mem, a[1], now)?;
                Ok(0)
            })(),
            nr::TIMER_GETOVERRUN => self.timers.posix.overrun(a[0] as i32 as i64),
            _ => self.timers.posix.delete(a[0] as i32 as i64).map(|()| 0),
        };
        result.unwrap_or_else(|e| e)
    }

    /// Whether a call on host descriptor `h` that waits for `events` must
    /// leave the hart first: only beside other threads (one may make the
    /// descriptor ready), when it is not ready now and blocks (no
    /// O_NONBLOCK). Then the call waits off the hart, or is interrupted
    /// if a signal is there to take.
    fn must_wait(&self, h: i32, events: i16) -> Option<Outcome> {
        if self.tids.len() < 2 {
            return None;
        }
        let mut p = [libc::pollfd {
            fd: h,
            events,
            revents: 0,
        }];
        if host_poll(&mut p, Some(std::time::Duration::ZERO)) != 0 {
            // Ready, or an error the call itself reports.
            return None;
        }
        // SAFETY: plain call on a host descriptor.
        let flags = unsafe { libc::fcntl(h, libc::F_GETFL) };
        if flags < 0 || flags & libc::O_NONBLOCK != 0 {
            return None;
        }
        Some(self.wait_for(h, events, 0))
    }

    /// A call on `h` that waits for `events`, having moved `done` bytes:
    /// interrupted if a signal is there to take (after a partial write,
    /// the bytes written), else off the hart until `h` is ready.
    fn wait_for(&self, h: i32, events: i16, done: u64) -> Outcome {
        if self.signals.wakes() {
            return if done > 0 {
                Outcome::Ret(done as i64)
            } else {
                Outcome::Interrupted
            };
        }
        Outcome::Block(Blocked {
            fds: vec![(h, events)],
            mask: self.signals.mask,
            done,
            ..Blocked::default()
        })
    }

    /// `write` beside other threads. A blocking pipe or socket (one another
    /// thread reads) may take only part of the bytes before it blocks,
    /// which would stop every thread with the one hart: so as many as fit
    /// are written without blocking, and the call waits off the hart for
    /// room for the rest, as Linux's blocking `write` does, returning
    /// when all are written.
    fn write_beside_threads(&self, h: i32, buf: &[u8]) -> Outcome {
        // SAFETY: plain calls on a host descriptor; `buf` is a readable
        // guest range.
        unsafe {
            // Only a pipe or a socket can take part of a write and wait for
            // the reader; the flag is not touched on anything else (a
            // terminal shared with other processes, a file).
            let mut st: libc::stat = std::mem::zeroed();
            let kind = if libc::fstat(h, &mut st) == 0 {
                st.st_mode & libc::S_IFMT
            } else {
                0
            };
            let flags = libc::fcntl(h, libc::F_GETFL);
            if flags < 0
                || flags & libc::O_NONBLOCK != 0
                || buf.is_empty()
                || (kind != libc::S_IFIFO && kind != libc::S_IFSOCK)
            {
                return Outcome::Ret(ret(
                    libc::write(h, buf.as_ptr() as *const _, buf.len()) as i64
                ));
            }
            libc::fcntl(h, libc::F_SETFL, flags | libc::O_NONBLOCK);
            let n = libc::write(h, buf.as_ptr() as *const _, buf.len()) as i64;
            let err = errno();
            libc::fcntl(h, libc::F_SETFL, flags);
            match n {
                n if n as usize == buf.len() => Outcome::Ret(n),
                n if n >= 0 => self.wait_for(h, libc::POLLOUT, n as u64),
                _ if err == -(libc::EAGAIN as i64) => self.wait_for(h, libc::POLLOUT, 0),
                _ => Outcome::Ret(err),
            }
        }
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

    /// Whether `pid` (a system call's argument) names the simulated
    /// process: 0 or its own pid. It is the only process there is.
    fn is_me(&self, pid: u64) -> bool {
        let pid = pid as i32;
        // SAFETY: plain call.
        pid == 0 || pid == unsafe { libc::getpid() }
    }

    fn install(&mut self, host: i32, min: usize) -> i64 {
        if host < 0 {
            return errno();
        }
        match self.fds.insert(host, min) {
            Some(g) => g,
            None => {
                // SAFETY: closing the descriptor we just made.
                unsafe { libc::close(host) };
                -(libc::EMFILE as i64)
            }
        }
    }

    /// Converts a host `struct stat` to the RV64 (asm-generic) layout.
    fn put_stat(&self, mem: &mut Memory, r: i32, st: &libc::stat, addr: u64) -> i64 {
        if r < 0 {
            return errno();
        }
        let mut b = [0u8; 128];
        let mut put =
            |off: usize, v: u64, n: usize| b[off..off + n].copy_from_slice(&v.to_le_bytes()[..n]);
        put(0, st.st_dev, 8);
        put(8, st.st_ino, 8);
        put(16, st.st_mode as u64, 4);
        put(20, st.st_nlink, 4);
        put(24, st.st_uid as u64, 4);
        put(28, st.st_gid as u64, 4);
        put(32, st.st_rdev, 8);
        put(48, st.st_size as u64, 8);
        put(56, st.st_blksize as u64, 4);
        put(64, st.st_blocks as u64, 8);
        put(72, st.st_atime as u64, 8);
        put(80, st.st_atime_nsec as u64, 8);
        put(88, st.st_mtime as u64, 8);
        put(96, st.st_mtime_nsec as u64, 8);
        put(104, st.st_ctime as u64, 8);
        put(112, st.st_ctime_nsec as u64, 8);
        match mem.slice_mut(addr, 128) {
            Ok(s) => {
                s.copy_from_slice(&b);
                0
            }
            Err(_) => EFAULT,
        }
    }

    fn brk(&mut self, mem: &mut Memory, want: u64) -> Outcome {
        if want < self.brk_start {
            return Outcome::Ret(self.brk as i64);
        }
        let (cur_end, new_end) = (page_up(self.brk), page_up(want));
        if new_end > cur_end {
            if !mem.is_free(cur_end, new_end - cur_end)
                || mem
                    .map(cur_end, new_end - cur_end, perm::R | perm::W)
                    .is_err()
            {
                return Outcome::Ret(self.brk as i64);
            }
        } else if new_end < cur_end && mem.unmap(new_end, cur_end - new_end).is_err() {
            return Outcome::Ret(self.brk as i64);
        }
        self.brk = want;
        Outcome::Ret(want as i64)
    }

    fn mmap(&mut self, mem: &mut Memory, a: [u64; 8]) -> Result<Outcome, SimError> {
        let (addr, len, prot, flags, fd, off) =
            (a[0], a[1], (a[2] & 7) as u8, a[3] as i32, a[4] as i32, a[5]);
        // Linux's order: the offset, the descriptor, the length, the type.
        if off % PAGE != 0 {
            return Ok(Outcome::Ret(EINVAL));
        }
        let anon = flags & libc::MAP_ANONYMOUS != 0;
        let host = if anon {
            -1
        } else {
            match self.fds.host(fd as i64) {
                Some(h) => h,
                None => return Ok(Outcome::Ret(EBADF)),
            }
        };
        if len == 0 {
            return Ok(Outcome::Ret(EINVAL));
        }
        if len > crate::mem::LIMIT {
            return Ok(Outcome::Ret(ENOMEM));
        }
        // MAP_SHARED, MAP_PRIVATE or MAP_SHARED_VALIDATE, exactly one.
        if !matches!(flags & 0x0f, 1..=3) {
            return Ok(Outcome::Ret(EINVAL));
        }
        if !anon {
            // A file mapping needs a descriptor open for reading, of a
            // file that can be mapped (not a directory, pipe or socket).
            // SAFETY: plain descriptor calls on a descriptor we hold.
            let mode = unsafe { libc::fcntl(host, libc::F_GETFL) };
            if mode >= 0 && mode & libc::O_ACCMODE == libc::O_WRONLY {
                return Ok(Outcome::Ret(-(libc::EACCES as i64)));
            }
            // A shared mapping to write needs a descriptor open for
            // writing too (O_APPEND does not matter: Linux refuses only
            // files with the append-only attribute, which the host checks).
            let shared = flags & libc::MAP_SHARED != 0;
            if shared && prot & perm::W != 0 && mode & libc::O_ACCMODE != libc::O_RDWR {
                return Ok(Outcome::Ret(-(libc::EACCES as i64)));
            }
            // SAFETY: st is a valid out-parameter.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstat(host, &mut st) } == 0
                && matches!(
                    st.st_mode & libc::S_IFMT,
                    libc::S_IFDIR | libc::S_IFIFO | libc::S_IFSOCK
                )
            {
                return Ok(Outcome::Ret(-(libc::ENODEV as i64)));
            }
        }
        let len = page_up(len);
        let shared = flags & libc::MAP_SHARED != 0;
        let fixed = flags & libc::MAP_FIXED != 0;
        let noreplace = flags & libc::MAP_FIXED_NOREPLACE != 0;
        let at = if fixed || noreplace {
            if addr % PAGE != 0 {
                return Ok(Outcome::Ret(EINVAL));
            }
            if noreplace && !mem.is_free(addr, len) {
                return Ok(Outcome::Ret(-(libc::EEXIST as i64)));
            }
            addr
        } else if addr != 0 && addr % PAGE == 0 && mem.is_free(addr, len) {
            addr
        } else {
            match mem.find_free(len, page_up(self.brk) + PAGE, MMAP_TOP) {
                Some(a) => a,
                None => return Ok(Outcome::Ret(ENOMEM)),
            }
        };
        let replaces_code = mem.range_has(at, len, perm::X);
        let host_shared = match (shared, anon) {
            (false, _) => None,
            (true, true) => Some((None, len)),
            // A file open for writing: its pages, as far as the file goes.
            // One open only for reading is copied, as a private mapping:
            // nothing can write to it through this mapping.
            (true, false) => shared_file_pages(host, off, len).map(|n| (Some(host), n)),
        };
        if let Some((fd, n)) = host_shared {
            if let Err(e) = mem.map_shared(at, n, prot, fd, off) {
                return Ok(Outcome::Ret(
                    -(e.raw_os_error().unwrap_or(libc::ENOMEM) as i64),
                ));
            }
            // Past the file's end Linux sends SIGBUS; here those pages
            // read as zeros (and reach no file).
            if mem.map(at + n, len - n, prot).is_err() {
                return Ok(Outcome::Ret(ENOMEM));
            }
        } else {
            if mem.map(at, len, prot).is_err() {
                return Ok(Outcome::Ret(ENOMEM));
            }
            if !anon {
                if let Err(e) = copy_file(mem, host, at, len, off) {
                    let _ = mem.unmap(at, len);
                    return Ok(Outcome::Ret(e));
                }
            }
        }
        let file = (!anon)
            .then(|| std::fs::read_link(format!("/proc/self/fd/{host}")).ok())
            .flatten();
        match file {
            Some(path) => {
                if prot & perm::X != 0 {
                    self.note_module(host, &path, at, off);
                }
                self.file_maps.record(at, len, off, &path);
            }
            None => self.file_maps.forget(at, len),
        }
        if replaces_code {
            Ok(Outcome::RetFlush(at as i64))
        } else {
            Ok(Outcome::Ret(at as i64))
        }
    }

    /// Records the code of a file mapped executable at `at` from byte
    /// `offset` of the host descriptor `host`, the file `path` (a library
    /// the dynamic loader maps), unless the same file is already known
    /// there.
    fn note_module(&mut self, host: i32, path: &std::path::Path, at: u64, offset: u64) {
        if let Some(m) = crate::process::mapped_module(host, path, at, offset) {
            if !self.modules.contains(&m) {
                self.modules.push(m);
            }
        }
    }

    /// Records a file the loader put in memory (the program, its dynamic
    /// loader): its code, to name PCs, and its file-backed pages, for
    /// `/proc/self/maps`.
    pub(crate) fn note_loaded(&mut self, elf: &crate::elf::Elf, bias: u64, path: &std::path::Path) {
        self.modules
            .push(crate::process::module_of(elf, bias, path));
        for (start, len, offset) in crate::process::file_pages(elf, bias) {
            self.file_maps.record(start, len, offset, path);
        }
    }

    /// `mremap`, and what it does to the file mappings: the pages it
    /// gives up are forgotten, and a moved mapping is anonymous in
    /// `/proc/self/maps` (its file is not followed). A shared mapping
    /// moves as the same shared pages, and may shrink, but growing one
    /// stops the run: its new pages would have to be the same file's or
    /// memory's, which only Linux's own mapping can extend.
    fn mremap(&mut self, mem: &mut Memory, a: [u64; 8], pc: u64) -> Result<Outcome, SimError> {
        let (old, old_len, new_len) = (a[0], page_up(a[1]), page_up(a[2]));
        if mem.range_has(old, old_len, perm::SHARED) && new_len > old_len {
            return Err(SimError::Unsupported {
                what: format!(
                    "mremap (system call {}) growing a MAP_SHARED mapping",
                    nr::MREMAP
                ),
                pc,
            });
        }
        let out = self.mremap_pages(mem, a);
        if let Outcome::Ret(v) | Outcome::RetFlush(v) = out {
            let (old, old_len, new_len) = (a[0], page_up(a[1]), page_up(a[2]));
            if v >= 0 && v as u64 != old {
                self.file_maps.forget(old, old_len);
                self.file_maps.forget(v as u64, new_len);
            } else if v >= 0 && new_len < old_len {
                self.file_maps.forget(old + new_len, old_len - new_len);
            }
        }
        Ok(out)
    }

    fn mremap_pages(&mut self, mem: &mut Memory, a: [u64; 8]) -> Outcome {
        let (old, old_len, new_len, flags) = (a[0], page_up(a[1]), page_up(a[2]), a[3]);
        let (may_move, fixed) = (flags & 1 != 0, flags & 2 != 0);
        // MREMAP_DONTUNMAP (4) is not supported: EINVAL, as for any
        // unknown flag; MREMAP_FIXED needs MREMAP_MAYMOVE.
        if old % PAGE != 0 || new_len == 0 || flags & !3 != 0 || (fixed && !may_move) {
            return Outcome::Ret(EINVAL);
        }
        let p = mem.perm_at(old);
        if p & perm::MAPPED == 0 || old_len == 0 {
            return Outcome::Ret(-(libc::EFAULT as i64));
        }
        let code = mem.range_has(old, old_len, perm::X);
        let done = |v: u64| {
            if code {
                Outcome::RetFlush(v as i64)
            } else {
                Outcome::Ret(v as i64)
            }
        };
        if fixed {
            // To exactly a[4], replacing what was there; the two ranges
            // must not overlap.
            let to = a[4];
            let overlap = to < old.saturating_add(old_len) && old < to.saturating_add(new_len);
            if !to.is_multiple_of(PAGE) || overlap || to.checked_add(new_len).is_none() {
                return Outcome::Ret(EINVAL);
            }
            return self.move_mapping(mem, old, old_len, to, new_len, p, code);
        }
        if new_len <= old_len {
            let _ = mem.unmap(old + new_len, old_len - new_len);
            return done(old);
        }
        if mem.is_free(old + old_len, new_len - old_len)
            && mem.map(old + old_len, new_len - old_len, p).is_ok()
        {
            return Outcome::Ret(old as i64);
        }
        if flags & 1 == 0 {
            return Outcome::Ret(ENOMEM);
        }
        let Some(to) = mem.find_free(new_len, page_up(self.brk) + PAGE, MMAP_TOP) else {
            return Outcome::Ret(ENOMEM);
        };
        self.move_mapping(mem, old, old_len, to, new_len, p, code)
    }

    /// Moves the mapping at `old` (`old_len` bytes, permissions `p`) to
    /// `to`, `new_len` bytes long: what the first `new_len` bytes held
    /// moves with it, the rest reads as zeros, and the old range is
    /// unmapped.
    #[allow(clippy::too_many_arguments)]
    fn move_mapping(
        &mut self,
        mem: &mut Memory,
        old: u64,
        old_len: u64,
        to: u64,
        new_len: u64,
        p: u8,
        code: bool,
    ) -> Outcome {
        if mem.range_has(old, old_len, perm::SHARED) {
            // Shared pages move as themselves (never growing: see
            // `mremap`), so that they stay shared.
            let _ = mem.unmap(to, new_len);
            if mem.move_pages(old, new_len, to).is_err() {
                return Outcome::Ret(ENOMEM);
            }
            let _ = mem.unmap(old, old_len);
        } else {
            let data = match mem.slice(old, old_len.min(new_len), perm::MAPPED) {
                Ok(s) => s.to_vec(),
                Err(_) => return Outcome::Ret(EFAULT),
            };
            if mem.map(to, new_len, p).is_err() || mem.poke(to, &data).is_err() {
                return Outcome::Ret(ENOMEM);
            }
            let _ = mem.unmap(old, old_len);
        }
        if code || mem.range_has(to, new_len, perm::X) {
            Outcome::RetFlush(to as i64)
        } else {
            Outcome::Ret(to as i64)
        }
    }
}

/// How many bytes from `off` of `len` a shared mapping of the host
/// descriptor `fd` takes from the file: those up to its end, page-rounded;
/// `None` when the descriptor is not open for reading and writing (its
/// mapping is a copy) or is not a regular file.
fn shared_file_pages(fd: i32, off: u64, len: u64) -> Option<u64> {
    // SAFETY: plain descriptor calls; st is a valid out-parameter.
    let mode = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if mode < 0
        || mode & libc::O_ACCMODE != libc::O_RDWR
        || unsafe { libc::fstat(fd, &mut st) } != 0
        || st.st_mode & libc::S_IFMT != libc::S_IFREG
    {
        return None;
    }
    Some(page_up((st.st_size as u64).saturating_sub(off)).min(len))
}

/// Fills the mapped range `[at, at+len)` with the bytes of the host
/// descriptor `fd` from `off` (a private file mapping: a copy; past the
/// file's end it reads as zeros). Err: the errno, negated.
fn copy_file(mem: &mut Memory, fd: i32, at: u64, len: u64, off: u64) -> Result<(), i64> {
    let mut buf = vec![0u8; len as usize];
    let mut done = 0usize;
    while done < buf.len() {
        // SAFETY: reading into our own buffer.
        let n = unsafe {
            libc::pread(
                fd,
                buf[done..].as_mut_ptr() as *mut _,
                buf.len() - done,
                (off + done as u64) as i64,
            )
        };
        if n < 0 {
            return Err(errno());
        }
        if n == 0 {
            break;
        }
        done += n as usize;
    }
    mem.poke(at, &buf[..done]).map_err(|_| ENOMEM)
}

/// The host's number for a call passed through unchanged.
fn num_host(num: u64) -> libc::c_long {
    match num {
        nr::CLOCK_GETTIME => libc::SYS_clock_gettime,
        _ => libc::SYS_clock_getres,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATA: u64 = 0x10_0000;

    fn setup() -> (Kernel, Memory) {
        let mut mem = Memory::new().unwrap();
        mem.map(DATA, 0x1000, perm::R | perm::W).unwrap();
        let random = GuestRandom::new(Some(1));
        (
            Kernel::new(DATA + 0x1000, PathBuf::new(), None, false, random),
            mem,
        )
    }

    fn call(k: &mut Kernel, mem: &mut Memory, num: u64, args: [u64; 6]) -> i64 {
        let [a0, a1, a2, a3, a4, a5] = args;
        match k.syscall(mem, [a0, a1, a2, a3, a4, a5, 0, num], 0x1000) {
            Ok(Outcome::Ret(v)) => v,
            other => panic!("system call {num}: {other:?}"),
        }
    }

    /// `riscv_flush_icache` forgets the decoded code (a JIT compiler has
    /// written new code) and refuses unknown flags, as Linux does;
    /// Landlock is absent, as from a kernel built without it.
    #[test]
    fn icache_flushes_and_landlock() {
        let (mut k, mut mem) = setup();
        for flags in [0, 1] {
            let out = k.syscall(
                &mut mem,
                [0, u64::MAX, flags, 0, 0, 0, 0, nr::RISCV_FLUSH_ICACHE],
                0x1000,
            );
            assert!(
                matches!(out, Ok(Outcome::RetFlush(0))),
                "flags {flags}: {out:?}"
            );
        }
        assert_eq!(
            call(&mut k, &mut mem, nr::RISCV_FLUSH_ICACHE, [0, 0, 2, 0, 0, 0]),
            EINVAL
        );
        for num in [
            nr::LANDLOCK_CREATE_RULESET,
            nr::LANDLOCK_ADD_RULE,
            nr::LANDLOCK_RESTRICT_SELF,
        ] {
            assert_eq!(call(&mut k, &mut mem, num, [0; 6]), -(libc::ENOSYS as i64));
        }
    }

    /// The futex checks Linux makes before it looks at the word
    /// (kernel/futex/syscalls.c and waitwake.c).
    #[test]
    fn futex_refuses_what_linux_refuses() {
        let (mut k, mut mem) = setup();
        mem.store::<4>(DATA, 5).unwrap();
        let mut outcome = |op: u64, addr: u64, val: u64, val3: u64| {
            k.syscall(&mut mem, [addr, op, val, 0, 0, val3, 0, nr::FUTEX], 0x1000)
                .unwrap()
        };
        assert_eq!(
            outcome(1, DATA, 1, 0),
            Outcome::FutexWake {
                addr: DATA,
                count: 1,
                bitset: u32::MAX
            },
            "FUTEX_WAKE: the simulator wakes the threads"
        );
        assert_eq!(
            outcome(10, DATA, 3, 6),
            Outcome::FutexWake {
                addr: DATA,
                count: 3,
                bitset: 6
            },
            "WAKE_BITSET"
        );
        assert_eq!(
            outcome(128, DATA, 5, 0),
            Outcome::FutexWait {
                addr: DATA,
                val: 5,
                bitset: u32::MAX,
                until: None
            },
            "WAIT_PRIVATE on the value the word holds"
        );
        let mut futex = |op: u64, addr: u64, val: u64, val3: u64| match outcome(op, addr, val, val3)
        {
            Outcome::Ret(v) => v,
            other => panic!("futex {op}: {other:?}"),
        };
        assert_eq!(
            futex(128, DATA, 6, 0),
            -(libc::EAGAIN as i64),
            "WAIT_PRIVATE, value moved on"
        );
        assert_eq!(futex(9, DATA, 6, !0), -(libc::EAGAIN as i64), "WAIT_BITSET");
        assert_eq!(futex(9, DATA, 6, 0), EINVAL, "WAIT_BITSET, empty bitset");
        assert_eq!(futex(10, DATA, 1, 0), EINVAL, "WAKE_BITSET, empty bitset");
        assert_eq!(futex(0, DATA + 2, 0, 0), EINVAL, "WAIT, misaligned word");
        assert_eq!(futex(1, DATA + 2, 1, 0), EINVAL, "WAKE, misaligned word");
        let enosys = -(libc::ENOSYS as i64);
        assert_eq!(
            futex(1 | 256, DATA, 1, 0),
            enosys,
            "WAKE with CLOCK_REALTIME"
        );
        assert_eq!(futex(9 | 256, DATA, 6, !0), -(libc::EAGAIN as i64));
        assert_eq!(
            futex(1 | 512, DATA, 1, 0),
            enosys,
            "unknown bits are not masked off"
        );
        assert_eq!(futex(99, DATA, 0, 0), enosys);
    }

    /// A bad buffer after good ones ends the vector there: the good ones
    /// are transferred (Linux's short count on a regular file, qemu-user's
    /// everywhere); a bad first buffer is EFAULT.
    #[test]
    fn writev_and_readv_stop_at_a_bad_buffer() {
        let (mut k, mut mem) = setup();
        assert_eq!(call(&mut k, &mut mem, nr::PIPE2, [DATA, 0, 0, 0, 0, 0]), 0);
        let (rfd, wfd) = (
            mem.load::<4>(DATA).unwrap(),
            mem.load::<4>(DATA + 4).unwrap(),
        );
        mem.poke(DATA + 0x100, b"alphabeta").unwrap();
        let iov = |mem: &mut Memory, at: u64, v: &[(u64, u64)]| {
            for (n, (base, len)) in v.iter().enumerate() {
                mem.store::<8>(at + 16 * n as u64, *base).unwrap();
                mem.store::<8>(at + 16 * n as u64 + 8, *len).unwrap();
            }
        };
        iov(
            &mut mem,
            DATA + 0x200,
            &[(DATA + 0x100, 5), (8, 4), (DATA + 0x105, 4)],
        );
        assert_eq!(
            call(
                &mut k,
                &mut mem,
                nr::WRITEV,
                [wfd, DATA + 0x200, 3, 0, 0, 0]
            ),
            5
        );
        iov(&mut mem, DATA + 0x200, &[(0, 0), (8, 4), (DATA + 0x105, 4)]);
        assert_eq!(
            call(
                &mut k,
                &mut mem,
                nr::WRITEV,
                [wfd, DATA + 0x200, 3, 0, 0, 0]
            ),
            EFAULT
        );
        iov(
            &mut mem,
            DATA + 0x200,
            &[(DATA + 0x300, 2), (8, 4), (DATA + 0x310, 8)],
        );
        assert_eq!(
            call(&mut k, &mut mem, nr::READV, [rfd, DATA + 0x200, 3, 0, 0, 0]),
            2
        );
        assert_eq!(mem.slice(DATA + 0x300, 2, perm::R).unwrap(), b"al");
        assert_eq!(
            call(&mut k, &mut mem, nr::READ, [rfd, DATA + 0x300, 16, 0, 0, 0]),
            3
        );
        assert_eq!(mem.slice(DATA + 0x300, 3, perm::R).unwrap(), b"pha");
    }
}
