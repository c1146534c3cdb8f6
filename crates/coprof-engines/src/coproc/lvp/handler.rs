//! The load-value profiler's main-processor side: the interrupt handler,
//! the in-memory profile, confidence and masking, and partitioning after
//! thrashing (Zilles & Sohi, HPCA 2001, §5.1.3–5.1.4, Appendix A.4–A.5).
//!
//! - On a *full* interrupt (A.4) the handler copies every slot into the
//!   profile, then decides, for each load it copied, whether the profile
//!   of that load is done: invariance above the high or below the low
//!   threshold (with enough samples to be confident), or profiled in
//!   `max_profiles` intervals already. A load that is done is masked in
//!   the PC mask table and never sampled again. Then the slots restart.
//! - On a *thrash* interrupt (A.5) the slots' contents are discarded and
//!   the current part of the program is split 2 or 4 ways with the
//!   partition filter (4 when thrashing was detected fast); the parts are
//!   profiled in turn.
//! - When the front end has rejected every sample for a while, nothing in
//!   the current part is left unmasked: the handler copies the slots and
//!   moves to the next part. When no part is left the profile is complete
//!   and the front end is switched off, or, with `watch_new_loads`, left
//!   watching the whole program for loads not yet masked.

use super::config::LvpConfig;
use super::estimate;
use super::slots::{LvpInterrupt, Slots};
use crate::coproc::filter::{FrontEnd, Part};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::collections::VecDeque;

/// What the profile knows of one value of one load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ValueRecord {
    /// The value.
    pub value: u64,
    /// Hits while it was a slot's active value, all intervals.
    pub hits: u64,
    /// Misses while it was a slot's active value, all intervals.
    pub misses: u64,
}

/// Why a load was masked (§5.1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MaskReason {
    /// Its invariance is confidently above the high threshold.
    HighInvariance,
    /// Its invariance is confidently below the low threshold.
    LowInvariance,
    /// Profiled in `max_profiles` intervals without reaching a threshold.
    ProfileLimit,
}

impl MaskReason {
    /// Whether the mask says the estimate is confident (a threshold was
    /// met), as opposed to the profiling budget being spent.
    pub fn confident(self) -> bool {
        !matches!(self, MaskReason::ProfileLimit)
    }
}

/// The profile of one load.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PcProfile {
    /// Every value that was ever a slot's active value.
    pub values: Vec<ValueRecord>,
    /// Samples counted only by total counters (before a re-selection).
    pub unseen: u64,
    /// All samples recorded (Σ total counters copied).
    pub samples: u64,
    /// Spaced profiles of this load: intervals in which a slot for it was
    /// copied, counting only those spaced per `profile_spacing`.
    pub profiles: u32,
    /// Retired instructions at its last counted profile.
    pub last_profile_at: u64,
    /// Why it was masked, if it was.
    pub masked: Option<MaskReason>,
    /// Position of each value in `values`, so that copying a slot costs
    /// one lookup however many values the load has shown.
    pub(super) index: FxHashMap<u64, usize>,
}

/// The main processor's state: the profile and the partitioning plan.
#[derive(Clone, Debug)]
pub struct Handler {
    cfg: LvpConfig,
    profile: FxHashMap<u64, PcProfile>,
    parts_left: VecDeque<Part>,
    complete: bool,
    splits: u64,
    discarded: u64,
}

impl Handler {
    /// An empty profile.
    pub fn new(cfg: &LvpConfig) -> Handler {
        Handler {
            cfg: cfg.clone(),
            profile: FxHashMap::default(),
            parts_left: VecDeque::new(),
            complete: false,
            splits: 0,
            discarded: 0,
        }
    }

    /// The profile, per load PC.
    pub fn profile(&self) -> &FxHashMap<u64, PcProfile> {
        &self.profile
    }

    /// Whether profiling is complete: no part of the program is left.
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// A sample passed the front end while the profile was complete (only
    /// when watching for new loads): profiling is open again.
    pub(super) fn reopen(&mut self) {
        self.complete = false;
    }

    /// Parts still to profile after the current one.
    pub fn parts_left(&self) -> usize {
        self.parts_left.len()
    }

    /// Times the program was split after thrashing.
    pub fn splits(&self) -> u64 {
        self.splits
    }

    /// Samples discarded at thrash interrupts.
    pub fn discarded(&self) -> u64 {
        self.discarded
    }

    /// The interrupt handler. Returns the samples copied.
    pub fn interrupt(&mut self, r: LvpInterrupt, slots: &mut Slots, front: &mut FrontEnd) -> u64 {
        match r {
            LvpInterrupt::Full => self.copy_and_mask(slots, front),
            LvpInterrupt::Thrash { samples } => {
                let current = front.partition.part;
                if current.bits >= self.cfg.max_partition_bits {
                    // No narrower part is allowed: keep what was gathered.
                    return self.copy_and_mask(slots, front);
                }
                self.discarded += slots.records().map(|r| r.total).sum::<u64>();
                slots.restart();
                let ways = if samples < self.cfg.fast_thrash_samples {
                    4
                } else {
                    2
                };
                let ways = ways.min(1 << (self.cfg.max_partition_bits - current.bits));
                let mut parts = current.split(ways).into_iter();
                front.partition.part = parts.next().expect("split gives at least one part");
                for p in parts.rev() {
                    self.parts_left.push_front(p);
                }
                self.splits += 1;
                0
            }
        }
    }

    /// The idle handler: copies the slots, then moves on to the next part,
    /// or completes the profile. Returns the samples copied.
    pub fn idle(&mut self, slots: &mut Slots, front: &mut FrontEnd) -> u64 {
        let copied = self.copy_and_mask(slots, front);
        match self.parts_left.pop_front() {
            Some(p) => front.partition.part = p,
            None => {
                self.complete = true;
                if self.cfg.watch_new_loads {
                    front.partition.part = Part::WHOLE;
                    front.watching = true;
                } else {
                    front.enabled = false;
                }
            }
        }
        copied
    }

    /// Copies every occupied slot into the profile (§3.4), applies §5.1.4's
    /// confidence and masking to the loads copied, and restarts the slots.
    pub fn copy_and_mask(&mut self, slots: &mut Slots, front: &mut FrontEnd) -> u64 {
        let copied = self.copy(slots);
        let mut touched: Vec<u64> = slots.records().map(|r| r.pc).collect();
        touched.sort_unstable();
        touched.dedup();
        for pc in touched {
            let p = self.profile.get_mut(&pc).expect("just copied");
            let spaced = p.profiles == 0
                || front.retired as f64 >= p.last_profile_at as f64 * self.cfg.profile_spacing;
            if !spaced || p.masked.is_some() {
                continue;
            }
            p.profiles += 1;
            p.last_profile_at = front.retired;
            let c = &self.cfg;
            if c.keep_glacial_unmasked
                && estimate::is_glacial(
                    p,
                    c.glacial_min_hits,
                    c.glacial_max_miss_ratio,
                    c.glacial_min_values,
                )
            {
                continue;
            }
            let top = estimate::invariance(p, c.unseen_share_cap)
                .first()
                .map_or(0.0, |e| e.1);
            let confident =
                p.samples >= c.confidence_samples && p.profiles >= c.confidence_profiles;
            let reason = if confident && top >= c.high_invariance {
                Some(MaskReason::HighInvariance)
            } else if confident && top <= c.low_invariance {
                Some(MaskReason::LowInvariance)
            } else if p.profiles >= c.max_profiles {
                Some(MaskReason::ProfileLimit)
            } else {
                None
            };
            if let Some(r) = reason {
                p.masked = Some(r);
                front.mask.mask(pc);
            }
        }
        slots.restart();
        copied
    }

    /// Copies the slots into the profile without touching masks or the
    /// slots (at the end of the stream). Returns the records copied.
    pub fn copy(&mut self, slots: &Slots) -> u64 {
        let mut copied = 0;
        for r in slots.records() {
            copied += 1;
            let p = self.profile.entry(r.pc).or_default();
            p.samples += r.total;
            p.unseen += r.total - r.hit - r.miss;
            match p.index.get(&r.value) {
                Some(&i) => {
                    p.values[i].hits += r.hit;
                    p.values[i].misses += r.miss;
                }
                None => {
                    p.index.insert(r.value, p.values.len());
                    p.values.push(ValueRecord {
                        value: r.value,
                        hits: r.hit,
                        misses: r.miss,
                    });
                }
            }
        }
        copied
    }

    /// Bytes of the in-memory profile.
    pub fn bytes(&self) -> usize {
        self.profile.capacity() * (8 + std::mem::size_of::<PcProfile>() + 1)
            + self
                .profile
                .values()
                .map(|p| {
                    p.values.capacity() * std::mem::size_of::<ValueRecord>()
                        + p.index.capacity() * 17
                })
                .sum::<usize>()
            + self.parts_left.capacity() * std::mem::size_of::<Part>()
    }
}

#[cfg(test)]
#[path = "handler_tests.rs"]
mod tests;
