//! The JSON metadata block at the head of a trace.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a trace says about itself. Unknown keys written by other tracers
/// are kept in `extra`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceMeta {
    /// What produced the events: "rv-sim", "native", "synthetic", "sample", or a tracer's own name.
    pub source: String,
    /// The instruction set of the PCs: "rv64gc" with the extensions the
    /// simulator's hart had ("rv64gc_zba_zbb_zbc_zbs"), "x86-64",
    /// "synthetic".
    pub isa: String,
    /// The program traced (path or generator name).
    #[serde(default)]
    pub program: String,
    /// Its arguments (or the generator's parameters).
    #[serde(default)]
    pub args: Vec<String>,
    /// Events in the trace. Written when the trace is complete.
    #[serde(default)]
    pub events: u64,
    /// The classes the source recorded (others were filtered out at the source).
    #[serde(default)]
    pub classes: Vec<String>,
    /// Events per class name. Written when the trace is complete.
    #[serde(default)]
    pub class_counts: BTreeMap<String, u64>,
    /// Where the code of each file the program ran lies: the program
    /// first, then its dynamic loader and libraries, for naming PCs. Empty
    /// when the source does not say (PCs are then the program's own
    /// addresses). Written when the trace is complete, as far as the
    /// room reserved for it at the start allows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<Module>,
    /// The directory the program's absolute paths were looked up in first
    /// (`--root`, or the sysroot of a dynamically linked program): its
    /// `usr/lib/debug` holds the separate debug files of its libraries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysroot: Option<std::path::PathBuf>,
    /// Every area of the program's address space mapped over the run,
    /// named (`[heap]`, `[stack]`, `[anon]`, `[shm]`, a file), to name
    /// hot data addresses by. Empty when the source does not say.
    /// Written when the trace is complete.
    #[serde(default, skip_serializing_if = "crate::areas::Areas::is_empty")]
    pub areas: crate::areas::Areas,
    /// The names threads had, by thread id, as Linux's `comm` gives them
    /// (`prctl(PR_SET_NAME)`, `pthread_setname_np`): those the source
    /// knows; a thread not named here has its program file's name, as
    /// Linux starts it. Written when the trace is complete.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub thread_names: BTreeMap<u64, String>,
    /// Whether the trace holds each sampled event's stack, in a stack
    /// record before it (format version 3): the calls open when it was
    /// taken, as a native program's sampler unwinds them (`coprof record
    /// --call-graph`). Set before the trace is written, by its writer's
    /// creator.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stacks: bool,
    /// Of the stacks, those that reached their thread's first frame (a
    /// stack the unwinder could not follow to the end still counts,
    /// under the frames it found). Written when the trace is complete,
    /// by a source that unwinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole_stacks: Option<u64>,
    /// For a trace of samples of a host process: the CPU time, in
    /// nanoseconds, its threads ran while sampled, each sample standing
    /// for a period of it. Written when the trace is complete, by a
    /// source that sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns: Option<u64>,
    /// The traced process's id, for the files a program names by it: a
    /// JIT's `/tmp/perf-PID.map`, which names the code it made. Written
    /// when the trace is complete, by a source that ran a host process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The build ID of the kernel's vDSO the program ran with (its
    /// `[vdso]` area), in hexadecimal: a report where the same kernel
    /// runs names the code there by its own copy. Set by a source that
    /// runs host processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vdso_build_id: Option<String>,
    /// Any other keys.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl TraceMeta {
    /// The name of thread `tid`: the one recorded, else the program
    /// file's name as Linux starts a thread with (its first 15 bytes).
    pub fn thread_name(&self, tid: u64) -> String {
        if let Some(name) = self.thread_names.get(&tid) {
            return name.clone();
        }
        let file = self.program.rsplit('/').next().unwrap_or(&self.program);
        let mut end = file.len().min(15);
        while !file.is_char_boundary(end) {
            end -= 1;
        }
        file[..end].to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_is_named_as_recorded_else_by_its_programs_file_as_linux_starts_it() {
        let mut meta = TraceMeta {
            program: "/usr/bin/a-rather-long-program-name".into(),
            ..TraceMeta::default()
        };
        meta.thread_names.insert(7, "worker".into());
        assert_eq!(meta.thread_name(7), "worker");
        assert_eq!(meta.thread_name(8), "a-rather-long-p");
        // Kept across the metadata's JSON, keyed by the id as text.
        let json = serde_json::to_value(&meta).unwrap();
        assert_eq!(json["thread_names"]["7"], "worker");
        let back: TraceMeta = serde_json::from_value(json).unwrap();
        assert_eq!(back, meta);
        let plain = serde_json::to_value(TraceMeta::default()).unwrap();
        assert!(plain.get("thread_names").is_none());
    }
}

/// A file whose code was loaded: the range of addresses its segments
/// took and the bias added to the file's own addresses there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Module {
    /// First address of its segments.
    pub start: u64,
    /// The address after its last segment.
    pub end: u64,
    /// What was added to the file's addresses (0 for a program linked at
    /// fixed addresses).
    pub bias: u64,
    /// The file, as the host names it.
    pub path: std::path::PathBuf,
}
