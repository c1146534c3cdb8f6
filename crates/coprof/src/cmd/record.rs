//! `coprof record`: sample a native x86-64 program into a trace, as DCPI
//! samples a running system, for the reports that take samples (`coprof
//! ranges`, `coprof values`).

use crate::error::bad_input;
use crate::input::CallGraph;
use crate::output::{cpu_time, seconds, thousands};
use coprof_core::trace::{TraceMeta, TraceWriter};
use coprof_core::ClassSet;
use coprof_native::Config;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod children;

/// Sample a native x86-64 program into a trace, DCPI-style.
///
/// Each thread of the program is interrupted once it has run for a
/// period of CPU time (about 31 µs by default, randomized so as not to
/// fall in step with a loop), and the instruction it stopped at is one
/// event of the trace: a load with the address it reads and the value
/// there, or an instruction of its class. The program runs unmodified, at
/// full speed between samples, with its own standard streams and exit
/// status. `coprof ranges` and `coprof values` read the trace, naming PCs
/// with the program's and its libraries' symbols and lines; reports that
/// need every instruction (loops, sample) refuse it.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  coprof record -o gzip.cpt -- gzip -9 -c big.txt > /dev/null\n  coprof ranges gzip.cpt\n  coprof record --next-load -o values.cpt -- ./prog\n  coprof values --algo hotlist values.cpt\n  coprof record -g -o prog.cpt -- ./prog\n  coprof export -o prog.pb.gz prog.cpt\n  coprof record --attach 4242 --duration 10 -o server.cpt\n\nExit status: the program's own, 128 + signal if it died of one (0 with\n--attach), 2 if it cannot be sampled."
)]
pub struct Args {
    /// The trace to write (.cpt), or `-` for standard output, where the
    /// program's standard output then goes to standard error.
    #[arg(short, long, value_name = "OUT.cpt", default_value = "coprof.cpt",
          value_parser = crate::output::trace_file())]
    output: PathBuf,
    /// The mean period between two samples of a thread, in microseconds
    /// of its CPU time (DCPI's 62,000 cycles at 2 GHz is 31); each period
    /// is drawn within ±1/31 of it.
    #[arg(long, value_name = "US", default_value_t = 31,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    period_us: u64,
    /// Value sampling: take each sample at the interrupted thread's next
    /// load (at most 64 instructions on, not past a system call), with
    /// its value. Without it a sample is the interrupted instruction,
    /// which is seldom a load on x86-64: interrupts land after loads.
    #[arg(long)]
    next_load: bool,
    /// Where each sample is taken, as the live reports' option says it:
    /// `interrupt` (the default) or `next-load` (the same as --next-load).
    #[arg(long, value_name = "WHERE", conflicts_with = "next_load")]
    sample_at: Option<crate::input::SampleAt>,
    /// With --next-load: step every instruction to the next load, rather
    /// than run to it at a hardware breakpoint where the code before it
    /// runs in a straight line. The same samples, more slowly: for
    /// checking, or where debug registers do not work.
    #[arg(long)]
    single_step: bool,
    /// Run the program, its threads and children, and coprof's sampling
    /// on one CPU: each sample then wakes no other CPU, which on a
    /// virtual machine saves a quarter of its cost or more. The program
    /// sees one CPU (nproc), and its threads share it. Not with --attach.
    #[arg(long, conflicts_with = "attach")]
    same_cpu: bool,
    /// Take the samples without stopping the program for each, as `perf
    /// record` does: the kernel writes each interrupted PC into a ring
    /// buffer, which coprof reads at one stop of the thread every 256
    /// samples. Several times cheaper for the program, but a sample is a
    /// PC alone (no load, address or value: for ranges of PCs), and its
    /// period is redrawn at each read rather than at each sample. Not
    /// with --next-load. With -g, each sample copies the top 8 KiB of
    /// its stack too, as `perf record --call-graph dwarf` does, and the
    /// buffer of 1 MiB is read every 15 samples.
    #[arg(long, conflicts_with_all = ["next_load", "sample_at", "single_step"])]
    ring_buffer: bool,
    /// Record each sample's stack, unwound from the CFI in the files'
    /// `.eh_frame` while the thread is stopped for it, as `perf record
    /// --call-graph dwarf` does: `coprof export` of the trace then has
    /// pprof's stacks and callgrind's arcs. About a tenth more for each
    /// sample. With --ring-buffer, unwound from the copy of the stack's
    /// top 8 KiB that the kernel makes at each sample: a deeper stack
    /// stops there. With --follow-children, each child's trace keeps its
    /// samples' stacks too.
    #[arg(short = 'g')]
    stacks: bool,
    /// Record each sample's stack, found as MODE says, as `perf record
    /// --call-graph` takes it: `dwarf`, what -g does (the default
    /// without MODE); `dwarf,BYTES`, with --ring-buffer, as
    /// --stack-copy; or `fp`, with --ring-buffer: the return addresses
    /// the kernel finds by walking the thread's frame pointers. A
    /// sample is then about 1 KiB, not 8 KiB, and a stack is not cut at
    /// a copy's end; but code built without frame pointers (most
    /// distributions' C libraries; -fno-omit-frame-pointer keeps them)
    /// ends the stack. The frames below the innermost frame pointer (a
    /// leaf that keeps none) are unwound from the top 512 bytes of the
    /// stack by their CFI.
    #[arg(long, value_name = "MODE", num_args = 0..=1, default_missing_value = "dwarf",
          value_parser = crate::input::parse_call_graph)]
    call_graph: Option<CallGraph>,
    /// With -g and --ring-buffer: the bytes of each sample's stack the
    /// kernel copies, from the stack pointer up, as `perf record
    /// --call-graph dwarf,BYTES` takes them: a multiple of 8 up to 65528
    /// [default: 8192]. A stack deeper than the copy stops at its end;
    /// each thread's buffer holds at least 120 samples, so a larger copy
    /// takes more locked memory.
    #[arg(long, value_name = "BYTES", requires = "ring_buffer",
          value_parser = crate::input::parse_stack_copy)]
    stack_copy: Option<u32>,
    /// The seed of the periods' randomization, so that the same run
    /// samples at the same intervals of CPU time.
    #[arg(long, value_name = "N", default_value_t = 1)]
    random_seed: u64,
    /// Sample the program's child processes too (fork, vfork, and so
    /// posix_spawn and system), and theirs, each into a trace of its own:
    /// -o's file with `.PID` before its extension. coprof then waits for
    /// all of them to end, as `strace -f` does.
    #[arg(long)]
    follow_children: bool,
    /// Sample the running process PID, and the threads it starts, rather
    /// than start a program, as `perf record -p` does: until it ends,
    /// Ctrl-C (or SIGTERM, SIGHUP) or --duration. It is then let go,
    /// as it was, and runs on.
    #[arg(short = 'p', long, value_name = "PID", conflicts_with = "command",
          value_parser = clap::value_parser!(i32).range(1..))]
    attach: Option<i32>,
    /// With --attach: let the process go after this many seconds.
    #[arg(long, value_name = "SECONDS", value_parser = crate::input::parse_duration)]
    duration: Option<Duration>,
    /// Print the summary as one JSON object on standard error.
    #[arg(long)]
    json: bool,
    /// The program and its arguments (after `--`): an x86-64 Linux
    /// executable. A name without a slash is looked for in PATH.
    #[arg(
        required_unless_present = "attach",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROG ARGS"
    )]
    command: Vec<OsString>,
}

/// Refuses a RISC-V program, which the simulator runs, with the command
/// that does, and a trace, with the commands that read it.
fn refuse_unsampled(prog: &Path) -> anyhow::Result<()> {
    if crate::file_kind::of(prog) == Some(crate::file_kind::FileKind::Trace) {
        return Err(bad_input(format!(
            "{}: {}",
            prog.display(),
            crate::file_kind::TRACE_NOT_PROGRAM
        )));
    }
    if crate::host_program::elf_machine(prog) == Some(coprof_rv::elf::EM_RISCV) {
        return Err(bad_input(format!(
            "{} is a RISC-V program: `coprof run --trace OUT.cpt -- {}` records every \
             instruction of it in the simulator",
            prog.display(),
            prog.display()
        )));
    }
    Ok(())
}

/// The name of a child's trace, with `%p` for its PID, when children are
/// followed: refused for standard output, and for an `-o` that holds
/// `%p` itself, since the program's trace is `-o`.
fn child_pattern(a: &Args) -> anyhow::Result<Option<PathBuf>> {
    if !a.follow_children {
        return Ok(None);
    }
    if crate::output::is_stdout(&a.output) {
        return Err(bad_input(
            "--follow-children writes a trace for each process, named from -o: give a file \
             for -o, not `-`",
        ));
    }
    if a.output.to_string_lossy().contains(crate::per_process::PID) {
        return Err(bad_input(format!(
            "-o {}: the program's trace is -o itself, and each child's is -o with .PID \
             before its extension: no %p",
            a.output.display()
        )));
    }
    crate::per_process::pattern(&a.output).map(Some)
}

/// What the trace's final metadata says of the process `run` sampled:
/// the files of its code, its areas, its threads' names, its id, and how
/// many of its stacks were whole.
fn tell_run(w: &mut TraceWriter, run: &coprof_native::Run) {
    w.set_modules(run.modules.clone(), None);
    w.set_areas(run.areas.clone());
    w.set_thread_names(run.thread_names.clone());
    w.set_pid(run.pid as u32);
    w.set_whole_stacks(run.whole_stacks);
    w.set_cpu_ns(run.cpu_ns);
}

pub fn run(a: Args) -> anyhow::Result<()> {
    crate::output::refuse_terminal(&a.output)?;
    let pattern = child_pattern(&a)?;
    crate::input::refuse_duration_alone(a.duration, a.attach)?;
    let (prog, args) = match a.attach {
        Some(pid) => crate::host_program::of_process(pid)?,
        None => {
            let prog = crate::host_program::find(&a.command[0]).ok_or_else(|| {
                bad_input(format!(
                    "{}: not found in PATH",
                    Path::new(&a.command[0]).display()
                ))
            })?;
            (prog, a.command[1..].to_vec())
        }
    };
    refuse_unsampled(&prog)?;
    let next_load = a.next_load || a.sample_at == Some(crate::input::SampleAt::NextLoad);
    if a.single_step && !next_load {
        return Err(bad_input(
            "--single-step steps to the next load: it applies with --next-load \
             (or --sample-at next-load)"
                .to_string(),
        ));
    }
    let stacks = a.stacks || a.call_graph.is_some();
    if a.stack_copy.is_some() && !stacks {
        return Err(bad_input(
            "--stack-copy sizes each sample's copy of its stack: it applies with -g (or \
             --call-graph dwarf)",
        ));
    }
    let (frame_pointers, stack_copy) =
        crate::input::stacks_from(a.call_graph, a.stack_copy, a.ring_buffer)?;
    let config = Config {
        period_ns: a.period_us * 1000,
        seed: a.random_seed,
        next_load,
        single_step: a.single_step,
        same_cpu: a.same_cpu,
        ring_buffer: a.ring_buffer,
        stack_copy,
        frame_pointers,
        ignore_sigpipe: crate::cmd::run::sigpipe_ignored_at_start(),
    };
    let mut meta = TraceMeta {
        source: "native".into(),
        isa: "x86-64".into(),
        program: prog.to_string_lossy().into_owned(),
        args: crate::input::as_text(&args),
        vdso_build_id: crate::vdso::own().map(|v| v.build_id.clone()),
        ..TraceMeta::default()
    };
    if let Some(pid) = a.attach {
        meta.extra
            .insert("attached".into(), serde_json::json!({ "pid": pid }));
    }
    let mut sampling = sampling_meta(&config);
    if stacks && a.ring_buffer && !frame_pointers {
        sampling["stack_copy"] = serde_json::json!(config.stack_copy);
    }
    meta.extra.insert("sampling".into(), sampling);
    meta.stacks = stacks;
    let mut children = pattern.map(|p| children::ChildTraces::new(p, meta.clone()));
    // Samples from ring buffers are PCs alone, each of class `other`.
    let classes = match config.ring_buffer {
        true => ClassSet::of(coprof_core::Class::Other),
        false => ClassSet::ALL,
    };
    let mut w = crate::output::trace_writer(&a.output, meta, classes)?;
    // Before standard output is the program's standard error.
    let trace_pipe = crate::output::trace_pipe(&a.output);
    let started = Instant::now();
    let to_stderr = (crate::output::is_stdout(&a.output) && a.attach.is_none())
        .then(crate::input::StdoutToStderr::new)
        .flatten();
    let target = match a.attach {
        Some(pid) => crate::progress::NativeTarget::Attach {
            pid,
            duration: a.duration,
        },
        None => crate::progress::NativeTarget::Start(&a.command),
    };
    let run = crate::progress::sample_native(
        &prog,
        target,
        &config,
        &mut w,
        children
            .as_mut()
            .map(|c| c as &mut dyn coprof_native::Children),
        trace_pipe,
    );
    drop(to_stderr);
    let run = run.map_err(|e| bad_input(e.to_string()))?;
    let secs = started.elapsed().as_secs_f64();
    tell_run(&mut w, &run);
    let written = w.commit()?;
    let children = children.map(|c| c.ended).unwrap_or_default();
    let each = children.iter().map(|c| (c.samples, c.cpu_ns));
    let notes: Vec<String> = [
        crate::progress::kernel_time_note(&run, &config),
        crate::progress::ring_buffer_note(&run, &config),
        crate::progress::children_kernel_time_note(each, &config),
        (!a.follow_children)
            .then(|| crate::progress::unfollowed_children_note(&run))
            .flatten(),
    ]
    .into_iter()
    .flatten()
    .collect();
    if a.json {
        let mut summary = serde_json::json!({
            "pid": run.pid,
            "program": run.program,
            "status": run.exit.status(),
            "samples": run.samples,
            "events": written.events,
            "no_load": run.no_load,
            "steps": run.steps,
            "runs_ahead": run.runs_ahead,
            "unreadable": run.unreadable,
            "threads": run.threads,
            "cpu_seconds": seconds(run.cpu_ns),
            "children_cpu_seconds": seconds(run.children_cpu_ns),
            "seconds": secs,
            "period_ns": config.period_ns,
            "next_load": config.next_load,
            "ring_buffer": config.ring_buffer,
            "lost": run.lost,
            "throttled": run.throttled,
            "stopped_threads": run.stopped_threads,
            "trace": { "path": a.output, "bytes": written.file_bytes },
            "notes": notes,
        });
        if stacks {
            summary["stacks"] = serde_json::json!(written.stacks);
            summary["whole_stacks"] = serde_json::json!(run.whole_stacks);
            if a.ring_buffer {
                summary["cut_stacks"] = serde_json::json!(run.cut_stacks);
            }
        }
        if a.follow_children {
            summary["children"] = serde_json::json!(children);
        }
        if a.attach.is_some() {
            summary["attached"] = serde_json::json!(true);
            summary["let_go"] = serde_json::json!(run.exit == coprof_native::Exit::Detached);
        }
        eprintln!("{summary}");
    } else {
        let misses = if next_load {
            format!(", {} met no load", thousands(run.no_load))
        } else {
            String::new()
        };
        eprintln!(
            "coprof: {} samples of {} ({} thread{}, {}) in {secs:.3} s{misses}; \
             wrote {} events to {} ({} bytes)",
            thousands(run.samples),
            run.program.display(),
            run.threads,
            if run.threads == 1 { "" } else { "s" },
            cpu_time(run.cpu_ns),
            thousands(written.events),
            a.output.display(),
            thousands(written.file_bytes),
        );
        if stacks {
            eprintln!(
                "coprof: with {} stacks, {} of them ({}) to their thread's first frame",
                thousands(written.stacks),
                thousands(run.whole_stacks),
                crate::output::pct(run.whole_stacks as f64 / run.stacks.max(1) as f64),
            );
        }
        for c in &children {
            say_child(c);
        }
        notes.into_iter().for_each(crate::notes::say);
    }
    let unwritten = children.iter().filter(|c| c.error.is_some()).count();
    // A process attached to is not coprof's: its end is told, not passed on.
    let status = match a.attach {
        Some(_) => 0,
        None => run.exit.status(),
    };
    if status != 0 {
        std::process::exit(status);
    }
    if unwritten > 0 {
        anyhow::bail!(
            "the traces of {unwritten} child process{} could not be written",
            if unwritten == 1 { "" } else { "es" }
        );
    }
    Ok(())
}

/// One line of the summary for a child process's trace, or the error that
/// kept it from being written.
fn say_child(c: &children::ChildTrace) {
    let command = std::iter::once(c.program.as_str())
        .chain(c.args.iter().skip(1).map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let ended = match c.status {
        0 => String::new(),
        s => format!(", status {s}"),
    };
    match (&c.error, c.bytes) {
        (Some(e), _) => eprintln!(
            "coprof: error: child process {} (of {}): {command}: no trace written: {e}",
            c.pid, c.parent
        ),
        (None, bytes) => eprintln!(
            "coprof: child process {} (of {}): {command}: {} samples ({}){ended}; \
             wrote {} ({} bytes)",
            c.pid,
            c.parent,
            thousands(c.samples),
            cpu_time(c.cpu_ns),
            c.trace.display(),
            thousands(bytes.unwrap_or(0)),
        ),
    }
}

/// How a native program was sampled, as a trace's metadata says it
/// (`sampling`): what each sample stands for, and what reads them.
pub fn sampling_meta(config: &Config) -> serde_json::Value {
    let mut meta = serde_json::json!({
        "period_ns": config.period_ns,
        "next_load": config.next_load,
        "single_step": config.single_step,
        "same_cpu": config.same_cpu,
        "ring_buffer": config.ring_buffer,
        "random_seed": config.seed,
    });
    if config.frame_pointers {
        meta["frame_pointers"] = serde_json::json!(true);
    }
    meta
}
