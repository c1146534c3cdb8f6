//! The program's child processes: `fork`, and the `clone` with CLONE_VM |
//! CLONE_VFORK that `posix_spawn`, `system` and `popen` make.
//!
//! The simulator forks the host process. The child is a host process of
//! its own with a copy of the simulated one: its memory, descriptors,
//! signal handlers, mask and alternate stack, and only the thread that
//! forked, as under Linux; no pending signal and no timer, as Linux's
//! `fork` leaves them. It goes on simulating the program's child with
//! nothing attached: reports are about the process coprof started, not
//! its children, unless they are followed
//! ([`Simulator::follow_children`]): then the child runs through the
//! follower's [`ChildRun`](super::ChildRun), which attaches sinks of its
//! own. When the child ends, its host process ends the same way
//! (the exit status, or death by the same signal), so that the parent's
//! `wait4` sees what it would under Linux. The child may replace itself
//! with `execve` (`crate::syscall`'s `exec`).
//!
//! Under Linux a CLONE_VM | CLONE_VFORK child shares its parent's memory
//! until it execs; here it has a copy, which serves what `posix_spawn`'s
//! child does (set up descriptors and signals, then exec), except report
//! a failed exec through that memory: `posix_spawn` then returns 0 and the
//! child exits with status 127, as `system` reports a missing shell.
//! Memory mapped MAP_SHARED is a host shared mapping
//! ([`crate::mem::Memory::map_shared`]), which the host's fork shares
//! with the child as Linux's does. The child's end sends the parent SIGCHLD, caught from
//! the host like any signal from outside ([`crate::host_signals`]);
//! `wait4` and `waitid` are the host's.

use super::{Exit, Simulator};
use crate::cpu::Cpu;
use crate::host_signals::{self, HostSignals};
use crate::itimer::Itimers;
use crate::syscall::{clone_flags, CloneArgs};
use crate::SimError;
use coprof_core::Discard;

impl Simulator {
    /// `clone` of a process by the `ecall` at `at`: in the parent, the
    /// child's pid (or the host's error) in a0; the child runs to its end
    /// here and never returns.
    pub(super) fn fork(&mut self, args: &CloneArgs, at: u64) {
        // SAFETY: fork. The child has only this thread; it goes on
        // simulating, which touches nothing the host's other threads (the
        // engines', a progress display's) may hold, and leaves with _exit.
        let mask = host_signals::block();
        let pid = unsafe { libc::fork() };
        let error = std::io::Error::last_os_error();
        if pid == 0 {
            self.become_child(args, at);
            // The child's own catching of signals from outside, in place
            // before a signal sent to it (held by the host meanwhile) comes.
            self.kernel.outside = HostSignals::install(&self.kernel.signals.actions);
            host_signals::unblock(&mask);
            let end = match self.follow.clone() {
                Some(run) => run(self),
                // Unobserved: a sink that wants nothing, so no events are built.
                None => self.run_to_exit(&mut Discard),
            };
            end_child(end, self.kernel.fds.host(2));
        }
        host_signals::unblock(&mask);
        let r = if pid < 0 {
            -(error.raw_os_error().unwrap_or(libc::EAGAIN) as i64)
        } else {
            self.kernel.children_started += 1;
            let pid = self.kernel.pids.seen(pid as i64);
            if args.flags & clone_flags::PARENT_SETTID != 0 {
                // A failed write is the program's own fault, as on Linux.
                let _ = self.mem.store::<4>(args.parent_tid, pid as u64);
            }
            pid
        };
        self.cpu.x[10] = r as u64;
        self.cpu.pc = at + 4;
    }

    /// Makes this copy of the simulator the program's child, at the
    /// instruction after the `ecall` at `at` with 0 in a0.
    fn become_child(&mut self, args: &CloneArgs, at: u64) {
        self.threads.parked.clear();
        let kernel = &mut self.kernel;
        // Its own host pid, as the program sees it: the parent keeps the
        // pid it was given (`--pid`).
        let pid = kernel.see_pid(kernel.pids);
        self.threads.next_tid = pid + 1;
        kernel.directed.clear();
        kernel.clear_tid = if args.flags & clone_flags::CHILD_CLEARTID != 0 {
            args.child_tid
        } else {
            0
        };
        kernel.signals.forget_pending();
        kernel.own_signalfds_after_fork();
        if args.flags & clone_flags::CLEAR_SIGHAND != 0 {
            kernel.signals.clear_handlers();
        }
        kernel.children_started = 0;
        kernel.timers = Itimers::default();
        // The child catches signals from outside for itself.
        if let Some(outside) = kernel.outside.take() {
            outside.forget_in_child();
        }
        // A child may replace itself: its reports (if followed) are of
        // the program it runs last.
        kernel.unobserved = true;
        if self.follow.is_some() {
            kernel.followed_child = true;
            kernel.runner = kernel.follow_runner.clone();
        }
        if args.flags & clone_flags::CHILD_SETTID != 0 {
            let _ = self.mem.store::<4>(args.child_tid, pid as u64);
        }
        if args.stack != 0 {
            self.cpu.x[2] = args.stack;
        }
        if args.flags & clone_flags::SETTLS != 0 {
            self.cpu.x[4] = args.tls;
        }
        self.cpu.x[10] = 0;
        self.cpu.pc = at + 4;
        self.cpu.reservation = Cpu::NO_RESERVATION;
        self.limit = 0;
        self.redirected = None;
        self.redo = None;
    }
}

/// Ends the host process as the simulated one ended, so that a parent
/// waiting for it sees what it would under Linux: with its exit status,
/// or killed by its signal (without a core file: it would be the
/// simulator's; a fault's message first). A process the simulator could
/// not go on with says why on its standard error (the host descriptor
/// `stderr`, if open) and exits with status 2. For a forked child, and
/// for a simulator a followed child's `execve` started.
pub fn end_child(end: Result<Exit, SimError>, stderr: Option<i32>) -> ! {
    // SAFETY: plain call.
    let pid = unsafe { libc::getpid() };
    match end {
        Ok(Exit::Code(code)) => exit_now(code),
        Ok(Exit::Limit) => exit_now(0),
        Ok(Exit::Signal { signal, message }) => {
            // A fault is worth its message (the PC, the instruction); any
            // other death by a signal is as silent as under Linux.
            if matches!(signal, 4 | 5 | 7 | 8 | 11) {
                say(stderr, &format!("coprof: child process {pid}: {message}\n"));
            }
            die_by(signal)
        }
        Err(e) => {
            say(stderr, &format!("coprof: child process {pid}: {e}\n"));
            exit_now(2)
        }
    }
}

/// Ends this host process by `signal`'s default action, as the program it
/// ran died, so that its parent's wait sees the signal, without a core
/// file of coprof's own (qemu-user ends so too); a signal whose default
/// is not to end the process ends it with 128 + `signal`.
pub fn die_by(signal: i32) -> ! {
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain calls on local values; raise returns only if the
    // signal did not kill.
    unsafe {
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(signal, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signal);
    }
    exit_now(128 + signal)
}

/// Ends the host process at once: nothing of the parent's (buffered
/// output, reports) is flushed or written twice.
fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns.
    unsafe { libc::_exit(code) }
}

/// Writes `text` to the host descriptor `fd` (the child's standard
/// error), without Rust's lock on stderr, which a thread the fork left
/// behind may have held.
fn say(fd: Option<i32>, text: &str) {
    if let Some(fd) = fd {
        // SAFETY: a valid buffer of that length.
        unsafe { libc::write(fd, text.as_ptr() as *const _, text.len()) };
    }
}
