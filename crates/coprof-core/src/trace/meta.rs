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
    /// Any other keys.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
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
