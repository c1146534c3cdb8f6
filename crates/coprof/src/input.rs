//! Where a report's events come from: a trace file (and, later, a program
//! run live in the simulator). Every report command flattens [`InputArgs`]
//! into its own arguments so that they all read input the same way.

use crate::progress::ProgressSink;
use anyhow::Context;
use coprof_core::trace::{TraceMeta, TraceReader};
use coprof_core::{Sink, Source};
use std::path::PathBuf;

/// The input of a report command.
#[derive(clap::Args, Debug, Clone)]
pub struct InputArgs {
    /// Trace file (.cpt) to read: make one with `coprof gen` or `coprof run --trace`.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// What reading the input told us.
#[derive(Clone, Debug)]
#[allow(dead_code)]
pub struct InputInfo {
    /// Events delivered to the sink (of the classes it wanted).
    pub events: u64,
    /// The trace's metadata.
    pub meta: TraceMeta,
}

#[allow(dead_code)] // the report commands (ranges, loops, values, sample) read through this
impl InputArgs {
    /// Pushes every event of the input into `sink`, with a progress bar on
    /// a terminal.
    pub fn run(&self, sink: &mut dyn Sink) -> anyhow::Result<InputInfo> {
        let mut reader = TraceReader::open(&self.file)?;
        let meta = reader.meta().clone();
        let mut progress = ProgressSink::new(sink, meta.events, "events");
        let events = reader
            .run(&mut progress)
            .with_context(|| format!("reading {}", self.file.display()))?;
        progress.done();
        Ok(InputInfo { events, meta })
    }
}
