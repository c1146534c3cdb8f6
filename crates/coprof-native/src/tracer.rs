//! The sampling loop: starts the program under ptrace, follows its
//! threads, takes a sample at each clock interrupt, and passes every
//! other signal on to the program.

use crate::decode::{decode, event, Regs, MAX_LEN};
use crate::perf::{Clock, SAMPLE_SIGNAL};
use crate::{Config, Exit, NativeError, Run};
use coprof_core::{Class, Event, Sink};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Instructions a thread is stepped, at most, to its next load
/// ([`Config::next_load`]).
pub const MAX_STEPS: u32 = 64;
/// Events handed to the sink at once.
const BATCH: usize = 4096;
/// `si_code`s of a descriptor's fasync signal (POLL_IN to POLL_HUP): the
/// clock's, as opposed to a SIGPROF the program's own timer sends.
const FASYNC_CODES: std::ops::RangeInclusive<i32> = 1..=6;

/// Runs `program` with `args` (`args[0]` is its `argv[0]`) and the
/// environment of this process, sampling it as `config` says into
/// `sink`, until it ends.
pub fn sample(
    program: &Path,
    args: &[OsString],
    config: &Config,
    sink: &mut dyn Sink,
) -> Result<Run, NativeError> {
    sample_with_progress(program, args, config, sink, u64::MAX, &mut |_| {})
}

/// [`sample`], calling `progress` with the run so far (its samples and
/// threads) after every `every` samples, for a display of progress.
pub fn sample_with_progress(
    program: &Path,
    args: &[OsString],
    config: &Config,
    sink: &mut dyn Sink,
    every: u64,
    progress: &mut dyn FnMut(&Run),
) -> Result<Run, NativeError> {
    let start_error = |source| NativeError::Start {
        program: program.to_path_buf(),
        source,
    };
    let invalid = || start_error(std::io::Error::from(std::io::ErrorKind::InvalidInput));
    let path = CString::new(program.as_os_str().as_bytes()).map_err(|_| invalid())?;
    let argv: Vec<CString> = args
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .map_err(|_| invalid())?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    // The child tells a failed execve through this pipe, closed by a
    // successful one; and waits on `go` until it is traced.
    let mut pipe = [0i32; 2];
    let mut go = [0i32; 2];
    // SAFETY: room for two descriptors each.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } < 0
        || unsafe { libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC) } < 0
    {
        return Err(start_error(std::io::Error::last_os_error()));
    }
    // SAFETY: the child makes only async-signal-safe calls before execv,
    // on values made before the fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(start_error(std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: as above; _exit ends the child if the tracer has gone
        // (end of file on `go`) or execv fails.
        unsafe {
            libc::close(pipe[0]);
            libc::close(go[1]);
            let mut byte = 0u8;
            if libc::read(go[0], &mut byte as *mut u8 as *mut _, 1) != 1 {
                libc::_exit(127);
            }
            libc::execv(path.as_ptr(), argv_ptrs.as_ptr());
            let errno = *libc::__errno_location();
            libc::write(pipe[1], &errno as *const i32 as *const _, 4);
            libc::_exit(127);
        }
    }
    // SAFETY: the write end and `go`'s read end are the child's.
    unsafe {
        libc::close(pipe[1]);
        libc::close(go[0]);
    }
    // Seized rather than traced from the child (PTRACE_TRACEME), so that
    // a stop signal's group-stop can be kept (PTRACE_LISTEN) until a
    // SIGCONT, as it would be without coprof.
    let options = libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEEXEC
        | libc::PTRACE_O_TRACEEXIT
        | libc::PTRACE_O_EXITKILL;
    // SAFETY: ptrace and a write on the child this function started and
    // the pipe it made; then the pipe's end closed.
    let seized = unsafe { libc::ptrace(libc::PTRACE_SEIZE, pid, 0, options) } == 0
        && unsafe { libc::write(go[1], b"g".as_ptr() as *const _, 1) } == 1;
    let seize_error = std::io::Error::last_os_error();
    unsafe { libc::close(go[1]) };
    if !seized {
        // SAFETY: the child this function started, reaped.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), libc::__WALL);
            libc::close(pipe[0]);
        }
        return Err(NativeError::Trace {
            program: program.to_path_buf(),
            pid,
            source: seize_error,
        });
    }
    let mut tracer = Tracer {
        pid,
        config,
        rng: Xoshiro256PlusPlus::seed_from_u64(config.seed),
        clocks: HashMap::new(),
        tids: [pid].into(),
        batch: Vec::with_capacity(BATCH),
        wants: sink.wants(),
        run: Run::starting(program),
        exec_error: pipe[0],
        kept: None,
        every: every.max(1),
        progress,
    };
    let result = tracer.trace(sink);
    // SAFETY: the read end this function opened.
    unsafe { libc::close(pipe[0]) };
    if result.is_err() {
        // SAFETY: the child this function started; reaped so that no
        // zombie stays.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), libc::__WALL);
        }
    }
    result?;
    if !tracer.batch.is_empty() {
        sink.observe(&tracer.batch);
    }
    sink.finish();
    Ok(tracer.run)
}

struct Tracer<'a> {
    /// The program's process (its first thread).
    pid: i32,
    config: &'a Config,
    rng: Xoshiro256PlusPlus,
    /// Each live thread's clock.
    clocks: HashMap<i32, Clock>,
    /// The program's threads seen (the first included).
    tids: std::collections::HashSet<i32>,
    batch: Vec<Event>,
    wants: coprof_core::ClassSet,
    run: Run,
    /// The read end of the pipe a failed execve writes its errno to.
    exec_error: i32,
    /// A change of a thread met while stepping it, for the loop.
    kept: Option<(i32, i32)>,
    /// Samples between two calls of `progress`.
    every: u64,
    progress: &'a mut dyn FnMut(&Run),
}

impl Tracer<'_> {
    fn trace_error(&self, source: std::io::Error) -> NativeError {
        NativeError::Trace {
            program: self.run.program.clone(),
            pid: self.pid,
            source,
        }
    }

    /// A period drawn around the mean, ±1/31 of it.
    fn period(&mut self) -> u64 {
        let mean = self.config.period_ns.max(31);
        let spread = mean / 31;
        self.rng.gen_range(mean - spread..=mean + spread)
    }

    /// Opens and arms a clock on `tid`.
    fn clock(&mut self, tid: i32) -> Result<(), NativeError> {
        let clock = Clock::open(tid, self.config.period_ns)?;
        let period = self.period();
        clock
            .arm(period)
            .map_err(|source| NativeError::Clock { tid, source })?;
        self.clocks.insert(tid, clock);
        Ok(())
    }

    fn trace(&mut self, sink: &mut dyn Sink) -> Result<(), NativeError> {
        let pid = self.pid;
        let mut started = false;
        loop {
            let (tid, status) = self.next_change().map_err(|e| self.trace_error(e))?;
            if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                self.clocks.remove(&tid);
                if tid == pid {
                    self.run.exit = if libc::WIFEXITED(status) {
                        Exit::Exited(libc::WEXITSTATUS(status))
                    } else {
                        Exit::Killed(libc::WTERMSIG(status))
                    };
                    if !started {
                        return Err(self.exec_failed());
                    }
                    return Ok(());
                }
                continue;
            }
            if !libc::WIFSTOPPED(status) {
                continue;
            }
            let sig = libc::WSTOPSIG(status);
            match status >> 16 {
                libc::PTRACE_EVENT_EXEC => {
                    // The process is one thread again, under the pid.
                    started = true;
                    self.clocks.clear();
                    self.clock(pid)?;
                    resume(tid, 0);
                }
                libc::PTRACE_EVENT_CLONE => {
                    let mut new = 0 as libc::c_ulong;
                    // SAFETY: the new thread's id, into a local.
                    unsafe { libc::ptrace(libc::PTRACE_GETEVENTMSG, tid, 0, &mut new) };
                    self.run.threads += 1;
                    self.tids.insert(new as i32);
                    // A thread that ends before its clock opens is no error.
                    if let Err(e) = self.clock(new as i32) {
                        if thread_exists(pid, new as i32) {
                            return Err(e);
                        }
                    }
                    resume(tid, 0);
                }
                libc::PTRACE_EVENT_EXIT => {
                    if tid == pid && started {
                        self.read_modules();
                    }
                    resume(tid, 0);
                }
                0 if sig == SAMPLE_SIGNAL && self.is_clock_signal(tid) => {
                    let go_on = self.take_sample(tid, sink);
                    if self.run.samples.is_multiple_of(self.every) {
                        (self.progress)(&self.run);
                    }
                    let period = self.period();
                    if let Some(clock) = self.clocks.get(&tid) {
                        // A thread that is exiting refuses: no error.
                        let _ = clock.arm(period);
                    }
                    if let Some(sig) = go_on {
                        resume(tid, sig);
                    }
                }
                0 => resume(tid, sig),
                // The thread's part in a group-stop (a stop signal was
                // delivered): kept stopped until a SIGCONT ends it.
                libc::PTRACE_EVENT_STOP if is_stop_signal(sig) => listen(tid),
                // A new thread's first stop, the end of a group-stop, and
                // other events: go on.
                _ => resume(tid, 0),
            }
        }
    }

    /// The next change of one of the program's threads, and its wait
    /// status. Only the program's threads are reaped: the calling thread
    /// may have other children, waited for elsewhere, whose changes are
    /// left to them; and children of the process's other threads (another
    /// sampler's program, a test harness's compiler) are not looked at
    /// (`__WNOTHREAD`: a tracee's tracer is the thread that started it).
    fn next_change(&mut self) -> Result<(i32, i32), std::io::Error> {
        if let Some(kept) = self.kept.take() {
            return Ok(kept);
        }
        loop {
            // SAFETY: a siginfo_t filled by the call; WNOWAIT leaves the
            // child as it was.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            let flags =
                libc::WEXITED | libc::WSTOPPED | libc::WNOWAIT | libc::__WALL | libc::__WNOTHREAD;
            if unsafe { libc::waitid(libc::P_ALL, 0, &mut info, flags) } < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return Err(e);
            }
            // SAFETY: waitid filled si_pid.
            let tid = unsafe { info.si_pid() };
            // A thread whose clone event has not been seen yet is in the
            // process's task list.
            if self.tids.contains(&tid) || thread_exists(self.pid, tid) {
                self.tids.insert(tid);
                let mut status = 0;
                // SAFETY: a wait for that one thread, into a local.
                if unsafe { libc::waitpid(tid, &mut status, libc::__WALL | libc::WNOHANG) } == tid {
                    return Ok((tid, status));
                }
                continue;
            }
            // Another's child: its owner reaps it soon.
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// The error of an execve that failed in the child.
    fn exec_failed(&self) -> NativeError {
        let mut errno = 0i32;
        // SAFETY: reads 4 bytes into a local from the pipe's read end.
        let n = unsafe { libc::read(self.exec_error, &mut errno as *mut i32 as *mut _, 4) };
        let source = if n == 4 {
            std::io::Error::from_raw_os_error(errno)
        } else {
            std::io::Error::other("it ended before it started")
        };
        NativeError::Start {
            program: self.run.program.clone(),
            source,
        }
    }

    /// Whether the SIGPROF `tid` stopped with is its clock's, not one of
    /// the program's own timers.
    fn is_clock_signal(&self, tid: i32) -> bool {
        siginfo(tid).is_some_and(|info| FASYNC_CODES.contains(&info.si_code))
    }

    /// The sample of the stopped thread `tid`; returns the signal to
    /// resume it with, or `None` when it must not be resumed (it stopped
    /// for something else while stepped, kept for the loop).
    fn take_sample(&mut self, tid: i32, sink: &mut dyn Sink) -> Option<i32> {
        let mut steps = 0;
        loop {
            // SAFETY: registers of a stopped tracee, into a local.
            let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
            if unsafe { libc::ptrace(libc::PTRACE_GETREGS, tid, 0, &mut regs as *mut _) } < 0 {
                return Some(0);
            }
            let pc = regs.rip;
            let mut code = [0u8; MAX_LEN];
            let got = read_memory(tid, pc, &mut code);
            let Some(d) = decode(&code[..got], pc, &Regs(&regs)) else {
                self.run.samples += 1;
                self.run.unreadable += 1;
                if !self.config.next_load {
                    self.push(Event::new(pc, Class::Other), sink);
                }
                return Some(0);
            };
            let stop_here = !self.config.next_load
                || d.read.is_some()
                || d.class == Class::System
                || steps == MAX_STEPS;
            if stop_here {
                self.run.samples += 1;
                if self.config.next_load && d.read.is_none() {
                    self.run.no_load += 1;
                    return Some(0);
                }
                let e = event(pc, &d, |addr, size| {
                    let mut bytes = [0u8; 8];
                    (read_memory(tid, addr, &mut bytes[..size]) == size)
                        .then(|| u64::from_le_bytes(bytes))
                });
                self.push(e, sink);
                return Some(0);
            }
            // SAFETY: a ptrace request on the stopped tracee, then a wait
            // for that one thread.
            let mut status = 0;
            unsafe {
                libc::ptrace(libc::PTRACE_SINGLESTEP, tid, 0, 0);
                libc::waitpid(tid, &mut status, libc::__WALL);
            }
            let stepped = libc::WIFSTOPPED(status)
                && libc::WSTOPSIG(status) == libc::SIGTRAP
                && status >> 16 == 0;
            if !stepped {
                // An exit, an event or a signal: the loop's to handle.
                self.run.samples += 1;
                self.run.no_load += 1;
                self.kept = Some((tid, status));
                return None;
            }
            steps += 1;
        }
    }

    /// Hands `e` on, in batches, if the sink wants its class.
    fn push(&mut self, e: Event, sink: &mut dyn Sink) {
        if self.wants.contains(e.class) {
            self.run.events += 1;
            self.batch.push(e);
            if self.batch.len() >= BATCH {
                sink.observe(&self.batch);
                self.batch.clear();
            }
        }
    }

    /// The program's modules, from its mappings at its exit stop.
    fn read_modules(&mut self) {
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", self.pid)).unwrap_or_default();
        let exe = std::fs::read_link(format!("/proc/{}/exe", self.pid)).ok();
        self.run.modules =
            crate::modules::modules(&crate::modules::parse_maps(&maps), exe.as_deref());
        if let Some(exe) = exe {
            self.run.program = exe;
        }
    }
}

/// Lets the stopped thread `tid` go on, with signal `sig` (0: none).
fn resume(tid: i32, sig: i32) {
    // SAFETY: a ptrace request on a stopped tracee; a thread that has
    // gone meanwhile (ESRCH) is reaped by the loop.
    unsafe { libc::ptrace(libc::PTRACE_CONT, tid, 0, sig as libc::c_long) };
}

/// Keeps the thread `tid`, stopped in a group-stop, stopped, but lets a
/// SIGCONT end the stop, which it then reports.
fn listen(tid: i32) {
    // SAFETY: a ptrace request on a stopped tracee, as in `resume`.
    unsafe { libc::ptrace(libc::PTRACE_LISTEN, tid, 0, 0) };
}

/// Whether `sig` stops a process by default.
fn is_stop_signal(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

/// The siginfo of the signal the stopped thread `tid` stopped with;
/// `None` in a group-stop, which has none.
fn siginfo(tid: i32) -> Option<libc::siginfo_t> {
    // SAFETY: a siginfo_t filled by the call, into a local.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ptrace(libc::PTRACE_GETSIGINFO, tid, 0, &mut info as *mut _) } == 0;
    ok.then_some(info)
}

/// Whether thread `tid` of process `pid` still exists.
fn thread_exists(pid: i32, tid: i32) -> bool {
    Path::new(&format!("/proc/{pid}/task/{tid}")).exists()
}

/// Reads `out.len()` bytes of thread `tid`'s memory at `addr`, or as many
/// as are mapped from there; the bytes read.
fn read_memory(tid: i32, addr: u64, out: &mut [u8]) -> usize {
    let local = libc::iovec {
        iov_base: out.as_mut_ptr() as *mut _,
        iov_len: out.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut _,
        iov_len: out.len(),
    };
    // SAFETY: reads into `out`, whose length the local iovec gives.
    let n = unsafe { libc::process_vm_readv(tid, &local, 1, &remote, 1, 0) };
    if n >= 0 {
        return n as usize;
    }
    // Across the end of a mapping: as far as the page goes.
    let to_page_end = (4096 - (addr % 4096)) as usize;
    if to_page_end < out.len() {
        return read_memory(tid, addr, &mut out[..to_page_end]);
    }
    0
}
