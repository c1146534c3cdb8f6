//! The hotlist table: one Gibbons–Matias hotlist per PC and value type,
//! as in DCPI value sampling (Burrows et al., ASPLOS 2000, §2.2). A
//! [`Sink`] over loads.
//!
//! The lists' values and counters live in flat arrays (N + 1 per list,
//! one spare for the value that is entering); each list's state lives in
//! its head, one cache line found by hashing (PC, type) (`heads`), so
//! that a sample costs one hash probe, one coin toss and, when the coin
//! says so, a scan of at most N values.

use super::config::{HotlistConfig, ValueKind, Variant};
use super::heads::Heads;
use super::list::{estimate, List};
use crate::coproc::report::{PcStatus, PcValues, ValueEstimate};
use coprof_core::{Class, ClassSet, Event, Sink};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// Hotlists for every (PC, value type) seen.
#[derive(Clone)]
pub struct HotlistTable {
    cfg: HotlistConfig,
    factor: f64,
    stride: usize,
    /// Per (PC, value type), the list's number and state.
    heads: Heads,
    values: Vec<u64>,
    counts: Vec<u64>,
    rng: Xoshiro256PlusPlus,
    countdown: u64,
    loads: u64,
    samples: u64,
}

/// One value in a hotlist.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HotValue {
    /// The value.
    pub value: u64,
    /// Its counter `C[v]`.
    pub count: u64,
    /// The estimated number of occurrences among the samples offered.
    pub estimate: f64,
}

/// One hotlist's contents.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HotlistEntry {
    /// The load's PC.
    pub pc: u64,
    /// Which value of it.
    pub kind: ValueKind,
    /// Samples offered to this list.
    pub offered: u64,
    /// The list's sampling probability p.
    pub p: f64,
    /// Its values, largest estimate first.
    pub values: Vec<HotValue>,
}

/// The table's result.
#[derive(Clone, Debug, Serialize)]
pub struct HotlistSnapshot {
    /// The parameters.
    pub config: HotlistConfig,
    /// Loads seen.
    pub loads: u64,
    /// Samples offered to the lists (loads / period).
    pub samples: u64,
    /// Every list, most offered first.
    pub lists: Vec<HotlistEntry>,
    /// Bytes held.
    pub bytes: usize,
}

impl HotlistSnapshot {
    /// The lists of type `kind` as per-PC invariance estimates: each
    /// value's estimate over the PC's samples.
    pub fn pc_values(&self, kind: ValueKind) -> Vec<PcValues> {
        let mut out: Vec<PcValues> = self
            .lists
            .iter()
            .filter(|l| l.kind == kind && l.offered > 0)
            .map(|l| PcValues {
                pc: l.pc,
                samples: l.offered,
                weight: l.offered * self.config.period,
                status: PcStatus::Sampled,
                glacial: false,
                values: l
                    .values
                    .iter()
                    .map(|v| ValueEstimate {
                        value: v.value,
                        invariance: (v.estimate / l.offered as f64).min(1.0),
                    })
                    .collect(),
            })
            .collect();
        PcValues::sort(&mut out);
        out
    }
}

impl HotlistTable {
    /// An empty table with parameters `cfg`.
    pub fn new(cfg: HotlistConfig) -> Result<HotlistTable, String> {
        cfg.validate()?;
        Ok(HotlistTable {
            factor: cfg.effective_factor(),
            stride: cfg.capacity + 1,
            rng: Xoshiro256PlusPlus::seed_from_u64(cfg.seed),
            countdown: cfg.period,
            cfg,
            heads: Heads::new(),
            values: Vec::new(),
            counts: Vec::new(),
            loads: 0,
            samples: 0,
        })
    }

    #[inline]
    fn kind_slot(&self, kind: ValueKind) -> Option<usize> {
        self.cfg.kinds.iter().position(|&k| k == kind)
    }

    /// Offers one sample: value `v` of type `kind` at `pc`. A type not in
    /// the configuration is ignored.
    #[inline]
    pub fn add(&mut self, pc: u64, kind: ValueKind, v: u64) {
        let Some(k) = self.kind_slot(kind) else {
            return;
        };
        self.add_at(k, pc, v);
    }

    #[inline]
    fn add_at(&mut self, k: usize, pc: u64, v: u64) {
        let s = match self.heads.find(pc, k as u32) {
            Some(s) => s,
            None => self.new_list(k, pc),
        };
        let head = self.heads.at_mut(s);
        let at = head.n as usize * self.stride;
        let mut list = List {
            state: &mut head.state,
            values: &mut self.values[at..at + self.stride],
            counts: &mut self.counts[at..at + self.stride],
        };
        list.offer(v, self.cfg.variant, self.factor, &mut self.rng);
    }

    /// A new, empty list for (`pc`, type number `k`); returns its slot.
    fn new_list(&mut self, k: usize, pc: u64) -> usize {
        self.values.resize(self.values.len() + self.stride, 0);
        self.counts.resize(self.counts.len() + self.stride, 0);
        self.heads.insert(pc, k as u32)
    }

    /// One load: offered if it is a sample (every `period`-th load).
    #[inline]
    pub fn add_load(&mut self, e: &Event) {
        self.loads += 1;
        self.countdown -= 1;
        if self.countdown != 0 {
            return;
        }
        self.countdown = self.cfg.period;
        self.samples += 1;
        for k in 0..self.cfg.kinds.len() {
            let v = match self.cfg.kinds[k] {
                ValueKind::Loaded => e.value,
                ValueKind::Address => e.addr,
            };
            self.add_at(k, e.pc, v);
        }
    }

    /// Number of hotlists.
    pub fn lists(&self) -> usize {
        self.heads.len()
    }

    /// Values held by the list for (`pc`, `kind`), if it exists.
    pub fn len_of(&self, pc: u64, kind: ValueKind) -> Option<usize> {
        let k = self.kind_slot(kind)?;
        self.heads.get(pc, k as u32).map(|h| h.state.len as usize)
    }

    /// The estimated count of `v` in the list for (`pc`, `kind`): 0 when
    /// it is not there.
    pub fn estimate(&self, pc: u64, kind: ValueKind, v: u64) -> f64 {
        let Some(head) = self
            .kind_slot(kind)
            .and_then(|k| self.heads.get(pc, k as u32))
        else {
            return 0.0;
        };
        let st = &head.state;
        let at = head.n as usize * self.stride;
        (0..st.len as usize)
            .find(|&i| self.values[at + i] == v)
            .map_or(0.0, |i| {
                estimate(self.counts[at + i], st.p, self.cfg.variant)
            })
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.heads.bytes() + (self.values.capacity() + self.counts.capacity()) * 8
    }

    /// Samples offered to the lists so far (DCPI's interrupts).
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Every list's contents.
    pub fn snapshot(&self) -> HotlistSnapshot {
        let variant: Variant = self.cfg.variant;
        let mut lists: Vec<HotlistEntry> = self
            .heads
            .iter()
            .map(|head| {
                let st = &head.state;
                let at = head.n as usize * self.stride;
                let mut values: Vec<HotValue> = (0..st.len as usize)
                    .map(|i| {
                        let c = self.counts[at + i];
                        HotValue {
                            value: self.values[at + i],
                            count: c,
                            estimate: estimate(c, st.p, variant),
                        }
                    })
                    .collect();
                values.sort_unstable_by(|a, b| {
                    b.estimate
                        .total_cmp(&a.estimate)
                        .then(a.value.cmp(&b.value))
                });
                HotlistEntry {
                    pc: head.pc,
                    kind: self.cfg.kinds[head.kind as usize],
                    offered: st.offered,
                    p: st.p,
                    values,
                }
            })
            .collect();
        lists.sort_unstable_by(|a, b| {
            b.offered
                .cmp(&a.offered)
                .then(a.pc.cmp(&b.pc))
                .then(a.kind.cmp(&b.kind))
        });
        HotlistSnapshot {
            config: self.cfg.clone(),
            loads: self.loads,
            samples: self.samples,
            lists,
            bytes: self.bytes(),
        }
    }
}

impl Sink for HotlistTable {
    fn wants(&self) -> ClassSet {
        ClassSet::of(Class::Load)
    }

    fn observe(&mut self, batch: &[Event]) {
        for e in batch {
            if e.class == Class::Load {
                self.add_load(e);
            }
        }
    }
}
