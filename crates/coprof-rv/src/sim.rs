//! The simulator: a loaded process and the loop that runs it.
//!
//! The loop looks up the pre-decoded block at the PC, counts it, runs it
//! with [`exec_block`](crate::cpu::exec_block)'s body (the event-free
//! instantiation when the sink wants no class), chaining block after block
//! while each passes control on, and handles whatever stopped the chain: a
//! system call, a request to drop stale code, the death of the process by
//! a signal, or the time to look at timers, threads and progress.

use crate::code::CodeCache;
use crate::cpu::{exec_ops, Cpu, Stop};
use crate::disasm::disassemble;
use crate::elf;
use crate::error::SimError;
use crate::events::Events;
use crate::host_signals::HostSignals;
use crate::itimer::earlier;
use crate::jit::{self, Jit};
use crate::mem::{Access, Memory};
use crate::op::TAIL_CLASSES;
use crate::process;
use crate::random::GuestRandom;
use crate::signal::{self, code, Action, Pending, SigInfo};
use crate::syscall::{clone_flags, host_ready, Blocked, CloneArgs, Kernel, Outcome};
use crate::threads::{Parked, Redo, Threads, Wait, QUANTUM};
use coprof_core::{ClassSet, Sink, Source};
use std::path::{Path, PathBuf};

mod fork;
pub use fork::end_child;

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
    /// The exit status a shell reports: the code, or 128 + signal.
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

/// The end of a process killed at `at` by a signal: one it sent itself,
/// its timers', or one from outside (another process, the terminal).
fn killed_by(info: &SigInfo, at: u64) -> Exit {
    let sig = info.signo;
    // SAFETY: plain call.
    let me = unsafe { libc::getpid() } as u32;
    let sender = info.word as u32;
    let from = if info.code == code::SI_KERNEL && matches!(sig, 14 | 26 | 27) {
        "from its interval timer".to_string()
    } else if info.code == code::SI_KERNEL {
        "from outside (the terminal or the kernel)".to_string()
    } else if info.code == code::SI_TIMER {
        "from its POSIX timer".to_string()
    } else if matches!(info.code, code::SI_USER | code::SI_QUEUE | code::SI_TKILL) && sender != me {
        format!("sent by process {sender}")
    } else {
        "sent by the program itself".to_string()
    };
    Exit::Signal {
        signal: sig,
        message: format!(
            "killed by {} (signal {sig}) {from} at pc {at:#x}",
            signal_name(sig)
        ),
    }
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => "signal",
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
        kernel.runner = config.runner.clone();
        kernel.unobserved = config.exec_in_place;
        Ok(Simulator {
            cpu,
            mem,
            code: CodeCache::new(),
            jit: if config.interpret { None } else { Jit::new() },
            kernel,
            limit: config.max_instructions,
            exit: None,
            redirected: None,
            redo: None,
            threads: Threads {
                // SAFETY: plain call.
                next_tid: unsafe { libc::getpid() } as i64 + 1,
                quantum: config.quantum.unwrap_or(QUANTUM).max(1),
                ..Threads::default()
            },
            delivered: 0,
            delivered_in_runs: 0,
            follow: None,
        })
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
        let mut events = Events::new(sink);
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
                self.mem.code_written = false;
                self.code.flush();
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
            self.kernel.resumed_until = redo.until;
            self.kernel.resumed_look = redo.looked;
            let outcome = self.kernel.syscall(&mut self.mem, args, at);
            self.kernel.resumed_until = None;
            self.kernel.resumed_look = false;
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
            Outcome::RetFlush(v) => {
                self.cpu.x[10] = v as u64;
                self.cpu.pc = at + 4;
                self.code.flush();
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

    /// Starts a thread as `clone` asked (CLONE_VM | CLONE_THREAD): the
    /// caller's registers, with its own stack, thread pointer and a0 = 0,
    /// after the `ecall` at `at`; it runs when its turn comes. Returns its
    /// id.
    #[inline(never)]
    fn start_thread(&mut self, args: &CloneArgs, at: u64) -> i64 {
        let tid = self.threads.next_tid;
        self.threads.next_tid += 1;
        let mut cpu = self.cpu.clone();
        if args.stack != 0 {
            cpu.x[2] = args.stack;
        }
        if args.flags & clone_flags::SETTLS != 0 {
            cpu.x[4] = args.tls;
        }
        cpu.x[10] = 0;
        cpu.pc = at + 4;
        cpu.reservation = None;
        // Failed writes of the ids are the program's own fault, as on
        // Linux (which drops them too).
        if args.flags & clone_flags::PARENT_SETTID != 0 {
            let _ = self.mem.store::<4>(args.parent_tid, tid as u64);
        }
        if args.flags & clone_flags::CHILD_SETTID != 0 {
            let _ = self.mem.store::<4>(args.child_tid, tid as u64);
        }
        let clear_tid = if args.flags & clone_flags::CHILD_CLEARTID != 0 {
            args.child_tid
        } else {
            0
        };
        self.kernel.tids.push(tid);
        if self.threads.parked.is_empty() {
            self.threads.turn_ends = self.cpu.instret + self.threads.quantum;
        }
        self.threads.parked.push_back(Parked {
            cpu,
            tid,
            clear_tid,
            mask: self.kernel.signals.mask,
            pending: Pending::default(),
            rseq: 0,
            // A thread starts without an alternate stack (Linux's
            // copy_process with CLONE_VM).
            altstack: [0; 3],
            wait: Wait::Ready,
        });
        tid
    }

    /// Ends the running thread with `code`: its CLONE_CHILD_CLEARTID word
    /// cleared and woken (what `pthread_join` waits for), and the next
    /// thread on the hart; the last thread's end is the process's.
    #[inline(never)]
    fn end_thread(&mut self, code: i32, at: u64) -> Result<Option<Exit>, SimError> {
        let tid = self.kernel.tid;
        if self.kernel.clear_tid != 0 && self.mem.store::<4>(self.kernel.clear_tid, 0).is_ok() {
            self.threads.wake(self.kernel.clear_tid, u32::MAX, 1);
        }
        self.kernel.tids.retain(|&t| t != tid);
        if self.threads.parked.is_empty() {
            return Ok(Some(Exit::Code(code)));
        }
        let next = self
            .next_thread(None, None, None)
            .ok_or_else(|| deadlock(self.cpu.x[17], at))?;
        self.run_thread(next);
        Ok(None)
    }

    /// Takes the running thread off the hart (waiting as `wait` says) and
    /// puts the next one on: the first ready, else one whose timed wait
    /// runs out, else the first whose descriptor the host says is ready. A
    /// ready thread with no other to hand over to keeps the hart; `false`
    /// when the running one waits and so does every other, for something
    /// no thread can do: a deadlock.
    #[inline(never)]
    fn switch(&mut self, wait: Wait) -> bool {
        let next = match &wait {
            Wait::Ready => self.threads.take_next(),
            Wait::Call(blocked) => self.next_thread(Some(blocked), blocked.until, None),
            Wait::Futex {
                addr, val, until, ..
            } => {
                let shared = self.mem.is_shared(*addr);
                self.next_thread(None, *until, shared.then_some((*addr, *val)))
            }
            Wait::Redo(_) => self.next_thread(None, None, None),
        };
        let Some(next) = next else {
            // Keeps the hart: ready, or its own wait ended first.
            return wait == Wait::Ready || self.redo.is_some();
        };
        let me = self.parked_me(wait);
        self.threads.parked.push_back(me);
        self.run_thread(next);
        true
    }

    /// Whether another thread can take the hart, after looking whether the
    /// waits of those blocked in a call are over.
    fn another_ready(&mut self) -> bool {
        self.wake_blocked(true);
        self.threads.any_ready()
    }

    /// The next thread for the hart when the running one cannot go on:
    /// one ready, or whose wait's end has come; else, if threads wait on
    /// host descriptors or with a timeout, or the interval timer is
    /// armed, the first ready after the host says so (the whole process
    /// waits there, as it would on Linux). `None` when nothing can end
    /// every thread's wait, or when the running thread's own timeout
    /// (`my_until`) comes first. When the running thread is about to
    /// block in a call as `mine` says, its own descriptors count for the
    /// host's wait too, and if its wait is the one that ends, it keeps
    /// the hart to make its call again (`None`, with [`Self::redo`] set).
    /// When it waits on a futex in shared memory (`my_futex`: the word
    /// and the value it held), another process moving the word, or a
    /// signal for it, ends its wait too (`None`).
    fn next_thread(
        &mut self,
        mine: Option<&Blocked>,
        my_until: Option<std::time::Instant>,
        my_futex: Option<(u64, u32)>,
    ) -> Option<Parked> {
        loop {
            self.wake_blocked(true);
            if let Some(next) = self.threads.take_next() {
                return Some(next);
            }
            if my_until.is_some_and(|u| std::time::Instant::now() >= u) {
                self.redo = mine.map(Blocked::redo);
                return None;
            }
            if my_futex.is_some_and(|(a, v)| self.shared_word_moved(a, v))
                || (my_futex.is_some() && self.my_wait_interrupted())
            {
                return None;
            }
            if !self.wait_on_host(mine, my_until, my_futex) {
                return None;
            }
            if let Some(b) = mine {
                if self.call_wait_over(&self.kernel.signals.own, b, true) {
                    self.redo = Some(b.redo());
                    return None;
                }
            }
        }
    }

    /// Whether the futex word at `addr`, which held `val` when a thread
    /// began to wait on it, lies in shared memory and holds something
    /// else now: another process changed it, as it does before it wakes
    /// its waiters (glibc's mutexes, semaphores and condition variables
    /// all do). Its wake reaches only its own process's threads, so the
    /// waiter ends its wait when it sees the change, as after a spurious
    /// wake-up, which futex callers allow for.
    fn shared_word_moved(&self, addr: u64, val: u32) -> bool {
        self.mem.is_shared(addr) && self.mem.load::<4>(addr).map_or(true, |v| v as u32 != val)
    }

    /// Whether a signal pending for the running thread would interrupt
    /// its wait.
    fn my_wait_interrupted(&self) -> bool {
        let signals = &self.kernel.signals;
        signals.would_interrupt(&signals.own, signals.mask)
    }

    /// The running thread as it would be parked, waiting as `wait` says.
    fn parked_me(&mut self, wait: Wait) -> Parked {
        Parked {
            cpu: self.cpu.clone(),
            tid: self.kernel.tid,
            clear_tid: self.kernel.clear_tid,
            mask: self.kernel.signals.mask,
            pending: std::mem::take(&mut self.kernel.signals.own),
            rseq: self.kernel.rseq,
            altstack: self.kernel.signals.altstack,
            wait,
        }
    }

    /// Whether the wait of a call blocked as `b` is over for a thread
    /// whose own pending signals are `own`: a descriptor ready (polled on
    /// the host when `poll`), a signal of its set pending, or a signal
    /// that its mask lets through and that does something.
    fn call_wait_over(&self, own: &Pending, b: &Blocked, poll: bool) -> bool {
        let signals = &self.kernel.signals;
        signals.takes_in(own, b.set)
            || signals.would_interrupt(own, b.mask)
            || (poll && host_ready(&b.fds))
    }

    /// Makes threads whose wait is over ready: those blocked in a call
    /// ([`Self::call_wait_over`]; descriptors are polled only when
    /// `poll`), those asleep on a futex with a signal to take, whose
    /// wait ends with EINTR as Linux's signal_wake_up ends it (the
    /// thread then takes the signal on its way back), and, when `poll`,
    /// those whose timeout's end has come.
    fn wake_blocked(&mut self, poll: bool) {
        if self.threads.parked.is_empty() {
            return;
        }
        if poll {
            self.threads.time_out(std::time::Instant::now());
        }
        let mut parked = std::mem::take(&mut self.threads.parked);
        for p in parked.iter_mut() {
            match &p.wait {
                Wait::Call(b) if self.call_wait_over(&p.pending, b, poll) => {
                    p.wait = Wait::Redo(b.redo());
                }
                Wait::Futex { .. } if self.kernel.signals.would_interrupt(&p.pending, p.mask) => {
                    p.wait = Wait::Ready;
                    p.cpu.x[10] = -(libc::EINTR as i64) as u64;
                }
                Wait::Futex { addr, val, .. } if self.shared_word_moved(*addr, *val) => {
                    p.wait = Wait::Ready;
                }
                _ => {}
            }
        }
        self.threads.parked = parked;
    }

    /// Waits on the host, when no thread can run, for a descriptor that a
    /// blocked thread (or the running one, about to block as `mine` says)
    /// waits on, the end of a thread's timeout (the running one's is
    /// `my_until`), the interval timer's signal or, if a thread waits for
    /// a signal, one from outside, whichever comes first; `false` when
    /// there is none of them (every thread waits on a futex without a
    /// timeout: a deadlock). A thread waiting on a futex in shared memory
    /// (the running one on `my_shared_futex`: the word and the value it
    /// held) may be ended by another process: then the wait lasts at most
    /// [`SHARED_FUTEX_LOOK`], after which the caller looks at the words
    /// again, and with no descriptor to wait for it is the host's futex
    /// wait on the first such word, which the other process's wake ends.
    fn wait_on_host(
        &mut self,
        mine: Option<&Blocked>,
        my_until: Option<std::time::Instant>,
        my_shared_futex: Option<(u64, u32)>,
    ) -> bool {
        let my_fds = mine.map_or(&[][..], |b| &b.fds);
        let mut fds: Vec<libc::pollfd> = self
            .threads
            .parked
            .iter()
            .filter_map(|p| match &p.wait {
                Wait::Call(b) => Some(b.fds.iter()),
                _ => None,
            })
            .flatten()
            .chain(my_fds)
            .map(|&(fd, events)| libc::pollfd {
                fd,
                events,
                revents: 0,
            })
            .collect();
        let until = match (self.threads.next_timeout(), my_until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let left = until.map(|u| u.saturating_duration_since(std::time::Instant::now()));
        let mut timeout = earlier(left, self.kernel.timers.until_real());
        // A futex word in shared memory waited on, the running thread's
        // first: then the wait is short, since another process may change
        // any such word.
        let shared_word = my_shared_futex.or_else(|| {
            self.threads.parked.iter().find_map(|p| match p.wait {
                Wait::Futex { addr, val, .. } if self.mem.is_shared(addr) => Some((addr, val)),
                _ => None,
            })
        });
        if shared_word.is_some() {
            timeout = earlier(timeout, Some(SHARED_FUTEX_LOOK));
        }
        // A thread waiting for a signal (`sigwait`, `sigsuspend`, `pause`)
        // may get one from outside; threads that all wait on futexes for
        // each other, none.
        let for_a_signal = self
            .threads
            .parked
            .iter()
            .any(|p| matches!(&p.wait, Wait::Call(b) if b.fds.is_empty()))
            || mine.is_some_and(|b| b.fds.is_empty());
        let signal_may_come = for_a_signal && self.kernel.outside_fd().is_some();
        if fds.is_empty() && timeout.is_none() && !signal_may_come {
            return false;
        }
        if let (true, Some((addr, val))) = (fds.is_empty(), shared_word) {
            // Only futex words to wait for: on the host's futex of the
            // first, which another process's wake ends at once; the others
            // are looked at after at most SHARED_FUTEX_LOOK, and so are
            // signals from outside (whose catching interrupts the wait).
            self.mem
                .futex_wait(addr, val, timeout.unwrap_or(SHARED_FUTEX_LOOK));
        } else {
            // A signal from outside ends the wait too; an error (EINTR
            // from a host signal) just looks again.
            self.kernel.poll_with_outside(&mut fds, timeout);
        }
        self.kernel.fire_timers();
        self.hand_directed();
        true
    }

    /// Puts `next` on the hart for a turn.
    fn run_thread(&mut self, next: Parked) {
        let instret = self.cpu.instret;
        self.redirected.get_or_insert(self.cpu.pc);
        self.cpu = next.cpu;
        self.cpu.instret = instret;
        self.cpu.reservation = None;
        self.kernel.tid = next.tid;
        self.kernel.clear_tid = next.clear_tid;
        self.kernel.signals.set_mask(next.mask);
        self.kernel.signals.own = next.pending;
        self.kernel.rseq = next.rseq;
        self.kernel.signals.altstack = next.altstack;
        self.threads.turn_ends = instret + self.threads.quantum;
        if let Wait::Redo(redo) = next.wait {
            self.redo = Some(redo);
        }
    }

    /// On the way back to the program, as Linux on its way back to user
    /// mode: every pending signal that is not blocked, lowest first, runs
    /// its handler (each on the frame of the one before, so the last runs
    /// first), is dropped, or kills the process.
    #[inline(never)]
    fn deliver_pending(&mut self, at: u64) -> Option<Exit> {
        self.hand_directed();
        while let Some(info) = self.kernel.signals.take_ready() {
            self.kernel.timers.posix.delivered(&info);
            match self.kernel.signals.action(info.signo) {
                Action::Run => {
                    if let Err(exit) = self.enter_handler(&info) {
                        return Some(exit);
                    }
                }
                Action::Ignore => {}
                Action::Kill => return Some(killed_by(&info, at)),
                // The host process stops with the same signal (whose host
                // disposition is the default then) and goes on here.
                // SAFETY: plain call.
                Action::Stop => unsafe {
                    libc::kill(libc::getpid(), info.signo);
                },
            }
        }
        // No handler took the mask `rt_sigsuspend` replaced: it comes
        // back now.
        if let Some(mask) = self.kernel.signals.saved_mask.take() {
            self.kernel.signals.set_mask(mask);
        }
        // A signal for a thread off the hart (its own, or the process's
        // that the running thread blocks) ends its wait, as Linux's
        // signal_wake_up does.
        self.wake_blocked(false);
        None
    }

    /// Signals sent to threads off the hart (by `tgkill`, or a POSIX
    /// timer's SIGEV_THREAD_ID) wait in theirs; those for a thread that
    /// has ended are dropped.
    fn hand_directed(&mut self) {
        for (tid, info) in std::mem::take(&mut self.kernel.directed) {
            if let Some(p) = self.threads.parked.iter_mut().find(|p| p.tid == tid) {
                p.pending.hold_or_overrun(info);
            }
        }
    }

    /// The signal a trap stops the hart with, and the PC it happened at.
    #[inline(never)]
    fn fault_signal(&self, stop: Stop, bi: usize) -> (SigInfo, u64) {
        let op_pc = |at: usize| self.code.blocks[bi].ops[at].pc;
        match stop {
            Stop::Illegal { at } => (SigInfo::fault(4, code::ILL_ILLOPC, op_pc(at)), op_pc(at)),
            Stop::Fault { at, fault } => {
                let si_code = if self.mem.perm_at(fault.addr) & crate::mem::perm::MAPPED != 0 {
                    code::SEGV_ACCERR
                } else {
                    code::SEGV_MAPERR
                };
                (SigInfo::fault(11, si_code, fault.addr), op_pc(at))
            }
            Stop::Misaligned { at, addr } => (SigInfo::fault(7, code::BUS_ADRALN, addr), op_pc(at)),
            // ebreak: the hart's pc is its address.
            _ => (
                SigInfo::fault(5, code::TRAP_BRKPT, self.cpu.pc),
                self.cpu.pc,
            ),
        }
    }

    /// Starts the handler a trap's signal `info` at `pc` goes to, when the
    /// program installed one and has not blocked the signal. A handler
    /// that returns resumes at `pc`, the instruction that trapped, as
    /// under Linux.
    #[inline(never)]
    fn catch(&mut self, info: &SigInfo, pc: u64) -> Caught {
        if !self.kernel.signals.catches_fault(info.signo) {
            return Caught::Default;
        }
        self.cpu.pc = pc;
        match self.enter_handler(info) {
            Ok(()) => Caught::Handler,
            Err(exit) => Caught::Killed(exit),
        }
    }

    /// The end of a process that a trap's signal kills, with a message
    /// naming the PC, the address and the instruction as a kernel log or
    /// debugger would.
    #[cold]
    #[inline(never)]
    fn death(&self, stop: Stop, bi: usize) -> Exit {
        match stop {
            Stop::Illegal { at } => {
                let op = self.code.blocks[bi].ops[at];
                let bytes = self.instruction_bytes(op.pc, op.len);
                Exit::Signal {
                    signal: 4,
                    message: format!(
                        "illegal instruction at pc {:#x}: bytes {} ({}): SIGILL",
                        op.pc,
                        bytes,
                        disassemble(&op, self.cpu.frm)
                    ),
                }
            }
            Stop::Fault { at, fault } => {
                let op = self.code.blocks[bi].ops[at];
                let what = match fault.access {
                    Access::Read => "read from",
                    Access::Write => "write to",
                    Access::Execute => "instruction fetch from",
                };
                let how = if self.mem.perm_at(fault.addr) & crate::mem::perm::MAPPED != 0 {
                    "a page without that permission"
                } else {
                    "unmapped memory"
                };
                let instr = if fault.access == Access::Execute {
                    String::new()
                } else {
                    format!(" by `{}`", disassemble(&op, self.cpu.frm))
                };
                Exit::Signal {
                    signal: 11,
                    message: format!(
                        "segmentation fault: {what} address {:#x} ({how}) at pc {:#x}{instr}: SIGSEGV",
                        fault.addr, op.pc
                    ),
                }
            }
            Stop::Misaligned { at, addr } => {
                let op = self.code.blocks[bi].ops[at];
                Exit::Signal {
                    signal: 7,
                    message: format!(
                        "misaligned atomic access to address {addr:#x} at pc {:#x} by `{}`: SIGBUS",
                        op.pc,
                        disassemble(&op, self.cpu.frm)
                    ),
                }
            }
            _ => Exit::Signal {
                signal: 5,
                message: format!("breakpoint (ebreak) at pc {:#x}: SIGTRAP", self.cpu.pc),
            },
        }
    }

    /// Builds the signal frame and starts the handler; when the frame
    /// cannot be written, the exit by SIGSEGV that Linux gives.
    fn enter_handler(&mut self, info: &SigInfo) -> Result<(), Exit> {
        let sp = self.cpu.x[2];
        self.redirected.get_or_insert(self.cpu.pc);
        signal::enter_handler(&mut self.kernel.signals, &mut self.cpu, &mut self.mem, info).map_err(
            |f| Exit::Signal {
                signal: 11,
                message: format!(
                    "no room for the frame of {} (signal {}) at {:#x} below sp {sp:#x}: SIGSEGV",
                    signal_name(info.signo),
                    info.signo,
                    f.addr
                ),
            },
        )
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
