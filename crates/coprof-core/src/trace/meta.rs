//! The JSON metadata block at the head of a trace.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a trace says about itself. Unknown keys written by other tracers
/// are kept in `extra`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceMeta {
    /// What produced the events: "rv-sim", "native", "synthetic", "sample", or a tracer's own name.
    pub source: String,
    /// The instruction set of the PCs: "rv64gc", "x86-64", "synthetic".
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
    /// Any other keys.
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}
