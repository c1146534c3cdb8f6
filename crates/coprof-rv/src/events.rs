//! The event buffer between the interpreter and whatever listens.
//!
//! The simulator builds an [`Event`] only for the classes the sink asked
//! for (the decode-time opcode filter of Zilles & Sohi, HPCA 2001, §3.1)
//! and hands them over in batches of [`BATCH`], so a consumer pays one
//! virtual call per batch rather than per instruction.
//!
//! When the sink takes runs ([`Sink::wants_with_runs`]), the buffer also
//! collects one [`Run`] per block execution and keeps the table of the
//! blocks they name, so that the instruction stream costs one 8-byte
//! record per block instead of an event per instruction.

use crate::code::{Block, NO_RUN_ID};
use coprof_core::{Blocks, ClassSet, Event, Run, Sink};

/// Events per batch delivered to the sink.
pub const BATCH: usize = 4096;

/// Collects events and delivers full batches to a sink.
pub struct Events<'a> {
    buf: Vec<Event>,
    /// The classes to build events for.
    pub wants: ClassSet,
    sink: &'a mut dyn Sink,
    delivered: u64,
    /// Whether the sink takes runs.
    pub runs_wanted: bool,
    runs: Vec<Run>,
    blocks: Blocks,
    run_instructions: u64,
}

impl<'a> Events<'a> {
    /// A buffer delivering to `sink`, for the classes it wants. When the
    /// sink takes runs, it is told that runs follow, and the buffer builds
    /// events only for the classes it names with them.
    pub fn new(sink: &'a mut dyn Sink) -> Events<'a> {
        let with_runs = sink.wants_with_runs();
        if with_runs.is_some() {
            sink.runs_follow();
        }
        Events {
            buf: Vec::with_capacity(BATCH),
            wants: with_runs.unwrap_or_else(|| sink.wants()),
            sink,
            delivered: 0,
            runs_wanted: with_runs.is_some(),
            runs: Vec::with_capacity(if with_runs.is_some() { BATCH } else { 0 }),
            blocks: Blocks::new(),
            run_instructions: 0,
        }
    }

    /// Adds a run of the first `len` instructions of `block` (0 when its
    /// first did not retire); delivers the batch of runs when it is full. The block joins
    /// the table of blocks the first time it runs.
    #[inline(always)]
    pub fn push_run(&mut self, block: &mut Block, len: usize) {
        if block.run_id == NO_RUN_ID {
            self.add_block(block);
        }
        self.runs.push(Run {
            block: block.run_id,
            len: len as u32,
        });
        if self.runs.len() == BATCH {
            self.flush_runs();
        }
    }

    /// Adds a run of the whole of `block`, before it runs, so that nothing
    /// of the run is left to do after it: a block that stops early
    /// shortens it with [`stopped_at`](Self::stopped_at). The batch is
    /// delivered when full before the run is added, not after, so the run
    /// stays in the buffer until then.
    #[inline(always)]
    pub fn push_run_ahead(&mut self, block: &mut Block) {
        if self.runs.len() == BATCH {
            self.flush_runs();
        }
        if block.run_id == NO_RUN_ID {
            self.add_block(block);
        }
        self.runs.push(Run {
            block: block.run_id,
            len: block.ops.len() as u32,
        });
    }

    /// Shortens the run [`push_run_ahead`](Self::push_run_ahead) added
    /// last to its first `len` instructions: its block stopped there.
    #[cold]
    pub fn stopped_at(&mut self, len: usize) {
        if let Some(run) = self.runs.last_mut() {
            run.len = len as u32;
        }
    }

    #[inline(never)]
    fn add_block(&mut self, block: &mut Block) {
        let compressed = block.ops.iter().position(|op| op.len == 2);
        block.run_id = self
            .blocks
            .push(block.ops.iter().map(|op| (op.pc, op.class)), compressed);
    }

    /// Delivers the buffered runs.
    #[inline(never)]
    pub fn flush_runs(&mut self) {
        if !self.runs.is_empty() {
            self.sink.observe_runs(&self.runs, &self.blocks);
            self.run_instructions += coprof_core::runs::instructions(&self.runs);
            self.runs.clear();
        }
    }

    /// Adds one event; delivers the batch when it is full.
    #[inline(always)]
    pub fn push(&mut self, e: Event) {
        self.buf.push(e);
        if self.buf.len() == BATCH {
            self.flush();
        }
    }

    /// Delivers what is buffered.
    #[inline(never)]
    pub fn flush(&mut self) {
        if !self.buf.is_empty() {
            self.sink.observe(&self.buf);
            self.delivered += self.buf.len() as u64;
            self.buf.clear();
        }
    }

    /// Delivers the rest and tells the sink the stream ended.
    pub fn finish(&mut self) {
        self.flush_runs();
        self.flush();
        self.sink.finish();
    }

    /// Instructions delivered in runs so far.
    pub fn run_instructions(&self) -> u64 {
        self.run_instructions + coprof_core::runs::instructions(&self.runs)
    }

    /// Events delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered + self.buf.len() as u64
    }
}
