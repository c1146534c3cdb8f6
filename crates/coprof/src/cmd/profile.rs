//! `coprof profile`: every engine over one pass of a program (or a trace),
//! one profile file with every report, and `coprof report` to read it again.

mod children;
mod native_children;

use crate::error::bad_input;
use crate::input::{InputArgs, InputInfo};
use crate::job::{parse_args, Job, Rendered};
use crate::output::print_json;
use crate::timing::{process_cpu, Timed};
use anyhow::Context;
use coprof_core::threads::SendSink;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Run every engine over one pass of a program and save all the reports.
///
/// The reports are those of `coprof loops`, `coprof ranges --stream pc`,
/// `coprof ranges --stream load-value`, `coprof values` and `coprof sample
/// --eval`, each with its defaults, computed together from the same events;
/// each is listed with the options that reproduce it alone. With -o the
/// reports are saved in one profile file (JSON) that `coprof report` prints
/// again without re-running.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  coprof profile -- workloads/build/crc32
  coprof profile --exact -o crc32.profile.json -- workloads/build/crc32
  coprof report crc32.profile.json
  coprof profile mixed.cpt --json

Exit status: with a program, once the report is written, the program's own
(128 + signal if it died of one), as under perf and valgrind; with a trace,
0; 2 for a bad option, file or program.")]
pub struct Args {
    #[command(flatten)]
    input: InputArgs,
    /// Write the profile (every report, as text and JSON) to this file.
    #[arg(long, short, value_name = "PROFILE.json", value_parser = crate::output::output_file())]
    output: Option<PathBuf>,
    /// Count exactly too, and show every engine's error against the truth.
    #[arg(long)]
    exact: bool,
    /// Compute this report instead of the default set: a report command
    /// (loops, ranges, values or sample) with its options, as typed after
    /// `coprof`. Repeat it to compare configurations in one pass, e.g.
    /// --report "loops" --report "loops --coalesce" --report "loops --sweep".
    #[arg(long = "report", value_name = "COMMAND OPTIONS")]
    reports: Vec<String>,
    /// Give every code profile (ranges over pc) a buffer of this many bytes that combines
    /// repeated basic-block executions: `coprof ranges --block-buffer`, an option beside the
    /// paper's. The profile then costs a fraction of the paper's per-event buffer, within the
    /// same ε·n bound.
    #[arg(long, value_name = "BYTES")]
    block_buffer: Option<usize>,
    /// Write the exact count of every PC to this file for `go tool pprof`
    /// as well, as `coprof export -o FILE --format pprof` writes it, from
    /// the same pass (docs/export.md).
    #[arg(long, value_name = "FILE.pb.gz", value_parser = crate::output::output_file())]
    pprof: Option<PathBuf>,
    /// Write the exact count of every PC to this file for
    /// `callgrind_annotate` and KCachegrind as well, as `coprof export -o
    /// FILE --format callgrind` writes it, from the same pass.
    #[arg(long, value_name = "callgrind.out.NAME", value_parser = crate::output::output_file())]
    callgrind: Option<PathBuf>,
    /// Keep each thread's costs apart in the exports of --pprof and
    /// --callgrind, as `coprof export --separate-threads` does: a
    /// `thread` label on every pprof sample, a callgrind file per thread.
    #[arg(long)]
    separate_threads: bool,
    /// Measure what each report's engines cost: the CPU time of their
    /// calls, beside the process's CPU and wall time over the pass (kept in
    /// the profile file).
    #[arg(long)]
    timing: bool,
    /// Print the profile as JSON instead of the text summary.
    #[arg(long)]
    json: bool,
    /// Profile the program's child processes too (fork, posix_spawn, and
    /// the RISC-V programs they exec; an x86-64 program's children are
    /// sampled, whatever they exec), each into a profile file of its
    /// own: -o's file with `%p` replaced by the child's PID, or with
    /// `.PID` before its extension.
    #[arg(long, requires = "output")]
    follow_children: bool,
    /// This run is a followed child's, started by its parent's `execve`
    /// (set by `--follow-children`, not typed): write the profile to -o
    /// with `%p` replaced, print nothing, end as the program ended.
    #[arg(long, hide = true, requires = "follow_children")]
    followed_child: bool,
    /// The run began this many nanoseconds after the Unix epoch, in the
    /// process this one replaced (set when a followed program execs, not
    /// typed): children's profiles since then are listed.
    #[arg(long, hide = true, requires = "follow_children")]
    since: Option<u128>,
    /// Write the summary to this descriptor instead of standard output
    /// (handed over when a followed program execs, not typed).
    #[arg(long, hide = true, requires = "follow_children")]
    report_fd: Option<i32>,
}

/// The version of the profile file's layout.
pub const PROFILE_VERSION: u32 = 1;

/// A profile file: where the events came from and every report.
#[derive(Serialize, Deserialize, Debug)]
pub struct Profile {
    /// Always "coprof-profile": tells a profile from other JSON.
    pub format: String,
    /// [`PROFILE_VERSION`].
    pub version: u32,
    /// The program or trace profiled.
    pub input: String,
    /// The program's arguments (live runs).
    pub args: Vec<String>,
    /// The name the program was run as, its `argv[0]`, when its file name
    /// is not the program file's: a multi-call program's command (busybox
    /// run as `gzip`), a login shell's `-sh`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub argv0: Option<String>,
    /// The instruction set of the profiled PCs: the simulated hart's for a
    /// live run (`rv64gc_zba_zbb_zbc_zbs`, or what `--isa` gave), the
    /// trace's own for a trace file. Absent in profiles written before it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub isa: Option<String>,
    /// Events delivered to the engines.
    pub events: u64,
    /// Instructions retired (live runs).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub instructions: Option<u64>,
    /// The program's exit status (live runs).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status: Option<i32>,
    /// Instructions delivered to the engines as runs of basic blocks
    /// instead of as events (live runs; see `coprof_core::runs`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub instructions_in_runs: Option<u64>,
    /// Whether the reports carry exact answers.
    pub exact: bool,
    /// The time of the pass, with `--timing`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timing: Option<Timing>,
    /// The reports, in the order they are printed.
    pub reports: Vec<Section>,
    /// For a child process of the program (`--follow-children`): its PID
    /// and its parent's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub process: Option<ProcessIds>,
    /// For samples of a native process (`coprof record`'s trace, or an
    /// x86-64 program sampled live): what was sampled, and the default
    /// reports left out.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sampled: Option<Sampled>,
    /// The profiles of the program's child processes (`--follow-children`)
    /// found when it ended, by PID.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub children: Vec<ChildProfile>,
    /// The notes the run gave, in order (the program's failure, a binary
    /// without debug information, samples that stand for little of the
    /// CPU time): `coprof report` gives them again. Absent in profiles
    /// written before them, and in a native child's, whose notes are its
    /// parent's.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
}

/// A profile of samples of a native process: each event is one sample
/// (DCPI's), not one instruction.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Sampled {
    /// Samples taken, when the program was sampled live.
    pub samples: Option<u64>,
    /// Threads the program ran, when it was sampled live.
    pub threads: Option<u64>,
    /// The CPU time its threads ran while sampled, in nanoseconds, live
    /// or as the trace says: each sample stands for a period of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns: Option<u64>,
    /// The default reports left out, by name: because they need every
    /// instruction (loops, sample), or, when the samples are PCs alone
    /// (`pcs_only`), because they need loads with their values.
    pub left_out: Vec<String>,
    /// Whether the samples are PCs alone, taken into ring buffers
    /// (`--ring-buffer`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pcs_only: bool,
    /// The running process sampled, when it was attached to (`--attach`)
    /// rather than started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attached: Option<i32>,
}

/// A process's PID and its parent's.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessIds {
    /// The process.
    pub pid: u32,
    /// Its parent when its profile began.
    pub parent: u32,
}

/// A child process's profile file, as its parent's profile lists it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ChildProfile {
    /// The child's PID.
    pub pid: u32,
    /// Its profile file.
    pub file: PathBuf,
    /// The program it ran last, and its arguments.
    pub command: String,
    /// Instructions it retired (in the simulator).
    pub instructions: Option<u64>,
    /// Samples taken of it (an x86-64 program's child, sampled natively).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub samples: Option<u64>,
    /// The CPU time, in nanoseconds, its threads ran while sampled.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_ns: Option<u64>,
    /// Its exit status; none for a child that was let go, running, with
    /// a process attached to (`--attach`), or that is not known.
    pub status: Option<i32>,
}

/// The time of one pass (`--timing`): the simulation or the reading of
/// the trace with every engine, not the rendering of the reports after it.
#[derive(Serialize, Deserialize, Debug)]
pub struct Timing {
    /// Seconds from the start of the pass to its end.
    pub wall_seconds: f64,
    /// CPU seconds of the whole process over the pass, every thread.
    pub cpu_seconds: f64,
}

/// One engine's report in a profile.
#[derive(Serialize, Deserialize, Debug)]
pub struct Section {
    /// The report's name: loops, ranges-pc, ranges-load-value, values,
    /// sample, or the text of its `--report`.
    pub name: String,
    /// The `coprof` command line that gives this report alone.
    pub command: String,
    /// The report as that command's `--json` prints it.
    pub json: serde_json::Value,
    /// The report as that command prints it.
    pub text: String,
    /// CPU seconds of this report's engines over the pass, with `--timing`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cpu_seconds: Option<f64>,
}

/// One report of a profile: its name, command and options.
struct Planned {
    name: String,
    command: String,
    options: Vec<String>,
}

/// The commands a profile can run, as report jobs.
const COMMANDS: [&str; 5] = ["loops", "ranges", "values", "sample", "export"];

/// The default reports: name, command and options.
const DEFAULTS: [(&str, &str, &[&str]); 5] = [
    ("loops", "loops", &[]),
    ("ranges-pc", "ranges", &["--stream", "pc"]),
    ("ranges-load-value", "ranges", &["--stream", "load-value"]),
    ("values", "values", &[]),
    (
        "sample",
        "sample",
        &["--sampler", "brr:9", "--eval", "--profile", "pc"],
    ),
];

/// Why a report needs every instruction, as its own command's refusal of
/// a trace of samples says it: `command` with `options`; `None` for a
/// report that reads samples.
fn needs_every_instruction(command: &str, options: &[String]) -> Option<&'static str> {
    // A stream's name is a word of its own: `--stream narrow-pc`,
    // `--stream=narrow-pc`, `--dims pc,narrow-pc`.
    let narrow = || {
        options
            .iter()
            .any(|o| o.split([',', '=']).any(|w| w == "narrow-pc"))
    };
    match command {
        "loops" => Some(crate::cmd::loops::NEEDS_EVERY_INSTRUCTION),
        "sample" => Some(crate::cmd::sample::NEEDS_EVERY_INSTRUCTION),
        "ranges" if narrow() => Some(crate::cmd::ranges::NARROW_PC_NEEDS),
        _ => None,
    }
}

/// Why a report needs loads with their addresses or values, as its own
/// command's refusal of samples that are PCs alone says it; `None` for a
/// report of PCs.
fn needs_loads(command: &str, options: &[String]) -> Option<&'static str> {
    match command {
        "values" => Some(crate::cmd::values::NEEDS_LOADS),
        "ranges" if stream_words(options).iter().any(|w| *w != "pc") => {
            Some(crate::cmd::ranges::LOADS_NEEDED)
        }
        _ => None,
    }
}

/// The streams a `ranges` report's options name (`--stream X`,
/// `--stream=X`, `--dims X,Y`, `--dims=X,Y`); none for the default, pc.
fn stream_words(options: &[String]) -> Vec<&str> {
    let mut words = Vec::new();
    let mut it = options.iter();
    while let Some(o) = it.next() {
        let list = match o.as_str() {
            "--stream" | "--dims" => it.next().map(String::as_str),
            _ => o
                .strip_prefix("--stream=")
                .or_else(|| o.strip_prefix("--dims=")),
        };
        words.extend(list.into_iter().flat_map(|l| l.split(',')));
    }
    words
}

/// Why some default reports are left out of a profile of samples.
struct LeftOut<'a> {
    /// The reports, by name.
    names: Vec<&'a str>,
    /// What the samples are, that those reports cannot read.
    samples: &'static str,
    /// What those reports need.
    need: &'static str,
    /// Where to get it.
    hint: &'static str,
}

/// The default reports `left_out` of a profile of samples, by why, in
/// the order of [`DEFAULTS`].
fn left_out_reasons(left_out: &[String]) -> Vec<LeftOut<'_>> {
    let (mut every, mut loads) = (Vec::new(), Vec::new());
    for name in left_out {
        let planned = defaults().find(|p| p.name == *name);
        match planned.and_then(|p| needs_every_instruction(&p.command, &p.options)) {
            Some(_) => every.push(name.as_str()),
            None => loads.push(name.as_str()),
        }
    }
    [
        LeftOut {
            names: every,
            samples: "samples of a native process, not every instruction",
            need: "every instruction",
            hint: "run a RISC-V build in the simulator for them",
        },
        LeftOut {
            names: loads,
            samples: "samples that are PCs alone (taken into ring buffers, --ring-buffer)",
            need: "loads with their values",
            hint: "sample without --ring-buffer for them",
        },
    ]
    .into_iter()
    .filter(|l| !l.names.is_empty())
    .collect()
}

/// The default reports, planned.
fn defaults() -> impl Iterator<Item = Planned> {
    DEFAULTS.iter().map(|(name, command, options)| Planned {
        name: name.to_string(),
        command: command.to_string(),
        options: options.iter().map(|s| s.to_string()).collect(),
    })
}

/// The names of the default reports a profile of samples leaves out:
/// those that need every instruction, and, for samples that are PCs
/// alone, those that need loads.
fn left_out_of_samples(pcs_only: bool) -> Vec<String> {
    defaults()
        .filter(|p| {
            needs_every_instruction(&p.command, &p.options).is_some()
                || (pcs_only && needs_loads(&p.command, &p.options).is_some())
        })
        .map(|p| p.name)
        .collect()
}

/// Whether a report is a design-space sweep (`loops --sweep`, `ranges
/// --sweep`, `values --sweep`, `sample --sweep`), whose configurations are its own options: neither
/// `--exact` nor `--block-buffer` is given to it.
fn is_sweep(p: &Planned) -> bool {
    p.options.iter().any(|o| o == "--sweep")
}

/// Whether a report's options make a one-dimensional code profile: a
/// `ranges` report over pc (the default stream), and not a sweep of
/// them.
fn is_code_profile(p: &Planned) -> bool {
    let o = &p.options;
    p.command == "ranges"
        && !is_sweep(p)
        && !o.iter().any(|x| x == "--dims" || x.starts_with("--dims="))
        && match o.iter().position(|x| x == "--stream") {
            Some(i) => o.get(i + 1).is_some_and(|s| s == "pc"),
            None => {
                !o.iter().any(|x| x.starts_with("--stream="))
                    || o.iter().any(|x| x == "--stream=pc")
            }
        }
}

/// Whether, on several threads, the reports that take events should be
/// fed on the simulator's thread rather than handed out like the others
/// ([`LiveSetup::events_at_source`](crate::input::LiveSetup)): when a code
/// profile with the paper's buffer alone is among them. That report costs
/// about as much as the simulator and the value profiles together, so
/// the engine threads have work enough from the reports that take runs,
/// and the events never cross to another core, where a virtual machine's
/// cores that pass memory slowly at times make every event cost more
/// (docs/PERFORMANCE.md). With `--block-buffer` the code profile is cheap,
/// and an engine thread left with it alone would idle while the
/// simulator's thread carries the value profiles: every report is then
/// handed out to whichever thread is free.
fn events_at_source(plan: &[Planned]) -> bool {
    plan.iter()
        .any(|p| is_code_profile(p) && !has_block_buffer(p))
}

/// Whether a report's options give it a block buffer (`--block-buffer
/// BYTES` or `--block-buffer=BYTES`).
fn has_block_buffer(p: &Planned) -> bool {
    p.options.iter().any(|o| o.starts_with("--block-buffer"))
}

/// The reports a profile holds: the default set, or those of `--report`;
/// for `samples` of a native process (`input` names them), only those
/// that read samples. `--exact` is added to every report that takes it,
/// and `--block-buffer` to every code profile that has none.
fn plan(
    exact: bool,
    block_buffer: Option<usize>,
    reports: &[String],
    samples: Option<&str>,
    pcs_only: bool,
) -> anyhow::Result<Vec<Planned>> {
    let mut plan = Vec::new();
    if reports.is_empty() {
        let left_out = match samples {
            Some(_) => left_out_of_samples(pcs_only),
            None => Vec::new(),
        };
        plan.extend(defaults().filter(|p| !left_out.contains(&p.name)));
    }
    for r in reports {
        let mut words = r.split_whitespace().map(str::to_string);
        let command = words.next().unwrap_or_default();
        if !COMMANDS.contains(&command.as_str()) {
            return Err(bad_input(format!(
                "--report '{r}': a report starts with one of {}",
                COMMANDS.join(", ")
            )));
        }
        let options: Vec<String> = words.collect();
        if let (Some(input), Some(needs)) = (samples, needs_every_instruction(&command, &options)) {
            return Err(bad_input(format!(
                "--report '{r}': {input} is samples of a native process, not every \
                 instruction: {needs}"
            )));
        }
        if let (true, Some(input), Some(needs)) =
            (pcs_only, samples, needs_loads(&command, &options))
        {
            return Err(bad_input(format!(
                "--report '{r}': {input} is samples that are PCs alone (--ring-buffer): {needs}"
            )));
        }
        plan.push(Planned {
            name: r.split_whitespace().collect::<Vec<_>>().join(" "),
            command,
            options,
        });
    }
    if let Some(bytes) = block_buffer {
        if !plan.iter().any(is_code_profile) {
            return Err(bad_input(
                "--block-buffer: no report here is a code profile (ranges over pc) to give it to"
                    .to_string(),
            ));
        }
        for p in &mut plan {
            if is_code_profile(p) && !has_block_buffer(p) {
                p.options.push("--block-buffer".into());
                p.options.push(bytes.to_string());
            }
        }
    }
    if exact {
        for p in &mut plan {
            let takes = !["sample", "export"].contains(&p.command.as_str()) && !is_sweep(p);
            if takes && !p.options.iter().any(|o| o == "--exact") {
                p.options.push("--exact".into());
            }
        }
    }
    Ok(plan)
}

/// The exports `--pprof` and `--callgrind` ask for, as the `coprof
/// export` reports that write them.
fn exports(a: &Args) -> Vec<Planned> {
    let asked = [("pprof", &a.pprof), ("callgrind", &a.callgrind)];
    let mut planned = Vec::new();
    for (format, file) in asked {
        let Some(file) = file else { continue };
        let mut options = vec![
            "--format".into(),
            format.into(),
            "-o".into(),
            file.display().to_string(),
        ];
        if a.separate_threads {
            options.push("--separate-threads".into());
        }
        planned.push(Planned {
            name: format!("export --format {format}"),
            command: "export".into(),
            options,
        });
    }
    planned
}

/// Builds one report's job from the options of its command.
fn job(command: &str, argv: &[String]) -> anyhow::Result<Box<dyn Job>> {
    Ok(match command {
        "loops" => crate::cmd::loops::prepare(&parse_args(argv)?)?,
        "ranges" => crate::cmd::ranges::prepare(&parse_args(argv)?)?,
        "values" => crate::cmd::values::prepare(&parse_args(argv)?)?,
        "sample" => crate::cmd::sample::prepare(&parse_args(argv)?)?,
        "export" => crate::cmd::export::prepare(&parse_args(argv)?)?,
        other => unreachable!("no report command {other}"),
    })
}

/// A report of the profile, ready to be built: its name, the command line
/// that gives it alone, and that command's name and arguments.
#[derive(Clone)]
struct Line {
    name: String,
    line: String,
    command: String,
    argv: Vec<String>,
}

/// A report's job, with its name and command line.
struct Named {
    name: String,
    line: String,
    job: Box<dyn Job>,
}

/// What a pass gave, with what it cost (`--timing`): the pass's wall and
/// CPU time, and each report's CPU seconds, `None`s without timing.
type TimedPass<T> = (T, Option<Timing>, Vec<Option<f64>>);

/// Runs `pass` over the sinks of `jobs`, with `timing` each timed
/// ([`Timed`]). Without timing a job's sinks are its parts
/// ([`Job::sinks`]), so that the configurations of a sweep may be fed on
/// threads of their own; with it, each job is one sink, timed as a whole.
fn timed_pass<T, E>(
    jobs: &mut [Named],
    timing: bool,
    pass: impl FnOnce(Vec<SendSink<'_>>) -> Result<T, E>,
) -> Result<TimedPass<T>, E> {
    if !timing {
        let out = pass(jobs.iter_mut().flat_map(|j| j.job.sinks()).collect())?;
        return Ok((out, None, vec![None; jobs.len()]));
    }
    let mut timed: Vec<Timed<'_>> = jobs.iter_mut().map(|j| Timed::new(j.job.sink())).collect();
    let (wall, cpu) = (Instant::now(), process_cpu());
    let out = pass(timed.iter_mut().map(|t| t as SendSink<'_>).collect())?;
    let timing = Timing {
        wall_seconds: wall.elapsed().as_secs_f64(),
        cpu_seconds: process_cpu().saturating_sub(cpu).as_secs_f64(),
    };
    let costs = timed.iter().map(|t| Some(t.cpu().as_secs_f64())).collect();
    Ok((out, Some(timing), costs))
}

/// The jobs of `lines`, fresh.
fn jobs(lines: &[Line]) -> anyhow::Result<Vec<Named>> {
    lines
        .iter()
        .map(|l| {
            Ok(Named {
                name: l.name.clone(),
                line: l.line.clone(),
                job: job(&l.command, &l.argv).with_context(|| format!("the {} report", l.name))?,
            })
        })
        .collect()
}

/// Every job's report of `info`, in order, with its CPU time if
/// measured. A report the input cannot give (a method profile of a
/// program that makes no calls) is recorded as such, told to `note`;
/// the others stand.
fn sections(
    jobs: Vec<Named>,
    costs: Vec<Option<f64>>,
    info: &InputInfo,
    note: &dyn Fn(String),
) -> anyhow::Result<Vec<Section>> {
    let mut reports = Vec::new();
    for (Named { name, line, job }, cpu_seconds) in jobs.into_iter().zip(costs) {
        let Rendered { json, text } = match job.finish(info) {
            Ok(r) => r,
            Err(e) if crate::error::is_bad_input(&e) => {
                note(format!("no {name} report: {e}"));
                Rendered {
                    json: serde_json::json!({ "error": e.to_string() }),
                    text: format!("no report: {e}\n"),
                }
            }
            Err(e) => return Err(e.context(format!("the {name} report"))),
        };
        reports.push(Section {
            name,
            command: line,
            json,
            text,
            cpu_seconds,
        });
    }
    Ok(reports)
}

/// The profile of `input`, whose run told `info`, holding `reports`; a
/// profile of samples names the default reports `left_out` of it.
fn profile_of(
    input: &InputArgs,
    info: &InputInfo,
    exact: bool,
    reports: Vec<Section>,
    left_out: &[String],
) -> Profile {
    Profile {
        format: "coprof-profile".into(),
        version: PROFILE_VERSION,
        input: input.name(),
        args: input.program_text().into_iter().skip(1).collect(),
        // Another name than the file's own: not the path the program was
        // run by in its own root (`/usr/bin/lua5.4` for the sysroot's).
        argv0: input
            .argv0
            .as_ref()
            .filter(|name| {
                let base =
                    |p: &std::ffi::OsString| Path::new(p).file_name().map(|n| n.to_os_string());
                input.program.first().map(base) != Some(base(name))
            })
            .map(|name| name.to_string_lossy().into_owned()),
        isa: Some(info.meta.isa.clone()).filter(|isa| !isa.is_empty()),
        events: info.events,
        instructions: info.live.as_ref().map(|l| l.instructions),
        instructions_in_runs: info.live.as_ref().map(|l| l.in_runs),
        status: match (&info.live, &info.sampled) {
            (Some(l), _) => Some(l.exit.status()),
            (None, Some(s)) => s.status,
            (None, None) => None,
        },
        exact,
        timing: None,
        reports,
        process: None,
        sampled: (info.meta.source == "native").then(|| Sampled {
            samples: info.sampled.map(|s| s.samples),
            threads: info.sampled.map(|s| s.threads),
            cpu_ns: info.meta.cpu_ns,
            left_out: left_out.to_vec(),
            pcs_only: input.pcs_only().unwrap_or(false),
            attached: info.sampled.and_then(|s| s.attached),
        }),
        children: Vec::new(),
        notes: Vec::new(),
    }
}

pub fn run(mut a: Args) -> anyhow::Result<()> {
    if let (true, Some(file)) = (a.follow_children, &a.input.file) {
        return Err(bad_input(format!(
            "--follow-children applies to a program run after `--`, not to the trace file {}",
            file.display()
        )));
    }
    // Absolute, since the program may change directory before the
    // profile is written; `%p` is this process's PID.
    let raw_output = match a.output.take() {
        Some(o) => Some(
            std::path::absolute(&o).map_err(|e| bad_input(format!("-o {}: {e}", o.display())))?,
        ),
        None => None,
    };
    let pattern = match (&raw_output, a.follow_children) {
        (Some(o), true) => Some(crate::per_process::pattern(o)?),
        _ => None,
    };
    if let Some(o) = &raw_output {
        let o = crate::per_process::expand(o, a.input.pids().own() as u32);
        crate::output::writable_dir("-o", &o, "the profile")?;
        a.output = Some(o);
    }
    // Samples of a native process: the reports that read samples.
    let samples = a.input.holds_samples()?;
    if samples {
        // As `coprof record` takes them, unless told: one place for
        // every report, named in each report's command line.
        a.input.setup.native = Some(false);
        if a.input.file.is_none() && a.input.sample_at.is_none() && !a.input.ring_buffer {
            a.input.sample_at = Some(crate::input::SampleAt::Interrupt);
        }
    }
    // Each report's options, followed by the input, as typed after its command.
    let input = a.input.as_typed();
    let name = a.input.name();
    let pcs_only = samples && a.input.pcs_only()?;
    let mut plan = plan(
        a.exact,
        a.block_buffer,
        &a.reports,
        samples.then_some(name.as_str()),
        pcs_only,
    )?;
    if a.separate_threads && a.pprof.is_none() && a.callgrind.is_none() {
        return Err(bad_input(
            "--separate-threads keeps the threads apart in an export: give --pprof FILE or \
             --callgrind FILE with it",
        ));
    }
    plan.extend(exports(&a));
    if a.follow_children && plan.iter().any(|p| p.command == "export") {
        return Err(bad_input(
            "an export is one file of one process: with --follow-children, export a child's \
             profile with `coprof export` on its own",
        ));
    }
    let left_out = match samples && a.reports.is_empty() {
        true => left_out_of_samples(pcs_only),
        false => Vec::new(),
    };
    a.input.setup.events_at_source = events_at_source(&plan);
    let mut lines = Vec::new();
    for p in plan {
        let mut argv = p.options.clone();
        argv.extend(input.iter().cloned());
        let line = format!("coprof {} {}", p.command, shell_words(&argv));
        lines.push(Line {
            name: p.name,
            line,
            command: p.command,
            argv,
        });
    }
    let mut jobs = jobs(&lines)?;
    let started = match a.since {
        Some(ns) => std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns as u64),
        None => std::time::SystemTime::now(),
    };
    // An x86-64 program's children are sampled in this process, each
    // into reports of its own; a RISC-V program's run in simulators.
    let mut native_children = match (&pattern, samples) {
        (Some(pattern), true) => Some(native_children::NativeChildren::new(
            pattern.clone(),
            lines.clone(),
            a.exact,
            left_out.clone(),
            a.input.clone(),
        )),
        _ => None,
    };
    let follow = match pattern.filter(|_| !samples) {
        Some(pattern) => {
            let runner = children::runner(&a, &pattern, children::Follower::Child);
            if a.followed_child {
                // A followed child that replaces itself again (a script
                // whose last command is an `exec`) goes on in a follower
                // that writes this process's file in its turn.
                a.input.setup.exec = runner
                    .clone()
                    .map(|runner| coprof_rv::sim::ExecFollower { runner, pass: None });
            } else {
                // The program may go on as another RISC-V program: a
                // follower writes the same file and this summary, on
                // coprof's standard output as it is now.
                let since = started
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos());
                let own = raw_output.clone().unwrap_or_default();
                let main = children::runner(&a, &own, children::Follower::Main { since });
                // SAFETY: plain call; the duplicate lives until coprof ends.
                // With --keep-stdout the summary goes to standard error.
                let to = if a.input.keep_stdout { 2 } else { 1 };
                let out = a.report_fd.unwrap_or_else(|| unsafe { libc::dup(to) });
                a.input.setup.exec = main.map(|runner| coprof_rv::sim::ExecFollower {
                    runner,
                    pass: (out >= 0).then(|| (out, "--report-fd=".to_string())),
                });
            }
            let follow = children::Follow::new(pattern, lines, a.exact, a.timing, a.input.clone());
            a.input.setup.follow = Some((follow.clone().hook(), runner));
            Some(follow)
        }
        _ => None,
    };
    a.input.setup.child = a.followed_child;
    let (info, timing, costs) =
        timed_pass(&mut jobs, a.timing, |sinks| match &mut native_children {
            Some(children) => a
                .input
                .feed(sinks, |sink| a.input.sample_native_with(sink, children)),
            None => a.input.run_sinks(sinks),
        })?;
    let quiet = a.followed_child;
    if a.since.is_some() && !quiet {
        crate::notes::say(format!(
            "the program replaced itself with {} (execve): the profile is of that program, from \
             its start",
            a.input.name()
        ));
    }
    let note = |text: String| crate::notes::give(text, quiet);
    for l in left_out_reasons(&left_out) {
        note(format!(
            "{} holds {}: the {} reports, which need {}, are left out",
            a.input.name(),
            l.samples,
            l.names.join(" and "),
            l.need
        ));
    }
    let reports = sections(jobs, costs, &info, &note)?;
    let mut profile = Profile {
        timing,
        ..profile_of(&a.input, &info, a.exact, reports, &left_out)
    };
    if let Some(f) = &follow {
        if a.followed_child {
            profile.process = Some(children::ids(&a.input.pids()));
        } else {
            profile.children = f.found(started, a.output.as_deref());
        }
    }
    if let Some(children) = native_children {
        let each = children
            .found
            .iter()
            .filter_map(|c| Some((c.samples?, c.cpu_ns?)));
        let config = a.input.native_config()?;
        if let Some(text) = crate::progress::children_kernel_time_note(each, &config) {
            note(text);
        }
        // By PID, as a RISC-V program's are listed.
        profile.children = children.found;
        profile.children.sort_by_key(|c| c.pid);
    }
    profile.notes = crate::notes::kept();
    if a.followed_child {
        if let Some(path) = &a.output {
            if let Err(e) = save(&profile, path) {
                eprintln!("coprof: child process {}: {e:#}", std::process::id());
            }
        }
        // The symbols write back the answers they kept: the process
        // leaves with `_exit`, which runs no destructor.
        let crate::input::InputInfo { live, symbols, .. } = info;
        drop(symbols);
        // As the program ended, for its parent's wait.
        let exit = live.map_or(coprof_rv::Exit::Code(0), |l| l.exit);
        coprof_rv::sim::end_child(Ok(exit), Some(2));
    }
    if let Some(path) = &a.output {
        save(&profile, path)?;
    }
    if let Some(fd) = a.report_fd {
        // The summary goes where the replaced process's would have.
        // SAFETY: plain calls on a descriptor handed to this process.
        unsafe {
            libc::dup2(fd, 1);
            libc::close(fd);
        }
    }
    if a.json {
        print_json(&profile)
    } else {
        print!("{}", summary(&profile));
        if let Some(path) = &a.output {
            println!("profile saved to {}", path.display());
        }
        Ok(())
    }
}

impl Profile {
    /// The command profiled, as a shell would take it: the program and its
    /// arguments, or the name it ran as and its arguments with the file
    /// after them (`gzip -c (/bin/busybox)`).
    pub fn command(&self) -> String {
        let name = self.argv0.as_deref().unwrap_or(&self.input);
        let mut line = shell_words(std::slice::from_ref(&name.to_string()));
        if !self.args.is_empty() {
            line = format!("{line} {}", shell_words(&self.args));
        }
        match &self.argv0 {
            Some(_) => format!("{line} ({})", self.input),
            None => line,
        }
    }
}

/// The text of every report, each under a heading naming it and the
/// command that gives it alone.
fn summary(p: &Profile) -> String {
    let mut out = String::new();
    let what = p.command();
    match p.process {
        Some(ids) => crate::outln!(
            out,
            "coprof profile of {what} (child process {} of {})",
            ids.pid,
            ids.parent
        ),
        None => crate::outln!(out, "coprof profile of {what}"),
    }
    match (p.instructions, p.status) {
        (Some(i), Some(s)) => crate::outln!(
            out,
            "{} instructions retired, exit status {s}, {} events to the engines{}",
            crate::output::thousands(i),
            crate::output::thousands(p.events),
            match p.instructions_in_runs {
                Some(r) if r > 0 => format!(
                    " and {} instructions in runs of basic blocks",
                    crate::output::thousands(r)
                ),
                _ => String::new(),
            }
        ),
        _ => match &p.sampled {
            Some(sampled) => crate::outln!(out, "{}", sampled_line(p, sampled)),
            None => crate::outln!(out, "{} events", crate::output::thousands(p.events)),
        },
    }
    if let Some(sampled) = &p.sampled {
        for l in left_out_reasons(&sampled.left_out) {
            crate::outln!(
                out,
                "left out: the {} reports, which need {} ({})",
                l.names.join(" and "),
                l.need,
                l.hint
            );
        }
    }
    for s in &p.reports {
        crate::outln!(out);
        crate::outln!(out, "== {} ({})", s.name, s.command);
        out.push_str(&s.text);
    }
    if !p.children.is_empty() {
        crate::outln!(out);
        crate::outln!(
            out,
            "== child processes (--follow-children): {} profiled, each in a file of its own",
            p.children.len()
        );
        for c in &p.children {
            let count = match (c.instructions, c.samples) {
                (_, Some(n)) => {
                    let cpu = c
                        .cpu_ns
                        .map(|ns| format!(" ({})", crate::output::cpu_time(ns)));
                    format!(
                        "{} samples{}",
                        crate::output::thousands(n),
                        cpu.unwrap_or_default()
                    )
                }
                (i, None) => format!(
                    "{} instructions",
                    i.map_or("-".into(), crate::output::thousands)
                ),
            };
            crate::outln!(
                out,
                "  {:>7}  {count}, exit status {}  {}  {}",
                c.pid,
                c.status.map_or("-".into(), |s| s.to_string()),
                c.file.display(),
                c.command
            );
        }
    }
    if let Some(t) = &p.timing {
        crate::outln!(out);
        let input = if p.instructions.is_some() {
            "the simulator and delivery"
        } else {
            "reading the trace and delivery"
        };
        print_timing(&mut out, t, &p.reports, input);
    }
    out
}

/// The header's line for a profile of samples of a native process: the
/// samples, threads and exit status of a live run, or the trace's events.
fn sampled_line(p: &Profile, sampled: &Sampled) -> String {
    let samples = sampled.samples.unwrap_or(p.events);
    let mut line = format!("{} samples", crate::output::thousands(samples));
    if let Some(t) = sampled.threads {
        line += &format!(" of {t} thread{}", if t == 1 { "" } else { "s" });
    }
    if let Some(cpu) = sampled.cpu_ns {
        line += &format!(" ({})", crate::output::cpu_time(cpu));
    }
    match (sampled.attached, p.status) {
        (Some(pid), None) => line += &format!(" of process {pid}, attached and let go"),
        (Some(pid), Some(s)) => line += &format!(" of process {pid}, attached; exit status {s}"),
        (None, Some(s)) => line += &format!(", exit status {s}"),
        (None, None) => {}
    }
    line + &format!(
        ", sampled natively: {} events to the engines",
        crate::output::thousands(p.events)
    )
}

/// What the pass cost (`--timing`): each report's engines, and the rest
/// of the process, `input` (simulating or reading the input, batching,
/// passing batches between threads).
fn print_timing(out: &mut String, t: &Timing, reports: &[Section], input: &str) {
    crate::outln!(
        out,
        "== time: {:.2} s wall, {:.2} s of CPU in all",
        t.wall_seconds,
        t.cpu_seconds
    );
    let share = |s: f64| {
        if t.cpu_seconds > 0.0 {
            crate::output::pct(s / t.cpu_seconds)
        } else {
            "-".into()
        }
    };
    let width = reports
        .iter()
        .map(|s| s.name.len())
        .chain([input.len()])
        .max()
        .unwrap_or(0);
    crate::outln!(
        out,
        "{:<width$}  {:>8}  {:>7}",
        "CPU time of",
        "seconds",
        "share"
    );
    let mut engines = 0.0;
    for s in reports {
        let cpu = s.cpu_seconds.unwrap_or(0.0);
        engines += cpu;
        crate::outln!(out, "{:<width$}  {:>8.2}  {:>7}", s.name, cpu, share(cpu));
    }
    let rest = (t.cpu_seconds - engines).max(0.0);
    crate::outln!(out, "{:<width$}  {:>8.2}  {:>7}", input, rest, share(rest));
}

/// Writes `profile` to `path` ([`crate::output::put_file`]).
fn save(profile: &Profile, path: &Path) -> anyhow::Result<()> {
    crate::output::put_file(path, |out| {
        serde_json::to_writer_pretty(&mut *out, profile)?;
        out.write_all(b"\n")
    })
}

/// Reads a profile file, with errors that name it.
pub fn load(path: &Path) -> anyhow::Result<Profile> {
    // A trace or a program given here is said to be one, with how to make
    // a profile of it, before the whole file is read.
    if let Some(hint) = crate::file_kind::not_a_profile(path) {
        return Err(bad_input(format!(
            "{}: not a coprof profile: {hint}",
            path.display()
        )));
    }
    let text = std::fs::read(path)
        .map_err(|e| bad_input(format!("cannot read profile {}: {e}", path.display())))?;
    let value: serde_json::Value = serde_json::from_slice(&text).map_err(|e| {
        bad_input(format!(
            "{}: not a coprof profile: invalid JSON at line {}, column {}: {e}",
            path.display(),
            e.line(),
            e.column()
        ))
    })?;
    if value.get("format").and_then(|f| f.as_str()) != Some("coprof-profile") {
        return Err(bad_input(format!(
            "{}: not a coprof profile (no \"format\": \"coprof-profile\"); make one with `coprof profile -o`",
            path.display()
        )));
    }
    let version = value.get("version").and_then(|v| v.as_u64());
    if version != Some(PROFILE_VERSION as u64) {
        return Err(bad_input(format!(
            "{}: profile version {} is not supported (this coprof reads version {PROFILE_VERSION})",
            path.display(),
            version.map_or("missing".to_string(), |v| v.to_string())
        )));
    }
    serde_json::from_value(value)
        .map_err(|e| bad_input(format!("{}: malformed profile: {e}", path.display())))
}

/// Print a saved profile again (`coprof profile -o`), without re-running:
/// its reports, and on standard error the notes its run gave.
#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  coprof report crc32.profile.json
  coprof report crc32.profile.json --only loops,values
  coprof report crc32.profile.json --only loops --json")]
pub struct ReportArgs {
    /// The profile file written by `coprof profile -o`.
    #[arg(value_name = "PROFILE.json")]
    file: PathBuf,
    /// Print only these reports (comma-separated: loops, ranges-pc,
    /// ranges-load-value, values, sample).
    #[arg(long, value_delimiter = ',')]
    only: Option<Vec<String>>,
    /// Print as JSON (the whole profile, or the reports chosen by --only).
    #[arg(long)]
    json: bool,
}

pub fn report(a: ReportArgs) -> anyhow::Result<()> {
    let mut p = load(&a.file)?;
    if let Some(only) = &a.only {
        for name in only {
            if !p.reports.iter().any(|s| &s.name == name) {
                let known: Vec<&str> = p.reports.iter().map(|s| s.name.as_str()).collect();
                return Err(bad_input(format!(
                    "--only {name}: {} has no such report (it has {})",
                    a.file.display(),
                    known.join(", ")
                )));
            }
        }
        p.reports.retain(|s| only.contains(&s.name));
    }
    if a.json {
        return print_json(&p);
    }
    p.notes.iter().for_each(|note| crate::notes::print(note));
    print!("{}", summary(&p));
    Ok(())
}

/// Arguments joined for a command line, quoted where a shell would need it.
fn shell_words(args: &[String]) -> String {
    args.iter()
        .map(|s| {
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c))
            {
                s.clone()
            } else {
                format!("'{}'", s.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_of_samples_plans_the_reports_that_read_them() {
        let names = |p: Vec<Planned>| p.into_iter().map(|p| p.name).collect::<Vec<_>>();
        let samples = Some("t.cpt");
        assert_eq!(
            names(plan(false, None, &[], samples, false).unwrap()),
            ["ranges-pc", "ranges-load-value", "values"]
        );
        assert_eq!(names(plan(false, None, &[], None, false).unwrap()).len(), 5);
        assert_eq!(left_out_of_samples(false), ["loops", "sample"]);
        let one = |r: &str, samples| plan(false, None, &[r.to_string()], samples, false);
        assert!(one("ranges --dims pc,load-addr", samples).is_ok());
        assert!(one("values --algo hotlist", samples).is_ok());
        for needs in [
            "loops",
            "sample -s brr:9 --eval",
            "ranges --dims pc,narrow-pc",
        ] {
            let e = one(needs, samples).err().expect(needs).to_string();
            assert!(e.contains("is samples of a native process"), "{e}");
            assert!(one(needs, None).is_ok(), "{needs}");
        }
        assert!(one("ranges --stream=narrow-pc", samples).is_err());
    }

    #[test]
    fn a_profile_of_pcs_alone_plans_the_code_profile_only() {
        let names = |p: Vec<Planned>| p.into_iter().map(|p| p.name).collect::<Vec<_>>();
        let samples = Some("t.cpt");
        assert_eq!(
            names(plan(false, None, &[], samples, true).unwrap()),
            ["ranges-pc"]
        );
        let left_out = left_out_of_samples(true);
        assert_eq!(left_out, ["loops", "ranges-load-value", "values", "sample"]);
        let why = left_out_reasons(&left_out);
        assert_eq!(why.len(), 2);
        assert_eq!(why[0].names, ["loops", "sample"]);
        assert_eq!(why[1].names, ["ranges-load-value", "values"]);
        let one = |r: &str| plan(false, None, &[r.to_string()], samples, true);
        for reads_pcs in [
            "ranges",
            "ranges --stream pc --epsilon 0.1",
            "ranges --dims=pc",
        ] {
            assert!(one(reads_pcs).is_ok(), "{reads_pcs}");
        }
        for needs in [
            "values --algo hotlist",
            "ranges --stream load-value",
            "ranges --stream=load-addr",
            "ranges --dims pc,load-value",
        ] {
            let e = one(needs).err().expect(needs).to_string();
            assert!(e.contains("PCs alone"), "{e}");
            assert!(
                plan(false, None, &[needs.to_string()], samples, false).is_ok(),
                "{needs}"
            );
        }
    }

    #[test]
    fn events_stay_on_the_simulators_thread_beside_a_code_profile_of_the_papers_buffer() {
        let planned = |reports: &[&str], block_buffer| {
            let reports: Vec<String> = reports.iter().map(|r| r.to_string()).collect();
            events_at_source(&plan(false, block_buffer, &reports, None, false).unwrap())
        };
        // The default set holds `ranges --stream pc`.
        assert!(planned(&[], None));
        assert!(!planned(&[], Some(16384)));
        assert!(planned(&["values", "ranges --stream=pc"], None));
        assert!(!planned(
            &["values", "ranges --stream pc --block-buffer 4096"],
            None
        ));
        assert!(!planned(
            &["values", "ranges --stream load-value", "loops"],
            None
        ));
        assert!(!planned(&["ranges --dims pc,load-addr", "values"], None));
    }
}
