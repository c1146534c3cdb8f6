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
//!
//! This module holds the kernel's state, the helpers every call uses and
//! the waits of calls beside other threads; the calls themselves are in
//! one module per area, each with the list of calls it answers (`CALLS`):
//! `files`, `memory`, `process`, `time`, `signals`, `select`, `epoll`,
//! `sockets`, `sysv_ipc`, `signalfd`, `exec`, `hwprobe`, and `host_calls`
//! for those the host answers once pointers and descriptors are
//! translated.

use crate::error::SimError;
use crate::fdtable::{FdTable, MAX_FDS};
use crate::host_signals::HostSignals;
use crate::itimer::{earlier, Itimers};
use crate::mem::{perm, Memory};
use crate::pids::Pids;
use crate::random::GuestRandom;
use crate::signal::{SigInfo, Signals};
use crate::sysno as nr;
use crate::threads::Redo;
use std::ffi::CString;
use std::path::PathBuf;

/// Every address: for a [`Outcome::RetFlush`] after which any decoded
/// code may be stale (`riscv_flush_icache`, whose range Linux ignores).
pub const ALL_CODE: std::ops::Range<u64> = 0..u64::MAX;

/// What a system call did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Continue with this value in a0.
    Ret(i64),
    /// Continue with this value in a0; the code decoded from these
    /// addresses may be stale (unmapped, remapped, or its permissions
    /// changed). [`ALL_CODE`] when any may be.
    RetFlush(i64, std::ops::Range<u64>),
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
    /// Every area mapped over the run, named, to name a profile's data
    /// addresses ([`coprof_core::areas`]).
    pub areas: coprof_core::areas::Areas,
    /// The extents of the last anonymous `mmap`s, newest last: where
    /// one mapping ends when [`areas`](Self::areas) has joined it with
    /// its neighbours (a thread's stack, named when the thread starts).
    pub anon_maps: std::collections::VecDeque<(u64, u64)>,
    /// The program's own `/proc/self/cmdline`, `environ` and `auxv`.
    pub own_files: proc_self::OwnFiles,
    /// Return ENOSYS for unknown calls instead of stopping.
    pub enosys: bool,
    /// The hart's instruction set, which `riscv_hwprobe` reports.
    pub isa: crate::isa::Isa,
    /// Dispositions, mask, pending signals and the alternate stack.
    pub signals: Signals,
    /// `setitimer`'s three timers.
    pub timers: Itimers,
    /// The stack pointer when the current system call was made (for
    /// `sigaltstack`, which asks whether it is on the alternate stack).
    pub sp: u64,
    /// The running thread's `rseq` area (0: none registered).
    pub rseq: u64,
    /// The ids the program sees in place of the host's ([`Pids`]).
    pub pids: Pids,
    /// The running thread's id (the process id for the first thread).
    pub tid: i64,
    /// Ids of every live thread, the running one included.
    pub tids: Vec<i64>,
    /// The running thread's `set_tid_address` / CLONE_CHILD_CLEARTID word.
    pub clear_tid: u64,
    /// Signals sent by `tgkill` to threads off the hart, for the
    /// simulator to hand to them.
    pub directed: Vec<(i64, SigInfo)>,
    /// The threads off the hart, with their blocked and pending signals
    /// (id, mask, pending): what their `/proc` status files show, filled
    /// in afresh by the simulator before each call that may open one.
    pub(crate) parked_signals: Vec<(i64, u64, u64)>,
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
    /// Names threads were given (`prctl(PR_SET_NAME)`, a write to their
    /// `comm`), by id.
    names: Vec<(i64, [u8; 16])>,
    /// The `comm` files opened to be written, by the inode of the file
    /// that stands for each, with the thread each names: a write names
    /// that thread (`pthread_setname_np` of another thread writes its
    /// `comm`).
    comm_files: Vec<(u64, i64)>,
    /// The catching of signals from outside while the program runs
    /// ([`crate::host_signals`]).
    pub outside: Option<HostSignals>,
    /// Child processes the program started (`fork`, `posix_spawn`).
    pub children_started: u64,
    /// Set by the simulator while a call that waited off the hart is made
    /// again: how ([`Redo`]: the end its timeout had, whether it waited
    /// on a System V semaphore or queue); the default otherwise.
    pub(crate) resumed: Redo,
    /// Set by a System V call that may have let another thread's wait
    /// on a semaphore or queue through: the simulator then makes the
    /// threads that wait so look again ([`Blocked::looks_again`]).
    pub(crate) sysv_moved: bool,
    /// System V shared memory segments attached, by address.
    sysv: sysv_ipc::Attached,
    /// The program's signalfds.
    signalfds: signalfd::SignalFds,
}

/// What `fstat` says of host descriptor `h`, if it answers.
fn host_stat(h: i32) -> Option<libc::stat> {
    // SAFETY: st is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(h, &mut st) } == 0).then_some(st)
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
mod files;
mod host_calls;
mod hwprobe;
mod memory;
pub mod proc_self;
mod proc_tasks;
mod process;
mod select;
mod signalfd;
mod signals;
mod sockets;
mod sysv_ipc;
mod time;

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
            areas: {
                let mut a = coprof_core::areas::Areas::default();
                let stack = crate::process::STACK_TOP - crate::process::STACK_SIZE;
                a.record(stack, crate::process::STACK_TOP, coprof_core::areas::STACK);
                a
            },
            anon_maps: std::collections::VecDeque::new(),
            own_files: proc_self::OwnFiles::default(),
            enosys,
            isa: crate::isa::Isa::default(),
            signals: Signals::default(),
            timers: Itimers::default(),
            sp: 0,
            rseq: 0,
            pids: Pids::default(),
            // SAFETY: plain call.
            tid: unsafe { libc::getpid() } as i64,
            tids: vec![unsafe { libc::getpid() } as i64],
            clear_tid: 0,
            directed: Vec::new(),
            parked_signals: Vec::new(),
            enosys_calls: Vec::new(),
            runner: None,
            follow_runner: None,
            followed_child: false,
            exec_follower: None,
            unobserved: false,
            names: Vec::new(),
            comm_files: Vec::new(),
            outside: None,
            children_started: 0,
            resumed: Redo::default(),
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
    /// `/proc/self/exe` is the program's file, not coprof's, and
    /// `/proc/PID/` names the process the program means by PID.
    fn host_path(&self, bytes: Vec<u8>) -> Result<CString, i64> {
        let bytes = self.host_proc_path(bytes);
        if Self::is_exe(&bytes) {
            return CString::new(self.exe.as_os_str().as_encoded_bytes()).map_err(|_| EINVAL);
        }
        let mapped =
            crate::sysroot::host_file(&bytes, self.root.as_deref(), self.sysroot.as_deref());
        CString::new(mapped).map_err(|_| EINVAL)
    }

    /// The guest path `bytes` with a `/proc` directory of the program's
    /// own, a thread's or its process's ([`proc_self::thread_dir`],
    /// [`proc_self::host_proc_path`]), named as the host knows it.
    fn host_proc_path(&self, bytes: Vec<u8>) -> Vec<u8> {
        self.proc_dir(bytes).1
    }

    /// [`host_proc_path`](Self::host_proc_path), with the program's
    /// thread whose directory the path named, if it named one.
    fn proc_dir(&self, bytes: Vec<u8>) -> (Option<i64>, Vec<u8>) {
        match proc_self::thread_dir(&bytes, &self.pids, &self.tids) {
            Some((tid, thread)) => (Some(tid), thread),
            None => (None, proc_self::host_proc_path(bytes, &self.pids)),
        }
    }

    /// Whether `path`, as [`host_proc_path`](Self::host_proc_path) left
    /// it, is the program's own file: its `exe` link, the host's being
    /// coprof's.
    fn is_exe(path: &[u8]) -> bool {
        path == b"/proc/self/exe" || path == b"/proc/thread-self/exe"
    }

    /// The host directory and path of an `*at` call's (dirfd, pathname)
    /// pair. The name is read first, as Linux does: a bad pointer is
    /// EFAULT even beside a bad descriptor.
    fn at_path(&self, mem: &Memory, dirfd: u64, addr: u64) -> Result<(i32, CString), i64> {
        let guest = mem.read_cstr(addr, 4096).map_err(|_| EFAULT)?;
        let dir = self.dirfd(dirfd)?;
        Ok((dir, self.host_path(proc_tasks::relative(dir, guest))?))
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
            if outcome == Outcome::Ret(-(libc::EPIPE as i64)) && raises_sigpipe(a) {
                // As Linux's pipe_write and socket sends: EPIPE and the
                // SIGPIPE that goes with it, which the program's action
                // takes (the host's own is ignored while it runs).
                let info = SigInfo::sent(libc::SIGPIPE, crate::signal::code::SI_USER, &self.pids);
                self.send_own(info, None);
            }
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
            // Landlock sandboxes (xz, since 5.6, restricts itself) are
            // answered as by a kernel built without Landlock, which every
            // caller must expect: a sandbox would hold coprof's own
            // process, whose files (a trace, a profile) the program never
            // named.
            nr::LANDLOCK_CREATE_RULESET | nr::LANDLOCK_ADD_RULE | nr::LANDLOCK_RESTRICT_SELF => {
                -(libc::ENOSYS as i64)
            }
            // io_uring likewise, as by a kernel built without it (or
            // older than 5.1), which its callers fall back from to plain
            // calls: its rings would be memory the kernel reads and
            // writes behind the program's instructions, unseen by the
            // profiles.
            nr::IO_URING_SETUP | nr::IO_URING_ENTER | nr::IO_URING_REGISTER => {
                -(libc::ENOSYS as i64)
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
            nr::RISCV_HWPROBE => return Ok(hwprobe::riscv_hwprobe(mem, a, self.isa)),
            nr::SIGNALFD4 => self.signalfd4(mem, a),
            n if files::CALLS.contains(&n) => return self.file_call(mem, a, pc),
            n if memory::CALLS.contains(&n) => return self.memory_call(mem, a, pc),
            n if process::CALLS.contains(&n) => return self.process_call(mem, a, pc),
            n if time::CALLS.contains(&n) => return self.time_call(mem, a),
            n if signals::CALLS.contains(&n) => return self.signal_call(mem, a, pc),
            n if select::CALLS.contains(&n) => return self.select_call(mem, a, pc),
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

    /// Whether the program has other threads than the one on the hart: a
    /// call that would wait must then leave the hart to them rather than
    /// wait on the host.
    fn beside_threads(&self) -> bool {
        self.tids.len() > 1
    }

    /// When a wait of `timeout` that starts now ends; for a call made
    /// again after it waited off the hart, the end it had then.
    pub(crate) fn deadline(
        &self,
        timeout: Option<std::time::Duration>,
    ) -> Option<std::time::Instant> {
        self.resumed
            .until
            .or_else(|| timeout.map(|t| std::time::Instant::now() + t))
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
            let off_hart = self.beside_threads();
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
                self.signals.hold(info.seen_by(&self.pids));
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
        if self.beside_threads() {
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

    /// Whether a call on host descriptor `h` that waits for `events` must
    /// leave the hart first: only beside other threads (one may make the
    /// descriptor ready), when it is not ready now and blocks (no
    /// O_NONBLOCK). Then the call waits off the hart, or is interrupted
    /// if a signal is there to take.
    fn must_wait(&self, h: i32, events: i16) -> Option<Outcome> {
        if !self.beside_threads() {
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

    /// Whether `pid` (a system call's argument) names the simulated
    /// process: 0 or its own pid. It is the only process there is.
    fn is_me(&self, pid: u64) -> bool {
        let pid = pid as i32 as i64;
        pid == 0 || pid == self.pids.own()
    }

    /// A host call's answer that is a process or group id (or -1 and
    /// errno), as the program sees it.
    fn seen_id(&self, r: i64) -> i64 {
        if r < 0 {
            errno()
        } else {
            self.pids.seen(r)
        }
    }

    /// Makes the program see the ids `pids` gives in place of the host's
    /// (`--pid`): its first thread's id is its pid, and the simulator
    /// numbers the others after it. Returns that pid.
    pub fn see_pid(&mut self, pids: Pids) -> i64 {
        self.pids = pids;
        let own = pids.own();
        self.tid = own;
        self.tids = vec![own];
        own
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
}

/// Whether system call `a[7]`, ending with EPIPE, comes with SIGPIPE: a
/// write to a pipe or socket whose reader is gone, unless a send asked
/// for MSG_NOSIGNAL (Linux's pipe_write, unix and TCP sends).
fn raises_sigpipe(a: [u64; 8]) -> bool {
    let nosignal = |flags: u64| flags & libc::MSG_NOSIGNAL as u64 != 0;
    match a[7] {
        nr::WRITE | nr::WRITEV | nr::SENDFILE => true,
        nr::SENDTO => !nosignal(a[3]),
        nr::SENDMSG => !nosignal(a[2]),
        _ => false,
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

    /// A change of what is mapped says which addresses' decoded code it may
    /// leave stale when they are, or become, executable, and nothing when
    /// neither: the simulator then forgets only if it decoded code there.
    #[test]
    fn mapping_changes_name_the_code_they_may_leave_stale() {
        let (mut k, mut mem) = setup();
        let anon = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
        let rw = (libc::PROT_READ | libc::PROT_WRITE) as u64;
        let rx = (libc::PROT_READ | libc::PROT_EXEC) as u64;
        let mut sys = |num, a: [u64; 6]| {
            k.syscall(
                &mut mem,
                [a[0], a[1], a[2], a[3], a[4], a[5], 0, num],
                0x1000,
            )
            .unwrap()
        };
        // Data: no code before or after.
        let Outcome::Ret(at) = sys(nr::MMAP, [0, 0x2000, rw, anon, u64::MAX, 0]) else {
            panic!("mmap of data")
        };
        let at = at as u64;
        // Made executable: a fetch there may have faulted before.
        let out = sys(nr::MPROTECT, [at, 0x1000, rx, 0, 0, 0]);
        assert_eq!(out, Outcome::RetFlush(0, at..at + 0x1000));
        // Code unmapped; data unmapped.
        let out = sys(nr::MUNMAP, [at, 0x1000, 0, 0, 0, 0]);
        assert_eq!(out, Outcome::RetFlush(0, at..at + 0x1000));
        assert_eq!(
            sys(nr::MUNMAP, [at + 0x1000, 0x1000, 0, 0, 0, 0]),
            Outcome::Ret(0)
        );
        // Code mapped where there was none: its own range.
        let fixed = anon | libc::MAP_FIXED as u64;
        let out = sys(nr::MMAP, [at, 0x1000, rx, fixed, u64::MAX, 0]);
        assert_eq!(out, Outcome::RetFlush(at as i64, at..at + 0x1000));
    }

    /// `riscv_flush_icache` forgets the decoded code (a JIT compiler has
    /// written new code) and refuses unknown flags, as Linux does;
    /// Landlock is absent, as from a kernel built without it.
    #[test]
    fn icache_flushes_landlock_and_io_uring() {
        let (mut k, mut mem) = setup();
        for flags in [0, 1] {
            let out = k.syscall(
                &mut mem,
                [0, u64::MAX, flags, 0, 0, 0, 0, nr::RISCV_FLUSH_ICACHE],
                0x1000,
            );
            assert!(
                matches!(&out, Ok(Outcome::RetFlush(0, r)) if *r == ALL_CODE),
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
            nr::IO_URING_SETUP,
            nr::IO_URING_ENTER,
            nr::IO_URING_REGISTER,
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
