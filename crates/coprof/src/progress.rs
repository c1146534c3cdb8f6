//! Progress on a terminal for long runs; silence when stderr is piped.

use crate::stop_signals::{ask_to_stop, StopSignals, UnreadPipe};
use coprof_core::{Blocks, ClassSet, Event, Run, Sink};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::io::IsTerminal;

/// A progress bar, or nothing when stderr is not a terminal.
pub fn bar(total: u64, unit: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = if total > 0 {
        ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
    };
    let template = if total > 0 {
        format!("{{bar:40}} {{human_pos}}/{{human_len}} {unit} ({{rate}}, eta {{eta}})")
    } else {
        format!("{{spinner}} {{human_pos}} {unit} ({{rate}})")
    };
    let style = ProgressStyle::with_template(&template)
        .expect("valid template")
        .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{}", per_second(s.per_sec()));
        });
    pb.set_style(style);
    Some(pb)
}

/// A rate for the progress line, in millions per second with one decimal
/// ("11.5 M/s"), or thousands below a million.
fn per_second(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.1} M/s", rate / 1e6)
    } else {
        format!("{:.1} k/s", rate / 1e3)
    }
}

/// Progress of a program run in the simulator: instructions retired and
/// the simulation speed in MIPS, on a terminal only.
pub struct LiveProgress {
    bar: Option<ProgressBar>,
    start: std::time::Instant,
}

impl LiveProgress {
    /// Instructions between two updates: a few per second at the
    /// simulator's speed.
    pub const EVERY: u64 = 1 << 24;

    /// Samples between two updates of a natively sampled run: several a
    /// second at the default period.
    pub const SAMPLES_EVERY: u64 = 1024;

    /// A spinner for `program`, or nothing when stderr is not a terminal.
    pub fn new(program: &str) -> LiveProgress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            pb.set_style(
                ProgressStyle::with_template("{spinner} {prefix}: {msg} ({elapsed})")
                    .expect("valid template"),
            );
            pb.set_prefix(program.to_string());
            pb
        });
        LiveProgress {
            bar,
            start: std::time::Instant::now(),
        }
    }

    /// No spinner: for a run that must not write on the terminal (a
    /// followed child's, whose standard error is its program's).
    pub fn hidden() -> LiveProgress {
        LiveProgress {
            bar: None,
            start: std::time::Instant::now(),
        }
    }

    /// Shows `instructions` retired so far.
    pub fn update(&self, instructions: u64) {
        if let Some(b) = &self.bar {
            let secs = self.start.elapsed().as_secs_f64().max(1e-9);
            b.set_message(format!(
                "{} instructions retired, {:.0} MIPS",
                crate::output::thousands(instructions),
                instructions as f64 / secs / 1e6
            ));
            b.tick();
        }
    }

    /// A spinner for `program` sampled natively, or nothing when stderr
    /// is not a terminal. It turns by itself, since a program that sleeps
    /// or waits takes no samples to show.
    pub fn sampling(program: &std::path::Path) -> LiveProgress {
        let progress = LiveProgress::new(&program.display().to_string());
        if let Some(b) = &progress.bar {
            b.enable_steady_tick(std::time::Duration::from_millis(200));
        }
        progress.sampled(&coprof_native::Run::starting(program));
        progress
    }

    /// Shows a natively sampled run so far: its samples and threads.
    pub fn sampled(&self, run: &coprof_native::Run) {
        if let Some(b) = &self.bar {
            b.set_message(format!(
                "{} samples of {} thread{}",
                crate::output::thousands(run.samples),
                run.threads,
                if run.threads == 1 { "" } else { "s" }
            ));
        }
    }

    /// Clears the spinner.
    pub fn done(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

/// What a native run samples.
pub enum NativeTarget<'a> {
    /// The program it starts, with these arguments (`argv[0]` first).
    Start(&'a [std::ffi::OsString]),
    /// The running process `pid`, until it ends, Ctrl-C (SIGTERM, SIGHUP)
    /// or `duration` has passed.
    Attach {
        pid: i32,
        duration: Option<std::time::Duration>,
    },
}

/// Samples the native program `prog`, started or attached to as `target`
/// says, into `sink` as `config` says, its child processes into
/// `children` if given, with a spinner on a terminal; says so if a signal
/// killed it.
///
/// `trace_pipe` is the pipe a trace of the samples streams into, if any
/// (`coprof record -o - | reader`). When its reader goes, a process
/// attached to is let go, as at Ctrl-C, and coprof ends by SIGPIPE once
/// the trace is committed; a program started here ends with coprof, by
/// SIGPIPE, at once ([`UnreadPipe`]).
pub fn sample_native(
    prog: &std::path::Path,
    target: NativeTarget,
    config: &coprof_native::Config,
    sink: &mut dyn Sink,
    children: Option<&mut dyn coprof_native::Children>,
    trace_pipe: Option<std::os::fd::OwnedFd>,
) -> Result<coprof_native::Run, coprof_native::NativeError> {
    let progress = LiveProgress::sampling(prog);
    let mut show = |run: &coprof_native::Run| progress.sampled(run);
    let hooks = coprof_native::Hooks {
        progress: Some((LiveProgress::SAMPLES_EVERY, &mut show)),
        children: children.map(|c| c as &mut dyn coprof_native::Children),
    };
    let attached = matches!(target, NativeTarget::Attach { .. });
    let run = match target {
        NativeTarget::Start(args) => {
            let watch = trace_pipe.map(|p| UnreadPipe::watch(p, || crate::error::end_by_sigpipe()));
            match watch.transpose() {
                Ok(_watch) => coprof_native::sample_with(prog, args, config, sink, hooks),
                Err(source) => Err(coprof_native::NativeError::Start {
                    program: prog.to_path_buf(),
                    source,
                }),
            }
        }
        NativeTarget::Attach { pid, duration } => {
            // Until the sampling ends: the signals that stop it let the
            // process go rather than end coprof, and so does the end of
            // its trace's reader.
            let watched = StopSignals::install(duration).and_then(|stop| {
                let watch = trace_pipe.map(|p| UnreadPipe::watch(p, ask_to_stop));
                Ok((stop, watch.transpose()?))
            });
            match watched {
                Ok((stop, _watch)) => {
                    coprof_native::attach_with(pid, config, sink, hooks, stop.flag())
                }
                Err(source) => Err(coprof_native::NativeError::Attach { pid, source }),
            }
        }
    };
    progress.done();
    if let Ok(run) = &run {
        match run.exit {
            // SIGPIPE, a pipeline's writer's usual end, goes
            // unannounced, as shells leave it (and as the simulator does).
            coprof_native::Exit::Killed(libc::SIGPIPE) => {}
            coprof_native::Exit::Killed(sig) => {
                eprintln!(
                    "coprof: {} was killed by {} (signal {sig})",
                    prog.display(),
                    coprof_rv::signal::name(sig)
                )
            }
            coprof_native::Exit::Detached => {
                eprintln!("coprof: let go of process {}: it runs on", run.pid)
            }
            coprof_native::Exit::Exited(s) if attached => eprintln!(
                "coprof: process {} exited with status {s} while sampled",
                run.pid
            ),
            coprof_native::Exit::Exited(_) => {}
        }
    }
    run
}

/// The note for a native run that did not follow its children, when
/// the child processes it waited for used CPU time: that time is not in
/// its samples.
pub fn unfollowed_children_note(run: &coprof_native::Run) -> Option<String> {
    (run.children_cpu_ns > 0).then(|| {
        format!(
            "{}'s child processes used {:.2} s of CPU time, not sampled: `coprof record` \
             and `coprof profile` sample them with --follow-children",
            run.program.display(),
            crate::output::seconds(run.children_cpu_ns)
        )
    })
}

/// Fewer samples than this say too little of a run's CPU time for
/// [`kernel_time_note`]: a run that short is mostly its start and end.
const KERNEL_NOTE_SAMPLES: u64 = 100;

/// The share of its CPU time a run's samples stand for below which
/// [`kernel_time_note`] speaks: under it, most of the time was the
/// kernel's.
const KERNEL_NOTE_SHARE: f64 = 0.5;

/// The note for a native run whose samples stand for less than half of
/// the CPU time its threads ran while sampled. A thread's clock counts
/// its time in the kernel too but takes its samples in the program's
/// code alone, so the rest was the kernel's: the program's system calls
/// and page faults, and what each sample costs the thread there, its
/// interrupt and, without `--ring-buffer`, its stop (about 100 µs on the
/// machine of docs/PERFORMANCE.md, against 12 to 20 µs with ring
/// buffers, so that at the default period most of a program's CPU time
/// under the sampler was the sampler's). A user who finds the program
/// slower under the sampler learns why, and what costs less.
pub fn kernel_time_note(
    run: &coprof_native::Run,
    config: &coprof_native::Config,
) -> Option<String> {
    let whose = ("its threads", "the program's");
    kernel_time_note_of(run.samples, run.cpu_ns, config, whose)
}

/// [`kernel_time_note`] for the followed children of a run, together:
/// one note for all of them, not one each, as a build's hundreds of
/// children would have it.
pub fn children_kernel_time_note(
    children: impl IntoIterator<Item = (u64, u64)>,
    config: &coprof_native::Config,
) -> Option<String> {
    let (samples, cpu_ns) = children
        .into_iter()
        .fold((0, 0), |(s, c), (samples, cpu_ns)| {
            (s + samples, c + cpu_ns)
        });
    let whose = ("the child processes' threads", "their");
    kernel_time_note_of(samples, cpu_ns, config, whose)
}

/// The note of [`kernel_time_note`] for `samples` taken in `cpu_ns` of
/// CPU time, `whose.0` the threads that ran it, and `whose.1` the
/// owner of the system calls.
fn kernel_time_note_of(
    samples: u64,
    cpu_ns: u64,
    config: &coprof_native::Config,
    whose: (&str, &str),
) -> Option<String> {
    let (threads, calls) = whose;
    if samples < KERNEL_NOTE_SAMPLES || cpu_ns == 0 {
        return None;
    }
    let sampled_ns = samples.saturating_mul(config.period_ns);
    let share = sampled_ns as f64 / cpu_ns as f64;
    if share >= KERNEL_NOTE_SHARE {
        return None;
    }
    let (cost, cheaper) = if config.ring_buffer {
        ("interrupt", "a longer --period-us takes fewer")
    } else {
        (
            "interrupt and stop",
            "--ring-buffer takes samples without a stop, and a longer --period-us fewer",
        )
    };
    Some(format!(
        "the samples stand for {:.3} s ({}) of the {} {threads} ran while sampled; the rest \
         was in the kernel, where the clock takes no sample: {calls} system calls and page \
         faults, and each sample's {cost} ({cheaper})",
        crate::output::seconds(sampled_ns),
        crate::output::pct(share),
        crate::output::cpu_time(cpu_ns)
    ))
}

/// The note for a run sampled into ring buffers (`--ring-buffer`, as
/// `config` says) that did not go as asked: the kernel dropped samples
/// or throttled a clock, threads were sampled with stops for want of
/// locked memory, or a hundredth or more of the stacks stopped at the end
/// of the copy of their top the kernel makes.
pub fn ring_buffer_note(
    run: &coprof_native::Run,
    config: &coprof_native::Config,
) -> Option<String> {
    if !config.ring_buffer {
        return None;
    }
    let n = crate::output::thousands;
    let mut what = Vec::new();
    if run.cut_stacks > 0 && run.cut_stacks * 100 >= run.stacks {
        what.push(format!(
            "{} of {} stacks stopped at the end of the {} bytes of their top the kernel \
             copies at a sample, deeper than that (--stack-copy takes more)",
            n(run.cut_stacks),
            n(run.stacks),
            n(config.stack_copy as u64)
        ));
    }
    let short = run.stacks - run.whole_stacks;
    if config.frame_pointers && short > 0 && short * 100 >= run.stacks {
        what.push(format!(
            "{} of {} stacks stopped short of their thread's first frame: the kernel's walk of \
             the frame pointers ends in code that keeps none, such as most distributions' C \
             libraries (which call main) and code built without -fno-omit-frame-pointer \
             (--call-graph dwarf unwinds such code from its CFI)",
            n(short),
            n(run.stacks)
        ));
    }
    if run.lost > 0 {
        what.push(format!(
            "the kernel dropped {} samples whose ring buffer was full",
            n(run.lost)
        ));
    }
    if run.throttled > 0 {
        what.push(format!(
            "the kernel throttled a clock {} times for interrupting more often than \
             /proc/sys/kernel/perf_event_max_sample_rate allows (a longer --period-us avoids it)",
            n(run.throttled)
        ));
    }
    if run.stopped_threads > 0 {
        what.push(format!(
            "{} of {} threads were sampled with a stop at each sample, at its cost: no ring \
             buffer could be mapped for them (locked \
             memory: raise `ulimit -l` or /proc/sys/kernel/perf_event_mlock_kb)",
            n(run.stopped_threads),
            n(run.threads)
        ));
    }
    (!what.is_empty()).then(|| what.join("; "))
}

/// A sink that passes everything to another and advances a progress bar.
pub struct ProgressSink<'a> {
    inner: &'a mut dyn Sink,
    bar: Option<ProgressBar>,
    pending: u64,
}

impl<'a> ProgressSink<'a> {
    /// Wraps `inner`; `total` is the expected event count (0 if unknown).
    pub fn new(inner: &'a mut dyn Sink, total: u64, unit: &str) -> ProgressSink<'a> {
        ProgressSink {
            inner,
            bar: bar(total, unit),
            pending: 0,
        }
    }

    /// Clears the bar.
    pub fn done(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }

    /// Moves the bar on by `n`, updating it once per 65,536 at most.
    fn advance(&mut self, n: u64) {
        if let Some(b) = &self.bar {
            self.pending += n;
            if self.pending >= 1 << 16 {
                b.inc(self.pending);
                self.pending = 0;
            }
        }
    }
}

impl Sink for ProgressSink<'_> {
    fn wants(&self) -> ClassSet {
        self.inner.wants()
    }
    fn observe(&mut self, batch: &[Event]) {
        self.inner.observe(batch);
        self.advance(batch.len() as u64);
    }
    fn finish(&mut self) {
        self.inner.finish();
    }
    fn batch_len(&self) -> Option<usize> {
        self.inner.batch_len()
    }
    fn observe_owned(&mut self, batch: &mut Vec<Event>) {
        self.advance(batch.len() as u64);
        self.inner.observe_owned(batch);
    }
    fn wants_with_runs(&self) -> Option<ClassSet> {
        self.inner.wants_with_runs()
    }
    fn runs_follow(&mut self) {
        self.inner.runs_follow();
    }
    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        self.inner.observe_runs(runs, blocks);
        self.advance(coprof_core::runs::instructions(runs));
    }
    fn observe_runs_owned(&mut self, runs: &mut Vec<Run>, blocks: &Blocks) {
        self.advance(coprof_core::runs::instructions(runs));
        self.inner.observe_runs_owned(runs, blocks);
    }
    fn wants_thread_switches(&self) -> bool {
        self.inner.wants_thread_switches()
    }
    fn thread_switch(&mut self, tid: u64) {
        self.inner.thread_switch(tid);
    }
    fn wants_stacks(&self) -> bool {
        self.inner.wants_stacks()
    }
    fn stack(&mut self, calls: &[coprof_core::OpenCall]) {
        self.inner.stack(calls);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_read_in_millions_or_thousands() {
        assert_eq!(per_second(11_523_623.840_9), "11.5 M/s");
        assert_eq!(per_second(1_000_000.0), "1.0 M/s");
        assert_eq!(per_second(52_340.0), "52.3 k/s");
        assert_eq!(per_second(0.0), "0.0 k/s");
    }
}
