//! coprof-native: samples unmodified x86-64 Linux processes, as DCPI
//! samples a whole system (Burrows et al., "Efficient and flexible value
//! sampling", ASPLOS 2000), and hands the samples to coprof's engines as
//! [`Event`]s.
//!
//! The program runs under ptrace. Each of its threads has a CPU clock
//! (a `perf_event_open` software event) that interrupts it once
//! it has run for a period; at the interrupt the thread stops, and the
//! sampler reads its PC, decodes the instruction there (with iced-x86), and
//! for a load reads the address it is about to read and the value there.
//! One event per sample: a load with its value, or an event of the
//! instruction's class. With [`Config::next_load`], for value profiles,
//! the thread goes on from the interrupt to its next load (run to it at a
//! hardware breakpoint over straight code, stepped across branches), and
//! that load is the sample. The program never sees the interrupts.
//! With [`Config::ring_buffer`] the thread is not stopped for a sample:
//! the kernel writes each interrupted PC into a ring buffer, as for
//! `perf record`, which the sampler reads at one stop every 256 samples,
//! and a sample is that PC alone (with its stack, where one is asked).
//!
//! The period follows DCPI's (§2.1 of its SOSP 1997 paper, which the
//! value-sampling paper builds on): about 62,000 cycles, randomized
//! uniformly within ±2,000 cycles so that the samples do not fall in step
//! with a loop (DCPI drew from 60K to 64K cycles). The clock counts
//! nanoseconds of CPU time, not cycles: [`Config::period_ns`] gives the
//! mean, 31 µs by default (62,000 cycles at 2 GHz), and the jitter is the
//! same ±1/31 of it.
//!
//! A sink that asks for stacks ([`Sink::wants_stacks`](coprof_core::Sink::wants_stacks))
//! gets each sample's, unwound from the CFI in the `.eh_frame` of the
//! files the process runs while the thread is stopped (`unwind.rs`), as
//! `perf record --call-graph dwarf` unwinds one: the calls open, given
//! before the sample's event ([`Sink::stack`](coprof_core::Sink::stack)).
//! With [`Config::ring_buffer`] the kernel copies each sample's registers
//! and the top 8 KiB of its stack into the buffer, as for `perf record
//! --call-graph dwarf`, and the stack is unwound from that copy when the
//! buffer is read (`ring_stacks.rs`); the buffer is then 1 MiB, read at
//! one stop every 15 samples. With [`Config::frame_pointers`] too, the
//! kernel walks the thread's frame pointers at each sample instead, as
//! for `perf record --call-graph fp`, and the sample holds the return
//! addresses it found: far smaller, but whole only through code that
//! keeps a frame pointer.
//!
//! What a sample cannot be: a whole instruction stream. Engines that need
//! every instruction (the loop cache, branch-on-random) get nothing
//! useful from samples; range profiles and value hotlists do, with
//! counts in samples rather than instructions.
//!
//! A program started and sampled to its end, its samples kept, and each
//! counted by the file its PC lies in ([`Run::modules`]):
//!
//! ```
//! use coprof_core::Collect;
//! use coprof_native::{sample, Config, Exit};
//! use std::ffi::OsString;
//! use std::path::Path;
//!
//! let script = "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done";
//! let args = ["sh", "-c", script].map(OsString::from);
//! let mut samples = Collect::default();
//! let run = sample(Path::new("/bin/sh"), &args, &Config::default(), &mut samples)?;
//! assert_eq!(run.exit, Exit::Exited(0));
//! assert_eq!(run.samples as usize, samples.events.len());
//! for module in &run.modules {
//!     let n = samples.events.iter().filter(|e| (module.start..module.end).contains(&e.pc)).count();
//!     println!("{n:>6}  {}", module.path.display());
//! }
//! // The shell's loop runs in the shell and its C library.
//! let in_files = samples.events.iter().filter(|e| run.modules.iter().any(|m| {
//!     (m.start..m.end).contains(&e.pc)
//! }));
//! assert!(in_files.count() * 10 >= samples.events.len() * 9);
//! # Ok::<(), coprof_native::NativeError>(())
//! ```

mod affinity;
mod ahead;
mod decode;
mod modules;
mod perf;
mod ring;
mod ring_stacks;
mod seen_maps;
mod start;
mod tracer;
mod unwind;

pub use decode::{decode, event, Decoded, Regs};
pub use modules::{modules, parse_maps, Mapping};
pub use perf::{copies_stack_of, MAX_STACK_COPY, SAMPLE_SIGNAL, STACK_COPY};
pub use tracer::{attach_with, command_line, sample, sample_with, MAX_STEPS};

use coprof_core::{ClassSet, Event};
use std::path::PathBuf;

/// How to sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The mean period between two samples of a thread, in nanoseconds of
    /// its CPU time (default 31,000: DCPI's 62K cycles at 2 GHz).
    pub period_ns: u64,
    /// The seed of the period's jitter.
    pub seed: u64,
    /// Value sampling: from each interrupt, let the thread go on to its
    /// next load (at most [`MAX_STEPS`] instructions, and not past a
    /// system call) and take that load, with its address and the value it reads,
    /// as the sample; a sample that meets none gives no event. Without
    /// it, a sample is the interrupted instruction, which on x86-64 is
    /// seldom a load: the interrupt is taken once the instructions before
    /// it have retired, so a sample lands after a load (skid) far more
    /// often than on it.
    pub next_load: bool,
    /// With `next_load`: reach the next load by stepping every
    /// instruction, rather than by running to it at a hardware breakpoint
    /// where the code before it runs in a straight line (see `ahead.rs`).
    /// The same samples, more slowly; for checking one way against the
    /// other.
    pub single_step: bool,
    /// Run the program, its threads and children, and the sampling
    /// thread on one CPU, the one the sampler runs on when it starts
    /// them: a sample then wakes no other CPU, which on a virtual machine
    /// costs a quarter of a sample or more (`affinity.rs`). The program
    /// sees that one CPU in its affinity mask (`nproc`,
    /// `sched_getaffinity`), and its threads share it. Not an option of
    /// the paper's: DCPI's interrupts were taken on the CPU that ran the
    /// code. For a program coprof starts, not one it attaches to, whose
    /// affinity is its own.
    pub same_cpu: bool,
    /// Take the samples without stopping the program, as `perf record`
    /// does: each thread's clock runs on at every overflow, and the
    /// kernel writes the interrupted PC into a ring buffer (`ring.rs`),
    /// which the sampler reads when a second clock stops the thread, once
    /// every 256 periods (`perf.rs`). A sample then costs the program a
    /// timer interrupt instead of a ptrace stop,
    /// but is a PC alone: its event is of class `other`, with no
    /// address or value, since nothing reads the thread's registers or
    /// memory at the sample. Not with `next_load`, which needs the stop.
    /// For a sink that asks for stacks, each sample copies the thread's
    /// registers and the top of its stack too (as `perf record
    /// --call-graph dwarf` asks), unwound when the buffer is read; a
    /// stack deeper than the copy's 8 KiB stops there.
    ///
    /// Two departures from DCPI's sampling (§2.1 of its SOSP 1997
    /// paper), so not the default: the period is redrawn within ±1/31 at
    /// each read of the buffer, 256 samples apart, rather than at every
    /// sample; and a buffer that fills before it is read drops samples,
    /// which [`Run::lost`] counts (the kernel's throttling of a clock
    /// aside, each buffer is read after an eighth of it is written, while
    /// its thread is stopped, so none should fill).
    pub ring_buffer: bool,
    /// With `ring_buffer`, for a sink that asks for stacks: the bytes of
    /// each sample's stack the kernel copies, from its stack pointer up
    /// (`perf record --call-graph dwarf,SIZE`); a stack deeper than the
    /// copy stops at its end. A multiple of 8 up to [`MAX_STACK_COPY`];
    /// [`STACK_COPY`], perf's default, by default. Each thread's buffer
    /// holds at least 120 such samples, and is read an eighth full.
    pub stack_copy: u32,
    /// With `ring_buffer`, for a sink that asks for stacks: take each
    /// sample's stack from the kernel's walk of the thread's frame
    /// pointers (`perf record --call-graph fp`) rather than from a copy
    /// of its top (`stack_copy`). A sample is then about 1 KiB rather
    /// than 8 KiB and more (its buffer 512 KiB, read every 68 samples,
    /// rather than 1 MiB every 15), and a stack is not bounded by a copy;
    /// but it holds only frames that keep a frame pointer
    /// (`-fno-omit-frame-pointer`), and code built without them (most
    /// distributions' C libraries) ends the walk. The frames below the
    /// innermost frame pointer (a leaf that keeps none, a function in its
    /// prologue), which would hide their callers, are unwound by their
    /// CFI from the top 512 bytes of the stack, which each sample copies
    /// with its registers (`unwind.rs`, `Unwinder::stack_of_chain`). Not
    /// without `ring_buffer`: a stopped thread's stack is unwound from its
    /// CFI, which needs no frame pointers.
    pub frame_pointers: bool,
    /// Start the program with SIGPIPE ignored rather than at its default
    /// action, for a caller that was itself started so: a program started
    /// by `execve` keeps the signals its parent ignored, and a shell's
    /// `trap '' PIPE` or Python's `os.system` starts one ignoring
    /// SIGPIPE, so that its writes into a pipe whose reader has gone fail
    /// with EPIPE rather than end it. Rust's runtime ignores SIGPIPE in
    /// every process, whatever it was started with, so the program gets
    /// the default unless this says otherwise, as a program started by
    /// [`std::process::Command`] does. For a program coprof starts.
    pub ignore_sigpipe: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            period_ns: 31_000,
            seed: 1,
            next_load: false,
            single_step: false,
            same_cpu: false,
            ring_buffer: false,
            stack_copy: STACK_COPY,
            frame_pointers: false,
            ignore_sigpipe: false,
        }
    }
}

impl Config {
    /// Refuses options that exclude each other, before anything is
    /// started, pinned or attached.
    fn check(&self) -> Result<(), NativeError> {
        if !copies_stack_of(self.stack_copy) {
            return Err(NativeError::StackCopy(self.stack_copy));
        }
        if self.ring_buffer && self.next_load {
            return Err(NativeError::RingBufferNextLoad);
        }
        if self.frame_pointers && !self.ring_buffer {
            return Err(NativeError::FramePointersStopped);
        }
        Ok(())
    }
}

/// How the program ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status.
    Exited(i32),
    /// A signal killed it.
    Killed(i32),
    /// It was attached to ([`attach_with`]) and let go while it ran: it
    /// goes on, unsampled.
    Detached,
}

impl Exit {
    /// The status a shell reports: the exit status, or 128 + the signal;
    /// 0 for a process let go, which has not ended.
    pub fn status(&self) -> i32 {
        match *self {
            Exit::Exited(s) => s,
            Exit::Killed(sig) => 128 + sig,
            Exit::Detached => 0,
        }
    }

    /// [`Exit::status`] of a process that has ended; `None` for one let
    /// go, which runs on.
    pub fn ended_status(&self) -> Option<i32> {
        (*self != Exit::Detached).then(|| self.status())
    }
}

/// What [`sample_with`] does beside sampling the program.
#[derive(Default)]
pub struct Hooks<'a> {
    /// Called with the program's run so far after every so many samples
    /// (of all its processes), for a display of progress.
    pub progress: Option<(u64, Progress<'a>)>,
    /// Follow the program's child processes (`fork`, `vfork`, and so
    /// `posix_spawn` and `system`), and theirs, each sampled with clocks
    /// of its own, into this. The run then ends when the program and all
    /// of them have ended, as `strace -f`'s does.
    pub children: Option<&'a mut dyn Children>,
}

/// What [`Hooks::progress`] calls.
pub type Progress<'a> = &'a mut dyn FnMut(&Run);

/// Where the samples of the program's child processes go: each process's
/// addresses are its own, so each has its samples and its modules apart.
pub trait Children {
    /// The classes of events wanted, as [`Sink::wants`](coprof_core::Sink::wants).
    fn wants(&self) -> ClassSet {
        ClassSet::ALL
    }
    /// Process `pid`, forked by process `parent`, has started; its
    /// samples follow.
    fn started(&mut self, pid: i32, parent: i32);
    /// Samples of process `pid`, in order.
    fn observe(&mut self, pid: i32, batch: &[Event]);
    /// Whether to be told which thread each child's samples are of, as
    /// [`Sink::wants_thread_switches`](coprof_core::Sink::wants_thread_switches);
    /// `false` by default.
    fn wants_thread_switches(&self) -> bool {
        false
    }
    /// Process `pid`'s samples from here on are of its thread `tid`, as
    /// [`Sink::thread_switch`](coprof_core::Sink::thread_switch) says;
    /// the default does nothing.
    fn thread_switch(&mut self, pid: i32, tid: i32) {
        let _ = (pid, tid);
    }
    /// Whether to be given each child's samples' stacks, as
    /// [`Sink::wants_stacks`](coprof_core::Sink::wants_stacks); `false`
    /// by default.
    fn wants_stacks(&self) -> bool {
        false
    }
    /// The stack of process `pid`'s next sample, as
    /// [`Sink::stack`](coprof_core::Sink::stack) gives it; the default
    /// does nothing.
    fn stack(&mut self, pid: i32, calls: &[coprof_core::OpenCall]) {
        let _ = (pid, calls);
    }
    /// Process `pid` has ended: how, its samples, and the files of the
    /// program it ran last, as [`sample`] returns for the program.
    fn ended(&mut self, pid: i32, run: Run);
}

/// What a sampled run gave besides its events.
#[derive(Clone, Debug)]
pub struct Run {
    /// The process's id.
    pub pid: i32,
    /// How the program ended.
    pub exit: Exit,
    /// Samples taken.
    pub samples: u64,
    /// Events handed to the sink: one per sample, but for those that met
    /// no load ([`Config::next_load`]) and those of classes the sink does
    /// not want.
    pub events: u64,
    /// Samples whose PC held no instruction that could be read (counted as
    /// events of class `other`).
    pub unreadable: u64,
    /// With [`Config::next_load`]: samples that met no load.
    pub no_load: u64,
    /// With [`Config::next_load`]: the instructions single-stepped, and
    /// the runs to a hardware breakpoint, on the way to the next loads.
    pub steps: u64,
    pub runs_ahead: u64,
    /// With [`Config::ring_buffer`]: samples the kernel dropped because
    /// a thread's buffer was full, and the times it throttled a clock
    /// for interrupting too often (`perf_event_max_sample_rate`). Both
    /// are 0 when every period was sampled.
    pub lost: u64,
    pub throttled: u64,
    /// With [`Config::ring_buffer`]: threads for which no ring buffer,
    /// even of one page, could be mapped (locked memory ran out), and
    /// which were sampled instead with a stop at each sample, as without
    /// ring buffers: their samples are there, PCs alone as the others',
    /// at a stop's cost.
    pub stopped_threads: u64,
    /// Threads the program ran, the first included.
    pub threads: u64,
    /// Samples whose stacks were unwound (for a sink that wants them:
    /// [`Sink::wants_stacks`](coprof_core::Sink::wants_stacks)), and of
    /// those, the stacks that reached their thread's first frame; the
    /// others start where the unwinding stopped.
    pub stacks: u64,
    pub whole_stacks: u64,
    /// With [`Config::ring_buffer`]: the stacks that stopped at the end of
    /// the copy of their top the kernel made ([`Config::stack_copy`]),
    /// where a larger copy would have let them go on.
    pub cut_stacks: u64,
    /// CPU time, in nanoseconds, its threads ran while sampled: the sum
    /// of their clocks' counts as each closed, kernel time for the
    /// thread included (the interrupts that take its samples too, which
    /// on some virtual machines cost tens of microseconds each). A sample
    /// stands for a period of it: samples times the period comes near it,
    /// short of it by the kernel's time where no sample is taken.
    pub cpu_ns: u64,
    /// CPU time, in nanoseconds, of the child processes it had waited for
    /// by its exit, and of theirs (`/proc/PID/stat`'s `cutime` and
    /// `cstime`, in clock ticks): what a run that does not follow
    /// children ([`Hooks::children`]) leaves unsampled.
    pub children_cpu_ns: u64,
    /// Where the code of each file it ran lies, the program first, read
    /// at its exit.
    pub modules: Vec<coprof_core::trace::Module>,
    /// Every area of its memory by name, read at its exit with the
    /// modules: files, `[heap]`, `[stack]`, `[vdso]`, `[anon]`.
    pub areas: coprof_core::areas::Areas,
    /// Each thread's name (its `comm`) as it ended, by id.
    pub thread_names: std::collections::BTreeMap<u64, String>,
    /// The program's file, as run.
    pub program: PathBuf,
    /// For a child process ([`Hooks::children`]) and a process attached
    /// to ([`attach_with`]): the arguments of the program it ran last,
    /// `argv[0]` first, read at its exit or when it was let go; empty for
    /// a program started by [`sample`], whose arguments are those it was
    /// started with.
    pub args: Vec<std::ffi::OsString>,
}

impl Run {
    /// A run of `program` that has not taken a sample yet: one thread,
    /// nothing counted.
    pub fn starting(program: &std::path::Path) -> Run {
        Run {
            pid: 0,
            exit: Exit::Exited(0),
            samples: 0,
            events: 0,
            unreadable: 0,
            no_load: 0,
            steps: 0,
            runs_ahead: 0,
            lost: 0,
            throttled: 0,
            stopped_threads: 0,
            threads: 1,
            stacks: 0,
            whole_stacks: 0,
            cut_stacks: 0,
            cpu_ns: 0,
            children_cpu_ns: 0,
            modules: Vec::new(),
            areas: Default::default(),
            thread_names: Default::default(),
            program: program.to_path_buf(),
            args: Vec::new(),
        }
    }
}

/// Why a program could not be sampled.
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    /// The program could not be started.
    #[error("cannot run {program}: {source}")]
    Start {
        program: PathBuf,
        source: std::io::Error,
    },
    /// The running process could not be attached to.
    #[error("cannot attach to process {pid}: {}", attach_reason(source))]
    Attach { pid: i32, source: std::io::Error },
    /// The id given to attach to is one of a process's threads, not the
    /// process.
    #[error("{tid} is a thread of process {pid}: attach to the process, {pid}")]
    AttachThread { tid: i32, pid: i32 },
    /// ptrace refused.
    #[error("cannot trace {program} (pid {pid}): {source}")]
    Trace {
        program: PathBuf,
        pid: i32,
        source: std::io::Error,
    },
    /// The sampler could not keep itself and the program on one CPU
    /// ([`Config::same_cpu`]).
    #[error("cannot keep the program on the sampler's CPU (sched_setaffinity): {source}")]
    Affinity { source: std::io::Error },
    /// [`Config::same_cpu`] was asked of a process attached to.
    #[error(
        "the program is kept on one CPU only when coprof starts it: process {pid}'s affinity \
         is its own"
    )]
    SameCpuAttached { pid: i32 },
    /// [`Config::ring_buffer`] was asked with [`Config::next_load`].
    #[error(
        "samples taken into a ring buffer do not stop the thread, so they cannot run it to \
         its next load: ring_buffer and next_load exclude each other"
    )]
    RingBufferNextLoad,
    /// The program's first thread's ring buffer could not be mapped, even
    /// of one page ([`Config::ring_buffer`]). (A later thread is sampled
    /// with stops instead, counted in [`Run::stopped_threads`].)
    #[error(
        "cannot map a ring buffer for thread {tid}'s clock: {source}; each thread's buffer is \
         up to {kib} KiB of locked memory, which beyond /proc/sys/kernel/perf_event_mlock_kb \
         counts against RLIMIT_MEMLOCK (ulimit -l)"
    )]
    RingBuffer {
        tid: i32,
        /// The most a buffer was tried with, its control page included.
        kib: usize,
        source: std::io::Error,
    },
    /// [`Config::frame_pointers`] was asked without
    /// [`Config::ring_buffer`].
    #[error(
        "the kernel walks the frame pointers of samples it writes into a ring buffer: \
         frame_pointers asks for ring_buffer (a thread stopped for its sample has its stack \
         unwound from its CFI)"
    )]
    FramePointersStopped,
    /// [`Config::stack_copy`] is not a size the kernel copies.
    #[error(
        "a sample's copy of its stack of {0} bytes: give a multiple of 8 from 8 to {MAX_STACK_COPY}"
    )]
    StackCopy(u32),
    /// The CPU clock could not be opened on a thread.
    #[error(
        "cannot open a CPU clock on thread {tid} (perf_event_open of a software cpu-clock \
         event): {source}; /proc/sys/kernel/perf_event_paranoid above 2, or a container's \
         seccomp filter, forbids it"
    )]
    Clock { tid: i32, source: std::io::Error },
}

/// Why attaching failed, in words that say what to do.
fn attach_reason(source: &std::io::Error) -> String {
    match source.raw_os_error() {
        Some(libc::ESRCH) => "no such process".into(),
        Some(libc::EPERM) => format!(
            "{source}: it belongs to another user, is traced already (a debugger, strace), \
             or /proc/sys/kernel/yama/ptrace_scope forbids tracing a process that is not a \
             child (0 allows it; or run as root)"
        ),
        _ => source.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stack's copy is a size the kernel copies: a multiple of 8 from 8
    /// to 65,528; any other is refused before anything runs.
    #[test]
    fn a_stacks_copy_is_a_size_the_kernel_takes() {
        for (bytes, ok) in [
            (8, true),
            (8192, true),
            (65528, true),
            (0, false),
            (12, false),
            (65536, false),
        ] {
            let config = Config {
                ring_buffer: true,
                stack_copy: bytes,
                ..Config::default()
            };
            match config.check() {
                Ok(()) => assert!(ok, "{bytes}"),
                Err(e) => {
                    assert!(!ok, "{bytes}");
                    assert!(e.to_string().contains(&format!("{bytes} bytes")), "{e}");
                }
            }
        }
    }

    /// Frame pointers are walked into a ring buffer: asked without one,
    /// the sampler refuses before anything runs.
    #[test]
    fn frame_pointers_are_refused_without_a_ring_buffer() {
        let config = Config {
            frame_pointers: true,
            ..Config::default()
        };
        assert!(matches!(
            config.check(),
            Err(NativeError::FramePointersStopped)
        ));
        let config = Config {
            ring_buffer: true,
            ..config
        };
        assert!(config.check().is_ok());
    }
}
