//! Profiling programs: what runs on the co-processor, and the interrupt
//! handler that runs on the main processor (Zilles & Sohi, HPCA 2001,
//! §3.3–3.4).
//!
//! A program is a Rust type that implements [`Program`] using only the
//! [primitives](super::primitives). The [host](super::host) feeds it one
//! sample at a time; the program ends each sample with one of the two
//! exits: [`Exit::Done`] or [`Exit::Interrupt`]. On an interrupt the host
//! (the "main processor") runs [`Program::interrupt`], which copies the
//! co-processor's state into an in-memory profile and may reprogram the
//! front end's filters. The number of interrupts and the number of samples
//! those handlers copy are the paper's two overhead components (§3.5).

use super::buffer::Sample;
use super::filter::FrontEnd;
use super::primitives::Exit;
use coprof_core::ClassSet;
use std::fmt;

/// Why a program raised an interrupt; its name labels the overhead counts.
pub trait InterruptReason: Copy + fmt::Debug {
    /// A short name such as `full` or `thrash`.
    fn name(&self) -> &'static str;
}

/// A profiling program for the co-processor.
///
/// The host calls [`classes`](Program::classes) once to program the
/// opcode filter, then [`sample`](Program::sample) for each sample that
/// passes the front end; on [`Exit::Interrupt`] it calls
/// [`interrupt`](Program::interrupt); when no sample has passed the
/// filters for a while it calls [`idle`](Program::idle); at the end of the
/// stream it calls [`finish`](Program::finish).
pub trait Program {
    /// The reasons this program raises interrupts for.
    type Reason: InterruptReason;

    /// The opcode classes that become samples.
    fn classes(&self) -> ClassSet;

    /// Co-processor side: handle one sample.
    fn sample(&mut self, s: Sample) -> Exit<Self::Reason>;

    /// Main-processor side: the interrupt handler. Copies what it needs
    /// into the profile, may reprogram `front`, and returns the number of
    /// samples (records) it copied from the co-processor.
    fn interrupt(&mut self, reason: Self::Reason, front: &mut FrontEnd) -> u64;

    /// Main-processor side: the front end has rejected every sample for a
    /// while (the host's idle limit), meaning that nothing in the current
    /// part of the program is left to profile. Returns the samples copied.
    /// The default does nothing.
    fn idle(&mut self, front: &mut FrontEnd) -> u64 {
        let _ = front;
        0
    }

    /// Main-processor side: a sample passed the front end while it was only
    /// watching for new instructions after the profile was complete
    /// ([`FrontEnd::watching`]), so profiling is open again. The default
    /// does nothing.
    fn resume(&mut self) {}
    /// Main-processor side, at the end of the stream: copy whatever the
    /// co-processor still holds. Returns the samples copied.
    fn finish(&mut self) -> u64;

    /// Bytes of co-processor state (slots, counters, registers).
    fn coprocessor_bytes(&self) -> usize;

    /// Bytes of that state as the hardware would hold it, without what
    /// software adds to model it (such as an index for associative
    /// lookups). By default all of [`coprocessor_bytes`](Program::coprocessor_bytes).
    fn hardware_bytes(&self) -> usize {
        self.coprocessor_bytes()
    }

    /// Bytes of the in-memory profile on the main processor.
    fn profile_bytes(&self) -> usize;
}
