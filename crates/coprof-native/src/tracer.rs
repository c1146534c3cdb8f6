//! The sampling loop: starts the program under ptrace, follows its
//! threads (and, when asked, its child processes), takes a sample at
//! each clock interrupt, and passes every other signal on to the program.

use crate::ahead::{run_to, straight_run};
use crate::decode::{decode, event, Regs, MAX_LEN};
use crate::perf::{user_regs, Clock, RingStacks, SAMPLE_SIGNAL};
use crate::ring_stacks::{unwind_chain, unwind_copy, Unwound};
use crate::start::{start, Started};
use crate::unwind::{Space, Unwinder};
use crate::{Children, Config, Exit, Hooks, NativeError, Run};
use coprof_core::{Class, ClassSet, Event, OpenCall, Sink};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

mod detach;
pub use detach::attach_with;

/// Instructions a thread is stepped, at most, to its next load
/// ([`Config::next_load`]).
pub const MAX_STEPS: u32 = 64;
/// Events handed to the sink at once.
const BATCH: usize = 4096;
/// Data pages of each thread's ring buffer ([`Config::ring_buffer`]):
/// 32 KiB, 2,048 samples, which at the default period is 63 ms of the
/// thread's CPU time. The thread is stopped for its buffer to be read
/// each time it has run for an eighth of that. Small, since each is
/// locked memory. One whose samples copy their stacks is larger
/// ([`Clock::open_ring`]): 1 MiB for copies of 8 KiB, 512 KiB for the
/// kernel's walks of the frame pointers.
pub(crate) const RING_PAGES: usize = 8;
/// `si_code`s of a descriptor's fasync signal (POLL_IN to POLL_HUP): the
/// clock's, as opposed to a SIGSTOP sent with `kill` (`SI_USER`).
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
    sample_with(program, args, config, sink, Hooks::default())
}

/// [`sample`], with progress told and child processes followed as
/// `hooks` says.
pub fn sample_with(
    program: &Path,
    args: &[OsString],
    config: &Config,
    sink: &mut dyn Sink,
    hooks: Hooks,
) -> Result<Run, NativeError> {
    config.check()?;
    // The program, forked by this thread, inherits its CPU. Kept until
    // the program's end, when the sampler's own mask is put back.
    let _pinned = match config.same_cpu {
        true => Some(crate::affinity::Pinned::here()?),
        false => None,
    };
    let started = start(
        program,
        args,
        hooks.children.is_some(),
        config.ignore_sigpipe,
    )?;
    let pid = started.pid;
    let mut main = Process::new(Run::starting(program));
    main.run.pid = pid;
    let mut tracer = Tracer::new(main, config, &*sink, hooks, Some(&started), None);
    // Its clock opens at its `execve`.
    let result = tracer.trace(sink);
    if result.is_err() {
        // SAFETY: the processes this function started or followed;
        // reaped so that no zombie stays.
        for &p in tracer.processes.keys() {
            unsafe {
                libc::kill(p, libc::SIGKILL);
                libc::waitpid(p, std::ptr::null_mut(), libc::__WALL);
            }
        }
    }
    result?;
    Ok(tracer.run_ended())
}

/// A process of the program being sampled: its run so far and its
/// samples not yet handed on.
struct Process {
    run: Run,
    batch: Vec<Event>,
    /// The thread whose samples were handed on last, for a sink told
    /// which thread each sample is of.
    thread: Option<i32>,
    /// The CPU time of its waited-for children before it was followed:
    /// for a process attached to, not part of its run.
    children_cpu_before_ns: u64,
    /// Its address space: its mappings over the run, and what the
    /// unwinder knows of them.
    space: Space,
}

impl Process {
    fn new(run: Run) -> Process {
        Process {
            run,
            batch: Vec::with_capacity(BATCH),
            thread: None,
            children_cpu_before_ns: 0,
            space: Space::default(),
        }
    }
}

struct Tracer<'a, 'h> {
    /// Set by the caller of [`attach_with`] to let the program go.
    stop: Option<&'h AtomicBool>,
    /// Whether the threads are being let go ([`Tracer::detach`]): no
    /// clock is opened any more.
    detaching: bool,
    /// The program's process (its first thread).
    pid: i32,
    config: &'a Config,
    rng: Xoshiro256PlusPlus,
    /// Each live thread's clock.
    clocks: HashMap<i32, Clock>,
    /// Each thread seen: its process.
    threads: HashMap<i32, i32>,
    /// Each live process: the program's, and its followed children.
    processes: HashMap<i32, Process>,
    /// Classes the program's sink wants, and the children's.
    wants: ClassSet,
    child_wants: ClassSet,
    /// Whether the program's sink, and the children's owner, are told
    /// which thread each sample is of ([`Sink::thread_switch`]).
    switches: bool,
    child_switches: bool,
    children: Option<&'h mut dyn Children>,
    /// The program coprof started, or `None` for a process attached to.
    started: Option<&'a Started>,
    /// A change of a thread met while stepping it, for the loop.
    kept: Option<(i32, i32)>,
    /// Samples taken, of all processes.
    samples: u64,
    /// Samples between two calls of `progress`.
    every: u64,
    progress: Option<&'h mut dyn FnMut(&Run)>,
    /// The program's run, once its process has ended.
    ended: Option<Run>,
    /// Whether value samples run to their next load at a hardware
    /// breakpoint ([`crate::ahead`]); cleared when the debug registers
    /// refuse or do not stop the thread.
    breakpoints: bool,
    /// Runs that stopped at their breakpoint.
    breakpoint_hits: u64,
    /// Samples read from a ring buffer, before they are counted: each
    /// PC, and its stack where it was unwound.
    ring_samples: Vec<(u64, Option<Vec<OpenCall>>)>,
    /// Whether the program's sink, and the children's owner, are given
    /// each sample's stack ([`Sink::stack`]).
    stacks: bool,
    child_stacks: bool,
    /// The unwinder of the samples' stacks, used when they are wanted.
    unwinder: Unwinder,
}
impl<'a, 'h> Tracer<'a, 'h> {
    /// A tracer of the process `main`, whose first thread is its pid,
    /// for `sink` (what it wants); its clock is not open yet.
    fn new(
        main: Process,
        config: &'a Config,
        sink: &dyn Sink,
        hooks: Hooks<'h>,
        started: Option<&'a Started>,
        stop: Option<&'h AtomicBool>,
    ) -> Tracer<'a, 'h> {
        let pid = main.run.pid;
        let child_stacks = hooks.children.as_ref().is_some_and(|c| c.wants_stacks());
        let (every, progress) = match hooks.progress {
            Some((every, progress)) => (every.max(1), Some(progress)),
            None => (u64::MAX, None),
        };
        Tracer {
            stop,
            detaching: false,
            pid,
            config,
            rng: Xoshiro256PlusPlus::seed_from_u64(config.seed),
            clocks: HashMap::new(),
            threads: [(pid, pid)].into(),
            processes: [(pid, main)].into(),
            wants: sink.wants(),
            child_wants: hooks.children.as_ref().map_or(ClassSet::ALL, |c| c.wants()),
            switches: sink.wants_thread_switches(),
            child_switches: hooks
                .children
                .as_ref()
                .is_some_and(|c| c.wants_thread_switches()),
            children: hooks.children,
            started,
            kept: None,
            samples: 0,
            every,
            progress,
            ended: None,
            breakpoints: true,
            breakpoint_hits: 0,
            ring_samples: Vec::new(),
            stacks: sink.wants_stacks(),
            child_stacks,
            unwinder: Unwinder::default(),
        }
    }

    /// The program's run, once it has ended or been let go.
    fn run_ended(&mut self) -> Run {
        self.ended
            .take()
            .expect("the run ends with the program's end or its detaching")
    }

    fn trace_error(&self, source: std::io::Error) -> NativeError {
        NativeError::Trace {
            program: self.program().clone(),
            pid: self.pid,
            source,
        }
    }

    /// The program's file, as run so far.
    fn program(&self) -> &std::path::PathBuf {
        match (&self.ended, self.processes.get(&self.pid)) {
            (Some(run), _) => &run.program,
            (None, Some(p)) => &p.run.program,
            (None, None) => unreachable!("the program's process is live until it has ended"),
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
        if self.detaching {
            return Ok(());
        }
        let period = self.period();
        if self.config.ring_buffer {
            let process = self.threads.get(&tid).copied().unwrap_or(self.pid);
            let stacks = match (self.wants_stacks(process), self.config.frame_pointers) {
                (false, _) => RingStacks::None,
                (true, false) => RingStacks::Copy(self.config.stack_copy),
                (true, true) => RingStacks::Chain,
            };
            match Clock::open_ring(tid, period, RING_PAGES, stacks) {
                Ok(clock) => {
                    self.clocks.insert(tid, clock);
                    return Ok(());
                }
                // Out of locked memory with threads sampled already: this
                // one is sampled with a stop at each sample, as without
                // ring buffers, counted, rather than left unsampled or
                // the run ending.
                Err(NativeError::RingBuffer { .. }) if !self.clocks.is_empty() => {
                    if let Some(p) = self.processes.get_mut(&process) {
                        p.run.stopped_threads += 1;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        let clock = Clock::open(tid, self.config.period_ns)?;
        clock
            .arm(period)
            .map_err(|source| NativeError::Clock { tid, source })?;
        self.clocks.insert(tid, clock);
        Ok(())
    }

    /// Opens a clock on the new thread `tid` of process `pid`; a thread
    /// that ends before its clock opens is no error.
    fn clock_new(&mut self, pid: i32, tid: i32) -> Result<(), NativeError> {
        match self.clock(tid) {
            Err(e) if thread_exists(pid, tid) => Err(e),
            _ => Ok(()),
        }
    }

    /// Starts following the child process `pid` of process `parent`,
    /// once: at its parent's fork event or its own first stop, whichever
    /// comes first.
    fn adopt(&mut self, pid: i32, parent: i32) -> Result<(), NativeError> {
        if self.processes.contains_key(&pid) {
            return Ok(());
        }
        let program = self
            .processes
            .get(&parent)
            .map_or_else(|| self.program().clone(), |p| p.run.program.clone());
        let mut run = Run::starting(&program);
        run.pid = pid;
        self.processes.insert(pid, Process::new(run));
        self.threads.insert(pid, pid);
        if let Some(children) = self.children.as_deref_mut() {
            children.started(pid, parent);
        }
        self.clock_new(pid, pid)
    }

    fn trace(&mut self, sink: &mut dyn Sink) -> Result<(), NativeError> {
        let pid = self.pid;
        // Whether the program has started: at once for a process attached
        // to, at its `execve` for one started here.
        let mut started = self.started.is_none();
        loop {
            if self.kept.is_none() && self.stop_asked() {
                return self.detach(sink);
            }
            let Some((tid, status)) = self.next_change().map_err(|e| self.trace_error(e))? else {
                continue;
            };
            let Some(&process) = self.threads.get(&tid) else {
                continue;
            };
            if let Some(exit) = ended(status) {
                self.close_clock(tid, sink);
                self.threads.remove(&tid);
                if tid != process {
                    continue;
                }
                if tid == pid && !started {
                    return Err(self.exec_failed());
                }
                self.process_ended(process, exit, sink);
                if self.processes.is_empty() {
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
                    // The process is one thread again, under its pid.
                    if process == pid {
                        started = true;
                    }
                    let gone: Vec<i32> = (self.threads.iter())
                        .filter(|&(&t, &p)| p == process && t != process)
                        .map(|(&t, _)| t)
                        .collect();
                    for t in gone {
                        self.close_clock(t, sink);
                        self.threads.remove(&t);
                    }
                    self.close_clock(process, sink);
                    self.clock(process)?;
                    if let Some(p) = self.processes.get_mut(&process) {
                        p.space.clear();
                    }
                    resume(tid, 0);
                }
                libc::PTRACE_EVENT_CLONE => {
                    let new = event_message(tid);
                    if let Some(p) = self.processes.get_mut(&process) {
                        p.run.threads += 1;
                    }
                    self.threads.insert(new, process);
                    self.clock_new(process, new)?;
                    resume(tid, 0);
                }
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK => {
                    let new = event_message(tid);
                    self.adopt(new, process)?;
                    resume(tid, 0);
                }
                libc::PTRACE_EVENT_EXIT => {
                    self.read_thread_name(process, tid);
                    if tid == process && (process != pid || started) {
                        self.read_modules(process);
                    }
                    resume(tid, 0);
                }
                0 if self.is_clock_stop(tid, sig)
                    && self.clocks.get(&tid).is_some_and(Clock::has_ring) =>
                {
                    // An eighth of its buffer's samples since the last
                    // read.
                    self.drain_all(tid, sink);
                    resume(tid, 0);
                }
                0 if self.is_clock_stop(tid, sig) => {
                    let go_on = self.take_sample(tid, process, sink);
                    self.sampled();
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
                // A new thread's or process's first stop, the end of a
                // group-stop, and other events: go on.
                _ => resume(tid, 0),
            }
        }
    }

    /// Process `process` has ended with `exit`: its last samples handed
    /// on, and its run to its owner.
    fn process_ended(&mut self, process: i32, exit: Exit, sink: &mut dyn Sink) {
        self.flush(process, sink);
        let Some(mut p) = self.processes.remove(&process) else {
            return;
        };
        p.run.exit = exit;
        if process == self.pid {
            sink.finish();
            self.ended = Some(p.run);
        } else if let Some(children) = self.children.as_deref_mut() {
            children.ended(process, p.run);
        }
    }

    /// The next change of one of the program's threads, and its wait
    /// status. Only the program's threads are reaped: the calling thread
    /// may have other children, waited for elsewhere, whose changes are
    /// left to them; and children of the process's other threads (another
    /// sampler's program, a test harness's compiler) are not looked at
    /// (`__WNOTHREAD`: a tracee's tracer is the thread that started it).
    ///
    /// `None` when a signal interrupted the wait and [`Tracer::stop`] is
    /// set: the program is to be let go.
    fn next_change(&mut self) -> Result<Option<(i32, i32)>, std::io::Error> {
        if let Some(kept) = self.kept.take() {
            return Ok(Some(kept));
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
                    if self.stop_asked() {
                        return Ok(None);
                    }
                    continue;
                }
                return Err(e);
            }
            // SAFETY: waitid filled si_pid.
            let tid = unsafe { info.si_pid() };
            if self.threads.contains_key(&tid) || self.found(tid) {
                let mut status = 0;
                // SAFETY: a wait for that one thread, into a local.
                if unsafe { libc::waitpid(tid, &mut status, libc::__WALL | libc::WNOHANG) } == tid {
                    return Ok(Some((tid, status)));
                }
                continue;
            }
            // Another's child: its owner reaps it soon.
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Counts the samples in thread `tid`'s ring buffer
    /// ([`Config::ring_buffer`]). With `redraw`, for a thread stopped,
    /// the clock's next period is drawn when there were some (a running
    /// thread's would be set on its CPU, by an interrupt).
    fn drain(&mut self, tid: i32, redraw: bool, sink: &mut dyn Sink) {
        let Some(&process) = self.threads.get(&tid) else {
            return;
        };
        let stacks = self.wants_stacks(process) && self.wants_of(process).contains(Class::Other);
        let Tracer {
            clocks,
            processes,
            unwinder,
            ring_samples,
            ..
        } = self;
        let (Some(clock), Some(p)) = (clocks.get_mut(&tid), processes.get_mut(&process)) else {
            return;
        };
        let mut taken = std::mem::take(ring_samples);
        taken.clear();
        let mut chain = Vec::new();
        let got = clock.drain(|s| {
            p.space.maps.ran(process, s.pc);
            let stack = stacks.then(|| {
                let regs = user_regs(&s);
                let code = p.space.maps.code();
                let u = match (self.config.frame_pointers, regs) {
                    (true, regs) => {
                        chain.clear();
                        chain.extend(s.chain());
                        unwind_chain(
                            unwinder,
                            &mut p.space,
                            (process, tid),
                            &chain,
                            (regs.as_ref(), s.stack),
                            &code,
                        )
                    }
                    (false, Some(regs)) => unwind_copy(
                        unwinder,
                        &mut p.space,
                        (process, tid),
                        &regs,
                        s.stack,
                        &code,
                    ),
                    // The kernel had no user registers (none should be
                    // missing: the clock samples the user's code alone):
                    // a stack that stops at once.
                    (false, None) => Unwound::default(),
                };
                p.run.stacks += 1;
                p.run.whole_stacks += u64::from(u.whole);
                p.run.cut_stacks += u64::from(u.cut);
                u.calls
            });
            taken.push((s.pc, stack));
        });
        p.run.lost += got.lost;
        p.run.throttled += got.throttled;
        // Drawn only when set, so that a read at a thread's end or at
        // another thread's stop leaves the seed's sequence where it was.
        if redraw && got.samples > 0 {
            let period = self.period();
            if let Some(clock) = self.clocks.get(&tid) {
                // A thread that is exiting refuses: no error.
                let _ = clock.set_period(period);
            }
        }
        for (pc, stack) in taken.drain(..) {
            let sample = Sample::Event(Event::new(pc, Class::Other));
            self.count(process, tid, sample, stack.as_deref(), sink);
            self.sampled();
        }
        self.ring_samples = taken;
    }

    /// Whether process `process`'s samples are to be given their stacks:
    /// the program's, or a followed child's.
    fn wants_stacks(&self, process: i32) -> bool {
        match process == self.pid {
            true => self.stacks,
            false => self.child_stacks,
        }
    }

    /// The classes of events process `process`'s sink wants.
    fn wants_of(&self, process: i32) -> ClassSet {
        match process == self.pid {
            true => self.wants,
            false => self.child_wants,
        }
    }

    /// Counts the samples in every ring buffer, and draws the next period
    /// of `stopped`'s clock: at the stop of a thread whose buffer is an
    /// eighth full, the others are read too, so that a thread that blocks the
    /// signal of its own buffer's reader loses no samples while another
    /// thread runs.
    fn drain_all(&mut self, stopped: i32, sink: &mut dyn Sink) {
        let tids: Vec<i32> = self.clocks.keys().copied().collect();
        for tid in tids {
            self.drain(tid, tid == stopped, sink);
        }
    }

    /// Closes thread `tid`'s clock, once the samples in its ring buffer
    /// are counted, and adds the CPU time it counted to its process's
    /// run.
    fn close_clock(&mut self, tid: i32, sink: &mut dyn Sink) {
        self.drain(tid, false, sink);
        let Some(clock) = self.clocks.remove(&tid) else {
            return;
        };
        let process = self.threads.get(&tid);
        if let Some(p) = process.and_then(|process| self.processes.get_mut(process)) {
            p.run.cpu_ns += clock.cpu_ns();
        }
    }

    /// One more sample taken, of any process: progress is told after
    /// every so many.
    fn sampled(&mut self) {
        self.samples += 1;
        if self.samples.is_multiple_of(self.every) {
            if let (Some(progress), Some(p)) =
                (self.progress.as_deref_mut(), self.processes.get(&self.pid))
            {
                progress(&p.run);
            }
        }
    }

    /// Whether `tid`, not seen yet, is a thread this sampler traces: a new
    /// thread or child process whose clone or fork event has not come
    /// yet. It is then followed from here.
    fn found(&mut self, tid: i32) -> bool {
        let Some(ids) = Ids::of(tid) else {
            return false;
        };
        if !ids.traced_by_this_thread() {
            return false;
        }
        if self.processes.contains_key(&ids.tgid) {
            self.threads.insert(tid, ids.tgid);
            return true;
        }
        // A child process: traced only when children are followed.
        self.children.is_some() && self.adopt(tid, ids.ppid).is_ok()
    }

    /// Whether the caller has asked to let the program go.
    fn stop_asked(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// The error of an execve that failed in the child.
    fn exec_failed(&self) -> NativeError {
        let Some(started) = self.started else {
            unreachable!("a process attached to has started")
        };
        let mut errno = 0i32;
        // SAFETY: reads 4 bytes into a local from the pipe's read end.
        let n = unsafe { libc::read(started.exec_error, &mut errno as *mut i32 as *mut _, 4) };
        let source = if n == 4 {
            std::io::Error::from_raw_os_error(errno)
        } else {
            std::io::Error::other("it ended before it started")
        };
        NativeError::Start {
            program: self.program().clone(),
            source,
        }
    }

    /// Whether `tid`'s stop at the delivery of signal `sig` is its
    /// clock's: [`SAMPLE_SIGNAL`], sent by a clock rather than by the
    /// program or another (`kill`, a terminal's job control).
    fn is_clock_stop(&self, tid: i32, sig: i32) -> bool {
        sig == SAMPLE_SIGNAL
            && siginfo(tid).is_some_and(|info| FASYNC_CODES.contains(&info.si_code))
    }

    /// The sample of the stopped thread `tid` of process `process`;
    /// returns the signal to resume it with, or `None` when it must not
    /// be resumed (it stopped for something else while stepped, kept for
    /// the loop).
    fn take_sample(&mut self, tid: i32, process: i32, sink: &mut dyn Sink) -> Option<i32> {
        let mut steps = 0;
        let (mut single_steps, mut runs_ahead) = (0, 0);
        // The PC a run to a breakpoint is to stop at, and its SIGTRAP.
        let mut expected: Option<(u64, i32)> = None;
        // The registers where the sample's event was taken.
        let mut taken = None;
        let (sample, resume) = loop {
            // SAFETY: registers of a stopped tracee, into a local.
            let mut regs: libc::user_regs_struct = unsafe { std::mem::zeroed() };
            if unsafe { libc::ptrace(libc::PTRACE_GETREGS, tid, 0, &mut regs as *mut _) } < 0 {
                return Some(0);
            }
            let pc = regs.rip;
            if let Some((target, status)) = expected.take() {
                if pc != target {
                    // A SIGTRAP of the program's own, for the loop to
                    // deliver.
                    self.kept = Some((tid, status));
                    break (Sample::NoLoad, None);
                }
                self.breakpoint_hits += 1;
            }
            let mut code = [0u8; MAX_LEN];
            let got = read_memory(tid, pc, &mut code);
            let Some(d) = decode(&code[..got], pc, &Regs(&regs)) else {
                let e = (!self.config.next_load).then(|| Event::new(pc, Class::Other));
                break (Sample::Unreadable(e), Some(0));
            };
            let stop_here = !self.config.next_load
                || d.read.is_some()
                || d.class == Class::System
                || steps == MAX_STEPS;
            if stop_here {
                if self.config.next_load && d.read.is_none() {
                    break (Sample::NoLoad, Some(0));
                }
                // A thread sampled with stops for want of a ring buffer
                // gives what the others give: its PC alone.
                let e = match self.config.ring_buffer {
                    true => Event::new(pc, Class::Other),
                    false => event(pc, &d, |addr, size| {
                        let mut bytes = [0u8; 8];
                        (read_memory(tid, addr, &mut bytes[..size]) == size)
                            .then(|| u64::from_le_bytes(bytes))
                    }),
                };
                taken = Some(regs);
                break (Sample::Event(e), Some(0));
            }
            let (status, passed) = match self.run_ahead(tid, &regs, MAX_STEPS - steps) {
                Some((target, n, status)) => {
                    expected = Some((target, status));
                    runs_ahead += 1;
                    (status, n)
                }
                None => {
                    single_steps += 1;
                    (single_step(tid), 1)
                }
            };
            if !is_trap(status) {
                // An exit, an event or a signal: the loop's to handle.
                self.kept = Some((tid, status));
                break (Sample::NoLoad, None);
            }
            steps += passed;
        };
        let mut stack = None;
        let (stacks, wants) = (self.wants_stacks(process), self.wants_of(process));
        if let Some(p) = self.processes.get_mut(&process) {
            p.run.steps += single_steps;
            p.run.runs_ahead += runs_ahead;
            if let Some(regs) = taken {
                p.space.maps.ran(process, regs.rip);
                // Only for an event that is handed on.
                if stacks && matches!(&sample, Sample::Event(e) if wants.contains(e.class)) {
                    let mut read = |addr, out: &mut [u8]| read_memory(tid, addr, out);
                    let (calls, whole) =
                        self.unwinder.stack(&mut p.space, process, &regs, &mut read);
                    p.run.stacks += 1;
                    p.run.whole_stacks += u64::from(whole);
                    stack = Some(calls);
                }
            }
        }
        self.count(process, tid, sample, stack.as_deref(), sink);
        resume
    }

    /// Lets the stopped thread `tid`, not at a load, run to where
    /// stepping it would next have to look ([`straight_run`], within
    /// `left` instructions), in one stop at a hardware breakpoint, when
    /// that is an instruction or more ahead: that place, the instructions
    /// passed, and the wait status of the stop. `None` when it is not
    /// ahead, or breakpoints are not to be used or cannot be set: the
    /// thread is then still stopped where it was.
    fn run_ahead(
        &mut self,
        tid: i32,
        regs: &libc::user_regs_struct,
        left: u32,
    ) -> Option<(u64, u32, i32)> {
        if self.config.single_step || !self.breakpoints {
            return None;
        }
        let read = |addr, out: &mut [u8]| read_memory(tid, addr, out);
        let (target, n) = straight_run(read, regs.rip, &Regs(regs), left)?;
        if n == 0 {
            return None;
        }
        let Some(status) = run_to(tid, target) else {
            // Debug registers refused: single steps from here on.
            self.breakpoints = false;
            return None;
        };
        if !is_trap(status) && self.breakpoint_hits == 0 {
            // The first runs did not stop there: the debug registers may
            // not work on this machine. Single steps from here on.
            self.breakpoints = false;
        }
        Some((target, n, status))
    }

    /// Counts a sample of thread `tid` of `process` and hands its event
    /// on, after saying which thread it is of when that changed and the
    /// sink asks, and with its `stack` when it was unwound: alone, after
    /// the events before it.
    fn count(
        &mut self,
        process: i32,
        tid: i32,
        sample: Sample,
        stack: Option<&[OpenCall]>,
        sink: &mut dyn Sink,
    ) {
        let Some(p) = self.processes.get_mut(&process) else {
            return;
        };
        p.run.samples += 1;
        let e = match sample {
            Sample::Event(e) => e,
            Sample::NoLoad => {
                p.run.no_load += 1;
                return;
            }
            Sample::Unreadable(e) => {
                p.run.unreadable += 1;
                match e {
                    Some(e) => e,
                    None => return,
                }
            }
        };
        let (wants, switches) = if process == self.pid {
            (self.wants, self.switches)
        } else {
            (self.child_wants, self.child_switches)
        };
        if wants.contains(e.class) {
            if switches && p.thread != Some(tid) {
                p.thread = Some(tid);
                self.flush(process, sink);
                if process == self.pid {
                    sink.thread_switch(tid as u64);
                } else if let Some(children) = self.children.as_deref_mut() {
                    children.thread_switch(process, tid);
                }
            }
            if let Some(calls) = stack {
                self.flush(process, sink);
                if process == self.pid {
                    sink.stack(calls);
                } else if let Some(children) = self.children.as_deref_mut() {
                    children.stack(process, calls);
                }
            }
            let Some(p) = self.processes.get_mut(&process) else {
                return;
            };
            p.run.events += 1;
            p.batch.push(e);
            if p.batch.len() >= BATCH || stack.is_some() {
                self.flush(process, sink);
            }
        }
    }

    /// Hands process `process`'s samples on: the program's to `sink`, a
    /// child's to the children's owner.
    fn flush(&mut self, process: i32, sink: &mut dyn Sink) {
        let Some(p) = self.processes.get_mut(&process) else {
            return;
        };
        if p.batch.is_empty() {
            return;
        }
        if process == self.pid {
            sink.observe(&p.batch);
        } else if let Some(children) = self.children.as_deref_mut() {
            children.observe(process, &p.batch);
        }
        p.batch.clear();
    }

    /// Thread `tid`'s name (its `comm`) at its exit stop, into its
    /// process's run.
    fn read_thread_name(&mut self, process: i32, tid: i32) {
        let Ok(comm) = std::fs::read_to_string(format!("/proc/{process}/task/{tid}/comm")) else {
            return;
        };
        if let Some(p) = self.processes.get_mut(&process) {
            let name = comm.strip_suffix('\n').unwrap_or(&comm).to_string();
            p.run.thread_names.insert(tid as u64, name);
        }
    }

    /// The modules and areas of process `process`: those seen over its
    /// run, and its mappings at its exit stop.
    fn read_modules(&mut self, process: i32) {
        let exe = std::fs::read_link(format!("/proc/{process}/exe")).ok();
        let Some(p) = self.processes.get_mut(&process) else {
            return;
        };
        p.space.maps.read(process);
        p.run.modules = p.space.maps.modules(exe.as_deref());
        p.run.areas = p.space.maps.areas().clone();
        p.run.children_cpu_ns =
            children_cpu_ns_of(process).saturating_sub(p.children_cpu_before_ns);
        if let Some(exe) = exe {
            p.run.program = exe;
        }
        if process != self.pid || self.started.is_none() {
            p.run.args = command_line(process);
        }
    }
}

/// The arguments of process `pid`'s program, `argv[0]` first, from
/// `/proc/PID/cmdline`; empty when they cannot be read.
pub fn command_line(pid: i32) -> Vec<OsString> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    // Each argument ends with a NUL, an empty one too.
    let cmdline = cmdline.strip_suffix(&[0]).unwrap_or(&cmdline);
    (!cmdline.is_empty())
        .then(|| cmdline.split(|&b| b == 0))
        .into_iter()
        .flatten()
        .map(|a| std::ffi::OsStr::from_bytes(a).to_os_string())
        .collect()
}

/// How a thread ended, if `status` tells its end.
fn ended(status: i32) -> Option<Exit> {
    if libc::WIFEXITED(status) {
        Some(Exit::Exited(libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        Some(Exit::Killed(libc::WTERMSIG(status)))
    } else {
        None
    }
}

/// [`children_cpu_ns`] of process `pid` now; 0 if it cannot be read.
fn children_cpu_ns_of(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(0, |stat| children_cpu_ns(&stat))
}

/// The CPU time of the waited-for children a `/proc/PID/stat` line
/// tells (`cutime` and `cstime`, its 16th and 17th fields, in clock
/// ticks), in nanoseconds; 0 if it cannot be read.
fn children_cpu_ns(stat: &str) -> u64 {
    // The fields after the command, which may hold blanks and brackets,
    // start with the 3rd (the state).
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0;
    };
    let field = |n: usize| {
        rest.split_whitespace()
            .nth(n - 3)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // SAFETY: plain call.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    (field(16) + field(17)) * (1_000_000_000 / ticks)
}

/// What one sample gave.
enum Sample {
    /// An event: the instruction sampled.
    Event(Event),
    /// No instruction could be read at the PC: an event of class `other`,
    /// but for value sampling.
    Unreadable(Option<Event>),
    /// Value sampling met no load.
    NoLoad,
}

/// The ids /proc gives of thread `tid`: its process, that process's
/// parent, and the thread tracing it (0: none).
struct Ids {
    tgid: i32,
    ppid: i32,
    tracer: i32,
}

impl Ids {
    /// Whether the thread is traced by the calling thread. `TracerPid`
    /// names the tracing thread, not its process: the two differ when
    /// the sampler runs on a thread other than the first.
    fn traced_by_this_thread(&self) -> bool {
        // SAFETY: gettid cannot fail.
        self.tracer == unsafe { libc::gettid() }
    }

    fn of(tid: i32) -> Option<Ids> {
        let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
        let field = |name: &str| -> Option<i32> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse().ok())
        };
        Some(Ids {
            tgid: field("Tgid:")?,
            ppid: field("PPid:")?,
            tracer: field("TracerPid:")?,
        })
    }
}

/// The message of the event thread `tid` stopped at: a new thread's or
/// process's id.
fn event_message(tid: i32) -> i32 {
    let mut message = 0 as libc::c_ulong;
    // SAFETY: the event's message, into a local.
    unsafe { libc::ptrace(libc::PTRACE_GETEVENTMSG, tid, 0, &mut message) };
    message as i32
}

/// Lets the stopped thread `tid` go on, with signal `sig` (0: none).
fn resume(tid: i32, sig: i32) {
    // SAFETY: a ptrace request on a stopped tracee; a thread that has
    // gone meanwhile (ESRCH) is reaped by the loop.
    unsafe { libc::ptrace(libc::PTRACE_CONT, tid, 0, sig as libc::c_long) };
}

/// Steps the stopped thread `tid` one instruction; the wait status of
/// its next stop.
fn single_step(tid: i32) -> i32 {
    // SAFETY: a ptrace request on the stopped tracee.
    unsafe { libc::ptrace(libc::PTRACE_SINGLESTEP, tid, 0, 0) };
    wait_for(tid)
}

/// Waits for the next change of thread `tid`, resumed by the caller: its
/// wait status. A signal that interrupts the wait (the caller's request
/// to let the program go) does not end it: the thread's change comes
/// soon, and is the one to handle.
pub(crate) fn wait_for(tid: i32) -> i32 {
    let mut status = 0;
    // SAFETY: a wait for that one thread, into a local.
    while unsafe { libc::waitpid(tid, &mut status, libc::__WALL) } < 0 {
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // The thread has gone, and been reaped: as if it were killed.
            return libc::SIGKILL;
        }
    }
    status
}

/// Whether `status` is the SIGTRAP stop of a step or a breakpoint.
fn is_trap(status: i32) -> bool {
    libc::WIFSTOPPED(status) && libc::WSTOPSIG(status) == libc::SIGTRAP && status >> 16 == 0
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
pub(crate) fn read_memory(tid: i32, addr: u64, out: &mut [u8]) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_childrens_cpu_time_is_read_past_a_command_with_blanks_and_brackets() {
        // SAFETY: plain call.
        let tick = 1_000_000_000 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
        let stat = "4711 (a) b (c)) S 1 4711 4711 0 -1 4194560 100 200 0 0 5 6 70 80 20 0 1 0";
        assert_eq!(children_cpu_ns(stat), 150 * tick);
        assert_eq!(children_cpu_ns("4711 (x"), 0);
        assert_eq!(children_cpu_ns("4711 (x) S 1"), 0);
    }
}
