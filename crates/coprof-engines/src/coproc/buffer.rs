//! The sample buffer between the retiring instruction stream and the
//! co-processor (Zilles & Sohi, HPCA 2001, §3.2).
//!
//! Samples arrive at retirement, at most one per retired instruction; the
//! co-processor takes them out at its *service rate*, a number of samples
//! per retired instruction. When the co-processor falls behind, the buffer
//! fills, and a sample that arrives at a full buffer is dropped and
//! counted: profiling never stalls the main processor.

use serde::Serialize;
use std::collections::VecDeque;

/// What the buffer holds for the load-value profiler: the instruction's
/// PC and the value it produced. 16 bytes, so the paper's 1 KB buffer
/// holds 64 samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// Address of the instruction.
    pub pc: u64,
    /// The value it loaded or produced.
    pub value: u64,
}

/// Bytes per buffered sample.
pub const SAMPLE_BYTES: usize = std::mem::size_of::<Sample>();

/// The paper's buffer size: 1 KB of samples.
pub const DEFAULT_BUFFER_BYTES: usize = 1024;

/// A bounded FIFO of samples drained at a fixed rate per retired
/// instruction.
#[derive(Clone, Debug)]
pub struct SampleBuffer {
    queue: VecDeque<Sample>,
    capacity: usize,
    rate: f64,
    credit: f64,
    dropped: u64,
    accepted: u64,
}

impl SampleBuffer {
    /// A buffer of `bytes` bytes (a whole number of samples, at least one)
    /// serviced at `rate` samples per retired instruction (> 0).
    pub fn new(bytes: usize, rate: f64) -> Result<SampleBuffer, String> {
        if bytes < SAMPLE_BYTES {
            return Err(format!(
                "sample buffer must hold at least one {SAMPLE_BYTES}-byte sample, got {bytes} bytes"
            ));
        }
        if !(rate.is_finite() && rate > 0.0) {
            return Err(format!(
                "service rate must be a positive number of samples per retired instruction, got {rate}"
            ));
        }
        let capacity = bytes / SAMPLE_BYTES;
        Ok(SampleBuffer {
            queue: VecDeque::with_capacity(capacity),
            capacity,
            rate,
            credit: 0.0,
            dropped: 0,
            accepted: 0,
        })
    }

    /// Whether the co-processor keeps up with one sample per retired
    /// instruction, so that the buffer can never fill and every sample may
    /// be handed over at once.
    pub fn never_fills(&self) -> bool {
        self.rate >= 1.0
    }

    /// A sample arrives; false if the buffer was full and it was dropped.
    #[inline]
    pub fn push(&mut self, s: Sample) -> bool {
        if self.queue.len() == self.capacity {
            self.dropped += 1;
            false
        } else {
            self.queue.push_back(s);
            self.accepted += 1;
            true
        }
    }

    /// One instruction retires: the co-processor earns `rate` samples of
    /// work. Take the samples it can now process with [`serve`](Self::serve).
    #[inline]
    pub fn retire(&mut self) {
        self.credit += self.rate;
    }

    /// The next sample the co-processor has earned the time to process,
    /// if one is waiting. Work not used because the buffer is empty is
    /// lost (an idle co-processor cannot bank cycles).
    #[inline]
    pub fn serve(&mut self) -> Option<Sample> {
        if self.credit >= 1.0 {
            if let Some(s) = self.queue.pop_front() {
                self.credit -= 1.0;
                return Some(s);
            }
        }
        if self.queue.is_empty() {
            self.credit = self.credit.min(1.0);
        }
        None
    }

    /// Takes out every remaining sample (at the end of the stream).
    pub fn pop_all(&mut self) -> Option<Sample> {
        self.queue.pop_front()
    }

    /// Samples dropped because the buffer was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Samples that entered the buffer.
    pub fn accepted(&self) -> u64 {
        self.accepted
    }

    /// Samples the buffer holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Samples waiting.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no sample is waiting.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Bytes held (the buffer's size).
    pub fn bytes(&self) -> usize {
        self.capacity * SAMPLE_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(pc: u64) -> Sample {
        Sample { pc, value: 0 }
    }

    #[test]
    fn default_buffer_holds_64_samples() {
        let b = SampleBuffer::new(DEFAULT_BUFFER_BYTES, 0.5).unwrap();
        assert_eq!(b.capacity(), 64);
        assert_eq!(b.bytes(), 1024);
    }

    #[test]
    fn slow_service_drops_and_counts() {
        // One sample per retired instruction, served at 1/4 per instruction:
        // after the 2-sample buffer fills, 3 of every 4 are dropped.
        let mut b = SampleBuffer::new(2 * SAMPLE_BYTES, 0.25).unwrap();
        let mut served = vec![];
        for pc in 0..1000 {
            b.push(s(pc));
            b.retire();
            while let Some(x) = b.serve() {
                served.push(x.pc);
            }
        }
        while let Some(x) = b.pop_all() {
            served.push(x.pc);
        }
        assert_eq!(served.len() as u64 + b.dropped(), 1000);
        assert!((245..=255).contains(&served.len()), "{}", served.len());
        assert!(served.windows(2).all(|w| w[0] < w[1]), "FIFO order");
    }

    #[test]
    fn fast_service_never_drops() {
        let mut b = SampleBuffer::new(SAMPLE_BYTES, 1.0).unwrap();
        assert!(b.never_fills());
        let mut n = 0;
        for pc in 0..100 {
            assert!(b.push(s(pc)));
            b.retire();
            while b.serve().is_some() {
                n += 1;
            }
        }
        assert_eq!((n, b.dropped()), (100, 0));
    }

    #[test]
    fn idle_cycles_are_not_banked() {
        let mut b = SampleBuffer::new(4 * SAMPLE_BYTES, 0.5).unwrap();
        for _ in 0..100 {
            b.retire();
            assert!(b.serve().is_none());
        }
        for pc in 0..4 {
            b.push(s(pc));
        }
        let mut n = 0;
        b.retire();
        while b.serve().is_some() {
            n += 1;
        }
        assert!(n <= 1, "served {n} samples on one instruction at rate 0.5");
    }

    #[test]
    fn rejects_nonsense() {
        assert!(SampleBuffer::new(8, 1.0).is_err());
        assert!(SampleBuffer::new(1024, 0.0).is_err());
        assert!(SampleBuffer::new(1024, f64::NAN).is_err());
    }
}
