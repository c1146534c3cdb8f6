//! `coprof profile --follow-children` of an x86-64 program: each child
//! process's samples go to reports of its own, since each process has
//! addresses of its own, and to a profile file of its own, named as a
//! RISC-V program's children's are ([`super::children`]).

use super::{jobs, profile_of, save, sections, shell_words, ChildProfile, Line, Named, ProcessIds};
use crate::input::InputArgs;
use coprof_core::Event;
use coprof_native::Run;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The reports of the program's child processes, fed as they run.
pub(super) struct NativeChildren {
    /// `-o` with `%p` for a child's PID.
    pattern: PathBuf,
    /// The reports each child gets: the program's own.
    lines: Vec<Line>,
    exact: bool,
    /// The default reports left out of every profile of samples.
    left_out: Vec<String>,
    /// The program's input, whose options (symbols, their cache) a
    /// child's reports take.
    input: InputArgs,
    /// Each running child's reports (or why they could not be made), and
    /// its parent.
    running: HashMap<i32, (Result<Vec<Named>, String>, i32)>,
    /// Each ended child's profile, in the order they ended.
    pub found: Vec<ChildProfile>,
}

impl NativeChildren {
    pub(super) fn new(
        pattern: PathBuf,
        lines: Vec<Line>,
        exact: bool,
        left_out: Vec<String>,
        input: InputArgs,
    ) -> NativeChildren {
        NativeChildren {
            pattern,
            lines,
            exact,
            left_out,
            input,
            running: HashMap::new(),
            found: Vec::new(),
        }
    }

    /// Finishes the reports of child `pid`, ended with `run`, and writes
    /// its profile to `path`; returns the command it profiled.
    fn write(
        &self,
        jobs: Vec<Named>,
        ids: ProcessIds,
        run: Run,
        path: &Path,
    ) -> anyhow::Result<String> {
        let program = run.program.clone();
        let args: Vec<String> = crate::input::as_text(run.args.get(1..).unwrap_or_default());
        let jobs = self.alone(jobs, &program, &args);
        let info = self.input.sampled_info(&program, args.clone(), run)?;
        let costs = vec![None; jobs.len()];
        let reports = sections(jobs, costs, &info, &|_| {})?;
        let mut profile = profile_of(&self.input, &info, self.exact, reports, &self.left_out);
        profile.input = program.to_string_lossy().into_owned();
        profile.args = args;
        profile.argv0 = None;
        profile.process = Some(ids);
        save(&profile, path)?;
        Ok(profile.command())
    }
}

impl NativeChildren {
    /// `jobs` with the command lines that give their reports of a child
    /// alone: each report's options, and the run's (`--ring-buffer`,
    /// symbols), with the program the child ran last and its arguments
    /// after `--`, in place of the program's (or the process attached to).
    fn alone(&self, mut jobs: Vec<Named>, program: &Path, args: &[String]) -> Vec<Named> {
        let typed = self.input.as_typed().len();
        let mut input = self.input.run_options();
        input.push("--".into());
        input.push(program.to_string_lossy().into_owned());
        input.extend(args.iter().cloned());
        for (j, l) in jobs.iter_mut().zip(&self.lines) {
            let mut argv = l.argv[..l.argv.len().saturating_sub(typed)].to_vec();
            argv.extend(input.iter().cloned());
            j.line = format!("coprof {} {}", l.command, shell_words(&argv));
        }
        jobs
    }
}

impl coprof_native::Children for NativeChildren {
    fn started(&mut self, pid: i32, parent: i32) {
        let jobs = jobs(&self.lines).map_err(|e| format!("{e:#}"));
        self.running.insert(pid, (jobs, parent));
    }

    fn observe(&mut self, pid: i32, batch: &[Event]) {
        if let Some((Ok(jobs), _)) = self.running.get_mut(&pid) {
            for j in jobs {
                j.job.sink().observe(batch);
            }
        }
    }

    fn ended(&mut self, pid: i32, run: Run) {
        let Some((jobs, parent)) = self.running.remove(&pid) else {
            return;
        };
        let path = crate::per_process::expand(&self.pattern, pid as u32);
        let ids = ProcessIds {
            pid: pid as u32,
            parent: parent as u32,
        };
        // None for a child let go with a process attached to: it runs on.
        let status = run.exit.ended_status();
        let (samples, cpu_ns) = (run.samples, run.cpu_ns);
        let written = jobs.map_err(anyhow::Error::msg).and_then(|mut jobs| {
            for j in &mut jobs {
                j.job.sink().finish();
            }
            self.write(jobs, ids, run, &path)
        });
        match written {
            Ok(command) => self.found.push(ChildProfile {
                pid: ids.pid,
                file: path,
                command,
                instructions: None,
                samples: Some(samples),
                cpu_ns: Some(cpu_ns),
                status,
            }),
            Err(e) => eprintln!(
                "coprof: child process {pid}: no profile written to {}: {e:#}",
                path.display()
            ),
        }
    }
}
