//! `coprof profile --follow-children`: a profile for every child process
//! of the program, as `valgrind --trace-children=yes` gives a log per
//! process.
//!
//! The simulator runs a child the program forks in a host process of its
//! own ([`coprof_rv::Simulator::follow_children`]). There the child's copy
//! of the simulator goes on with fresh engines, the same reports as the
//! parent's, from the fork to the child's end, and writes them to the
//! child's profile file. A child that `execve`s a RISC-V program runs it in
//! `coprof profile --followed-child`, which profiles the new program into
//! the same file (the instructions between the fork and the exec are not
//! in it: a process's profile is of the program it ran last). The files
//! are named by the parent's `-o` with `%p` replaced by the child's PID,
//! or with `.PID` put before its extension; the parent's profile lists
//! those it finds when it ends.

use super::{jobs, profile_of, save, sections, timed_pass, Args, ChildProfile, Line, ProcessIds};
use crate::input::InputArgs;
use crate::per_process::{expand, PID};
use coprof_core::Discard;
use coprof_rv::pids::Pids;
use coprof_rv::sim::ChildRun;
use coprof_rv::{Exit, SimError, Simulator};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::SystemTime;

/// How much older than the run a child's profile file may look and still
/// be counted as the run's: file times are coarser than the clock.
const MTIME_MARGIN: std::time::Duration = std::time::Duration::from_secs(2);

/// This process's PID and its parent's, as the program sees them
/// (`pids`, from `--pid`).
pub(super) fn ids(pids: &Pids) -> ProcessIds {
    ProcessIds {
        pid: pids.own() as u32,
        // SAFETY: plain call.
        parent: pids.seen(unsafe { libc::getppid() } as i64) as u32,
    }
}

/// Which process a follower command is for.
pub(super) enum Follower {
    /// A followed child: quiet, writing to the children's file pattern.
    Child,
    /// The process coprof started, going on as another program: writing
    /// to the same `-o` and listing the children profiled since the run
    /// began (`since`, nanoseconds of the Unix epoch), its summary on the
    /// descriptor the simulator hands it.
    Main { since: u128 },
}

/// The command a followed process runs a RISC-V program it `execve`s with
/// (the simulator adds `--argv0=NAME -- PROGRAM ARGS…`): `coprof profile`
/// with the parent's reports and run options, following in turn, writing
/// to `output` (the children's pattern, or the parent's own `-o`), as
/// `who` says. `None` when coprof's own path is unknown: such an `execve`
/// then stops with a message.
pub(super) fn runner(a: &Args, output: &Path, who: Follower) -> Option<Vec<OsString>> {
    let mut cmd: Vec<OsString> = vec![std::env::current_exe().ok()?.into(), "profile".into()];
    let input = &a.input;
    // Absolute: the process may have changed directory.
    cmd.extend(input.shape().options(true)?);
    let mut words: Vec<String> = Vec::new();
    if let Some(t) = input.threads {
        words.extend(["--threads".into(), t.to_string()]);
    }
    if input.no_symbols {
        words.push("--no-symbols".into());
    }
    if input.no_symbol_cache {
        words.push("--no-symbol-cache".into());
    }
    if a.exact {
        words.push("--exact".into());
    }
    if a.timing {
        words.push("--timing".into());
    }
    for r in &a.reports {
        words.extend(["--report".into(), r.clone()]);
    }
    if let Some(b) = a.block_buffer {
        words.extend(["--block-buffer".into(), b.to_string()]);
    }
    words.push("--follow-children".into());
    match who {
        Follower::Child => words.push("--followed-child".into()),
        Follower::Main { since } => {
            words.push(format!("--since={since}"));
            // The program after the exec keeps the standard output the
            // first one had.
            if input.keep_stdout {
                words.push("--keep-stdout".into());
            }
        }
    }
    cmd.extend(words.into_iter().map(OsString::from));
    cmd.extend(["-o".into(), output.as_os_str().to_owned()]);
    Some(cmd)
}

/// How a forked child of the program is profiled.
#[derive(Clone)]
pub(super) struct Follow(Rc<Inner>);

struct Inner {
    /// The children's profile files, with `%p` for the PID.
    pattern: PathBuf,
    /// The reports, as the parent's.
    lines: Vec<Line>,
    exact: bool,
    /// Whether to time the child's pass (`--timing`).
    timing: bool,
    /// The parent's input: the program (a forked child runs the same),
    /// the threads and symbol options.
    input: InputArgs,
}

impl Follow {
    pub(super) fn new(
        pattern: PathBuf,
        lines: Vec<Line>,
        exact: bool,
        timing: bool,
        mut input: InputArgs,
    ) -> Follow {
        // Quiet: a child's standard error is its program's.
        input.setup.child = true;
        Follow(Rc::new(Inner {
            pattern,
            lines,
            exact,
            timing,
            input,
        }))
    }

    /// The simulator's hook for a forked child.
    pub(super) fn hook(self) -> ChildRun {
        Rc::new(move |sim: &mut Simulator| self.0.run_forked(sim))
    }

    /// The children's profiles written since `since`, but `own` (the
    /// parent's file, when its name has the same form), by PID.
    pub(super) fn found(&self, since: SystemTime, own: Option<&Path>) -> Vec<ChildProfile> {
        let inner = &self.0;
        let name = inner
            .pattern
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some((prefix, suffix)) = name.split_once(PID) else {
            return Vec::new();
        };
        let dir = inner.pattern.parent().unwrap_or(Path::new("."));
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = file
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_suffix(suffix))
                .and_then(|digits| digits.parse::<u32>().ok())
            else {
                continue;
            };
            let path = entry.path();
            // The kernel stamps files from a clock that lags by a tick,
            // and some file systems keep whole seconds: a margin.
            let fresh = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|t| t + MTIME_MARGIN >= since);
            if !fresh || own == Some(path.as_path()) {
                continue;
            }
            // A file some other run left, or one being written, is not listed.
            let Ok(p) = super::load(&path) else {
                continue;
            };
            if p.process.map(|ids| ids.pid) != Some(pid) {
                continue;
            }
            found.push(ChildProfile {
                pid,
                file: path,
                command: p.command(),
                instructions: p.instructions,
                samples: p.sampled.as_ref().and_then(|s| s.samples),
                cpu_ns: p.sampled.as_ref().and_then(|s| s.cpu_ns),
                status: p.status,
            });
        }
        found.sort_by_key(|c| c.pid);
        found
    }
}

impl Inner {
    /// Runs a forked child of the program to its end with fresh engines
    /// and writes its profile. A profile that cannot be made or written
    /// is said on the child's standard error; the child runs on
    /// regardless, since its parent waits for it.
    fn run_forked(&self, sim: &mut Simulator) -> Result<Exit, SimError> {
        let ids = ids(&sim.pids());
        let path = expand(&self.pattern, ids.pid);
        let before = sim.instret();
        let mut jobs = match jobs(&self.lines) {
            Ok(j) => j,
            Err(e) => {
                say(&format!(
                    "coprof: child process {}: no profile: {e:#}\n",
                    ids.pid
                ));
                return sim.run_to_exit(&mut Discard);
            }
        };
        let (exit, timing, costs) = timed_pass(&mut jobs, self.timing, |sinks| {
            self.input.feed(sinks, |sink| sim.run_to_exit(sink))
        })?;
        let written = self.input.describe().and_then(|meta| {
            let info = self.input.live_info(sim, exit.clone(), before, meta);
            let reports = sections(jobs, costs, &info, &|_| {})?;
            let mut profile = profile_of(&self.input, &info, self.exact, reports, &[]);
            profile.process = Some(ids);
            profile.timing = timing;
            save(&profile, &path)
        });
        if let Err(e) = written {
            say(&format!(
                "coprof: child process {}: no profile written to {}: {e:#}\n",
                ids.pid,
                path.display()
            ));
        }
        Ok(exit)
    }
}

/// Writes `text` on the host's standard error without Rust's lock on it,
/// which a thread the fork left behind may have held.
fn say(text: &str) {
    // SAFETY: a valid buffer of that length.
    unsafe { libc::write(2, text.as_ptr() as *const _, text.len()) };
}
