//! The event buffer between the interpreter and whatever listens.
//!
//! The simulator builds an [`Event`] only for the classes the sink asked
//! for (the decode-time opcode filter of Zilles & Sohi, HPCA 2001, §3.1)
//! and hands them over in batches of [`BATCH`], so a consumer pays one
//! virtual call per batch rather than per instruction.

use coprof_core::{ClassSet, Event, Sink};

/// Events per batch delivered to the sink.
pub const BATCH: usize = 4096;

/// Collects events and delivers full batches to a sink.
pub struct Events<'a> {
    buf: Vec<Event>,
    /// The classes to build events for.
    pub wants: ClassSet,
    sink: &'a mut dyn Sink,
    delivered: u64,
}

impl<'a> Events<'a> {
    /// A buffer delivering to `sink`, for the classes it wants.
    pub fn new(sink: &'a mut dyn Sink) -> Events<'a> {
        Events {
            buf: Vec::with_capacity(BATCH),
            wants: sink.wants(),
            sink,
            delivered: 0,
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
        self.flush();
        self.sink.finish();
    }

    /// Events delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered + self.buf.len() as u64
    }
}
