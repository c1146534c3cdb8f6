//! Printing a report as text or JSON.

use crate::stop_signals::UnreadPipe;
use anyhow::Context;
use clap::builder::TypedValueParser;
use coprof_core::trace::{TraceMeta, TraceWriter};
use coprof_core::ClassSet;
use serde::Serialize;
use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

/// The value parser of an option that names a file to write (a profile,
/// a tree dump): `-` is refused by name, since it would make a file
/// called `-` where a user of gzip or tar means standard output, which
/// these files cannot be (standard output carries the report; a trace
/// can go there, see [`trace_file`]).
pub fn output_file() -> impl TypedValueParser<Value = PathBuf> {
    clap::builder::OsStringValueParser::new().try_map(|s| {
        if s == "-" {
            Err(
                "give a file name: this output is a file, not standard output \
                 (--json prints a report there)",
            )
        } else {
            Ok(PathBuf::from(s))
        }
    })
}

/// The value parser of an option that names a trace to write: a file, or
/// `-` for standard output, where the trace streams
/// ([`trace_writer`]).
pub fn trace_file() -> impl TypedValueParser<Value = PathBuf> {
    clap::builder::PathBufValueParser::new()
}

/// Whether a trace's destination is standard output: `-`.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// Starts a trace at `path`, or streamed on standard output when it is
/// `-`: a command that writes one there writes its own summary on
/// standard error.
pub fn trace_writer(
    path: &Path,
    meta: TraceMeta,
    classes: ClassSet,
) -> anyhow::Result<TraceWriter> {
    if !is_stdout(path) {
        return Ok(TraceWriter::create(path, meta, classes)?);
    }
    refuse_terminal(path)?;
    let fd = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .context("standard output: cannot be written")?;
    Ok(TraceWriter::to_stream(
        std::fs::File::from(fd),
        Path::new("standard output"),
        meta,
        classes,
    )?)
}

/// Ends coprof by SIGPIPE as soon as the reader of the pipe a trace at
/// `path` streams into has gone, as a writer in a pipeline ends (`coprof
/// run --trace - -- prog | head -c 100`), rather than running the
/// program on to its end to write nothing more: for a program in the
/// simulator, which ends with coprof's process, and a trace read. Until
/// the value returned is dropped.
pub fn end_with_reader(path: &Path) -> anyhow::Result<Option<UnreadPipe>> {
    let Some(pipe) = trace_pipe(path) else {
        return Ok(None);
    };
    UnreadPipe::watch(pipe, || crate::error::end_by_sigpipe())
        .context("cannot watch the trace's pipe")
}

/// The pipe a trace at `path` streams into, opened again, so that its
/// reader's end can be watched for while the trace is written
/// ([`UnreadPipe`]): standard output's for `-`, a named pipe's; none for
/// a file.
pub fn trace_pipe(path: &Path) -> Option<std::os::fd::OwnedFd> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    if is_stdout(path) {
        return std::io::stdout().as_fd().try_clone_to_owned().ok();
    }
    let fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
    fifo.then(|| {
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .ok()
            .map(std::os::fd::OwnedFd::from)
    })
    .flatten()
}

/// Refuses a trace for standard output (`path` is `-`) when that is a
/// terminal, as gzip refuses compressed data: a binary stream is no use
/// on a screen.
pub fn refuse_terminal(path: &Path) -> anyhow::Result<()> {
    if is_stdout(path) && std::io::stdout().is_terminal() {
        return Err(crate::error::bad_input(
            "standard output is a terminal: a trace is binary; send it to a file \
             (`> run.cpt`) or to a reader (`| coprof loops -`)",
        ));
    }
    Ok(())
}

/// How a summary names the trace's destination `path`.
pub fn trace_name(path: &Path) -> String {
    if is_stdout(path) {
        "standard output".into()
    } else {
        path.display().to_string()
    }
}

/// Prints the summary `text` of a command that wrote a trace to `path`:
/// on standard output, or on standard error when the trace went there.
pub fn print_summary(path: &Path, text: &str) {
    if is_stdout(path) {
        eprintln!("{text}");
    } else {
        println!("{text}");
    }
}

/// Prints `value` as pretty JSON on stdout.
pub fn print_json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let s = serde_json::to_string_pretty(value)?;
    println!("{s}");
    Ok(())
}

/// Appends a formatted line to a report's text (a `String`).
#[macro_export]
macro_rules! outln {
    ($out:expr) => {
        $out.push('\n')
    };
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = writeln!($out, $($arg)*);
    }};
}

/// Appends formatted text, without a newline, to a report's text.
#[macro_export]
macro_rules! out {
    ($out:expr, $($arg:tt)*) => {{
        use std::fmt::Write as _;
        let _ = write!($out, $($arg)*);
    }};
}

/// The heading of the front of a sweep whose cost is a size.
pub const FRONT_OF_SIZES: &str =
    "the front, where no other configuration is both as small and as accurate, smallest first:";

/// A sweep's front ([`coprof_engines::grid::pareto_front`]) in words:
/// `heading`, then `line` of each configuration on it, in its order.
pub fn print_front(
    out: &mut String,
    heading: &str,
    front: &[usize],
    line: impl Fn(usize) -> String,
) {
    crate::outln!(out, "{heading}");
    for &i in front {
        crate::outln!(out, "{}", line(i));
    }
}

/// Formats a count with thousands separators, for tables.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Nanoseconds as seconds, for `--json` reports, which give times in
/// seconds.
pub fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The CPU time a run's threads ran while sampled, as the summaries and
/// headers say it beside their samples: `0.205 s of CPU`.
pub fn cpu_time(ns: u64) -> String {
    format!("{:.3} s of CPU", seconds(ns))
}

/// `n` and `noun`, with an "s" unless `n` is 1: "1 configuration",
/// "36 configurations".
pub fn count(n: usize, noun: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {noun}{s}", thousands(n as u64))
}

/// Formats a share in [0, 1] as a percentage with two decimals.
/// An unknown share (NaN) prints as `-`.
pub fn pct(share: f64) -> String {
    if share.is_nan() {
        return "-".into();
    }
    format!("{:.2}%", share * 100.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_separates() {
        assert_eq!(super::thousands(0), "0");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1000), "1,000");
        assert_eq!(super::thousands(1234567), "1,234,567");
    }

    #[test]
    fn cpu_time_is_said_to_the_millisecond() {
        assert_eq!(super::cpu_time(205_000_000), "0.205 s of CPU");
        assert_eq!(super::cpu_time(1_999_600_000), "2.000 s of CPU");
        assert_eq!(super::cpu_time(0), "0.000 s of CPU");
        assert_eq!(super::seconds(1_500_000_000), 1.5);
    }

    #[test]
    fn count_says_one_or_many() {
        assert_eq!(super::count(1, "configuration"), "1 configuration");
        assert_eq!(super::count(0, "configuration"), "0 configurations");
        assert_eq!(super::count(1200, "load"), "1,200 loads");
    }
}

/// Checks before a long pass that the directory of `path`, which
/// `option` names, exists, so that `what` can be written there after it.
pub fn writable_dir(option: &str, path: &Path, what: &str) -> anyhow::Result<()> {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() && !d.is_dir() => {
            Err(crate::error::bad_input(format!(
                "{option} {}: no directory {} to write {what} in",
                path.display(),
                d.display()
            )))
        }
        _ => Ok(()),
    }
}

/// Writes a file at `path` with `write`, through a temporary file put in
/// place when complete ([`coprof_core::put`]), buffered: an interrupted
/// or failed write leaves the old file or none, and a device or pipe
/// stays one.
pub fn put_file(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    use std::io::Write;
    let fail = |e: std::io::Error| {
        crate::error::bad_input(format!("cannot write {}: {e}", path.display()))
    };
    let mut tmp = coprof_core::put::temp_for(path, ".coprof-", ".tmp").map_err(fail)?;
    let mut out = std::io::BufWriter::new(tmp.as_file_mut());
    write(&mut out).map_err(fail)?;
    out.flush().map_err(fail)?;
    drop(out);
    coprof_core::put::put(tmp, path).map_err(fail)?;
    Ok(())
}

/// `--svg FILE`, the option of every design-space sweep that draws it.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SvgArgs {
    /// With --sweep: draw every configuration by its cost and its error,
    /// the front of those no other beats joined and listed, as an SVG
    /// picture in this file.
    #[arg(long, value_name = "FILE.svg", requires = "sweep", value_parser = output_file())]
    pub svg: Option<PathBuf>,
}

impl SvgArgs {
    /// Checks before the pass that the picture can be written after it.
    pub fn check(&self) -> anyhow::Result<()> {
        match &self.svg {
            Some(path) => writable_dir("--svg", path, "the picture"),
            None => Ok(()),
        }
    }

    /// Draws the sweep `plot` gives into the `--svg` file, if one was
    /// given, and says where in the report's `text` and `json`.
    pub fn draw(
        &self,
        plot: impl FnOnce() -> coprof_report::SweepPlot,
        text: &mut String,
        json: &mut serde_json::Value,
    ) -> anyhow::Result<()> {
        let Some(path) = &self.svg else {
            return Ok(());
        };
        let svg = coprof_report::sweep_plot::svg(&plot())
            .map_err(|e| crate::error::bad_input(format!("--svg {}: {e}", path.display())))?;
        put_file(path, |out| out.write_all(svg.as_bytes()))?;
        crate::outln!(text, "drawn in {}", path.display());
        json["svg"] = serde_json::json!(path);
        Ok(())
    }
}
