//! The load-value profiler's co-processor side: the slots and the rules
//! applied to every sample (Zilles & Sohi, HPCA 2001, §5.1, Appendix
//! A.1–A.5).
//!
//! A slot holds a load's PC (in the associative array, with its valid
//! bit), one *active value*, 1-byte hit and miss counters and a 2-byte
//! total counter. A sample whose PC matches a slot counts a hit or a miss
//! against the active value and one more in total. A sample whose PC
//! matches no slot may replace the *next-up* slot (informational
//! replacement, A.3).

use super::config::LvpConfig;
use crate::coproc::buffer::Sample;
use crate::coproc::primitives::{AssocArray, Exit, Lfsr, SatCounter, SatCounters, Words};
use crate::coproc::program::InterruptReason;

/// Why the load-value profiler interrupts the main processor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LvpInterrupt {
    /// A.4: the failed-replacement counter reached its threshold; the
    /// slots are full of information worth copying.
    Full,
    /// A.5: more than `thrash_factor × slots` replacements since the last
    /// restart; `samples` is how many samples that took.
    Thrash {
        /// Samples since the last restart when thrashing was detected.
        samples: u64,
    },
}

impl InterruptReason for LvpInterrupt {
    fn name(&self) -> &'static str {
        match self {
            LvpInterrupt::Full => "full",
            LvpInterrupt::Thrash { .. } => "thrash",
        }
    }
}

/// One slot's contents as the handler copies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotRecord {
    /// The load's PC.
    pub pc: u64,
    /// The active value.
    pub value: u64,
    /// Hits on the active value since it was selected.
    pub hit: u64,
    /// Misses against the active value since it was selected.
    pub miss: u64,
    /// All samples the slot counted.
    pub total: u64,
}

/// The slot arrays and the registers of the profiling program.
#[derive(Clone, Debug)]
pub struct Slots {
    pcs: AssocArray,
    values: Words,
    hit: SatCounters,
    miss: SatCounters,
    total: SatCounters,
    next_up: usize,
    lfsr: Lfsr,
    failed: SatCounter,
    replacements: u64,
    samples: u64,
    resample_below: f64,
    off_after: u16,
    random_bits: u32,
    thrash_limit: u64,
}

impl Slots {
    /// Empty slots for `cfg` (validated).
    pub fn new(cfg: &LvpConfig) -> Slots {
        let n = cfg.slots;
        Slots {
            pcs: AssocArray::new(n),
            values: Words::new(n),
            hit: SatCounters::new(n, cfg.hit_miss_bits),
            miss: SatCounters::new(n, cfg.hit_miss_bits),
            total: SatCounters::new(n, cfg.total_bits),
            next_up: 0,
            lfsr: Lfsr::new(cfg.seed),
            failed: SatCounter::saturating_at(cfg.interrupt_threshold),
            replacements: 0,
            samples: 0,
            resample_below: cfg.resample_below,
            off_after: cfg.off_after_samples,
            random_bits: cfg.replace_random_bits,
            thrash_limit: cfg.thrash_factor * n as u64,
        }
    }

    /// Handles one sample.
    #[inline]
    pub fn sample(&mut self, s: Sample) -> Exit<LvpInterrupt> {
        self.samples += 1;
        match self.pcs.find(s.pc) {
            Some(i) => {
                self.count(i, s.value);
                Exit::Done
            }
            None => self.replace(s),
        }
    }

    /// A hit or a miss in slot `i`, with re-sampling (A.1) and saturation
    /// (A.2).
    #[inline]
    fn count(&mut self, i: usize, value: u64) {
        self.total.inc(i);
        if self.values.get(i) == value {
            self.hit.inc(i);
        } else {
            self.miss.inc(i);
            let (h, m) = (self.hit.get(i) as f64, self.miss.get(i) as f64);
            if h < self.resample_below * (h + m) {
                // A.2: a value still unsettled after enough samples is not
                // worth a slot.
                if self.total.get(i) >= self.off_after {
                    self.pcs.invalidate(i);
                    return;
                }
                // A.1: re-select the active value.
                self.values.set(i, value);
                self.hit.set(i, 1);
                self.miss.set(i, 0);
            }
        }
        // A.2: a saturated counter turns the slot off.
        if self.hit.is_saturated(i) || self.miss.is_saturated(i) || self.total.is_saturated(i) {
            self.pcs.invalidate(i);
        }
    }

    /// A.3 informational replacement, with A.4's failed-replacement counter
    /// and A.5's thrash detection.
    #[inline]
    fn replace(&mut self, s: Sample) -> Exit<LvpInterrupt> {
        let i = self.next_up;
        self.next_up = if i + 1 == self.values_len() { 0 } else { i + 1 };
        let r = self.lfsr.bits(self.random_bits);
        if r > self.total.get(i) as u32 {
            self.pcs.insert(i, s.pc);
            self.values.set(i, s.value);
            self.hit.set(i, 1);
            self.miss.set(i, 0);
            self.total.set(i, 1);
            self.failed.dec();
            self.replacements += 1;
            if self.replacements > self.thrash_limit {
                return Exit::Interrupt(LvpInterrupt::Thrash {
                    samples: self.samples,
                });
            }
        } else {
            // The counter saturates at the threshold.
            self.failed.inc();
            if self.failed.is_saturated() {
                return Exit::Interrupt(LvpInterrupt::Full);
            }
        }
        Exit::Done
    }

    #[inline]
    fn values_len(&self) -> usize {
        self.pcs.len()
    }

    /// Every slot that counted at least one sample since the last restart,
    /// valid or turned off.
    pub fn records(&self) -> impl Iterator<Item = SlotRecord> + '_ {
        (0..self.values_len())
            .filter(|&i| self.total.get(i) > 0)
            .map(|i| SlotRecord {
                pc: self.pcs.key(i),
                value: self.values.get(i),
                hit: self.hit.get(i) as u64,
                miss: self.miss.get(i) as u64,
                total: self.total.get(i) as u64,
            })
    }

    /// Clears every slot and register: the program starts over (after an
    /// interrupt's handler has copied what it wanted).
    pub fn restart(&mut self) {
        self.pcs.clear();
        self.hit.clear();
        self.miss.clear();
        self.total.clear();
        self.next_up = 0;
        self.failed.reset();
        self.replacements = 0;
        self.samples = 0;
    }

    /// Whether slot `i` is valid (matches its PC).
    pub fn is_valid(&self, i: usize) -> bool {
        self.pcs.is_valid(i)
    }

    /// The next-up slot, the only one a slot miss may replace (A.3).
    pub fn next_up(&self) -> usize {
        self.next_up
    }

    /// The record in slot `i`, whether or not it is valid.
    pub fn record(&self, i: usize) -> SlotRecord {
        SlotRecord {
            pc: self.pcs.key(i),
            value: self.values.get(i),
            hit: self.hit.get(i) as u64,
            miss: self.miss.get(i) as u64,
            total: self.total.get(i) as u64,
        }
    }

    /// Replacements since the last restart.
    pub fn replacements(&self) -> u64 {
        self.replacements
    }

    /// The failed-replacement counter.
    pub fn failed(&self) -> u32 {
        self.failed.get()
    }

    /// Bytes of co-processor state.
    pub fn bytes(&self) -> usize {
        self.pcs.bytes() + self.data_bytes()
    }

    /// Bytes the hardware holds: the PCs with their valid bits, the data
    /// arrays and the registers.
    pub fn hardware_bytes(&self) -> usize {
        self.pcs.hardware_bytes() + self.data_bytes()
    }

    /// The active values, the counters and the registers (next-up index,
    /// LFSR, failed-replacement counter).
    fn data_bytes(&self) -> usize {
        self.values.bytes() + self.hit.bytes() + self.miss.bytes() + self.total.bytes() + 16
    }
}

#[cfg(test)]
#[path = "slots_tests.rs"]
mod tests;
