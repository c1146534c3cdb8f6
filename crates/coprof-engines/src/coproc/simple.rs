//! Simple sampling, the baseline the co-processor is compared with (Zilles
//! & Sohi, HPCA 2001, §5): every N-th load (default 1024) is sent to the
//! main processor, which keeps a per-PC table of the most frequent values.
//!
//! Every sample is one interrupt and one sample transferred. The per-PC
//! table holds at most `values_per_pc` values; a new value that finds the
//! table full replaces the least counted one. A value's invariance is its
//! count over the load's samples.

use super::report::{PcStatus, PcValues, ValueEstimate};
use coprof_core::{Class, ClassSet, Event, Sink};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Parameters of [`SimpleSampler`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimpleConfig {
    /// Sample every `period`-th load (paper: 1024).
    pub period: u64,
    /// Values kept per load PC (default 16).
    pub values_per_pc: usize,
}

impl Default for SimpleConfig {
    fn default() -> SimpleConfig {
        SimpleConfig {
            period: 1024,
            values_per_pc: 16,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct PcTable {
    samples: u64,
    values: Vec<(u64, u64)>,
}

/// The simple sampling profiler.
#[derive(Clone, Debug)]
pub struct SimpleSampler {
    cfg: SimpleConfig,
    countdown: u64,
    loads: u64,
    samples: u64,
    table: FxHashMap<u64, PcTable>,
}

/// Its result.
#[derive(Clone, Debug, Serialize)]
pub struct SimpleSnapshot {
    /// The parameters.
    pub config: SimpleConfig,
    /// Loads seen.
    pub loads: u64,
    /// Samples taken: each one interrupt and one sample transferred.
    pub samples: u64,
    /// Every sampled load, heaviest first.
    pub pcs: Vec<PcValues>,
    /// Bytes held by the table.
    pub bytes: usize,
}

impl SimpleSampler {
    /// A sampler with parameters `cfg`.
    pub fn new(cfg: SimpleConfig) -> Result<SimpleSampler, String> {
        if cfg.period == 0 {
            return Err("sampling period must be at least 1 load".into());
        }
        if cfg.values_per_pc == 0 {
            return Err("values per PC must be at least 1".into());
        }
        Ok(SimpleSampler {
            countdown: cfg.period,
            cfg,
            loads: 0,
            samples: 0,
            table: FxHashMap::default(),
        })
    }

    /// One load.
    #[inline]
    pub fn add(&mut self, pc: u64, value: u64) {
        self.loads += 1;
        self.countdown -= 1;
        if self.countdown == 0 {
            self.countdown = self.cfg.period;
            self.take(pc, value);
        }
    }

    fn take(&mut self, pc: u64, value: u64) {
        self.samples += 1;
        let t = self.table.entry(pc).or_default();
        t.samples += 1;
        if let Some(e) = t.values.iter_mut().find(|e| e.0 == value) {
            e.1 += 1;
        } else if t.values.len() < self.cfg.values_per_pc {
            t.values.push((value, 1));
        } else if let Some(min) = t.values.iter_mut().min_by_key(|e| e.1) {
            *min = (value, 1);
        }
    }

    /// Samples taken so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.table.capacity() * (9 + std::mem::size_of::<PcTable>())
            + self
                .table
                .values()
                .map(|t| t.values.capacity() * 16)
                .sum::<usize>()
    }

    /// The profile so far.
    pub fn snapshot(&self) -> SimpleSnapshot {
        let mut pcs: Vec<PcValues> = self
            .table
            .iter()
            .map(|(&pc, t)| {
                let mut values: Vec<ValueEstimate> = t
                    .values
                    .iter()
                    .map(|&(value, n)| ValueEstimate {
                        value,
                        invariance: n as f64 / t.samples as f64,
                    })
                    .collect();
                values.sort_unstable_by(|a, b| {
                    b.invariance
                        .total_cmp(&a.invariance)
                        .then(a.value.cmp(&b.value))
                });
                PcValues {
                    pc,
                    samples: t.samples,
                    weight: t.samples * self.cfg.period,
                    status: PcStatus::Sampled,
                    glacial: false,
                    values,
                }
            })
            .collect();
        PcValues::sort(&mut pcs);
        SimpleSnapshot {
            config: self.cfg.clone(),
            loads: self.loads,
            samples: self.samples,
            pcs,
            bytes: self.bytes(),
        }
    }
}

impl Sink for SimpleSampler {
    fn wants(&self) -> ClassSet {
        ClassSet::of(Class::Load)
    }

    fn observe(&mut self, batch: &[Event]) {
        for e in batch {
            if e.class == Class::Load {
                self.add(e.pc, e.value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_every_nth_load() {
        let mut s = SimpleSampler::new(SimpleConfig {
            period: 4,
            values_per_pc: 16,
        })
        .unwrap();
        let ev: Vec<Event> = (0..100u64)
            .flat_map(|i| {
                [
                    Event::load(0x10, 0, 8, i % 4),
                    Event::new(0x14, Class::IntAlu),
                ]
            })
            .collect();
        s.observe(&ev);
        let snap = s.snapshot();
        assert_eq!((snap.loads, snap.samples), (100, 25));
        // Loads 4, 8, ... (1-based) have value 3: a period resonating with
        // the values sees one value only, as periodic sampling does.
        assert_eq!(snap.pcs[0].values.len(), 1);
        assert_eq!(snap.pcs[0].values[0].value, 3);
    }

    #[test]
    fn table_keeps_the_most_frequent_values() {
        let mut s = SimpleSampler::new(SimpleConfig {
            period: 1,
            values_per_pc: 2,
        })
        .unwrap();
        for v in [1, 1, 1, 2, 2, 3] {
            s.add(0x10, v);
        }
        let snap = s.snapshot();
        let vals: Vec<u64> = snap.pcs[0].values.iter().map(|v| v.value).collect();
        assert_eq!(vals, vec![1, 3], "3 replaced the least counted value, 2");
        assert!((snap.pcs[0].values[0].invariance - 0.5).abs() < 1e-12);
        assert!(SimpleSampler::new(SimpleConfig {
            period: 0,
            values_per_pc: 1
        })
        .is_err());
    }
}
