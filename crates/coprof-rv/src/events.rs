//! The event buffer between the interpreter and whatever listens.
//!
//! The simulator builds an [`Event`] only for the classes the sink asked
//! for (the decode-time opcode filter of Zilles & Sohi, HPCA 2001, §3.1)
//! and hands them over in batches of [`BATCH`] (or of the size the sink
//! asks for, given away whole), so a consumer pays one virtual call per
//! batch rather than per instruction.
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
    /// Events, and runs, per batch: [`BATCH`], or the sink's
    /// [`batch_len`](Sink::batch_len).
    batch: usize,
    /// The classes to build events for.
    pub wants: ClassSet,
    sink: &'a mut dyn Sink,
    delivered: u64,
    /// Whether the sink takes runs.
    pub runs_wanted: bool,
    runs: Vec<Run>,
    blocks: Blocks,
    run_instructions: u64,
    /// Whether the sink wants to know which thread runs.
    switches: bool,
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
        let batch = sink.batch_len().unwrap_or(BATCH).max(1);
        let switches = sink.wants_thread_switches();
        Events {
            buf: Vec::with_capacity(batch),
            batch,
            wants: with_runs.unwrap_or_else(|| sink.wants()),
            sink,
            delivered: 0,
            runs_wanted: with_runs.is_some(),
            runs: Vec::with_capacity(if with_runs.is_some() { batch } else { 0 }),
            blocks: Blocks::new(),
            run_instructions: 0,
            switches,
        }
    }

    /// Tells the sink, if it wants to know, that thread `tid` runs from
    /// here on, after delivering what the last one ran.
    #[inline(never)]
    pub fn thread_switch(&mut self, tid: u64) {
        if self.switches {
            self.flush_runs();
            self.flush();
            self.sink.thread_switch(tid);
        }
    }

    /// Adds a run of the first `len` instructions of `block` (0 when its
    /// first did not retire). The block joins the table of blocks the
    /// first time it runs. A full batch is delivered before the run is
    /// added, not after, so the run stays in the buffer until the next
    /// one: the simulator adds a block's run before the block runs, with
    /// every instruction, and shortens it with
    /// [`stopped_at`](Self::stopped_at) if the block stops early.
    #[inline(always)]
    pub fn push_run(&mut self, block: &mut Block, len: usize) {
        if self.runs.len() >= self.batch {
            self.flush_runs();
        }
        if block.run_id == NO_RUN_ID {
            self.add_block(block);
        }
        self.runs.push(Run {
            block: block.run_id,
            len: len as u32,
        });
    }

    /// Shortens the run [`push_run`](Self::push_run) added last to its
    /// first `len` instructions: its block stopped there.
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
            self.run_instructions += coprof_core::runs::instructions(&self.runs);
            self.sink.observe_runs_owned(&mut self.runs, &self.blocks);
            self.runs.clear();
            self.runs.reserve(self.batch);
        }
    }

    /// Adds one event; delivers the batch when it is full.
    #[inline(always)]
    pub fn push(&mut self, e: Event) {
        self.buf.push(e);
        if self.buf.len() >= self.batch {
            self.flush();
        }
    }

    /// Room for up to `n` events written in place (by translated code,
    /// [`crate::jit`]) without filling the batch before the last: the
    /// first free slot and the end of the batch's room, or `None`.
    #[inline(always)]
    pub(crate) fn room_for(&mut self, n: usize) -> Option<(*mut Event, *mut Event)> {
        let len = self.buf.len();
        if len + n > self.batch {
            return None;
        }
        if self.buf.capacity() < self.batch {
            self.buf.reserve(self.batch - len);
        }
        // SAFETY: len <= batch <= capacity.
        unsafe {
            let start = self.buf.as_mut_ptr();
            Some((start.add(len), start.add(self.batch)))
        }
    }

    /// The runs buffer for runs written in place (by translated code,
    /// [`crate::jit`]): its start, its length and the batch size, with
    /// room for the whole batch.
    #[inline(always)]
    pub(crate) fn runs_raw(&mut self) -> (*mut Run, u64, u64) {
        let len = self.runs.len();
        if self.runs.capacity() < self.batch {
            self.runs.reserve(self.batch - len);
        }
        (self.runs.as_mut_ptr(), len as u64, self.batch as u64)
    }

    /// Takes the runs written in place up to `len`.
    ///
    /// # Safety
    ///
    /// The runs from the buffer's length up to `len` must have been
    /// written, each fully, within the room [`runs_raw`](Self::runs_raw)
    /// gave.
    #[inline(always)]
    pub(crate) unsafe fn set_runs_len(&mut self, len: usize) {
        // SAFETY: the caller's contract.
        unsafe { self.runs.set_len(len) };
    }

    /// Takes the events written in place up to `end` into the buffer, and
    /// delivers the batch if they filled it, as [`push`](Self::push) would
    /// have after the last.
    ///
    /// # Safety
    ///
    /// `end` must be the slot [`room_for`](Self::room_for) gave, moved on
    /// by the events written since, each one fully.
    #[inline(always)]
    pub(crate) unsafe fn filled_to(&mut self, end: *mut Event) {
        // SAFETY: the caller's contract: `end` is within the room given.
        unsafe {
            let len = end.offset_from(self.buf.as_ptr()) as usize;
            self.buf.set_len(len);
        }
        if self.buf.len() >= self.batch {
            self.flush();
        }
    }

    /// Delivers what is buffered.
    #[inline(never)]
    pub fn flush(&mut self) {
        if !self.buf.is_empty() {
            self.delivered += self.buf.len() as u64;
            // Given away: the sink may keep the buffer, and leave an
            // empty one of any capacity in its place.
            self.sink.observe_owned(&mut self.buf);
            self.buf.clear();
            self.buf.reserve(self.batch);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::translate;
    use crate::encode::i_type;
    use crate::mem::{perm, Memory};
    use coprof_core::{ClassSet, Event};

    /// Records every batch of runs it is given.
    #[derive(Default)]
    struct Batches {
        runs: Vec<Vec<Run>>,
    }

    impl Sink for Batches {
        fn wants(&self) -> ClassSet {
            ClassSet::NONE
        }
        fn observe(&mut self, _batch: &[Event]) {}
        fn wants_with_runs(&self) -> Option<ClassSet> {
            Some(ClassSet::NONE)
        }
        fn observe_runs(&mut self, runs: &[Run], _blocks: &Blocks) {
            self.runs.push(runs.to_vec());
        }
    }

    /// Asks for batches of 1,000 events and records each it is given.
    #[derive(Default)]
    struct Owner {
        batches: Vec<Vec<Event>>,
    }

    impl Sink for Owner {
        fn observe(&mut self, _batch: &[Event]) {
            panic!("a sink that names a batch size is given its batches");
        }
        fn batch_len(&self) -> Option<usize> {
            Some(1000)
        }
        fn observe_owned(&mut self, batch: &mut Vec<Event>) {
            self.batches.push(std::mem::take(batch));
        }
    }

    #[test]
    fn a_sink_that_names_a_batch_size_is_given_batches_of_it() {
        let mut sink = Owner::default();
        let pushed: Vec<Event> = (0..2500u64)
            .map(|i| Event::load(0x1000 + 4 * i, 0x8000 + i, 8, i))
            .collect();
        {
            let mut ev = Events::new(&mut sink);
            pushed.iter().for_each(|&e| ev.push(e));
            assert_eq!(ev.delivered(), 2500);
            ev.finish();
        }
        let lens: Vec<usize> = sink.batches.iter().map(Vec::len).collect();
        assert_eq!(lens, [1000, 1000, 500]);
        assert_eq!(sink.batches.concat(), pushed);
    }

    /// A block of three `addi`s and a `jalr`.
    fn block() -> Block {
        let mut mem = Memory::new().unwrap();
        mem.map(0x10000, 0x1000, perm::R | perm::X).unwrap();
        let mut words = vec![i_type(0x13, 10, 0, 10, 1); 3];
        words.push(i_type(0x67, 0, 0, 1, 0));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        mem.poke(0x10000, &bytes).unwrap();
        translate(0x10000, &mem, crate::Isa::default())
    }

    #[test]
    fn no_batch_of_runs_is_longer_than_a_batch_whatever_the_pushes() {
        let mut sink = Batches::default();
        let mut b = block();
        let mut pushed = Vec::new();
        {
            let mut ev = Events::new(&mut sink);
            for i in 0..3 * BATCH + 5 {
                // A block's run, added before it runs; now and then it
                // stops early, and now and then the hart is taken
                // elsewhere after a full batch (an empty run).
                ev.push_run(&mut b, 4);
                let mut len = 4;
                if i % 1000 == 7 {
                    ev.stopped_at(2);
                    len = 2;
                }
                pushed.push(len);
                if i % BATCH == BATCH - 1 {
                    ev.push_run(&mut b, 0);
                    pushed.push(0);
                }
            }
            ev.finish();
        }
        assert!(sink.runs.iter().all(|r| !r.is_empty() && r.len() <= BATCH));
        let delivered: Vec<u32> = sink.runs.iter().flatten().map(|r| r.len).collect();
        assert_eq!(delivered, pushed);
    }
}
