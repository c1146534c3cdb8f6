//! The host: a co-processor with its front end and sample buffer, running
//! one profiling program over a stream of retired instructions (Zilles &
//! Sohi, HPCA 2001, §3). It is a [`Sink`]: any source can drive it.
//!
//! For each retired instruction the front end decides whether it is a
//! sample ([`FrontEnd::admit`]); a sample enters the [`SampleBuffer`] or is
//! dropped when the buffer is full; the co-processor takes samples out at
//! its service rate and runs the program on each. The host counts what the
//! paper counts as overhead: interrupts and samples transferred (§3.5).
//! When the program switches the front end off (its profile is complete),
//! further instructions cost one comparison per batch.

use super::buffer::{Sample, SampleBuffer, DEFAULT_BUFFER_BYTES};
use super::filter::{FrontEnd, PartitionHash, Verdict, DEFAULT_MASK_BITS};
use super::primitives::Exit;
use super::program::{InterruptReason, Program};
use coprof_core::{ClassSet, Event, Sink};
use serde::Serialize;
use std::collections::BTreeMap;

/// The host's hardware parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HostConfig {
    /// Size of the sample buffer in bytes (paper: 1 KB).
    pub buffer_bytes: usize,
    /// Samples the co-processor processes per retired instruction. At 1 or
    /// more it always keeps up and the buffer never fills.
    pub service_rate: f64,
    /// The partition filter's hash function.
    pub partition_hash: PartitionHash,
    /// Size of the PC mask table in bits (paper: 4 Kbit).
    pub mask_bits: usize,
    /// Samples in a row that the partition filter or mask table must
    /// reject before the host tells the program the current part is idle.
    pub idle_limit: u64,
}

impl Default for HostConfig {
    fn default() -> HostConfig {
        HostConfig {
            buffer_bytes: DEFAULT_BUFFER_BYTES,
            service_rate: 1.0,
            partition_hash: PartitionHash::Multiplicative,
            mask_bits: DEFAULT_MASK_BITS,
            idle_limit: 4096,
        }
    }
}

/// What the host counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct HostStats {
    /// Instructions retired (events received).
    pub retired: u64,
    /// Retired instructions of the program's classes.
    pub candidates: u64,
    /// Candidates rejected by the partition filter or the mask table.
    pub filtered: u64,
    /// Samples dropped because the sample buffer was full.
    pub dropped: u64,
    /// Samples the program processed.
    pub processed: u64,
    /// Interrupts raised, all reasons (including idle interrupts).
    pub interrupts: u64,
    /// Interrupts per reason.
    pub interrupts_by_reason: BTreeMap<&'static str, u64>,
    /// Samples (records) copied from the co-processor to the profile.
    pub transferred: u64,
    /// Retired instructions seen when profiling stopped, if it did.
    pub stopped_at: Option<u64>,
}

/// A co-processor running program `P`.
pub struct Coprocessor<P: Program> {
    front: FrontEnd,
    buffer: SampleBuffer,
    program: P,
    stats: HostStats,
    idle_run: u64,
    idle_limit: u64,
    finished: bool,
}

impl<P: Program> Coprocessor<P> {
    /// A host for `program` with the hardware of `config`.
    pub fn new(config: &HostConfig, program: P) -> Result<Coprocessor<P>, String> {
        if config.idle_limit == 0 {
            return Err("idle limit must be at least 1 sample".into());
        }
        let front = FrontEnd::new(program.classes(), config.partition_hash, config.mask_bits)?;
        Ok(Coprocessor {
            front,
            buffer: SampleBuffer::new(config.buffer_bytes, config.service_rate)?,
            program,
            stats: HostStats::default(),
            idle_run: 0,
            idle_limit: config.idle_limit,
            finished: false,
        })
    }

    /// The program (its profile lives there).
    pub fn program(&self) -> &P {
        &self.program
    }

    /// The front end as the program last set it.
    pub fn front_end(&self) -> &FrontEnd {
        &self.front
    }

    /// What the host counted so far.
    pub fn stats(&self) -> &HostStats {
        &self.stats
    }

    /// Whether profiling has stopped because the program's profile is
    /// complete.
    pub fn stopped(&self) -> bool {
        !self.front.enabled
    }

    /// Bytes held: co-processor state, sample buffer, front end, profile.
    pub fn bytes(&self) -> usize {
        self.program.coprocessor_bytes()
            + self.program.profile_bytes()
            + self.buffer.bytes()
            + self.front.bytes()
    }

    /// Bytes of the hardware alone: the co-processor's state, the sample
    /// buffer and the front end's tables, without the profile the handler
    /// keeps in the main processor's memory.
    pub fn hardware_bytes(&self) -> usize {
        self.program.hardware_bytes() + self.buffer.bytes() + self.front.bytes()
    }

    /// Hands one sample straight to the program, bypassing the front end
    /// and the buffer (for driving a program alone, as in benchmarks).
    #[inline]
    pub fn offer(&mut self, s: Sample) {
        self.stats.processed += 1;
        if let Exit::Interrupt(r) = self.program.sample(s) {
            self.interrupt(r);
        }
    }

    fn interrupt(&mut self, r: P::Reason) {
        self.stats.interrupts += 1;
        *self.stats.interrupts_by_reason.entry(r.name()).or_insert(0) += 1;
        self.front.retired = self.stats.retired;
        self.stats.transferred += self.program.interrupt(r, &mut self.front);
        self.note_stop();
    }

    fn idle(&mut self) {
        self.idle_run = 0;
        self.stats.interrupts += 1;
        *self.stats.interrupts_by_reason.entry("idle").or_insert(0) += 1;
        self.front.retired = self.stats.retired;
        self.stats.transferred += self.program.idle(&mut self.front);
        self.note_stop();
    }

    fn note_stop(&mut self) {
        if !self.front.enabled && self.stats.stopped_at.is_none() {
            self.stats.stopped_at = Some(self.stats.retired);
        }
    }

    /// Counts the events of `batch` from `from` on that the front end
    /// rejects (of another class, or filtered): up to the first sample,
    /// returning its index and true; up to and including the filtered
    /// event that makes the part idle, telling the program, and returning
    /// the next index and false; or to the end of the batch (its length
    /// and false). The same counts as [`admit`](Self::admit) on each,
    /// kept in registers until the run ends: the front end changes only
    /// when the program runs, which it does not in between, and most
    /// events on a large program are rejected (SQLite: 64 of 70 million
    /// loads).
    #[inline]
    fn drop_rejected(&mut self, batch: &[Event], from: usize) -> (usize, bool) {
        let (watching, limit) = (self.front.watching, self.idle_limit);
        let (mut retired, mut filtered, mut idle_run) = (0u64, 0u64, self.idle_run);
        let (mut idle, mut sample) = (false, false);
        let mut i = from;
        while let Some(e) = batch.get(i) {
            match self.front.admit(e.class, e.pc) {
                Verdict::Pass => {
                    sample = true;
                    break;
                }
                Verdict::WrongClass => retired += 1,
                Verdict::Filtered => {
                    retired += 1;
                    filtered += 1;
                    if !watching {
                        idle_run += 1;
                        if idle_run >= limit {
                            idle = true;
                            i += 1;
                            break;
                        }
                    }
                }
            }
            i += 1;
        }
        self.stats.retired += retired;
        self.stats.candidates += filtered;
        self.stats.filtered += filtered;
        self.idle_run = idle_run;
        if idle {
            self.idle();
        }
        (i, sample)
    }

    /// [`Sink::observe`] one event after another through
    /// [`admit`](Self::admit), with no runs: what `observe` must equal
    /// when the co-processor keeps up.
    #[cfg(test)]
    pub(crate) fn observe_each(&mut self, batch: &[Event]) {
        assert!(self.buffer.never_fills());
        for (i, e) in batch.iter().enumerate() {
            if !self.front.enabled {
                self.stats.retired += (batch.len() - i) as u64;
                return;
            }
            self.stats.retired += 1;
            if self.admit(e) {
                self.offer(Sample {
                    pc: e.pc,
                    value: e.value,
                });
            }
        }
    }

    /// The front end's part of one retired instruction: true if it is a
    /// sample for the co-processor.
    #[inline]
    fn admit(&mut self, e: &Event) -> bool {
        match self.front.admit(e.class, e.pc) {
            Verdict::WrongClass => false,
            Verdict::Filtered => {
                self.stats.candidates += 1;
                self.stats.filtered += 1;
                if !self.front.watching {
                    self.idle_run += 1;
                    if self.idle_run >= self.idle_limit {
                        self.idle();
                    }
                }
                false
            }
            Verdict::Pass => {
                self.pass();
                true
            }
        }
    }

    /// The front end's part of a sample, once [`FrontEnd::admit`] let it
    /// pass.
    #[inline]
    fn pass(&mut self) {
        self.stats.candidates += 1;
        self.idle_run = 0;
        if self.front.watching {
            self.front.watching = false;
            self.program.resume();
        }
    }
}

impl<P: Program> Sink for Coprocessor<P> {
    /// The program's classes when the co-processor keeps up with every
    /// instruction; every class otherwise, since the buffer's service is
    /// timed in retired instructions.
    fn wants(&self) -> ClassSet {
        if self.buffer.never_fills() {
            self.front.classes
        } else {
            ClassSet::ALL
        }
    }

    fn observe(&mut self, batch: &[Event]) {
        if self.buffer.never_fills() {
            let mut i = 0;
            while i < batch.len() {
                if !self.front.enabled {
                    self.stats.retired += (batch.len() - i) as u64;
                    return;
                }
                let (next, sample) = self.drop_rejected(batch, i);
                i = next;
                if sample {
                    let e = &batch[i];
                    self.stats.retired += 1;
                    self.pass();
                    self.offer(Sample {
                        pc: e.pc,
                        value: e.value,
                    });
                    i += 1;
                }
            }
        } else {
            for (i, e) in batch.iter().enumerate() {
                if !self.front.enabled {
                    self.stats.retired += (batch.len() - i) as u64;
                    return;
                }
                self.stats.retired += 1;
                if self.admit(e)
                    && !self.buffer.push(Sample {
                        pc: e.pc,
                        value: e.value,
                    })
                {
                    self.stats.dropped += 1;
                }
                self.buffer.retire();
                while let Some(s) = self.buffer.serve() {
                    if !self.front.enabled {
                        break;
                    }
                    self.offer(s);
                }
            }
        }
    }

    fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        while let Some(s) = self.buffer.pop_all() {
            if self.front.enabled {
                self.offer(s);
            }
        }
        self.stats.transferred += self.program.finish();
    }
}
