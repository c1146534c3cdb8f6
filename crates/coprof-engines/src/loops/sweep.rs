//! The design-space sweep of the paper's Figure 3 (Gordon-Ross & Vahid,
//! CASES 2003, §4): the accuracy of every cache size × associativity ×
//! counter width, with and without coalescing (§5), from one pass over the
//! event stream.
//!
//! The pass extracts the taken short backward branches once into an
//! [`SbbStream`]: loop identities as small integers, run-length encoded
//! (consecutive sbbs of one loop are one run). Each configuration then runs
//! over that compact array in turn. A run is applied to a detector with
//! [`LoopDetector::add_sbb_run`], which gives exactly the state that the
//! same number of single sbbs would, so the sweep's results are those of
//! the hardware stepping through the stream sbb by sbb.

use super::config::{ConfigError, LoopConfig};
use super::detector::LoopDetector;
use super::eval::ExactLoopShares;
use crate::grid::pareto_front;
use coprof_core::{ClassSet, Event, Sink};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The taken short backward branches of a stream, run-length encoded.
#[derive(Clone, Debug, Default)]
pub struct SbbStream {
    max_distance: u64,
    /// Loop id → sbb PC.
    pcs: Vec<u64>,
    /// Loop id → the target last seen.
    targets: Vec<u64>,
    /// Loop id → times taken.
    taken: Vec<u64>,
    id_of: FxHashMap<u64, u32>,
    /// Run i: loop `ids[i]` taken `runs[i]` times in a row.
    ids: Vec<u32>,
    runs: Vec<u32>,
    sbbs: u64,
}

impl SbbStream {
    /// An empty stream recognising loops by a back-branch distance of at
    /// most `max_distance` bytes (§3.1).
    pub fn new(max_distance: u64) -> SbbStream {
        SbbStream {
            max_distance,
            ..SbbStream::default()
        }
    }

    /// Appends one taken short backward branch.
    #[inline]
    pub fn push(&mut self, pc: u64, target: u64) {
        self.sbbs += 1;
        let id = match self.id_of.get(&pc) {
            Some(&id) => id,
            None => {
                let id = self.pcs.len() as u32;
                self.id_of.insert(pc, id);
                self.pcs.push(pc);
                self.targets.push(target);
                self.taken.push(0);
                id
            }
        };
        self.targets[id as usize] = target;
        self.taken[id as usize] += 1;
        match (self.ids.last(), self.runs.last_mut()) {
            (Some(&last), Some(run)) if last == id && *run < u32::MAX => *run += 1,
            _ => {
                self.ids.push(id);
                self.runs.push(1);
            }
        }
    }

    /// Taken short backward branches in the stream.
    pub fn sbbs(&self) -> u64 {
        self.sbbs
    }

    /// Runs (maximal stretches of one loop).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    /// Distinct loops.
    pub fn loops(&self) -> usize {
        self.pcs.len()
    }

    /// Bytes the stream holds.
    pub fn bytes(&self) -> usize {
        self.ids.capacity() * 4
            + self.runs.capacity() * 4
            + self.pcs.capacity() * 24
            + self.id_of.capacity() * 13
    }

    /// The exact iteration shares of the most frequent loops.
    pub fn exact(&self) -> ExactLoopShares {
        ExactLoopShares::from_counts(self.pcs.iter().copied().zip(self.taken.iter().copied()))
    }

    /// Runs the whole stream through `detector` and flushes it.
    pub fn replay(&self, detector: &mut LoopDetector) {
        for (&id, &n) in self.ids.iter().zip(&self.runs) {
            let id = id as usize;
            detector.add_sbb_run(self.pcs[id], self.targets[id], n as u64);
        }
        detector.flush();
    }
}

impl Sink for SbbStream {
    /// Only branches and jumps can close a loop.
    fn wants(&self) -> ClassSet {
        ClassSet::LOOP_BRANCHES
    }

    fn observe(&mut self, batch: &[Event]) {
        for e in batch {
            if e.is_short_backward_branch(self.max_distance) {
                self.push(e.pc, e.addr);
            }
        }
    }
}

/// Runs `config` over the whole stream and scores it.
fn evaluate(
    stream: &SbbStream,
    exact: &ExactLoopShares,
    config: LoopConfig,
) -> Result<SweepPoint, ConfigError> {
    let mut d = LoopDetector::new(config)?;
    stream.replay(&mut d);
    let p = d.snapshot();
    Ok(SweepPoint {
        config,
        accuracy: exact.accuracy(&p),
        size_bits: config.size_bits(),
        cache_updates: p.cost.cache_updates,
        halvings: p.cost.halvings,
        coalesced: p.cost.coalesced,
        updates_saved: p.cost.updates_saved,
    })
}

/// The configurations to evaluate.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepSpace {
    /// Cache sizes in entries.
    pub entries: Vec<usize>,
    /// Associativities.
    pub ways: Vec<usize>,
    /// Counter widths in bits.
    pub widths: Vec<u32>,
    /// Coalescing off and on.
    pub coalesce: Vec<bool>,
}

impl Default for SweepSpace {
    /// The paper's Figure 3: sizes {16, 32, 64} × ways {1, 2, 4, 8} ×
    /// widths {4..31} (336 configurations), each without and with
    /// coalescing.
    fn default() -> SweepSpace {
        SweepSpace {
            entries: vec![16, 32, 64],
            ways: vec![1, 2, 4, 8],
            widths: (4..=31).collect(),
            coalesce: vec![false, true],
        }
    }
}

impl SweepSpace {
    /// Every configuration, with the other parameters taken from `base`.
    pub fn configs(&self, base: &LoopConfig) -> Vec<LoopConfig> {
        let mut v = Vec::new();
        for &coalesce in &self.coalesce {
            for &entries in &self.entries {
                for &ways in &self.ways {
                    for &width in &self.widths {
                        v.push(LoopConfig {
                            entries,
                            ways,
                            width,
                            coalesce,
                            ..*base
                        });
                    }
                }
            }
        }
        v
    }
}

/// One configuration's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    /// The configuration.
    pub config: LoopConfig,
    /// 1 − SOD against the exact profile.
    pub accuracy: f64,
    /// Storage in bits (see [`LoopConfig::size_bits`]).
    pub size_bits: u64,
    /// Cache updates written.
    pub cache_updates: u64,
    /// Halvings of every counter.
    pub halvings: u64,
    /// Short backward branches absorbed by the coalescing register.
    pub coalesced: u64,
    /// Share of cache updates saved by coalescing.
    pub updates_saved: f64,
}

/// The sweep's outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepResult {
    /// The accuracy asked for.
    pub target: f64,
    /// Taken short backward branches in the stream.
    pub sbbs: u64,
    /// Every configuration, in the order of [`SweepSpace::configs`].
    pub points: Vec<SweepPoint>,
    /// The smallest configuration reaching `target`: fewest bits, then
    /// fewest ways (a cheaper lookup), then without coalescing.
    pub smallest: Option<SweepPoint>,
    /// The configurations no other beats on both size and accuracy
    /// ([`pareto_front`]), as indices into `points`, smallest first.
    pub front: Vec<usize>,
}

/// Evaluates every configuration of `space` (other parameters from `base`)
/// over `stream`.
pub fn sweep(
    stream: &SbbStream,
    space: &SweepSpace,
    base: &LoopConfig,
    target: f64,
) -> Result<SweepResult, ConfigError> {
    let exact = stream.exact();
    let mut points: Vec<SweepPoint> = Vec::new();
    for config in space.configs(base) {
        config.validate()?;
        // Width matters only through saturation: if the same cache with
        // narrower counters never halved, no counter (nor the coalescing
        // register) ever reached that narrower maximum, so wider counters
        // step through exactly the same states. Its result is this one's.
        if let Some(prev) = points.last() {
            let c = prev.config;
            if prev.halvings == 0
                && c.width < config.width
                && (LoopConfig {
                    width: config.width,
                    ..c
                }) == config
            {
                let same = SweepPoint {
                    config,
                    size_bits: config.size_bits(),
                    ..prev.clone()
                };
                points.push(same);
                continue;
            }
        }
        points.push(evaluate(stream, &exact, config)?);
    }
    let size = |p: &SweepPoint| (p.size_bits, p.config.ways, p.config.coalesce);
    let smallest = points
        .iter()
        .filter(|p| p.accuracy >= target)
        .min_by_key(|p| size(p))
        .cloned();
    let front = pareto_front(
        &points,
        |a, b| size(a).cmp(&size(b)),
        |a, b| b.accuracy.total_cmp(&a.accuracy),
    );
    Ok(SweepResult {
        target,
        sbbs: stream.sbbs(),
        points,
        smallest,
        front,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_space_has_336_configurations_each_way() {
        let s = SweepSpace::default();
        let c = s.configs(&LoopConfig::default());
        assert_eq!(c.len(), 672);
        assert_eq!(c.iter().filter(|c| c.coalesce).count(), 336);
        assert!(c.iter().all(|c| c.validate().is_ok()));
    }

    #[test]
    fn stream_is_run_length_encoded() {
        let mut s = SbbStream::new(4096);
        for (pc, n) in [(0x10, 3), (0x20, 1), (0x10, 2)] {
            for _ in 0..n {
                s.push(pc, pc - 8);
            }
        }
        assert_eq!((s.sbbs(), s.runs(), s.loops()), (6, 3, 2));
        assert_eq!(s.exact().top[0], (0x10, 5.0 / 6.0));
    }

    #[test]
    fn replay_equals_the_detector_fed_directly() {
        let mut s = SbbStream::new(4096);
        let mut d = LoopDetector::new(LoopConfig::sized(4, 2, 5)).unwrap();
        let mut x: u64 = 12345;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let pc = 0x1000 + 4 * ((x >> 33) % 9);
            let reps = 1 + (x >> 50) % 4;
            for _ in 0..reps {
                s.push(pc, 0x1000);
                d.add_sbb(pc, 0x1000);
            }
        }
        d.flush();
        let mut r = LoopDetector::new(LoopConfig::sized(4, 2, 5)).unwrap();
        s.replay(&mut r);
        assert_eq!(r.snapshot().loops, d.snapshot().loops);
        assert_eq!(r.snapshot().cost, d.snapshot().cost);
    }

    #[test]
    fn skipping_wider_widths_changes_nothing() {
        // Skewed loops with long and short runs, some set conflicts.
        let mut s = SbbStream::new(4096);
        let mut x: u64 = 99;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let l = (x >> 33) % 40;
            let l = l * l / 40; // low numbers more often
            for _ in 0..1 + (x >> 58) {
                s.push(0x2000 + 0x24 * l, 0x2000);
            }
        }
        let space = SweepSpace {
            entries: vec![16, 32],
            ways: vec![1, 2, 8],
            widths: (4..=24).collect(),
            coalesce: vec![false, true],
        };
        let base = LoopConfig::default();
        let r = sweep(&s, &space, &base, 0.9).unwrap();
        let exact = s.exact();
        let mut reused = 0;
        for p in &r.points {
            let full = evaluate(&s, &exact, p.config).unwrap();
            assert_eq!(p, &full, "{}", p.config.label());
            reused += (p.halvings == 0) as usize;
        }
        assert!(reused > 0 && reused < r.points.len());
    }

    #[test]
    fn smallest_prefers_fewer_bits() {
        let mut s = SbbStream::new(4096);
        for i in 0..2000u64 {
            s.push(0x100 + 4 * (i % 3), 0x80);
        }
        let r = sweep(&s, &SweepSpace::default(), &LoopConfig::default(), 0.99).unwrap();
        assert_eq!(r.points.len(), 672);
        let best = r.smallest.unwrap();
        // Three loops in equal shares: 16 entries, direct mapped, and the
        // narrowest counters already keep the ratios.
        assert_eq!(best.config.entries, 16);
        assert!(r
            .points
            .iter()
            .filter(|p| p.accuracy >= 0.99)
            .all(|p| p.size_bits >= best.size_bits));
        // The front starts at the smallest configuration of all and each
        // one after it is larger and more accurate; the smallest reaching
        // the target, exact here, is on it.
        let front: Vec<&SweepPoint> = r.front.iter().map(|&i| &r.points[i]).collect();
        assert_eq!(
            front[0].size_bits,
            r.points.iter().map(|p| p.size_bits).min().unwrap()
        );
        for w in front.windows(2) {
            assert!(w[0].size_bits <= w[1].size_bits && w[0].accuracy < w[1].accuracy);
        }
        assert!(front.contains(&&best));
    }
}
