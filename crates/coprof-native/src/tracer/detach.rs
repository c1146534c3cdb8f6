//! Attaching to a process that is already running, as `perf record -p`
//! does, and letting it go again as it was: every thread seized, sampled
//! until the caller says stop, then stopped, cleared of coprof's signals
//! and detached, so that the process runs on as if it had never been
//! sampled.

use super::{ended, event_message, resume, Process, Tracer};
use crate::perf::SAMPLE_SIGNAL;
use crate::start::options;
use crate::{Config, Exit, Hooks, NativeError, Run};
use coprof_core::Sink;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;

/// Samples the running process `pid`, as [`crate::sample_with`] samples a
/// program it starts, from now until the process ends or `stop` is set;
/// the process then goes on, unsampled, and the run's exit is
/// [`Exit::Detached`].
///
/// `stop` is read between two changes of the process's threads, and
/// whenever a signal interrupts this thread's wait for the next one. A
/// process that sleeps makes no change, so the caller sets `stop` from a
/// signal handler installed without `SA_RESTART` (Ctrl-C's, or an
/// alarm's for a set time) that runs on this thread.
///
/// The threads the process has are seized, and the threads it starts
/// from now on are followed; with [`Hooks::children`], so are the
/// processes it forks from now on. Child processes it had before are not
/// sampled. Attaching needs the right to trace the process: the same
/// user and `/proc/sys/kernel/yama/ptrace_scope` 0, or `CAP_SYS_PTRACE`.
pub fn attach_with<'h>(
    pid: i32,
    config: &Config,
    sink: &mut dyn Sink,
    hooks: Hooks<'h>,
    stop: &'h AtomicBool,
) -> Result<Run, NativeError> {
    config.check()?;
    if config.same_cpu {
        return Err(NativeError::SameCpuAttached { pid });
    }
    let attach_error = |source| NativeError::Attach { pid, source };
    if pid <= 0 {
        return Err(attach_error(std::io::Error::from_raw_os_error(libc::ESRCH)));
    }
    let program = std::fs::read_link(format!("/proc/{pid}/exe")).map_err(|e| {
        attach_error(match e.kind() {
            std::io::ErrorKind::NotFound => std::io::Error::from_raw_os_error(libc::ESRCH),
            _ => e,
        })
    })?;
    if let Some(ids) = super::Ids::of(pid).filter(|ids| ids.tgid != pid) {
        return Err(NativeError::AttachThread {
            tid: pid,
            pid: ids.tgid,
        });
    }
    let tids = seize(pid, options(hooks.children.is_some(), false)).map_err(attach_error)?;
    let mut main = Process::new(Run::starting(&program));
    main.run.pid = pid;
    main.run.args = super::command_line(pid);
    main.run.threads = tids.len() as u64;
    main.children_cpu_before_ns = super::children_cpu_ns_of(pid);
    let mut tracer = Tracer::new(main, config, &*sink, hooks, None, Some(stop));
    tracer.threads.extend(tids.iter().map(|&tid| (tid, pid)));
    let result = tids
        .iter()
        .try_for_each(|&tid| tracer.clock_new(pid, tid))
        .and_then(|()| tracer.trace(sink));
    if let Err(e) = result {
        // Let it go as it was, whatever went wrong.
        let _ = tracer.detach(sink);
        return Err(e);
    }
    Ok(tracer.run_ended())
}

/// Seizes every thread of process `pid` with `options`, as they run: the
/// threads listed in `/proc/PID/task`, again until a listing shows none
/// new, since a thread not yet seized may start another. Those that
/// seized threads start are seized by the kernel (`PTRACE_O_TRACECLONE`).
/// Returns the threads seized; on an error none stays seized.
fn seize(pid: i32, options: libc::c_int) -> Result<Vec<i32>, std::io::Error> {
    let mut seized: Vec<i32> = Vec::new();
    let mut seen: HashSet<i32> = HashSet::new();
    // The first thread first: when it cannot be seized, nothing is.
    let mut listing = vec![pid];
    loop {
        let new: Vec<i32> = listing.into_iter().filter(|t| seen.insert(*t)).collect();
        if new.is_empty() {
            return Ok(seized);
        }
        for tid in new {
            // SAFETY: a ptrace request on a thread that may or may not
            // exist; the kernel checks.
            if unsafe { libc::ptrace(libc::PTRACE_SEIZE, tid, 0, options) } == 0 {
                seized.push(tid);
                continue;
            }
            let e = std::io::Error::last_os_error();
            let traced_here = || super::Ids::of(tid).is_some_and(|ids| ids.traced_by_this_thread());
            match e.raw_os_error() {
                // Started by a thread seized meanwhile: seized already.
                Some(libc::EPERM) if tid != pid && traced_here() => seized.push(tid),
                // Ended meanwhile.
                Some(libc::ESRCH) if tid != pid => {}
                _ => {
                    release(&seized);
                    return Err(e);
                }
            }
        }
        listing = tasks(pid)?;
    }
}

/// The threads of process `pid`, from `/proc/PID/task`.
fn tasks(pid: i32) -> Result<Vec<i32>, std::io::Error> {
    Ok(std::fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect())
}

/// Lets go of threads seized but not yet run under the tracer: each
/// stopped, then detached.
fn release(tids: &[i32]) {
    for &tid in tids {
        // SAFETY: ptrace requests and a wait on a thread seized here.
        unsafe { libc::ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0) };
        super::wait_for(tid);
        unsafe { libc::ptrace(libc::PTRACE_DETACH, tid, 0, 0) };
    }
}

impl Tracer<'_, '_> {
    /// Lets go of every thread followed, program and children, leaving
    /// each as it was: clocks closed, each thread stopped and detached
    /// with the signal it stopped with (but the clock's), and no signal
    /// of coprof's left pending, which would stop the process once
    /// detached (SIGSTOP's action). Each process still running ends its
    /// run with [`Exit::Detached`]; one that ends meanwhile, with its
    /// end.
    pub(super) fn detach(&mut self, sink: &mut dyn Sink) -> Result<(), NativeError> {
        self.detaching = true;
        self.stop = None;
        for tid in self.clocks.keys().copied().collect::<Vec<_>>() {
            self.close_clock(tid, sink);
        }
        let live: Vec<i32> = self.processes.keys().copied().collect();
        for process in live {
            self.read_modules(process);
        }
        let mut left: HashSet<i32> = HashSet::new();
        for tid in self.threads.keys().copied().collect::<Vec<_>>() {
            self.interrupt(tid, &mut left);
        }
        // Times each thread was resumed to take a pending clock signal:
        // a signal it cannot take does not hold it for ever.
        let mut tries: HashMap<i32, u32> = HashMap::new();
        // Processes met at their exit stop: how they end.
        let mut exits: HashMap<i32, Exit> = HashMap::new();
        while !left.is_empty() {
            let Some((tid, status)) = self.next_change().map_err(|e| self.trace_error(e))? else {
                continue;
            };
            let Some(&process) = self.threads.get(&tid) else {
                continue;
            };
            if let Some(exit) = ended(status) {
                left.remove(&tid);
                self.threads.remove(&tid);
                if tid == process {
                    self.process_ended(process, exit, sink);
                }
                continue;
            }
            if !libc::WIFSTOPPED(status) {
                continue;
            }
            let sig = libc::WSTOPSIG(status);
            let pass = match status >> 16 {
                0 if self.is_clock_stop(tid, sig) => 0,
                // The program's own signal: delivered as it is let go.
                0 => sig,
                libc::PTRACE_EVENT_CLONE => {
                    let new = event_message(tid);
                    self.threads.insert(new, process);
                    self.interrupt(new, &mut left);
                    0
                }
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK => {
                    let new = event_message(tid);
                    self.threads.entry(new).or_insert(new);
                    self.interrupt(new, &mut left);
                    0
                }
                libc::PTRACE_EVENT_EXIT => {
                    if tid == process {
                        if let Some(exit) = ended(event_message(tid)) {
                            exits.insert(process, exit);
                        }
                    }
                    0
                }
                // Its stop for the interrupt, a group-stop (kept by the
                // kernel past the detach), an exec: nothing to pass on.
                _ => 0,
            };
            let tried = tries.entry(tid).or_insert(0);
            if *tried < MAX_TRIES && clock_signal_pending(tid) {
                *tried += 1;
                // No mask blocks it, so the thread takes it as soon as
                // it goes on: it stops again at once, at the signal's
                // delivery, before any code of its own runs. Interrupting
                // it too would stop it first, before the signal, again
                // and again.
                resume(tid, pass);
                continue;
            }
            // SAFETY: a ptrace request on a stopped tracee.
            unsafe { libc::ptrace(libc::PTRACE_DETACH, tid, 0, pass as libc::c_long) };
            left.remove(&tid);
            self.threads.remove(&tid);
        }
        // Those still running, and any adopted meanwhile.
        let left_running: Vec<i32> = self.processes.keys().copied().collect();
        for process in left_running {
            let exit = exits.get(&process).copied().unwrap_or(Exit::Detached);
            self.process_ended(process, exit, sink);
        }
        Ok(())
    }

    /// Asks thread `tid` to stop, and adds it to `left`, the threads to
    /// let go, unless it has gone.
    fn interrupt(&mut self, tid: i32, left: &mut HashSet<i32>) {
        // SAFETY: a ptrace request on a tracee; the kernel checks.
        if unsafe { libc::ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0) } == 0 {
            left.insert(tid);
        } else if self.kept.is_some_and(|(t, _)| t == tid) {
            // Stopped at a change the sampler kept for the loop.
            left.insert(tid);
        }
    }
}

/// Times a thread is resumed, at most, to take a pending clock signal
/// before it is let go.
const MAX_TRIES: u32 = 3;

/// The bit of [`SAMPLE_SIGNAL`] in a signal set.
const SAMPLE_BIT: u64 = 1 << (SAMPLE_SIGNAL - 1);

/// Whether the clock's signal is pending for thread `tid` itself (its
/// `SigPnd` in `/proc/TID/status`, as the clock signals a thread).
fn clock_signal_pending(tid: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{tid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigPnd:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|pending| pending & SAMPLE_BIT != 0)
}
