//! Where a report's events come from: a trace file, or a program run live
//! in the simulator. Every report command flattens [`InputArgs`] into its
//! own arguments so that they all read input the same way:
//!
//! ```text
//! coprof loops run.cpt                 # a trace
//! coprof loops -- ./prog arg1 arg2     # a RISC-V program, profiled in one pass
//! ```

use crate::error::bad_input;
use crate::perf_map::PerfMap;
use crate::progress::{LiveProgress, ProgressSink};
use crate::symbols::Symbols;
use anyhow::Context;
use coprof_core::threads::{feed_on_threads, SendSink};
use coprof_core::trace::{TraceMeta, TraceReader};
use coprof_core::{Sink, Source};
use coprof_rv::sim::{ChildRun, ExecFollower};
use coprof_rv::{Exit, Simulator};
use std::ffi::OsString;
use std::fs::File;
use std::io::BufReader;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What a trace read from standard input (`-`) is called in messages.
const STDIN_NAME: &str = "standard input";

/// A trace from standard input whose header [`InputArgs::describe`] read:
/// standard input can be read only once, so its reader waits here for
/// [`InputArgs::run`]. Clones share it.
#[derive(Clone, Default)]
pub struct HeldTrace(Arc<Mutex<Option<TraceReader<BufReader<File>>>>>);

impl HeldTrace {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<TraceReader<BufReader<File>>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for HeldTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.slot().is_some() {
            "HeldTrace(standard input)"
        } else {
            "HeldTrace(none)"
        })
    }
}

/// Whether `file` names standard input: `-`.
fn is_stdin(file: &Path) -> bool {
    file == Path::new("-")
}

/// Opens the trace `file`, or standard input when it is `-` (as
/// `coprof run --trace - -- prog | coprof loops -` gives it, with the
/// program's own output on standard error).
pub fn open_trace(file: &Path) -> anyhow::Result<TraceReader<BufReader<File>>> {
    if !is_stdin(file) {
        return TraceReader::open(file).map_err(|e| {
            match (&e.kind, crate::file_kind::not_a_trace(file)) {
                (coprof_core::trace::TraceErrorKind::BadMagic, Some(hint)) => {
                    bad_input(format!("{e}: {hint}"))
                }
                _ => e.into(),
            }
        });
    }
    let fd = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .with_context(|| format!("{STDIN_NAME}: cannot be read"))?;
    let input = BufReader::with_capacity(1 << 20, File::from(fd));
    Ok(TraceReader::from_reader(input, Path::new(STDIN_NAME))?)
}

/// The input of a report command: a trace file or a program after `--`.
#[derive(clap::Args, Debug, Clone)]
pub struct InputArgs {
    /// Trace file (.cpt) to read, or `-` for standard input: make one with
    /// `coprof gen` or `coprof run --trace`.
    #[arg(value_name = "FILE", required_unless_present_any = ["program", "attach"])]
    pub file: Option<PathBuf>,
    /// An RV64 Linux program (static, or dynamically linked with its
    /// libraries from --sysroot) and its arguments, after `--`, to run in
    /// the simulator and profile in one pass (no trace file). A name
    /// without a slash is looked for in the program's PATH (under
    /// --sysroot first), then the current directory; a `#!` script runs
    /// its interpreter. Its standard output goes to standard error, so
    /// that standard output carries only the report (see --keep-stdout).
    /// Once the report is written, coprof exits with the program's exit
    /// status (128 + N if signal N killed it), as perf and valgrind do.
    /// `ranges`, `values`, `profile` and `export` sample a native x86-64
    /// program instead, as `coprof record` does (docs/native.md).
    #[arg(last = true, value_name = "PROG ARGS", conflicts_with = "file")]
    pub program: Vec<OsString>,
    /// Sample the running x86-64 process PID rather than read a trace or
    /// run a program, as `coprof record --attach` does: for the reports
    /// that read samples (`ranges`, `values`, `profile`, `export`). Sampled until
    /// it ends, Ctrl-C (or SIGTERM, SIGHUP) or --duration; then let go, it
    /// runs on.
    #[arg(long, value_name = "PID", conflicts_with_all = ["file", "program"],
          value_parser = clap::value_parser!(i32).range(1..))]
    pub attach: Option<i32>,
    /// With --attach: let the process go after this many seconds.
    #[arg(long, value_name = "SECONDS", value_parser = parse_duration)]
    pub duration: Option<std::time::Duration>,
    /// With a program: leave its standard output where coprof's is, and
    /// write the report to standard error instead, as `perf stat` and
    /// `time` write theirs: for a program whose output is wanted
    /// (`coprof profile --keep-stdout -o p.json -- gzip -c f > f.gz`).
    #[arg(long, requires = "program")]
    pub keep_stdout: bool,
    /// With a program: look absolute paths it opens up under this directory.
    #[arg(long, value_name = "DIR", requires = "program")]
    pub root: Option<PathBuf>,
    /// With a program: where a dynamically linked program's loader and
    /// libraries are, looked up there first and on the host when missing
    /// (default for such a program: /usr/riscv64-linux-gnu).
    #[arg(long, value_name = "DIR", requires = "program")]
    pub sysroot: Option<PathBuf>,
    /// With a program: answer unknown system calls with ENOSYS instead of stopping.
    #[arg(long, requires = "program")]
    pub enosys: bool,
    /// With a program: take the random bytes it gets from the kernel
    /// (AT_RANDOM, getrandom) from a generator seeded with N instead of the
    /// host, so that runs repeat exactly: same canaries, same load values
    /// (in the same environment, which moves the stack: see --clear-env).
    #[arg(long, value_name = "N", requires = "program")]
    pub random_seed: Option<u64>,
    /// With a program: the process id it sees as its own, in place of
    /// the host's, with its threads numbered after it, so that runs repeat
    /// exactly: the C library stores the thread id in every mutex it
    /// locks, a load value. Ids go both ways (kill, wait4, setpgid,
    /// /proc/PID); forked children keep the host's. N is 2 to 4194304. Default: the host's.
    #[arg(long, value_name = "N", requires = "program", value_parser = parse_pid)]
    pub pid: Option<i32>,
    /// The host process --pid stands for, when it is not this one: what
    /// a simulator started for a followed program's `execve` is given.
    #[arg(long, value_name = "PID", requires = "pid", hide = true)]
    pub pid_host: Option<i32>,
    /// With a program: instructions in each thread's turn on the
    /// simulator's one hart, for a multithreaded program (default 100000):
    /// the interleaving of its threads, the same on every run.
    #[arg(long, value_name = "N", requires = "program", value_parser = clap::value_parser!(u64).range(1..))]
    pub quantum: Option<u64>,
    /// With an x86-64 program, sampled natively: where each sample is
    /// taken. `interrupt`: the instruction the thread was interrupted at
    /// (`coprof record`'s default); `next-load`: the thread's next load,
    /// for its value (`coprof record --next-load`). [default: next-load
    /// for a report of loads (`values`; `ranges` of load values or
    /// addresses), else interrupt]
    #[arg(long, value_name = "WHERE")]
    pub sample_at: Option<SampleAt>,
    /// With an x86-64 program, sampled natively: run it, its threads and
    /// children, and the sampling on one CPU, as `coprof record
    /// --same-cpu` does: cheaper samples; the program sees one CPU.
    #[arg(long, requires = "program")]
    pub same_cpu: bool,
    /// With an x86-64 program, sampled natively, or --attach: take the
    /// samples into the kernel's ring buffers without stopping the program
    /// for each, as `coprof record --ring-buffer` does: much cheaper, but
    /// PCs alone, for ranges of PCs (no values report, no ranges of loads).
    #[arg(long)]
    pub ring_buffer: bool,
    /// With --ring-buffer, for `coprof export`'s stacks: the bytes of each
    /// sample's stack the kernel copies, as `coprof record --stack-copy`
    /// takes them [default: 8192].
    #[arg(long, value_name = "BYTES", requires = "ring_buffer", value_parser = parse_stack_copy)]
    pub stack_copy: Option<u32>,
    /// With an x86-64 program, sampled natively, for `coprof export`'s
    /// stacks: how each sample's stack is found, as `coprof record
    /// --call-graph` takes it: `dwarf` (the default) or `dwarf,BYTES`
    /// (as --stack-copy), or `fp` with --ring-buffer: the kernel's walk
    /// of the frame pointers.
    #[arg(long, value_name = "MODE", value_parser = parse_call_graph)]
    pub call_graph: Option<CallGraph>,
    /// With a program: interpret every instruction, translating no block
    /// to host code. The reports are the same; translation only makes the
    /// run faster.
    #[arg(long, requires = "program")]
    pub interpret: bool,
    /// With a program: the simulated hart's instruction set, as a -march
    /// string: rv64gc and any of _zba, _zbb, _zbc and _zbs (default
    /// rv64gc_zba_zbb_zbc_zbs). An instruction of an extension left out is
    /// illegal (SIGILL), as on a board without it.
    #[arg(long, value_name = "ISA", requires = "program")]
    pub isa: Option<coprof_rv::Isa>,
    /// With a program: its environment (`--clear-env`, `--unset`, `--env`).
    #[command(flatten)]
    pub env: crate::guest_env::EnvArgs,
    /// The program's ELF file, for function names and source lines when
    /// reading a trace (default: the program the trace's header names, if
    /// that file exists; a live run uses the program it runs).
    #[arg(long, value_name = "ELF", conflicts_with = "program")]
    pub binary: Option<PathBuf>,
    /// Show raw addresses only: do not read the program's symbols.
    #[arg(long)]
    pub no_symbols: bool,
    /// Neither read nor write the answers about symbols that coprof keeps
    /// between runs (in $XDG_CACHE_HOME/coprof/symbols, or
    /// ~/.cache/coprof/symbols), so that a program or library symbolized
    /// before is not opened again unless a report asks something new.
    #[arg(long)]
    pub no_symbol_cache: bool,
    /// Threads to run on, in all: the one that simulates the program or
    /// reads the trace, and N - 1 threads for the engines, which take
    /// whichever report has events or runs waiting, one thread at a time;
    /// the simulator's thread feeds reports too whenever one falls behind.
    /// Beside a code profile of the paper's buffer alone, the reports that
    /// take events are fed on the simulator's thread, so that the events
    /// never cross to another core. 1 runs everything on one thread. The
    /// reports are the same whatever the count. [default: with
    /// several reports (`coprof profile`) on a machine with more than one
    /// core, one thread per core, else 1]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// With a program: its `argv[0]` (by default PROG as given), as
    /// `coprof run --argv0`; for a followed child's `execve`.
    #[arg(long, value_name = "NAME", requires = "program", hide = true)]
    pub argv0: Option<OsString>,
    /// How a live run treats the program's children, and whether it is
    /// itself a followed child's (set by `coprof profile`, not an option).
    #[arg(skip)]
    pub setup: LiveSetup,
    /// The trace from standard input, once its header is read.
    #[arg(skip)]
    pub held: HeldTrace,
    /// [`InputArgs::native_program`], once looked up: a lookup reads the
    /// PATH's directories and the program's head, asked more than once.
    #[arg(skip)]
    native: std::sync::OnceLock<Option<PathBuf>>,
    /// The program and arguments of the process `--attach` names, read
    /// once, before it is sampled: it may be gone after.
    #[arg(skip)]
    attached: std::sync::OnceLock<(PathBuf, Vec<OsString>)>,
}

/// Where a native program's sample is taken (`--sample-at`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleAt {
    /// At the instruction the thread was interrupted at.
    Interrupt,
    /// At the thread's next load, for the value it reads (DCPI's value
    /// sampling).
    NextLoad,
}

/// What a live run does beyond running the program: follow its child
/// processes, and keep quiet as a followed child.
#[derive(Clone, Default)]
pub struct LiveSetup {
    /// A native x86-64 program may be sampled ([`coprof_native`]) instead
    /// of run in the simulator, by a report that reads samples (`ranges`,
    /// `values`); `Some(true)` takes each sample at its next load, for a
    /// report of loads.
    pub native: Option<bool>,
    /// Follow the program's children ([`Simulator::follow_children`]): how
    /// each forked child runs, and the command a followed child's
    /// `execve` of a RISC-V program runs.
    pub follow: Option<(ChildRun, Option<Vec<OsString>>)>,
    /// Let the program replace itself with a RISC-V program, followed so
    /// ([`Simulator::follow_exec`]).
    pub exec: Option<ExecFollower>,
    /// The run is a followed child's, started by its parent's `execve`:
    /// the program's standard output stays its own, and coprof writes
    /// nothing on its standard error (the program's, which its parent
    /// may be reading).
    pub child: bool,
    /// On several threads, feed the reports that take events on the
    /// simulator's thread as it makes the events, and hand out only the
    /// reports that take runs of basic blocks alone (see
    /// [`InputArgs::feed`]); set by `coprof profile` when a code profile
    /// of the paper's buffer alone keeps an engine thread busy.
    pub events_at_source: bool,
}

impl std::fmt::Debug for LiveSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSetup")
            .field("follow", &self.follow.as_ref().map(|(_, runner)| runner))
            .field("exec", &self.exec)
            .field("child", &self.child)
            .field("native", &self.native)
            .field("events_at_source", &self.events_at_source)
            .finish()
    }
}

/// What reading the input told us.
#[derive(Clone, Debug)]
#[allow(dead_code)] // `meta` and `live` are for reports that show where their events came from
pub struct InputInfo {
    /// Events delivered to the sink (of the classes it wanted).
    pub events: u64,
    /// The trace's metadata (for a live run: the program and arguments).
    pub meta: TraceMeta,
    /// For a live run: instructions retired and the exit status.
    pub live: Option<LiveRun>,
    /// For a native program sampled live: how its run went.
    pub sampled: Option<SampledRun>,
    /// Names for the input's PCs, when the program's ELF file was found.
    pub symbols: Option<Symbols>,
    /// `--no-symbols`: addresses are shown raw, not named by symbols or
    /// by the mappings they lie in.
    pub raw_addresses: bool,
}

/// How a native program's sampled run went (`coprof record`'s summary).
#[derive(Clone, Copy, Debug)]
pub struct SampledRun {
    /// Samples taken.
    pub samples: u64,
    /// Threads the program ran.
    pub threads: u64,
    /// Samples whose stacks reached their thread's first frame.
    pub whole_stacks: u64,
    /// Its exit status, 128 + the signal that killed it; `None` for a
    /// process attached to and let go, which runs on.
    pub status: Option<i32>,
    /// The process `--attach` named, when it was attached to.
    pub attached: Option<i32>,
}

/// How a live run went.
#[derive(Clone, Debug)]
#[allow(dead_code)]
pub struct LiveRun {
    /// Instructions retired.
    pub instructions: u64,
    /// Instructions delivered as runs of basic blocks rather than as
    /// events (to the reports that take them).
    pub in_runs: u64,
    /// How the program ended (`Exit::status` gives the status a shell
    /// would report: 128 + signal if it died of one).
    pub exit: Exit,
}

/// Command-line words as text, for reports and messages: bytes that are
/// not UTF-8 shown as U+FFFD.
pub fn as_text(words: &[OsString]) -> Vec<String> {
    words
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect()
}

/// The exit status of the program a live run ran (as a shell reports it:
/// 128 + N for signal N), once it has ended; coprof ends with it after
/// writing its report, as `perf record`, `perf stat` and valgrind end with
/// their program's, so that a script sees the program fail. -1 until a
/// live run ends.
static PROGRAM_STATUS: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// The exit status of the program this process ran live, if it ran one.
pub fn program_status() -> Option<u8> {
    let s = PROGRAM_STATUS.load(std::sync::atomic::Ordering::Relaxed);
    (s >= 0).then_some(s as u8)
}

/// Records the live program's `status` for coprof's own exit status and
/// notes one that is not 0 (kept alone when `quiet`): the profile stops
/// where the program did.
fn program_ended(prog: &Path, status: i32, quiet: bool) {
    PROGRAM_STATUS.store(status, std::sync::atomic::Ordering::Relaxed);
    if status != 0 {
        let text = format!(
            "{} exited with status {status}; the profile covers its run up to then",
            prog.display()
        );
        crate::notes::give(text, quiet);
    }
}

impl InputArgs {
    /// The options given that shape a program's run (`--root DIR`,
    /// `--sysroot DIR`, `--enosys`, `--random-seed N`, `--quantum N`, and
    /// those of its environment), as they would be typed again, to run it
    /// the same way.
    pub fn run_options(&self) -> Vec<String> {
        let mut options = self.shape().options(false).unwrap_or_default();
        options.extend(self.env.options());
        let mut options: Vec<String> = options
            .into_iter()
            .map(|o| o.to_string_lossy().into_owned())
            .collect();
        if let Some(at) = self.sample_at {
            use clap::ValueEnum;
            let name = at.to_possible_value().expect("every place has a name");
            options.extend(["--sample-at".to_string(), name.get_name().to_string()]);
        }
        if self.same_cpu {
            options.push("--same-cpu".to_string());
        }
        if self.ring_buffer {
            options.push("--ring-buffer".to_string());
        }
        if let Some(bytes) = self.stack_copy {
            options.extend(["--stack-copy".to_string(), bytes.to_string()]);
        }
        match self.call_graph {
            Some(CallGraph::Fp) => options.extend(["--call-graph".into(), "fp".into()]),
            Some(CallGraph::Dwarf(bytes)) => options.extend([
                "--call-graph".into(),
                match bytes {
                    Some(bytes) => format!("dwarf,{bytes}"),
                    None => "dwarf".into(),
                },
            ]),
            None => {}
        }
        options
    }

    /// The ids the program sees in place of the host's (`--pid`).
    pub fn pids(&self) -> coprof_rv::pids::Pids {
        coprof_rv::pids::Pids::given(self.pid, self.pid_host)
    }

    /// The options that shape a program's run.
    pub fn shape(&self) -> crate::cmd::run::Shape<'_> {
        crate::cmd::run::Shape {
            root: &self.root,
            sysroot: &self.sysroot,
            enosys: self.enosys,
            seed: self.random_seed,
            quantum: self.quantum,
            interpret: self.interpret,
            isa: self.isa.unwrap_or_default(),
            pid: self.pid,
            pid_host: self.pid_host,
            env: &self.env,
        }
    }

    /// A name for the input in messages: the trace file or the program.
    pub fn name(&self) -> String {
        match &self.file {
            Some(f) => f.display().to_string(),
            None => self.program_text().into_iter().next().unwrap_or_default(),
        }
    }

    /// The program and its arguments as text, for reports and messages:
    /// bytes that are not UTF-8 shown as U+FFFD (the program itself gets
    /// them as they are). With `--attach`, the process's.
    pub fn program_text(&self) -> Vec<String> {
        match self.attach.and_then(|_| self.attached().ok()) {
            Some((prog, args)) => std::iter::once(prog.display().to_string())
                .chain(as_text(args))
                .collect(),
            None => as_text(&self.program),
        }
    }

    /// The program and arguments of the process `--attach` names, read
    /// at the first call.
    fn attached(&self) -> anyhow::Result<&(PathBuf, Vec<OsString>)> {
        let pid = self.attach.expect("asked with --attach");
        if let Some(found) = self.attached.get() {
            return Ok(found);
        }
        let found = crate::host_program::of_process(pid)?;
        Ok(self.attached.get_or_init(|| found))
    }

    /// The input's words as a report's command line ends with them: the
    /// trace, or the options of a live run and then the program after
    /// `--`, or `--attach PID` (and `--duration`).
    pub fn as_typed(&self) -> Vec<String> {
        if let Some(f) = &self.file {
            return vec![f.display().to_string()];
        }
        let mut words = self.run_options();
        match self.attach {
            Some(pid) => {
                words.extend(["--attach".to_string(), pid.to_string()]);
                if let Some(d) = self.duration {
                    words.extend(["--duration".to_string(), d.as_secs_f64().to_string()]);
                }
            }
            None => {
                words.push("--".to_string());
                words.extend(self.program_text());
            }
        }
        words
    }

    /// An error naming the first option that only a program's run takes,
    /// when the input is a trace file: the trace was recorded already,
    /// and the option would be ignored.
    fn check_trace_options(&self) -> anyhow::Result<()> {
        refuse_duration_alone(self.duration, self.attach)?;
        let Some(file) = &self.file else {
            return Ok(());
        };
        let given = [
            ("--root", self.root.is_some()),
            ("--sysroot", self.sysroot.is_some()),
            ("--enosys", self.enosys),
            ("--random-seed", self.random_seed.is_some()),
            ("--pid", self.pid.is_some()),
            ("--quantum", self.quantum.is_some()),
            ("--isa", self.isa.is_some()),
            ("--clear-env", self.env.clear_env),
            ("--unset", !self.env.unset.is_empty()),
            ("--env", !self.env.set.is_empty()),
            ("--keep-stdout", self.keep_stdout),
            ("--sample-at", self.sample_at.is_some()),
            ("--same-cpu", self.same_cpu),
            ("--ring-buffer", self.ring_buffer),
            ("--stack-copy", self.stack_copy.is_some()),
            ("--call-graph", self.call_graph.is_some()),
        ];
        match given.iter().find(|(_, set)| *set) {
            Some((option, _)) => Err(bad_input(format!(
                "{option} applies to a program run after `--`, not to the trace file {}",
                file.display()
            ))),
            None => Ok(()),
        }
    }

    /// The trace `file`: standard input's reader that
    /// [`describe`](Self::describe) kept, if any, else opened.
    fn open(&self, file: &Path) -> anyhow::Result<TraceReader<BufReader<File>>> {
        match is_stdin(file).then(|| self.held.slot().take()).flatten() {
            Some(r) => Ok(r),
            None => open_trace(file),
        }
    }

    /// Refuses samples for a report that needs every instruction
    /// (`needs`: why), naming the reports that read samples: a trace of
    /// them (`coprof record`'s, source "native"), a process to attach to,
    /// or an x86-64 program run live, which only sampling can observe.
    pub fn refuse_samples(&self, needs: &str) -> anyhow::Result<()> {
        if let Some(pid) = self.attach {
            return Err(bad_input(format!(
                "--attach {pid} samples a running process, which gives no instruction stream: \
                 {needs}; `coprof ranges`, `values`, `profile` and `export` read samples"
            )));
        }
        let Some(file) = &self.file else {
            if let Some(prog) = self.native_program() {
                return Err(bad_input(format!(
                    "{} is an x86-64 program, which coprof samples (only an RV64 program runs \
                     in its simulator, every instruction seen): {needs}; `coprof ranges`, \
                     `values`, `profile` and `export` sample it",
                    prog.display()
                )));
            }
            return Ok(());
        };
        if self.describe()?.source == "native" {
            return Err(bad_input(format!(
                "{} holds samples of a native process (coprof record), not every \
                 instruction: {needs}; `coprof ranges`, `values` and `export` read samples",
                file.display()
            )));
        }
        Ok(())
    }

    /// Whether the input's samples are PCs alone: a native program or a
    /// process sampled with `--ring-buffer`, or a trace `coprof record
    /// --ring-buffer` wrote.
    pub fn pcs_only(&self) -> anyhow::Result<bool> {
        Ok(match &self.file {
            Some(_) => {
                let meta = self.describe()?;
                meta.source == "native"
                    && meta
                        .extra
                        .get("sampling")
                        .and_then(|s| s.get("ring_buffer"))
                        == Some(&serde_json::Value::Bool(true))
            }
            None => self.ring_buffer,
        })
    }

    /// Refuses samples that are PCs alone ([`InputArgs::pcs_only`]) for a
    /// report that needs loads with their addresses or values (`needs`:
    /// why).
    pub fn refuse_pcs_only(&self, needs: &str) -> anyhow::Result<()> {
        if !self.pcs_only()? {
            return Ok(());
        }
        let what = match &self.file {
            Some(file) => format!(
                "{} holds samples taken into ring buffers (coprof record --ring-buffer), PCs alone",
                file.display()
            ),
            None => "--ring-buffer takes samples without stopping the program, PCs alone".into(),
        };
        Err(bad_input(format!(
            "{what}: {needs}; `coprof ranges --stream pc` reads them"
        )))
    }

    /// The metadata of the input before it runs: a trace's header, or the
    /// program and arguments of a live run.
    pub fn describe(&self) -> anyhow::Result<TraceMeta> {
        self.check_trace_options()?;
        match &self.file {
            Some(file) => {
                let reader = self.open(file)?;
                let meta = reader.meta().clone();
                if is_stdin(file) {
                    *self.held.slot() = Some(reader);
                }
                Ok(meta)
            }
            None if self.attach.is_some() => Ok(TraceMeta {
                source: "native".into(),
                isa: "x86-64".into(),
                program: self.name(),
                args: self.program_text().into_iter().skip(1).collect(),
                ..TraceMeta::default()
            }),
            None => Ok(TraceMeta {
                source: "rv-sim".into(),
                isa: self.isa.unwrap_or_default().to_string(),
                program: self.name(),
                args: self.program_text().into_iter().skip(1).collect(),
                ..TraceMeta::default()
            }),
        }
    }

    /// Runs the input into `sinks`, on the threads `--threads` asks for
    /// (see [`coprof_core::threads`]).
    pub fn run_sinks(&self, sinks: Vec<SendSink<'_>>) -> anyhow::Result<InputInfo> {
        self.feed(sinks, |sink| self.run(sink))
    }

    /// Calls `body` with one sink that feeds `sinks`, on the threads
    /// `--threads` asks for: `body` pushes the events.
    pub fn feed<R>(&self, sinks: Vec<SendSink<'_>>, body: impl FnOnce(&mut dyn Sink) -> R) -> R {
        // One engine beside the simulator gains little and copies every
        // event once more: threads by default only for several reports,
        // then one per core (docs/PERFORMANCE.md).
        let threads = self.threads.map_or_else(
            || {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
                if cores > 1 && sinks.len() > 1 {
                    cores
                } else {
                    1
                }
            },
            usize::from,
        );
        if threads <= 1 {
            let local: Vec<&mut dyn Sink> = sinks.into_iter().map(|s| s as &mut dyn Sink).collect();
            return feed_on_threads(local, Vec::new(), 0, body);
        }
        // With `events_at_source`, in a live run, the reports that take
        // events (the value profiles) are fed on the simulator's thread as
        // it makes them, and the reports that take runs of basic blocks
        // alone go to the other threads: the events, 32 bytes each, then
        // never leave the core that wrote them, and only the runs, 8 bytes
        // a block, cross (docs/profile.md#threads---threads-n). Otherwise,
        // with reports of one kind only, or from a trace, which makes no
        // runs, every report is a group of its own, fed by whichever
        // thread is free.
        let (local, groups) = if self.file.is_none() && self.setup.events_at_source {
            split_by_events(sinks)
        } else {
            (Vec::new(), sinks)
        };
        if local.is_empty() || groups.is_empty() {
            let groups = local.into_iter().chain(groups).map(|s| vec![s]).collect();
            return feed_on_threads(Vec::new(), groups, threads - 1, body);
        }
        let local: Vec<&mut dyn Sink> = local.into_iter().map(|s| s as &mut dyn Sink).collect();
        let groups = groups.into_iter().map(|s| vec![s]).collect();
        // The simulator's thread also feeds the other reports whenever one
        // falls behind.
        feed_on_threads(local, groups, threads - 1, body)
    }

    /// Pushes every event of the input into `sink`, with a progress bar on
    /// a terminal.
    pub fn run(&self, sink: &mut dyn Sink) -> anyhow::Result<InputInfo> {
        self.check_trace_options()?;
        if let Some(b) = &self.binary {
            if !b.is_file() {
                return Err(bad_input(format!("--binary {}: no such file", b.display())));
            }
        }
        match &self.file {
            Some(file) => {
                let mut reader = self.open(file)?;
                let mut progress = ProgressSink::new(sink, reader.meta().events, "events");
                let events = reader
                    .run(&mut progress)
                    .with_context(|| format!("reading {}", file.display()))?;
                progress.done();
                // Read after the events: a streamed trace's final metadata
                // (its modules, its counts) follows them.
                let meta = reader.meta().clone();
                let symbols = self.symbols_for(&meta);
                Ok(InputInfo {
                    events,
                    meta,
                    live: None,
                    sampled: None,
                    symbols,
                    raw_addresses: self.no_symbols,
                })
            }
            None => self.run_live(sink),
        }
    }

    /// The directory of the answers about symbols kept between runs, unless
    /// `--no-symbol-cache`.
    fn symbol_cache(&self) -> Option<PathBuf> {
        (!self.no_symbol_cache)
            .then(crate::symbol_cache::default_dir)
            .flatten()
    }

    /// The symbols of a trace's (or a sampled run's) program: its files'
    /// ([`files_symbols`](Self::files_symbols)), and for the code no file
    /// holds, its JIT's perf map and the kernel's vDSO, where the
    /// metadata says which.
    fn symbols_for(&self, meta: &TraceMeta) -> Option<Symbols> {
        if self.no_symbols {
            return None;
        }
        let symbols = self.files_symbols(meta)?.with_perf_map(perf_map_of(meta));
        Some(vdsos_of(meta).fold(symbols, |s, (start, end, vdso)| {
            s.with_vdso(start, end, vdso)
        }))
    }

    /// The symbols of the files a trace's program ran: `--binary`, or
    /// the program its header names when that file exists (silently
    /// absent otherwise).
    fn files_symbols(&self, meta: &TraceMeta) -> Option<Symbols> {
        if !meta.modules.is_empty() {
            let main_exists = self.binary.is_some() || meta.modules[0].path.is_file();
            return main_exists.then(|| {
                Symbols::of_modules(
                    &meta.modules,
                    self.binary.as_deref(),
                    meta.sysroot.as_deref(),
                    false,
                    self.symbol_cache().as_deref(),
                )
            })?;
        }
        if let Some(b) = &self.binary {
            return Symbols::open(b, false, self.symbol_cache().as_deref());
        }
        let named = PathBuf::from(&meta.program);
        (!meta.program.is_empty() && named.is_file())
            .then(|| Symbols::open(&named, true, self.symbol_cache().as_deref()))?
    }

    fn run_live(&self, sink: &mut dyn Sink) -> anyhow::Result<InputInfo> {
        if self.attach.is_some() {
            if self.setup.native.is_none() {
                // A report that did not refuse samples by name.
                return Err(self
                    .refuse_samples("this report needs every instruction")
                    .unwrap_err());
            }
            let prog = self.attached()?.0.clone();
            return self.run_native(&prog, sink, None);
        }
        if self.program.is_empty() {
            return Err(bad_input(
                "give a trace file, or a program after `--` (e.g. `-- ./prog args`)",
            ));
        }
        if self.setup.native.is_some() {
            if let Some(prog) = self.native_program() {
                return self.run_native(&prog, sink, None);
            }
        }
        // (An x86-64 program a report would not sample is refused with
        // the simulator's own error, which names `coprof record`.)
        let native_only = [
            ("--sample-at", self.sample_at.is_some()),
            ("--same-cpu", self.same_cpu),
            ("--ring-buffer", self.ring_buffer),
            ("--call-graph", self.call_graph.is_some()),
        ];
        if let Some((option, _)) = native_only.iter().find(|(_, set)| *set) {
            if self.native_program().is_none() {
                return Err(bad_input(format!(
                    "{option} applies to an x86-64 program that `coprof ranges`, `values`, \
                     `profile` or `export` samples natively, not to {}",
                    self.name()
                )));
            }
        }
        let mut config = crate::cmd::run::sim_config(&self.program, &self.shape(), 0)?;
        let prog = crate::cmd::run::find_program(&mut config)?;
        if let Some(name) = &self.argv0 {
            config.args[0] = name.clone();
        }
        let mut sim = Simulator::load(&prog, &config).map_err(crate::cmd::run::sim_error)?;
        if let Some((run, runner)) = &self.setup.follow {
            sim.follow_children(run.clone(), runner.clone());
        }
        if let Some(follower) = &self.setup.exec {
            sim.follow_exec(follower.clone());
        }
        let quiet = self.setup.child;
        let progress = if quiet {
            LiveProgress::hidden()
        } else {
            LiveProgress::new(&self.name())
        };
        let exit = self
            .with_program_output(quiet, || {
                sim.run_with_progress(sink, LiveProgress::EVERY, &mut |n| progress.update(n))
            })
            .map_err(crate::cmd::run::sim_error)?;
        progress.done();
        if !quiet {
            crate::cmd::run::announce_death(&prog, &exit);
        }
        program_ended(&prog, exit.status(), quiet);
        if !quiet && self.setup.follow.is_none() {
            if let Some(note) = children_note(sim.children_started()) {
                crate::notes::say(format!("{} {note}", prog.display()));
            }
        }
        Ok(self.live_info(&sim, exit, 0, self.describe()?))
    }

    /// Runs the program with `run`. The report owns standard output, so
    /// the program's goes to standard error; with `--keep-stdout` the
    /// program keeps it, and the report goes to standard error after the
    /// run, for as long as coprof runs. A `quiet` run (a followed child's)
    /// leaves the descriptors alone.
    fn with_program_output<T>(&self, quiet: bool, run: impl FnOnce() -> T) -> T {
        let out = {
            let _redirect = (!quiet && !self.keep_stdout).then(StdoutToStderr::new);
            run()
        };
        if self.keep_stdout && !quiet {
            std::mem::forget(StdoutToStderr::new());
        }
        out
    }

    /// Whether the input is samples of a native process rather than every
    /// instruction: a trace `coprof record` wrote, or an x86-64 program
    /// that a report which reads samples would sample live.
    pub fn holds_samples(&self) -> anyhow::Result<bool> {
        Ok(match &self.file {
            Some(_) => self.describe()?.source == "native",
            None => {
                self.attach.is_some()
                    || (!self.program.is_empty() && self.native_program().is_some())
            }
        })
    }

    /// The program to run, when it is a native x86-64 one and no option
    /// of the simulator's file system (`--root`, `--sysroot`) says to look
    /// for a RISC-V one: found as given, or in the host's PATH.
    fn native_program(&self) -> Option<PathBuf> {
        if self.root.is_some() || self.sysroot.is_some() {
            return None;
        }
        self.native
            .get_or_init(|| {
                crate::host_program::find(&self.program[0]).filter(|p| {
                    crate::host_program::elf_machine(p) == Some(coprof_rv::elf::EM_X86_64)
                })
            })
            .clone()
    }

    /// Whether a native program's samples are taken at the next load:
    /// as `--sample-at` says, else as the report's `default`.
    fn at_next_load(&self, default: bool) -> bool {
        self.sample_at
            .map_or(default, |at| at == SampleAt::NextLoad)
    }

    /// Samples the native program into `sink`, as a live report would
    /// ([`LiveSetup::native`], `--sample-at`), and its child processes
    /// into `children`.
    pub fn sample_native_with(
        &self,
        sink: &mut dyn Sink,
        children: &mut dyn coprof_native::Children,
    ) -> anyhow::Result<InputInfo> {
        let prog = match self.attach {
            Some(_) => self.attached()?.0.clone(),
            None => self
                .native_program()
                .ok_or_else(|| bad_input(format!("{}: not an x86-64 program", self.name())))?,
        };
        self.run_native(&prog, sink, Some(children))
    }

    /// Samples the native program `prog` into `sink`, as `coprof record`
    /// would ([`native_config`](Self::native_config)), and its child
    /// processes into `children` if given.
    fn run_native(
        &self,
        prog: &Path,
        sink: &mut dyn Sink,
        children: Option<&mut dyn coprof_native::Children>,
    ) -> anyhow::Result<InputInfo> {
        let simulator_only = [
            ("--enosys", self.enosys),
            ("--random-seed", self.random_seed.is_some()),
            ("--pid", self.pid.is_some()),
            ("--quantum", self.quantum.is_some()),
            ("--isa", self.isa.is_some()),
            ("--interpret", self.interpret),
            ("--clear-env", self.env.clear_env),
            ("--unset", !self.env.unset.is_empty()),
            ("--env", !self.env.set.is_empty()),
        ];
        if let Some((option, _)) = simulator_only.iter().find(|(_, set)| *set) {
            return Err(bad_input(format!(
                "{option} applies to a RISC-V program run in the simulator, not to {}, an \
                 x86-64 program, which is sampled natively",
                prog.display()
            )));
        }
        let config = self.native_config()?;
        if self.ring_buffer && config.next_load {
            return Err(bad_input(
                "--ring-buffer takes samples without stopping the program, so not at the next \
                 load: it applies with --sample-at interrupt"
                    .to_string(),
            ));
        }
        let what = match self.attach {
            Some(pid) => format!("process {pid} ({}) runs", prog.display()),
            None => format!("{} runs", prog.display()),
        };
        crate::notes::say(format!(
            "{what} as an x86-64 program: sampled natively, a sample every ~{} µs of each \
             thread's CPU time{}, as `coprof record` does; counts are samples",
            config.period_ns / 1000,
            if config.next_load {
                ", each taken at its next load"
            } else {
                ""
            }
        ));
        let follows = children.is_some();
        let run = match self.attach {
            Some(pid) => {
                let target = crate::progress::NativeTarget::Attach {
                    pid,
                    duration: self.duration,
                };
                // Not coprof's process: its end is told, not passed on.
                crate::progress::sample_native(prog, target, &config, sink, children, None)
                    .map_err(|e| bad_input(e.to_string()))?
            }
            None => {
                let run = self
                    .with_program_output(false, || {
                        crate::progress::sample_native(
                            prog,
                            crate::progress::NativeTarget::Start(&self.program),
                            &config,
                            sink,
                            children,
                            None,
                        )
                    })
                    .map_err(|e| bad_input(e.to_string()))?;
                program_ended(prog, run.exit.status(), false);
                run
            }
        };
        let notes = [
            crate::progress::kernel_time_note(&run, &config),
            crate::progress::ring_buffer_note(&run, &config),
            (!follows)
                .then(|| crate::progress::unfollowed_children_note(&run))
                .flatten(),
        ];
        notes.into_iter().flatten().for_each(crate::notes::say);
        let args = self.program_text().into_iter().skip(1).collect();
        self.sampled_info(prog, args, run)
    }

    /// How a live report samples a native program: `coprof record`'s
    /// defaults, with this input's options, each sample at its next load
    /// as `--sample-at` says, else as the report's setup
    /// ([`LiveSetup::native`]).
    pub(crate) fn native_config(&self) -> anyhow::Result<coprof_native::Config> {
        let (frame_pointers, stack_copy) =
            stacks_from(self.call_graph, self.stack_copy, self.ring_buffer)?;
        Ok(coprof_native::Config {
            next_load: self.at_next_load(self.setup.native == Some(true)),
            same_cpu: self.same_cpu,
            ring_buffer: self.ring_buffer,
            stack_copy,
            frame_pointers,
            ignore_sigpipe: crate::cmd::run::sigpipe_ignored_at_start(),
            ..coprof_native::Config::default()
        })
    }

    /// What the sampled run `run` of `prog` with `args` told, as the
    /// reports take it: its samples, the files of its code and their
    /// symbols, and how it was sampled (as `coprof record` says it in
    /// its trace).
    pub fn sampled_info(
        &self,
        prog: &Path,
        args: Vec<String>,
        run: coprof_native::Run,
    ) -> anyhow::Result<InputInfo> {
        let mut meta = TraceMeta {
            source: "native".into(),
            isa: "x86-64".into(),
            program: prog.to_string_lossy().into_owned(),
            args,
            events: run.events,
            modules: run.modules,
            areas: run.areas,
            thread_names: run.thread_names,
            pid: Some(run.pid as u32),
            vdso_build_id: crate::vdso::own().map(|v| v.build_id.clone()),
            cpu_ns: Some(run.cpu_ns),
            ..TraceMeta::default()
        };
        let symbols = self.symbols_for(&meta);
        meta.extra.insert(
            "sampling".into(),
            crate::cmd::record::sampling_meta(&self.native_config()?),
        );
        Ok(InputInfo {
            events: run.events,
            meta,
            live: None,
            sampled: Some(SampledRun {
                samples: run.samples,
                threads: run.threads,
                whole_stacks: run.whole_stacks,
                status: run.exit.ended_status(),
                attached: self.attach.filter(|&pid| pid == run.pid),
            }),
            symbols,
            raw_addresses: self.no_symbols,
        })
    }

    /// What a live run of `sim` that ended with `exit` told, counting the
    /// instructions it retired after the first `before` (those of a
    /// followed child's parent before the fork); `meta` names the program,
    /// and gets the files whose code it ran, as a trace of the run would.
    pub fn live_info(
        &self,
        sim: &Simulator,
        exit: Exit,
        before: u64,
        meta: TraceMeta,
    ) -> InputInfo {
        InputInfo {
            events: sim.events_delivered(),
            meta: TraceMeta {
                events: sim.events_delivered(),
                modules: sim.modules().to_vec(),
                sysroot: sim.sysroot().map(Path::to_path_buf),
                areas: sim.areas().clone(),
                thread_names: sim.thread_names(),
                ..meta
            },
            live: Some(LiveRun {
                instructions: sim.instret() - before,
                in_runs: sim.instructions_in_runs(),
                exit,
            }),
            sampled: None,
            raw_addresses: self.no_symbols,
            symbols: if self.no_symbols {
                None
            } else {
                // A followed child's notes would land in its program's
                // stderr: its profile keeps them.
                Symbols::of_modules(
                    sim.modules(),
                    None,
                    sim.sysroot(),
                    self.setup.child,
                    self.symbol_cache().as_deref(),
                )
            },
        }
    }
}

/// While alive, file descriptor 1 points at standard error, so that a
/// program run live writes its output there and coprof's standard output
/// keeps only the report. Dropping it restores standard output.
pub(crate) struct StdoutToStderr {
    saved: i32,
}

impl StdoutToStderr {
    pub(crate) fn new() -> Option<StdoutToStderr> {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        // SAFETY: dup and dup2 on descriptors this process owns; failure is
        // reported by a negative return and leaves the descriptors as they were.
        let saved = unsafe { libc::dup(1) };
        if saved < 0 {
            return None;
        }
        if unsafe { libc::dup2(2, 1) } < 0 {
            unsafe { libc::close(saved) };
            return None;
        }
        Some(StdoutToStderr { saved })
    }
}

impl Drop for StdoutToStderr {
    fn drop(&mut self) {
        // SAFETY: as above; `saved` is the duplicate made in `new`.
        unsafe {
            libc::dup2(self.saved, 1);
            libc::close(self.saved);
        }
    }
}

/// What to tell about the child processes a program started: they are
/// not in its reports.
pub(crate) fn children_note(started: u64) -> Option<String> {
    match started {
        0 => None,
        1 => Some(
            "started 1 child process, which ran unobserved: the reports are of the program alone \
             (`coprof profile --follow-children` profiles children too)"
                .into(),
        ),
        n => Some(format!(
            "started {n} child processes, which ran unobserved: the reports are of the program alone \
             (`coprof profile --follow-children` profiles children too)"
        )),
    }
}

/// The map a trace's process wrote of the code its JIT made, if it wrote
/// one (see [`TraceMeta::pid`]).
fn perf_map_of(meta: &TraceMeta) -> Option<PerfMap> {
    PerfMap::of_process(meta.pid?)
}

/// Where a trace's program had the kernel's vDSO, with this process's
/// copy of it where it is the same image (see [`crate::vdso`]).
fn vdsos_of(meta: &TraceMeta) -> impl Iterator<Item = (u64, u64, &'static crate::vdso::Vdso)> + '_ {
    let id = meta.vdso_build_id.as_deref();
    (meta.areas.iter())
        .filter(|a| a.name == crate::vdso::NAME)
        .filter_map(move |a| Some((a.start, a.end, crate::vdso::matching(id?, a.end - a.start)?)))
}

/// Splits `sinks` into those that need events, and those that take the
/// instruction stream as runs of basic blocks and need no events then.
#[allow(clippy::type_complexity)]
fn split_by_events<'a>(sinks: Vec<SendSink<'a>>) -> (Vec<SendSink<'a>>, Vec<SendSink<'a>>) {
    sinks.into_iter().partition(|s| {
        !s.wants_with_runs()
            .is_some_and(|classes| classes.is_empty())
    })
}

/// Refuses `--duration` without `--attach`, which is all it applies to.
pub(crate) fn refuse_duration_alone(
    duration: Option<std::time::Duration>,
    attach: Option<i32>,
) -> anyhow::Result<()> {
    if duration.is_some() && attach.is_none() {
        return Err(bad_input(
            "--duration applies with --attach: a trace is read to its end, and a program \
             coprof starts is sampled until it ends",
        ));
    }
    Ok(())
}

/// `--duration`'s seconds: more than none, at most a year.
pub(crate) fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(secs > 0.0 && secs <= 365.0 * 86400.0) {
        return Err(format!("{s} seconds: give more than 0, at most a year"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// A `--call-graph`, as `perf record` takes it: how each sample's stack
/// is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallGraph {
    /// Unwound from the files' CFI (`dwarf`): of the thread stopped for
    /// its sample, or with --ring-buffer of the copy of its stack's top
    /// the kernel makes, of this many bytes where given (`dwarf,BYTES`).
    Dwarf(Option<u32>),
    /// With --ring-buffer: the return addresses the kernel finds by
    /// walking the frame pointers (`fp`).
    Fp,
}

/// A `--call-graph`: `fp`, `dwarf` or `dwarf,BYTES`.
pub(crate) fn parse_call_graph(s: &str) -> Result<CallGraph, String> {
    match s.split_once(',') {
        None if s == "dwarf" => Ok(CallGraph::Dwarf(None)),
        None if s == "fp" => Ok(CallGraph::Fp),
        Some(("dwarf", bytes)) => parse_stack_copy(bytes).map(|n| CallGraph::Dwarf(Some(n))),
        _ => Err(format!(
            "`{s}` is not a way to find a sample's stack: give fp, dwarf or dwarf,BYTES (the \
             program goes after `--`)"
        )),
    }
}

/// How a sampled program's stacks are found, from `--call-graph`,
/// `--stack-copy` and `--ring-buffer`: whether from the frame pointers
/// ([`coprof_native::Config::frame_pointers`]), and the size of the
/// stack's copy ([`coprof_native::Config::stack_copy`]). Refuses those
/// that exclude each other.
pub(crate) fn stacks_from(
    call_graph: Option<CallGraph>,
    stack_copy: Option<u32>,
    ring_buffer: bool,
) -> anyhow::Result<(bool, u32)> {
    let copy = match (call_graph, stack_copy) {
        (Some(CallGraph::Fp), _) if !ring_buffer => {
            return Err(bad_input(
                "--call-graph fp: the kernel walks the frame pointers of the samples it \
                 writes into a ring buffer: add --ring-buffer (a thread stopped for its \
                 sample has its stack unwound from its CFI, --call-graph dwarf)",
            ))
        }
        (Some(CallGraph::Fp), Some(_)) => {
            return Err(bad_input(
                "--stack-copy sizes the copy of a stack that is unwound from its CFI \
                 (--call-graph dwarf): --call-graph fp copies none",
            ))
        }
        (Some(CallGraph::Dwarf(Some(_))), Some(_)) => {
            return Err(bad_input(
                "--call-graph dwarf,BYTES and --stack-copy both give the size of the stack's \
                 copy: give it once",
            ))
        }
        (Some(CallGraph::Dwarf(Some(bytes))), None) if !ring_buffer => {
            return Err(bad_input(format!(
                "--call-graph dwarf,{bytes}: the kernel copies a sample's stack into a ring \
                 buffer: add --ring-buffer (a thread stopped for its sample has its whole \
                 stack read, --call-graph dwarf)"
            )))
        }
        (Some(CallGraph::Dwarf(Some(bytes))), None) => bytes,
        (_, copy) => copy.unwrap_or(coprof_native::STACK_COPY),
    };
    Ok((call_graph == Some(CallGraph::Fp), copy))
}

/// A `--stack-copy`: a size the kernel copies of a stack.
pub(crate) fn parse_stack_copy(s: &str) -> Result<u32, String> {
    use coprof_native::{copies_stack_of, MAX_STACK_COPY};
    match s.parse::<u32>() {
        Ok(n) if copies_stack_of(n) => Ok(n),
        _ => Err(format!(
            "{s} is not a size of a stack's copy: give a multiple of 8 from 8 to {MAX_STACK_COPY}"
        )),
    }
}

/// A `--pid`: a process id Linux could hand out, but init's 1.
pub(crate) fn parse_pid(s: &str) -> Result<i32, String> {
    use coprof_rv::pids::{PID_MAX, PID_MIN};
    match s.parse::<i32>() {
        Ok(n) if (PID_MIN..=PID_MAX).contains(&n) => Ok(n),
        _ => Err(format!(
            "{s} is not a process id a program may be given: give {PID_MIN} to {PID_MAX}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coprof_core::{Class, ClassSet, Event};

    /// A sink that wants `wants`, and with runs `with_runs`.
    struct Wants {
        wants: ClassSet,
        with_runs: Option<ClassSet>,
    }

    impl Sink for Wants {
        fn wants(&self) -> ClassSet {
            self.wants
        }
        fn observe(&mut self, _: &[Event]) {}
        fn wants_with_runs(&self) -> Option<ClassSet> {
            self.with_runs
        }
    }

    #[test]
    fn reports_that_take_runs_alone_are_handed_out_and_the_others_stay() {
        let loads = ClassSet::NONE.with(Class::Load);
        let mut events_only = Wants {
            wants: loads,
            with_runs: None,
        };
        let mut runs_alone = Wants {
            wants: ClassSet::ALL,
            with_runs: Some(ClassSet::NONE),
        };
        let mut runs_and_loads = Wants {
            wants: ClassSet::ALL,
            with_runs: Some(loads),
        };
        let sinks: Vec<SendSink<'_>> = vec![&mut events_only, &mut runs_alone, &mut runs_and_loads];
        let (local, handed_out) = split_by_events(sinks);
        let kinds = |v: &[SendSink<'_>]| v.iter().map(|s| s.wants_with_runs()).collect::<Vec<_>>();
        assert_eq!(kinds(&local), vec![None, Some(loads)]);
        assert_eq!(kinds(&handed_out), vec![Some(ClassSet::NONE)]);
    }

    /// `--call-graph` as perf takes it, and with `--stack-copy` and
    /// `--ring-buffer`: whether the stacks come from frame pointers, and
    /// the copy's size.
    #[test]
    fn a_call_graph_gives_the_stacks_way_and_the_copys_size() {
        use super::{parse_call_graph, stacks_from, CallGraph};
        assert_eq!(parse_call_graph("fp"), Ok(CallGraph::Fp));
        assert_eq!(parse_call_graph("dwarf"), Ok(CallGraph::Dwarf(None)));
        assert_eq!(
            parse_call_graph("dwarf,16384"),
            Ok(CallGraph::Dwarf(Some(16384)))
        );
        for bad in ["lbr", "fp,8", "dwarf,", "dwarf,12", "", "./prog"] {
            assert!(parse_call_graph(bad).is_err(), "{bad}");
        }
        let default = coprof_native::STACK_COPY;
        for (graph, copy, ring, got) in [
            (None, None, false, (false, default)),
            (None, Some(4096), true, (false, 4096)),
            (Some(CallGraph::Dwarf(None)), None, false, (false, default)),
            (
                Some(CallGraph::Dwarf(Some(16384))),
                None,
                true,
                (false, 16384),
            ),
            (Some(CallGraph::Fp), None, true, (true, default)),
        ] {
            assert_eq!(stacks_from(graph, copy, ring).unwrap(), got, "{graph:?}");
        }
        for (graph, copy, ring) in [
            (Some(CallGraph::Fp), None, false),
            (Some(CallGraph::Fp), Some(4096), true),
            (Some(CallGraph::Dwarf(Some(16384))), Some(4096), true),
            (Some(CallGraph::Dwarf(Some(16384))), None, false),
        ] {
            let e = stacks_from(graph, copy, ring).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{e}");
        }
    }
}
