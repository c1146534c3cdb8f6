//! `coprof run`: run an RV64 Linux program in the simulator, with its
//! standard streams and exit status passed through, optionally writing the
//! retired-instruction stream to a trace.

use crate::error::bad_input;
use crate::guest_env::EnvArgs;
use crate::output::thousands;
use coprof_core::trace::TraceMeta;
use coprof_core::{ClassSet, Discard};
use coprof_rv::{Config, Exit, Isa, SimError, Simulator};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Instant;

/// Run an RV64 Linux program in coprof's simulator.
///
/// The program's stdin, stdout and stderr are coprof's; its exit status
/// becomes coprof's (128 + the signal number when it dies of a signal, as
/// a shell reports). With --trace, every retired instruction of the chosen
/// classes is written to a .cpt trace that every report command reads.
/// Build programs with `riscv64-linux-gnu-gcc`: statically linked, or
/// dynamically, when the loader and libraries are in /usr/riscv64-linux-gnu
/// (the cross compiler's) or under --sysroot DIR.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  coprof run -- ./hello\n  coprof run --stats -- ./crc32 1000\n  coprof run --trace crc.cpt --classes load,cond-branch -- ./crc32\n  coprof run --root /srv/rv-sysroot -- ./prog /etc/config\n\nExit status: the program's own, 128 + signal if it died of one, 2 if the\nfile cannot be run or the program needs something the simulator lacks."
)]
pub struct Args {
    /// Write the retired instructions to this trace file (.cpt), or to
    /// standard output with `-`, where the program's standard output then
    /// goes to standard error. A pipe gets the trace as it is written, for
    /// a reader beside the program: `coprof run --trace - -- prog |
    /// coprof loops -`.
    #[arg(long, value_name = "OUT.cpt", value_parser = crate::output::trace_file())]
    trace: Option<PathBuf>,
    /// Instruction classes to record in the trace (comma-separated:
    /// load, store, cond-branch, jump, call, return, int-alu, mul-div,
    /// float, system, other; or all, control, memory).
    #[arg(long, value_parser = crate::cmd::gen::parse_classes, default_value = "all", requires = "trace")]
    classes: ClassSet,
    /// Print the retired instruction count, run time and MIPS to stderr.
    #[arg(long)]
    stats: bool,
    /// With --stats: print them as one JSON object on standard error
    /// instead (standard output is the program's), with how the program
    /// ended, the system calls answered ENOSYS and the trace written.
    #[arg(long, requires = "stats")]
    json: bool,
    /// Look absolute paths the program opens up under this directory.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Where a dynamically linked program's loader and libraries are: its
    /// absolute paths are looked up under DIR first and on the host when
    /// DIR has no such file, as qemu-user's -L does (default for such a
    /// program: /usr/riscv64-linux-gnu, where the cross compiler's
    /// libraries are).
    #[arg(long, value_name = "DIR")]
    sysroot: Option<PathBuf>,
    /// Answer unknown system calls with ENOSYS instead of stopping.
    #[arg(long)]
    enosys: bool,
    /// Take the random bytes the program gets from the kernel (AT_RANDOM,
    /// getrandom) from a generator seeded with N instead of the host, so
    /// that runs repeat exactly (in the same environment, which moves the
    /// stack: see --clear-env).
    #[arg(long, value_name = "N")]
    random_seed: Option<u64>,
    /// Instructions in each thread's turn on the simulator's one hart, for
    /// a multithreaded program (default 100000): the interleaving of its
    /// threads, which is the same on every run unless a thread waits with
    /// a timeout beside others.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    quantum: Option<u64>,
    /// Interpret every instruction: translate no block to host code. The
    /// results are the same; translation only makes the run faster.
    #[arg(long)]
    interpret: bool,
    /// The simulated hart's instruction set, as a -march string: rv64gc
    /// and any of _zba, _zbb, _zbc and _zbs. An
    /// instruction of an extension left out is illegal (SIGILL), as on a
    /// board without it.
    #[arg(long, value_name = "ISA", default_value_t = Isa::default())]
    isa: Isa,
    /// The process id the program sees as its own, in place of the
    /// host's, with its threads numbered after it, so that runs repeat
    /// exactly: the C library stores the thread id in every mutex it locks.
    /// Ids go both ways (kill, wait4, setpgid, /proc/PID); forked children
    /// keep the host's. N is 2 to 4194304. Default: the host's, as under
    /// qemu-user.
    #[arg(long, value_name = "N", value_parser = crate::input::parse_pid)]
    pid: Option<i32>,
    /// The host process --pid stands for, when it is not this one: what
    /// a simulator started for a program's `execve` is given.
    #[arg(long, value_name = "PID", requires = "pid", hide = true)]
    pid_host: Option<i32>,
    /// Stop once this many instructions have retired (at the end of the
    /// basic block that reaches the count; the exact number is printed).
    #[arg(long, value_name = "N")]
    max_instructions: Option<u64>,
    /// The program's environment (`--clear-env`, `--unset`, `--env`).
    #[command(flatten)]
    env: EnvArgs,
    /// The program's `argv[0]` (by default PROG as given): the name a
    /// program that looks at it (a multi-call binary, a login shell's
    /// `-sh`) sees. Write `--argv0=-sh` for a name starting with `-`.
    #[arg(long, value_name = "NAME")]
    argv0: Option<OsString>,
    /// End by the program's fatal signal rather than with status 128 + N:
    /// what the process a program's `execve` runs in does (its runner), so
    /// that the parent's wait sees the signal, as under Linux.
    #[arg(long, hide = true)]
    die_by_signal: bool,
    /// The program and its arguments (after `--`). A name without a
    /// slash is looked for in the program's PATH (under --sysroot first),
    /// then the current directory; a `#!` script runs its interpreter.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROG ARGS"
    )]
    command: Vec<OsString>,
}

/// The options that shape a program's run, which every command that runs
/// one takes.
pub(crate) struct Shape<'a> {
    /// `--root`.
    pub root: &'a Option<PathBuf>,
    /// `--sysroot`.
    pub sysroot: &'a Option<PathBuf>,
    /// `--enosys`.
    pub enosys: bool,
    /// `--random-seed`.
    pub seed: Option<u64>,
    /// `--quantum`.
    pub quantum: Option<u64>,
    /// `--interpret`.
    pub interpret: bool,
    /// `--isa`.
    pub isa: Isa,
    /// `--pid`.
    pub pid: Option<i32>,
    /// `--pid-host`: the host process `--pid` stands for, when it is not
    /// this one.
    pub pid_host: Option<i32>,
    /// `--clear-env`, `--unset` and `--env`.
    pub env: &'a EnvArgs,
}

/// The simulator's configuration for `command` (argv) with the host's
/// environment as `shape.env` changes it, and the other options of
/// `shape`; a `--root` or `--sysroot` that
/// is not a directory is an error.
pub(crate) fn sim_config(
    command: &[OsString],
    shape: &Shape<'_>,
    max_instructions: u64,
) -> anyhow::Result<Config> {
    for (option, dir) in [("--root", shape.root), ("--sysroot", shape.sysroot)] {
        if let Some(dir) = dir.as_ref().filter(|d| !d.is_dir()) {
            return Err(bad_input(format!(
                "{option} {}: not a directory",
                dir.display()
            )));
        }
    }
    Ok(Config {
        inherited_fds: INHERITED_FDS.get().cloned().unwrap_or_default(),
        runner: runner(shape),
        args: command.to_vec(),
        env: shape.env.environment(std::env::vars_os()),
        root: shape.root.clone(),
        sysroot: shape.sysroot.clone(),
        enosys: shape.enosys,
        max_instructions,
        seed: shape.seed,
        quantum: shape.quantum,
        exec_in_place: false,
        interpret: shape.interpret,
        isa: shape.isa,
        pid: shape.pid,
        pid_host: shape.pid_host,
        inherited_signals: INHERITED_SIGNALS.get().cloned().unwrap_or_default(),
    })
}

/// The file of the program `config.args` names, found as a shell finds
/// it ([`coprof_rv::command::find`]: in the program's PATH, and a `#!`
/// script's interpreter), with `config.args` made the argv it runs with.
pub(crate) fn find_program(config: &mut Config) -> anyhow::Result<PathBuf> {
    let found = coprof_rv::command::find(&config.args, config).map_err(sim_error)?;
    config.args = found.args;
    Ok(found.program)
}

/// The host descriptors from 3 up that coprof inherited, recorded by
/// [`record_inherited`] before it opens anything: the program gets
/// them under the same numbers.
static INHERITED_FDS: std::sync::OnceLock<Vec<i32>> = std::sync::OnceLock::new();

/// The signals coprof was started ignoring and blocking, recorded by
/// [`record_inherited`]: the program starts with them ignored and
/// blocked too, as under Linux (`nohup coprof profile …` ignores SIGHUP).
static INHERITED_SIGNALS: std::sync::OnceLock<coprof_rv::InheritedSignals> =
    std::sync::OnceLock::new();

/// Records the descriptors coprof inherited and the signals it was
/// started ignoring and blocking; `main` calls it first. SIGPIPE's
/// action is the one read before Rust's runtime set it to be ignored
/// ([`sigpipe_ignored_at_start`]).
pub(crate) fn record_inherited() {
    let _ = INHERITED_FDS.set(coprof_rv::fdtable::inherited_fds());
    let mut signals = coprof_rv::host_signals::inherited_now();
    if sigpipe_ignored_at_start() {
        signals.ignored |= 1 << (libc::SIGPIPE - 1);
    }
    let _ = INHERITED_SIGNALS.set(signals);
}

/// Whether coprof was started with SIGPIPE ignored (a shell's `trap ''
/// PIPE`, Python's `os.system`): then so is the program, in the
/// simulator or sampled natively, as it would be started alone. Rust's
/// runtime ignores SIGPIPE before `main`, so `main` cannot read what it
/// was; the C library's constructors, which run before, can.
pub(crate) fn sigpipe_ignored_at_start() -> bool {
    SIGPIPE_IGNORED_AT_START.load(std::sync::atomic::Ordering::Relaxed)
}

static SIGPIPE_IGNORED_AT_START: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Reads SIGPIPE's action as coprof was started with it, among the
/// process's constructors (`.init_array`), which the C library runs
/// before Rust's runtime starts.
extern "C" fn read_sigpipe_at_start() {
    // SAFETY: a query of SIGPIPE's action, which changes nothing, into a
    // local.
    let ignored = unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut action) == 0
            && action.sa_sigaction == libc::SIG_IGN
    };
    SIGPIPE_IGNORED_AT_START.store(ignored, std::sync::atomic::Ordering::Relaxed);
}

#[used]
#[link_section = ".init_array"]
static READ_SIGPIPE_AT_START: extern "C" fn() = read_sigpipe_at_start;

impl Shape<'_> {
    /// These options as they would be typed again (`--root DIR`,
    /// `--sysroot DIR`, `--enosys`, `--random-seed N`, `--quantum N`), to
    /// run a program the same way, but for the environment's, which a
    /// program's `execve` gives the program after it itself; with
    /// `absolute`, the directories made absolute, for a command that may
    /// start in another directory (`None` when one cannot be).
    pub fn options(&self, absolute: bool) -> Option<Vec<OsString>> {
        let mut v: Vec<OsString> = Vec::new();
        for (option, dir) in [("--root", self.root), ("--sysroot", self.sysroot)] {
            if let Some(dir) = dir {
                let dir = if absolute {
                    std::path::absolute(dir).ok()?
                } else {
                    dir.clone()
                };
                v.extend([option.into(), dir.into()]);
            }
        }
        if self.enosys {
            v.push("--enosys".into());
        }
        if let Some(seed) = self.seed {
            v.extend(["--random-seed".into(), seed.to_string().into()]);
        }
        if let Some(q) = self.quantum {
            v.extend(["--quantum".into(), q.to_string().into()]);
        }
        if self.interpret {
            v.push("--interpret".into());
        }
        if self.isa != Isa::default() {
            v.extend(["--isa".into(), self.isa.to_string().into()]);
        }
        if let Some(pid) = self.pid {
            v.extend(["--pid".into(), pid.to_string().into()]);
            if absolute {
                // A simulator started for an `execve` keeps the ids of
                // the process that was given the pid, this one.
                let host = self.pid_host.unwrap_or(std::process::id() as i32);
                v.extend(["--pid-host".into(), host.to_string().into()]);
            }
        }
        Some(v)
    }
}

/// `coprof run` with the options that shape a run: the command a forked
/// child of the program runs a RISC-V program it `execve`s with, in a
/// simulator of its own and unobserved, as the child itself was.
fn runner(shape: &Shape<'_>) -> Option<Vec<OsString>> {
    let mut cmd: Vec<OsString> = vec![std::env::current_exe().ok()?.into(), "run".into()];
    cmd.extend(shape.options(true)?);
    cmd.push("--die-by-signal".into());
    Some(cmd)
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if let Some(out) = &a.trace {
        crate::output::refuse_terminal(out)?;
    }
    let shape = Shape {
        root: &a.root,
        sysroot: &a.sysroot,
        enosys: a.enosys,
        seed: a.random_seed,
        quantum: a.quantum,
        interpret: a.interpret,
        isa: a.isa,
        pid: a.pid,
        pid_host: a.pid_host,
        env: &a.env,
    };
    let mut config = sim_config(&a.command, &shape, a.max_instructions.unwrap_or(0))?;
    let prog = find_program(&mut config)?;
    if let Some(name) = &a.argv0 {
        config.args[0] = name.clone();
    }
    // With nothing to report about the program, it may replace itself
    // (`exec` in a shell, `env`, `nice`, `timeout`), as under Linux.
    config.exec_in_place = a.trace.is_none() && !a.stats && a.max_instructions.is_none();
    let mut sim = Simulator::load(&prog, &config).map_err(sim_error)?;
    let started = Instant::now();
    let (exit, written) = match &a.trace {
        Some(out) => {
            let meta = TraceMeta {
                source: "rv-sim".into(),
                isa: a.isa.to_string(),
                program: a.command[0].to_string_lossy().into_owned(),
                args: crate::input::as_text(&a.command[1..]),
                modules: sim.modules().to_vec(),
                sysroot: sim.sysroot().map(std::path::Path::to_path_buf),
                ..TraceMeta::default()
            };
            let mut w = crate::output::trace_writer(out, meta, a.classes)?;
            let _unread = crate::output::end_with_reader(out)?;
            // Standard output carries the trace when it is the output
            // (the writer holds it): the program's goes to standard error.
            let to_stderr = crate::output::is_stdout(out)
                .then(crate::input::StdoutToStderr::new)
                .flatten();
            let exit = sim.run_to_exit(&mut w).map_err(sim_error);
            drop(to_stderr);
            let exit = exit?;
            w.set_modules(
                sim.modules().to_vec(),
                sim.sysroot().map(std::path::Path::to_path_buf),
            );
            w.set_areas(sim.areas().clone());
            w.set_thread_names(sim.thread_names());
            let s = w.commit()?;
            (exit, Some((out, s.events, s.file_bytes)))
        }
        None => (sim.run_to_exit(&mut Discard).map_err(sim_error)?, None),
    };
    let secs = started.elapsed().as_secs_f64();
    announce_death(&prog, &exit);
    if a.stats && a.json {
        eprintln!("{}", stats_json(&a, &sim, &exit, secs, written));
    } else if a.stats {
        let trace_note = written.map_or(String::new(), |(out, events, bytes)| {
            format!(
                "; wrote {} events to {} ({} bytes)",
                thousands(events),
                out.display(),
                thousands(bytes)
            )
        });
        eprintln!(
            "coprof: {} instructions retired in {:.3} s ({:.1} MIPS){trace_note}",
            thousands(sim.instret()),
            secs,
            sim.instret() as f64 / secs.max(1e-9) / 1e6
        );
        for (num, name, times) in sim.enosys_calls() {
            eprintln!("coprof: system call {num} ({name}) answered ENOSYS {times} times");
        }
        if let Some(note) = crate::input::children_note(sim.children_started()) {
            eprintln!("coprof: {} {note}", prog.display());
        }
    }
    if exit == Exit::Limit {
        eprintln!(
            "coprof: stopped after {} instructions (--max-instructions)",
            thousands(sim.instret())
        );
    }
    if let (true, Exit::Signal { signal, .. }) = (a.die_by_signal, &exit) {
        coprof_rv::sim::die_by(*signal);
    }
    let status = exit.status();
    if status != 0 {
        std::process::exit(status);
    }
    Ok(())
}

/// `--stats --json`: what `--stats` prints, as one object, with how the
/// program ended (`status` as a shell reports it, and the signal and its
/// message if one killed it) and the trace written, if any.
fn stats_json(
    a: &Args,
    sim: &Simulator,
    exit: &Exit,
    secs: f64,
    written: Option<(&PathBuf, u64, u64)>,
) -> serde_json::Value {
    let (signal, message) = match exit {
        Exit::Signal { signal, message } => (Some(*signal), Some(message.clone())),
        _ => (None, None),
    };
    let enosys: Vec<serde_json::Value> = sim
        .enosys_calls()
        .into_iter()
        .map(|(num, name, times)| serde_json::json!({"num": num, "name": name, "times": times}))
        .collect();
    serde_json::json!({
        "program": a.command[0].to_string_lossy(),
        "args": crate::input::as_text(&a.command[1..]),
        "instructions": sim.instret(),
        "seconds": secs,
        "mips": sim.instret() as f64 / secs.max(1e-9) / 1e6,
        "status": exit.status(),
        "signal": signal,
        "message": message,
        "limit_reached": *exit == Exit::Limit,
        "enosys": enosys,
        "children_started": sim.children_started(),
        "trace": written.map(|(out, events, bytes)| serde_json::json!({
            "file": out.display().to_string(),
            "events": events,
            "bytes": bytes,
        })),
    })
}

/// Says on standard error how the program `prog` died, if a signal killed
/// it: the message names the PC, address and instruction. A death by
/// SIGPIPE, a pipeline's writer's usual end, goes unannounced, as shells
/// leave it (and as it went when the host's signal ended coprof itself).
pub(crate) fn announce_death(prog: &std::path::Path, exit: &Exit) {
    if let Exit::Signal { message, signal } = exit {
        if *signal != libc::SIGPIPE {
            eprintln!("coprof: {}: {message}", prog.display());
        }
    }
}

/// Load errors and unsupported requests are about the user's program.
/// A trace given as the program (`coprof loops -- run.cpt`) is said to
/// be one, with how the reports read it.
pub(crate) fn sim_error(e: SimError) -> anyhow::Error {
    match e {
        SimError::Setup(_) => anyhow::Error::new(e),
        SimError::Elf {
            source: coprof_rv::elf::ElfError::NotElf(ref head),
            ..
        } if !head.is_empty() && coprof_core::trace::MAGIC.starts_with(head) => {
            bad_input(format!("{e}: {}", crate::file_kind::TRACE_NOT_PROGRAM))
        }
        SimError::Elf {
            source: coprof_rv::elf::ElfError::NotRiscV(_, coprof_rv::elf::EM_X86_64),
            ..
        } => bad_input(format!(
            "{e}; `coprof record -o OUT.cpt -- PROG ARGS` samples a native x86-64 program, \
             for `coprof ranges OUT.cpt` and `coprof values OUT.cpt`, and `coprof profile \
             -- PROG ARGS` samples it live"
        )),
        other => bad_input(other.to_string()),
    }
}
