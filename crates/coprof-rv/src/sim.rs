//! The simulator: a loaded process and the loop that runs it.
//!
//! The loop looks up the pre-decoded block at the PC, counts it, runs it
//! with [`exec_block`](crate::cpu::exec_block)'s body (the event-free
//! instantiation when the sink wants no class), chaining block after block
//! while each passes control on, and handles whatever stopped the chain: a
//! system call, a request to drop stale code, the death of the process by
//! a signal, or the time to look at timers, threads and progress.
//! The threads' turns on the one hart are in `scheduling`, the signals'
//! delivery in `delivery`, child processes in `fork`.

use crate::code::CodeCache;
use crate::cpu::{exec_ops, Cpu, Stop};
use crate::elf;
use crate::error::SimError;
use crate::events::Events;
use crate::host_signals::HostSignals;
use crate::isa::Isa;
use crate::jit::{self, Jit};
use crate::mem::Memory;
use crate::op::TAIL_CLASSES;
use crate::pids::Pids;
use crate::process;
use crate::random::GuestRandom;
use crate::signal::{self, InheritedSignals};
use crate::syscall::{Blocked, Kernel, Outcome};
use crate::threads::{Redo, Threads, Wait, QUANTUM};
use coprof_core::{ClassSet, Sink, Source};
use std::path::{Path, PathBuf};

mod delivery;
mod fork;
mod scheduling;
pub use fork::{die_by, end_child};

/// How to start a program.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// argv, including `argv[0]`. Empty means the program path.
    pub args: Vec<std::ffi::OsString>,
    /// The environment as `NAME=value` strings, byte for byte (they need
    /// not be UTF-8).
    pub env: Vec<std::ffi::OsString>,
    /// Look absolute guest paths up under this directory.
    pub root: Option<PathBuf>,
    /// Look absolute guest paths up under this directory first, and on the
    /// host when it has no such file: where a dynamically linked program's
    /// loader and libraries are ([`crate::sysroot`]; `None` tries
    /// [`crate::sysroot::DEFAULT_SYSROOTS`] for such a program).
    pub sysroot: Option<PathBuf>,
    /// Unknown system calls return ENOSYS instead of stopping the run.
    pub enosys: bool,
    /// Stop after this many retired instructions (0 = no limit).
    pub max_instructions: u64,
    /// Seed for the bytes at AT_RANDOM and from `getrandom`; `None` takes
    /// them from the host. With a seed, runs repeat (see [`GuestRandom`]).
    pub seed: Option<u64>,
    /// Instructions in a thread's turn on the hart ([`QUANTUM`] when
    /// `None`): the interleaving of a multithreaded program's threads.
    pub quantum: Option<u64>,
    /// Host descriptors beyond 0, 1 and 2 the program inherits under their
    /// own numbers: those open when the host process started (see
    /// [`inherited_fds`](crate::fdtable::inherited_fds)).
    pub inherited_fds: Vec<i32>,
    /// The command that runs a RISC-V program in this simulator with this
    /// run's options (`coprof run --root DIR …`), to which `--argv0=NAME --
    /// PROGRAM ARGS…` is added, for a forked child's `execve` of one.
    /// `None`: such an `execve` stops the child with a message.
    pub runner: Option<Vec<std::ffi::OsString>>,
    /// Nothing observes the program but its own output (no events are
    /// wanted, no count, no limit): an `execve` replaces the process as it
    /// does a forked child's (with [`Config::runner`] for a RISC-V
    /// program), as under Linux. Otherwise it stops the run with a
    /// message, since reports are about the program they started with.
    pub exec_in_place: bool,
    /// Interpret every block: translate none to host code ([`crate::jit`]).
    /// The results are the same either way; this is for comparing the
    /// two, and for hosts where translated code misbehaves.
    pub interpret: bool,
    /// The hart's instruction set: RV64GC and which of Zba, Zbb, Zbc and
    /// Zbs ([`Isa`]; all four by default).
    pub isa: Isa,
    /// The pid the program sees as its own, its threads numbered after
    /// it, in place of the host's ([`crate::pids`]); `None`: the host's.
    pub pid: Option<i32>,
    /// The host process [`Config::pid`] stands for; `None`: the one that
    /// loads the program. A simulator started for a followed child's
    /// `execve` is given its first one's, to keep the same ids.
    pub pid_host: Option<i32>,
    /// The signals the program starts ignoring and blocking, as a program
    /// `execve` started inherits them: those of the host process as it
    /// was started, which `coprof` records first thing
    /// ([`crate::host_signals::inherited_now`]; `nohup` ignores SIGHUP).
    /// The default: none.
    pub inherited_signals: InheritedSignals,
}

/// How the process ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exit {
    /// `exit`/`exit_group` with this status.
    Code(i32),
    /// Killed by a signal: number and a message naming PC, address and
    /// instruction as a kernel log or debugger would.
    Signal {
        /// Signal number (4 SIGILL, 5 SIGTRAP, 6 SIGABRT, 7 SIGBUS, 11 SIGSEGV…).
        signal: i32,
        /// What happened, for the user.
        message: String,
    },
    /// The instruction limit was reached.
    Limit,
}

impl Exit {
    /// The exit status a shell reports, 0 to 255: the code (its low
    /// eight bits, all `exit_group` keeps, as Linux), or 128 + signal.
    pub fn status(&self) -> i32 {
        match self {
            Exit::Code(c) => *c,
            Exit::Signal { signal, .. } => 128 + signal,
            Exit::Limit => 0,
        }
    }
}

/// A loaded RV64 Linux process.
pub struct Simulator {
    cpu: Cpu,
    mem: Memory,
    code: CodeCache,
    /// Translations of hot blocks, unless [`Config::interpret`] or the
    /// host does not translate.
    jit: Option<Jit>,
    kernel: Kernel,
    limit: u64,
    exit: Option<Exit>,
    threads: Threads,
    /// Where the program was about to go on when the hart was taken
    /// elsewhere between two blocks (a signal handler started, another
    /// thread's turn): the runs of blocks then get an empty run there, so
    /// that a sink reading where a branch went from where the next run
    /// starts (the loop detector) sees the truth.
    redirected: Option<u64>,
    /// The thread put on the hart since the stream last said which runs,
    /// told to the sink with the redirect ([`Sink::thread_switch`]).
    switched_to: Option<i64>,
    /// The thread just put on the hart was blocked in a system call and
    /// makes it again.
    redo: Option<Redo>,
    delivered: u64,
    delivered_in_runs: u64,
    /// How a forked child runs when the program's children are followed
    /// ([`Simulator::follow_children`]); `None`: unobserved.
    follow: Option<ChildRun>,
}

/// How the process coprof watches goes on as another RISC-V program
/// ([`Simulator::follow_exec`]).
#[derive(Clone, Debug)]
pub struct ExecFollower {
    /// The command that runs the new program, to which `--argv0=NAME --
    /// PROGRAM ARGS…` is added.
    pub runner: Vec<std::ffi::OsString>,
    /// A host descriptor to hand to it, under a number above the
    /// program's own, and the option that names that number in its
    /// command, followed by it (`--report-fd=` gives `--report-fd=7`).
    pub pass: Option<(i32, String)>,
}

/// How long a process whose threads all wait, one of them on a futex in
/// shared memory, waits on the host before it looks whether another
/// process changed the word.
const SHARED_FUTEX_LOOK: std::time::Duration = std::time::Duration::from_millis(1);

/// How a followed child process runs ([`Simulator::follow_children`]):
/// given the child's copy of the simulator, it runs it to its end with
/// sinks of its own and returns how the child ended.
pub type ChildRun = std::rc::Rc<dyn Fn(&mut Simulator) -> Result<Exit, SimError>>;

/// Where a trap's signal went.
enum Caught {
    /// To the handler the program installed, which now runs.
    Handler,
    /// Nowhere: the default action kills the process.
    Default,
    /// To a handler whose frame could not be written: killed by SIGSEGV.
    Killed(Exit),
}

/// The error of a process whose every thread waits (on a futex, or for a
/// signal or a descriptor no thread can make ready) after the running one
/// makes the system call `num` at `at`.
fn deadlock(num: u64, at: u64) -> SimError {
    SimError::Unsupported {
        what: format!(
            "{} (system call {num}) leaves every thread waiting, on a futex or for a signal, \
             with none able to wake another (deadlock)",
            crate::sysno::name(num)
        ),
        pc: at,
    }
}

impl Simulator {
    /// Loads the static RV64 executable at `path`.
    pub fn load(path: &Path, config: &Config) -> Result<Simulator, SimError> {
        let file = std::fs::read(path).map_err(|source| SimError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Simulator::load_bytes(path, &file, config)
    }

    /// Loads an executable image already in memory; `path` is its name
    /// for messages, `argv[0]` and `/proc/self/exe`.
    pub fn load_bytes(path: &Path, file: &[u8], config: &Config) -> Result<Simulator, SimError> {
        let image = elf::parse(file).map_err(|source| SimError::Elf {
            path: path.to_path_buf(),
            source,
        })?;
        let mut mem = Memory::new().map_err(SimError::Setup)?;
        // The strings as they are, UTF-8 or not.
        let bytes = |s: &std::ffi::OsStr| std::os::unix::ffi::OsStrExt::as_bytes(s).to_vec();
        let args: Vec<Vec<u8>> = if config.args.is_empty() {
            vec![bytes(path.as_os_str())]
        } else {
            config.args.iter().map(|a| bytes(a)).collect()
        };
        let env: Vec<Vec<u8>> = config.env.iter().map(|e| bytes(e)).collect();
        let mut guest_random = GuestRandom::new(config.seed);
        let mut random = [0u8; 16];
        guest_random.fill(&mut random, 0);
        let execfn = path.as_os_str().as_encoded_bytes();
        let elf_error = |source| SimError::Elf {
            path: path.to_path_buf(),
            source,
        };
        let (sysroot, loader) = match &image.interp {
            Some(interp) => {
                let (sysroot, at) = crate::sysroot::choose(
                    interp,
                    config.sysroot.as_deref(),
                    config.root.as_deref(),
                )
                .map_err(elf_error)?;
                let bad = |why: String| {
                    elf_error(elf::ElfError::BadInterpreter {
                        interp: at.display().to_string(),
                        why,
                    })
                };
                let bytes = std::fs::read(&at).map_err(|e| bad(e.to_string()))?;
                let elf = elf::parse(&bytes).map_err(|e| bad(e.to_string()))?;
                if elf.interp.is_some() {
                    return Err(bad("it asks for a dynamic loader itself".into()));
                }
                (sysroot, Some((at, bytes, elf)))
            }
            None => (config.sysroot.clone(), None),
        };
        let loaded = process::start(
            &mut mem,
            &image,
            file,
            loader
                .as_ref()
                .map(|(_, file, elf)| process::Loader { elf, file }),
            &args,
            &env,
            execfn,
            random,
        )
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidData
                || e.kind() == std::io::ErrorKind::InvalidInput
            {
                SimError::Elf {
                    path: path.to_path_buf(),
                    source: elf::ElfError::Malformed {
                        what: e.to_string(),
                        offset: 0,
                    },
                }
            } else {
                SimError::Setup(e)
            }
        })?;
        let mut cpu = Cpu::new(loaded.entry);
        cpu.x[2] = loaded.sp;
        let exe = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let mut kernel = Kernel::new(
            loaded.brk,
            exe.clone(),
            config.root.clone(),
            config.enosys,
            guest_random,
        );
        kernel.sysroot = sysroot;
        kernel.own_files =
            crate::syscall::proc_self::OwnFiles::new(&args, &env, loaded.auxv.clone());
        kernel.note_loaded(&image, loaded.bias, &exe);
        if let (Some((at, _, elf)), Some(bias)) = (&loader, loaded.loader_bias) {
            kernel.note_loaded(elf, bias, at);
        }
        kernel.fds.adopt(&config.inherited_fds);
        kernel.signals.inherit(&config.inherited_signals);
        kernel.runner = config.runner.clone();
        kernel.isa = config.isa;
        kernel.unobserved = config.exec_in_place;
        let pid = kernel.see_pid(Pids::given(config.pid, config.pid_host));
        Ok(Simulator {
            cpu,
            mem,
            code: CodeCache::with_isa(config.isa),
            jit: if config.interpret { None } else { Jit::new() },
            kernel,
            limit: config.max_instructions,
            exit: None,
            redirected: None,
            switched_to: None,
            redo: None,
            threads: Threads {
                next_tid: pid + 1,
                quantum: config.quantum.unwrap_or(QUANTUM).max(1),
                ..Threads::default()
            },
            delivered: 0,
            delivered_in_runs: 0,
            follow: None,
        })
    }

    /// The ids the program sees in place of the host's ([`Config::pid`]).
    pub fn pids(&self) -> Pids {
        self.kernel.pids
    }

    /// Instructions retired so far.
    pub fn instret(&self) -> u64 {
        self.cpu.instret
    }

    /// Events delivered to the sink by the last run.
    pub fn events_delivered(&self) -> u64 {
        self.delivered
    }

    /// Instructions delivered to the sink in runs of blocks by the last
    /// run (zero when the sink took no runs).
    pub fn instructions_in_runs(&self) -> u64 {
        self.delivered_in_runs
    }

    /// How the process ended, once it has.
    pub fn exit(&self) -> Option<&Exit> {
        self.exit.as_ref()
    }

    /// Exact executions per PC (sorted by PC): the ground truth.
    pub fn pc_counts(&self) -> Vec<(u64, u64)> {
        self.code.pc_counts()
    }

    /// The files whose code the program ran: the program itself first,
    /// then its dynamic loader and the libraries it mapped, with where
    /// each lies, to name PCs.
    pub fn modules(&self) -> &[process::Module] {
        &self.kernel.modules
    }

    /// Every area of the address space mapped over the run so far,
    /// named: the files' segments, `[heap]`, `[stack]`, `[anon]`,
    /// `[shm]` ([`coprof_core::areas`]), to name data addresses by.
    pub fn areas(&self) -> &coprof_core::areas::Areas {
        &self.kernel.areas
    }

    /// The names the program's threads gave themselves
    /// (`prctl(PR_SET_NAME)`), by id; the others have the program file's.
    pub fn thread_names(&self) -> std::collections::BTreeMap<u64, String> {
        self.kernel.thread_names()
    }

    /// The directory the program's absolute paths are looked up in first:
    /// `--root`, or the sysroot of a dynamically linked program.
    pub fn sysroot(&self) -> Option<&Path> {
        self.kernel
            .root
            .as_deref()
            .or(self.kernel.sysroot.as_deref())
    }

    /// Child processes the program started (`fork`, `vfork`,
    /// `posix_spawn`): they ran in the simulator unobserved (or followed,
    /// [`Simulator::follow_children`]), or on the host once they exec'd a
    /// host program.
    pub fn children_started(&self) -> u64 {
        self.kernel.children_started
    }

    /// Follows the program's child processes instead of running them
    /// unobserved, as `valgrind --trace-children=yes` does: each child
    /// the program (or a followed child) forks runs to its end through
    /// `run`, in its own host process, which attaches sinks of its own to
    /// it. A followed child that `execve`s a RISC-V program runs it with
    /// `runner` (which should follow in turn) instead of
    /// [`Config::runner`]; the process that called this may still not
    /// replace itself unless [`Config::exec_in_place`] allows it.
    pub fn follow_children(&mut self, run: ChildRun, runner: Option<Vec<std::ffi::OsString>>) {
        self.follow = Some(run);
        self.kernel.follow_runner = runner;
    }

    /// Lets the process coprof watches replace itself with a RISC-V
    /// program (`execve`), which it otherwise may not, by running the
    /// follower's command on it, as a forked child's `execve` runs
    /// [`Config::runner`]: a follower that profiles the new program in the
    /// same process. An `execve` of a host program still stops the run.
    pub fn follow_exec(&mut self, follower: ExecFollower) {
        self.kernel.exec_follower = Some(follower);
    }

    /// Whether this simulator is a followed child's copy, started by
    /// [`Simulator::follow_children`]'s `run`: true from the fork on.
    pub fn is_followed_child(&self) -> bool {
        self.kernel.followed_child
    }

    /// Unknown system calls answered with ENOSYS: (number, name, times).
    pub fn enosys_calls(&self) -> Vec<(u64, &'static str, u64)> {
        self.kernel
            .enosys_calls
            .iter()
            .map(|(n, c)| (*n, crate::sysno::name(*n), *c))
            .collect()
    }

    /// The architectural state, for tests and tools.
    pub fn cpu(&self) -> &Cpu {
        &self.cpu
    }

    /// Runs the process to its end, delivering events to `sink`.
    pub fn run_to_exit(&mut self, sink: &mut dyn Sink) -> Result<Exit, SimError> {
        self.run_with_progress(sink, u64::MAX, &mut |_| {})
    }

    /// Runs the process to its end like [`run_to_exit`](Self::run_to_exit),
    /// calling `progress` with the instructions retired so far about every
    /// `every` instructions (at the first block boundary past each
    /// multiple), for a progress display. The check shares the
    /// instruction-limit test the loop makes once per block, so it costs
    /// nothing more.
    pub fn run_with_progress(
        &mut self,
        sink: &mut dyn Sink,
        every: u64,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Exit, SimError> {
        // Block ids in the runs' table belong to one run.
        for b in &mut self.code.blocks {
            b.run_id = crate::code::NO_RUN_ID;
        }
        // Signals from outside follow the program's actions while it runs
        // (a forked child's run installs its own).
        let installed = self.kernel.outside.is_none();
        if installed {
            self.kernel.outside = HostSignals::install(&self.kernel.signals.actions);
        }
        // A write of the program's to a closed pipe gives it EPIPE and its
        // own SIGPIPE (Kernel::syscall), which its action takes: the
        // host's signal, which would end coprof, is ignored meanwhile.
        let pipe = crate::host_signals::ignore_sigpipe();
        let mut events = Events::new(sink);
        events.thread_switch(self.kernel.tid as u64);
        self.switched_to = None;
        let every = every.max(1);
        let result = match (events.wants.is_empty(), events.runs_wanted) {
            (true, false) => self.run_loop::<false, false>(&mut events, every, progress),
            (false, false) => self.run_loop::<true, false>(&mut events, every, progress),
            (true, true) => self.run_loop::<false, true>(&mut events, every, progress),
            (false, true) => self.run_loop::<true, true>(&mut events, every, progress),
        };
        if installed {
            self.kernel.outside = None;
        }
        crate::host_signals::restore_sigpipe(pipe);
        events.finish();
        self.delivered = events.delivered();
        self.delivered_in_runs = events.run_instructions();
        let exit = result?;
        self.exit = Some(exit.clone());
        Ok(exit)
    }

    /// The next instruction count at which the loop stops to look at the
    /// limit and report progress.
    fn next_check(&self, every: u64) -> u64 {
        let mut next = self.cpu.instret.saturating_add(every);
        if self.kernel.looks_wanted() {
            next = next.min(self.cpu.instret + crate::itimer::CHECK_EVERY);
        }
        if !self.threads.parked.is_empty() {
            next = next.min(self.threads.turn_ends);
        }
        if self.limit != 0 {
            next.min(self.limit)
        } else {
            next
        }
    }

    /// The loop, compiled once per combination of what the sink takes:
    /// events (`EV`) and runs of blocks (`RUNS`).
    fn run_loop<const EV: bool, const RUNS: bool>(
        &mut self,
        events: &mut Events,
        every: u64,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Exit, SimError> {
        let mut check = self.next_check(every);
        // Whether any instruction builds its event after executing
        // (`exec_ops`'s `TAIL`); the classes wanted do not change in a run.
        let tail = EV && !events.wants.intersection(TAIL_CLASSES).is_empty();
        if let Some(j) = &mut self.jit {
            j.begin_run(
                &mut self.code,
                if EV { events.wants } else { ClassSet::NONE },
                RUNS,
            );
        }
        loop {
            let (bi, stop) = if tail {
                self.run_blocks::<EV, true, RUNS>(events, check)
            } else {
                self.run_blocks::<EV, false, RUNS>(events, check)
            };
            let len = self.code.blocks[bi].ops.len();
            let retired = stop.retired(len);
            if retired < len {
                self.code.stopped_early(bi, retired);
            }
            match stop {
                Stop::Next => {}
                Stop::Flush => self.code.flush(),
                Stop::Ecall => {
                    if let Some(exit) = self.ecall()? {
                        return Ok(exit);
                    }
                    self.mark_redirect::<RUNS>(events);
                    // The call may have armed a timer, which wants looks.
                    check = check.min(self.next_check(every));
                }
                Stop::Ebreak
                | Stop::Illegal { .. }
                | Stop::Fault { .. }
                | Stop::Misaligned { .. } => {
                    let (info, pc) = self.fault_signal(stop, bi);
                    match self.catch(&info, pc) {
                        Caught::Handler => self.mark_redirect::<RUNS>(events),
                        Caught::Killed(exit) => return Ok(exit),
                        Caught::Default => return Ok(self.death(stop, bi)),
                    }
                }
            }
            if self.mem.code_written {
                let written = self.mem.take_code_written();
                self.code.flush_if_decoded_in(&written);
            }
            if self.cpu.instret >= check {
                if self.limit != 0 && self.cpu.instret >= self.limit {
                    return Ok(Exit::Limit);
                }
                progress(self.cpu.instret);
                // Between two instructions, as an interrupt would: the
                // next thread's turn (a signal the last one blocked may be
                // this one's) and the timers' signals.
                let turn_over = self.cpu.instret >= self.threads.turn_ends;
                let turn = turn_over && self.another_ready();
                if turn_over && !turn {
                    // No other thread wants the hart: a new turn.
                    self.threads.turn_ends = self.cpu.instret + self.threads.quantum;
                }
                if turn {
                    self.switch(Wait::Ready);
                    if self.redo.is_some() {
                        if let Some(exit) = self.ecall()? {
                            return Ok(exit);
                        }
                    }
                }
                let timers = self.kernel.looks_wanted();
                if timers {
                    self.kernel.fire_timers();
                }
                if turn || timers {
                    if let Some(exit) = self.deliver_pending(self.cpu.pc) {
                        return Ok(exit);
                    }
                }
                self.mark_redirect::<RUNS>(events);
                check = self.next_check(every);
            }
        }
    }

    /// Runs block after block, each found at the PC (from the block before
    /// it through its successor links, [`CodeCache::follow`]), counted, run
    /// and given its run of blocks (with `RUNS`), until one needs the loop's
    /// attention: it stopped otherwise than by passing control on (a
    /// system call, a fault, a request to drop code), it wrote code, or
    /// the instructions retired reached `check`. Returns that block's
    /// index and why it stopped, its retired instructions counted. A
    /// block that passes control on needs nothing else from the loop, so
    /// the chain is the same as one block per turn of the loop, without
    /// a call and a return per block.
    #[inline(never)]
    fn run_blocks<const EV: bool, const TAIL: bool, const RUNS: bool>(
        &mut self,
        events: &mut Events,
        check: u64,
    ) -> (usize, Stop) {
        let mut bi = self.code.lookup(self.cpu.pc, &self.mem);
        // The classes the translations build events of.
        let wants = if EV { events.wants } else { ClassSet::NONE };
        loop {
            let block = &mut self.code.blocks[bi];
            block.count += 1;
            if block.jit == jit::NOT_TRANSLATED && block.count >= jit::HOT {
                match &mut self.jit {
                    Some(j) => j.translate(&mut self.code, bi, wants),
                    None => block.jit = jit::UNTRANSLATABLE,
                }
            }
            let block = &mut self.code.blocks[bi];
            if RUNS {
                // The whole block, shortened below if it stops early; even
                // when nothing retired (a fault at the block's first
                // instruction), the run says where control went.
                let len = block.ops.len();
                events.push_run(block, len);
            }
            let translated = block.jit < jit::UNTRANSLATABLE;
            let (last, stop) = match &mut self.jit {
                Some(j) if translated && j.fits(&self.code) => j.run::<EV, RUNS>(
                    &mut self.code,
                    bi,
                    &mut self.cpu,
                    &mut self.mem,
                    events,
                    check,
                ),
                _ => {
                    if translated {
                        // The blocks moved since they were translated.
                        if let Some(j) = &mut self.jit {
                            j.forget(&mut self.code);
                        }
                    }
                    let ops = &self.code.blocks[bi].ops;
                    (
                        bi,
                        exec_ops::<EV, TAIL>(&mut self.cpu, &mut self.mem, ops, events),
                    )
                }
            };
            // Translated blocks linked to the first may have run after it.
            bi = last;
            let len = self.code.blocks[bi].ops.len();
            let retired = stop.retired(len);
            if RUNS && retired < len {
                events.stopped_at(retired);
            }
            self.cpu.instret += retired as u64;
            if !matches!(stop, Stop::Next) || self.mem.code_written || self.cpu.instret >= check {
                return (bi, stop);
            }
            let from = bi;
            bi = self.code.follow(from, self.cpu.pc, &self.mem);
            if let Some(j) = &mut self.jit {
                let blocks = &self.code.blocks;
                if blocks[from].jit < jit::UNTRANSLATABLE && blocks[bi].jit < jit::UNTRANSLATABLE {
                    j.link(&self.code, from, bi, self.cpu.pc);
                }
            }
        }
    }

    /// After the hart was taken elsewhere between blocks: an empty run of
    /// the block the program was about to run, where runs are delivered.
    #[inline]
    fn mark_redirect<const RUNS: bool>(&mut self, events: &mut Events) {
        if self.redirected.is_some() {
            self.push_redirect::<RUNS>(events);
        }
    }

    #[inline(never)]
    fn push_redirect<const RUNS: bool>(&mut self, events: &mut Events) {
        let Some(pc) = self.redirected.take() else {
            return;
        };
        if RUNS {
            let bi = self.code.lookup(pc, &self.mem);
            events.push_run(&mut self.code.blocks[bi], 0);
        }
        // The run above is the last thread's: where it stopped.
        if let Some(tid) = self.switched_to.take() {
            events.thread_switch(tid as u64);
        }
    }

    /// The system call at the PC (made again, when the thread just put on
    /// the hart was blocked in it), and then the calls of threads that the
    /// hart goes to which were blocked in theirs, until one goes on.
    #[inline(never)]
    fn ecall(&mut self) -> Result<Option<Exit>, SimError> {
        let mut redo = self.redo.take().unwrap_or_default();
        if redo.done == 0 && self.kernel.outside.as_ref().is_some_and(HostSignals::news) {
            // A signal from outside came while the program ran up to the
            // call: as if just before the `ecall`, its handler runs first
            // (and returns to make the call), instead of the call perhaps
            // blocking with the signal unseen.
            self.kernel.fire_timers();
            if self.kernel.signals.wakes() {
                return Ok(self.deliver_pending(self.cpu.pc));
            }
        }
        loop {
            let x = &self.cpu.x;
            let mut args = [x[10], x[11], x[12], x[13], x[14], x[15], 0, x[17]];
            let at = self.cpu.pc;
            self.kernel.sp = x[2];
            // A `write` that wrote part of its bytes before it blocked goes
            // on with the rest; the program's registers stay as they were.
            let done = redo.done;
            args[1] = args[1].wrapping_add(done);
            args[2] = args[2].wrapping_sub(done);
            self.kernel.resumed = redo;
            if args[7] == crate::sysno::OPENAT {
                // What another thread's `/proc` status file shows, as the
                // threads off the hart are now.
                self.kernel.parked_signals = (self.threads.parked.iter())
                    .map(|p| (p.tid, p.mask, p.pending.set()))
                    .collect();
            }
            let outcome = self.kernel.syscall(&mut self.mem, args, at);
            self.kernel.resumed = Redo::default();
            if std::mem::take(&mut self.kernel.sysv_moved) {
                self.threads.wake_sysv_waits();
            }
            let mut outcome = outcome?;
            if done > 0 {
                outcome = match outcome {
                    Outcome::Ret(v) if v >= 0 => Outcome::Ret(v + done as i64),
                    Outcome::Ret(_) | Outcome::Interrupted => Outcome::Ret(done as i64),
                    Outcome::Block(b) => Outcome::Block(Blocked {
                        done: b.done + done,
                        ..b
                    }),
                    other => other,
                };
            }
            if let Some(exit) = self.finish_syscall(outcome, at)? {
                return Ok(Some(exit));
            }
            match self.redo.take() {
                Some(r) => redo = r,
                None => return Ok(None),
            }
        }
    }

    /// What a system call's outcome does to the hart: its result in a0
    /// and the next instruction, a handler started, the state restored
    /// from a signal frame; or the end of the process.
    #[inline(never)]
    fn finish_syscall(&mut self, outcome: Outcome, at: u64) -> Result<Option<Exit>, SimError> {
        match outcome {
            Outcome::Ret(v) => {
                self.cpu.x[10] = v as u64;
                self.cpu.pc = at + 4;
            }
            Outcome::RetFlush(v, stale) => {
                self.cpu.x[10] = v as u64;
                self.cpu.pc = at + 4;
                self.code.flush_if_decoded_in(&stale);
            }
            Outcome::Exit(code) => return Ok(Some(Exit::Code(code))),
            Outcome::Sigreturn => {
                let signals = &mut self.kernel.signals;
                if let Err(f) = signal::sigreturn(signals, &mut self.cpu, &self.mem) {
                    return Ok(Some(Exit::Signal {
                        signal: 11,
                        message: format!(
                            "rt_sigreturn at pc {at:#x} could not read the signal frame at {:#x}: SIGSEGV",
                            f.addr
                        ),
                    }));
                }
            }
            Outcome::Clone(args) => {
                let tid = self.start_thread(&args, at);
                self.cpu.x[10] = tid as u64;
                self.cpu.pc = at + 4;
            }
            Outcome::Fork(args) => self.fork(&args, at),
            Outcome::ThreadExit(code) => {
                self.cpu.pc = at;
                if let Some(exit) = self.end_thread(code, at)? {
                    return Ok(Some(exit));
                }
            }
            Outcome::FutexWait {
                addr,
                val,
                bitset,
                until,
            } => {
                self.cpu.x[10] = 0;
                self.cpu.pc = at + 4;
                let wait = Wait::Futex {
                    addr,
                    val,
                    bitset,
                    until,
                };
                if !self.switch(wait) {
                    // No other thread could run before the wait's own end:
                    // another process moved the word in shared memory (a
                    // wake, as far as the waiter can tell), a signal
                    // interrupts it, its timeout ran out, or nothing ever
                    // can end it.
                    if self.shared_word_moved(addr, val) {
                    } else if self.my_wait_interrupted() {
                        self.cpu.x[10] = -(libc::EINTR as i64) as u64;
                    } else if until.is_none() {
                        return Err(deadlock(self.cpu.x[17], at));
                    } else {
                        self.cpu.x[10] = -(libc::ETIMEDOUT as i64) as u64;
                    }
                }
            }
            Outcome::FutexWake {
                addr,
                count,
                bitset,
            } => {
                // Waiters in other processes, on shared memory, too.
                self.mem.futex_wake(addr, count);
                self.cpu.x[10] = self.threads.wake(addr, bitset, count) as u64;
                self.cpu.pc = at + 4;
            }
            Outcome::Yield => {
                self.cpu.x[10] = 0;
                self.cpu.pc = at + 4;
                if self.another_ready() {
                    self.switch(Wait::Ready);
                }
            }
            Outcome::Block(blocked) => {
                // Still in the call, which is made again when the wait
                // is over; a0 keeps its argument.
                self.cpu.pc = at;
                if !self.switch(Wait::Call(blocked)) {
                    return Err(deadlock(self.cpu.x[17], at));
                }
            }
            Outcome::Interrupted => {
                if self.kernel.signals.restarts() {
                    // The handler's frame returns to the `ecall`.
                    self.cpu.pc = at;
                } else {
                    self.cpu.x[10] = -(libc::EINTR as i64) as u64;
                    self.cpu.pc = at + 4;
                }
            }
        }
        if self.redo.is_some() {
            // The thread now on the hart first makes its call again
            // ([`Self::ecall`]); its signals come after that.
            return Ok(None);
        }
        Ok(self.deliver_pending(at))
    }

    fn instruction_bytes(&self, pc: u64, len: u8) -> String {
        (0..len as u64)
            .map(|i| match self.mem.load::<1>(pc + i) {
                Ok(b) => format!("{b:02x}"),
                Err(_) => "??".into(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl Source for Simulator {
    type Error = SimError;

    /// Runs the program to its end; returns the number of events delivered.
    /// The exit status is then in [`Simulator::exit`].
    fn run(&mut self, sink: &mut dyn Sink) -> Result<u64, SimError> {
        self.run_to_exit(sink)?;
        Ok(self.delivered)
    }
}
