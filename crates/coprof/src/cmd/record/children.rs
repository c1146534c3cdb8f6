//! `coprof record --follow-children`: a trace for every child process of
//! the program, since each process has addresses of its own. They are
//! named from `-o` as `coprof profile --follow-children` names its
//! profiles: `OUT.PID.cpt`.

use coprof_core::trace::{TraceMeta, TraceWriter};
use coprof_core::{ClassSet, Event, OpenCall, Sink};
use coprof_native::Run;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

/// The traces of the program's child processes, written as they run.
pub(super) struct ChildTraces {
    /// `-o` with `%p` for a child's PID.
    pattern: PathBuf,
    /// The program's trace's metadata, which a child's starts from: a
    /// forked child runs its parent's program until it execs another.
    meta: TraceMeta,
    /// Each running child's trace, and its parent.
    running: HashMap<i32, (Result<TraceWriter, String>, i32)>,
    /// Each ended child, in the order they ended.
    pub ended: Vec<ChildTrace>,
}

/// A child process's trace, as the summary tells it.
#[derive(Serialize)]
pub(super) struct ChildTrace {
    pub pid: i32,
    pub parent: i32,
    /// The program it ran last, and its arguments.
    pub program: String,
    pub args: Vec<String>,
    /// Its exit status, or 128 + the signal that killed it.
    pub status: i32,
    pub samples: u64,
    /// The CPU time its threads ran while sampled, given in seconds.
    #[serde(rename = "cpu_seconds", serialize_with = "as_seconds")]
    pub cpu_ns: u64,
    pub events: u64,
    pub trace: PathBuf,
    /// The trace's size, once written.
    pub bytes: Option<u64>,
    /// Why the trace could not be written.
    pub error: Option<String>,
}

/// Writes a time kept in nanoseconds as seconds, as `--json` gives times.
fn as_seconds<S: serde::Serializer>(ns: &u64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(crate::output::seconds(*ns))
}

impl ChildTraces {
    pub(super) fn new(pattern: PathBuf, meta: TraceMeta) -> ChildTraces {
        ChildTraces {
            pattern,
            meta,
            running: HashMap::new(),
            ended: Vec::new(),
        }
    }

    fn path(&self, pid: i32) -> PathBuf {
        crate::per_process::expand(&self.pattern, pid as u32)
    }
}

impl coprof_native::Children for ChildTraces {
    fn started(&mut self, pid: i32, parent: i32) {
        let mut meta = self.meta.clone();
        meta.extra.insert(
            "process".into(),
            serde_json::json!({ "pid": pid, "parent": parent }),
        );
        let path = self.path(pid);
        let writer = TraceWriter::create(&path, meta, ClassSet::ALL).map_err(|e| e.to_string());
        self.running.insert(pid, (writer, parent));
    }

    fn observe(&mut self, pid: i32, batch: &[Event]) {
        if let Some((Ok(writer), _)) = self.running.get_mut(&pid) {
            writer.observe(batch);
        }
    }

    /// A child's trace records its thread switches, as the program's does.
    fn wants_thread_switches(&self) -> bool {
        true
    }

    fn thread_switch(&mut self, pid: i32, tid: i32) {
        if let Some((Ok(writer), _)) = self.running.get_mut(&pid) {
            writer.thread_switch(tid as u64);
        }
    }

    /// With `-g`, as the program's.
    fn wants_stacks(&self) -> bool {
        self.meta.stacks
    }

    fn stack(&mut self, pid: i32, calls: &[OpenCall]) {
        if let Some((Ok(writer), _)) = self.running.get_mut(&pid) {
            writer.stack(calls);
        }
    }

    fn ended(&mut self, pid: i32, run: Run) {
        let Some((writer, parent)) = self.running.remove(&pid) else {
            return;
        };
        let program = run.program.to_string_lossy().into_owned();
        let args = crate::input::as_text(&run.args);
        let written = writer.and_then(|mut w| {
            super::tell_run(&mut w, &run);
            w.set_program(program.clone(), args.clone());
            w.commit().map_err(|e| e.to_string())
        });
        self.ended.push(ChildTrace {
            pid,
            parent,
            program,
            args,
            status: run.exit.status(),
            samples: run.samples,
            cpu_ns: run.cpu_ns,
            events: run.events,
            trace: self.path(pid),
            bytes: written.as_ref().ok().map(|w| w.file_bytes),
            error: written.err(),
        });
    }
}
