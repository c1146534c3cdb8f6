//! RAP's design space in one pass: a grid of configurations (the error
//! bound ε of §2.3, the branching factor b of the multibit trie of
//! §3.2.2, the merging buffer of §3.2.1) fed the same stream, each checked
//! against the exact profile with the paper's measures (Figure 10), and the
//! smallest configuration that reaches an accuracy.
//!
//! An architect choosing the hardware's sizes asks what each parameter
//! buys on real programs: a larger ε or b makes the tree smaller or
//! shallower and the hot ranges coarser or less exact; a buffer costs
//! bytes of its own and saves tree updates. Each configuration is an
//! independent [`RangeProfiler`], so its report is exactly what `coprof
//! ranges` with the same options gives.

use super::check::{check, check_hot, ExactPoints};
use super::config::{entry_bytes, ConfigError, RapConfig};
use super::engine::Rap;
use super::streams::{RangeProfiler, Stream};
use crate::grid::{combinations, pareto_front, GridError};
use coprof_core::{all_with_runs, Blocks, ClassSet, Event, Run, Sink};
use serde::Serialize;
use std::fmt;

/// Bytes of a tree node in the memory a configuration is charged: a
/// 64-bit counter and the 32-bit index of its first child, what the
/// engine's node arrays hold per node.
pub const NODE_BYTES: usize = 12;

/// The error bounds a sweep tries unless told otherwise: the paper's two
/// (10% and 1%) and the steps around them.
pub const DEFAULT_EPSILONS: [f64; 4] = [0.1, 0.05, 0.01, 0.005];
/// The branching factors tried by default: binary to 16-ary tries.
pub const DEFAULT_BRANCHINGS: [u32; 4] = [2, 4, 8, 16];
/// The merging buffers tried by default, in bytes (0: none); 1024 is the
/// paper's.
pub const DEFAULT_BUFFERS: [usize; 4] = [0, 256, 1024, 4096];

/// The grid of a sweep: every combination of its three lists.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepSpace {
    /// Error bounds ε.
    pub epsilons: Vec<f64>,
    /// Branching factors b.
    pub branchings: Vec<u32>,
    /// Merging buffer capacities in bytes, 0 for no buffer.
    pub buffers: Vec<usize>,
}

impl Default for SweepSpace {
    fn default() -> SweepSpace {
        SweepSpace {
            epsilons: DEFAULT_EPSILONS.to_vec(),
            branchings: DEFAULT_BRANCHINGS.to_vec(),
            buffers: DEFAULT_BUFFERS.to_vec(),
        }
    }
}

impl SweepSpace {
    /// The configurations, ε slowest and the buffer fastest, each list in
    /// its given order; the other parameters (universe, merge factor)
    /// from `base`.
    pub fn configs(&self, base: &RapConfig) -> Result<Vec<RapConfig>, GridError> {
        combinations(
            (&self.epsilons, &self.branchings, &self.buffers),
            ["epsilons", "branching factors", "buffers"],
            |epsilon, branching, buffer| RapConfig {
                epsilon,
                branching,
                buffer_bytes: (buffer > 0).then_some(buffer),
                ..base.clone()
            },
        )
    }
}

/// Why a sweep cannot start.
#[derive(Clone, Debug, PartialEq)]
pub enum SweepError {
    /// An empty list or too many configurations.
    Grid(GridError),
    /// A configuration the engine refuses, and why.
    Config(Box<RapConfig>, ConfigError),
}

impl fmt::Display for SweepError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SweepError::Grid(e) => e.fmt(f),
            SweepError::Config(c, e) => write!(
                f,
                "configuration epsilon {}, branching {}, buffer {} bytes: {e}",
                c.epsilon,
                c.branching,
                c.buffer_bytes.unwrap_or(0)
            ),
        }
    }
}

impl std::error::Error for SweepError {}

/// One configuration's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepPoint {
    /// The error bound ε.
    pub epsilon: f64,
    /// The branching factor b.
    pub branching: u32,
    /// The merging buffer's capacity in bytes (0: none).
    pub buffer_bytes: usize,
    /// Its slots.
    pub buffer_entries: usize,
    /// Events the buffer combined into an entry already there.
    pub buffer_hits: u64,
    /// Most live nodes at any time.
    pub nodes_max: usize,
    /// Live nodes averaged over the events.
    pub nodes_avg: f64,
    /// What the configuration needs at its largest: [`NODE_BYTES`] per
    /// node at `nodes_max`, plus the buffer's entries.
    pub memory_bytes: usize,
    /// Hot ranges found.
    pub hot_ranges: usize,
    /// Average percentage error of the hot ranges, (exact − estimate) /
    /// exact (Figure 10).
    pub avg_error_pct: f64,
    /// Largest percentage error of a hot range.
    pub max_error_pct: f64,
    /// The largest error of any range of the final tree over ε·n: at most
    /// 1 by the paper's bound (§2.3).
    pub worst_over_bound: f64,
    /// 1 − the average hot-range error: the paper's "accuracy".
    pub accuracy: f64,
}

/// A whole sweep's result.
#[derive(Clone, Debug, Serialize)]
pub struct SweepResult {
    /// The profile swept.
    pub stream: Stream,
    /// Events in the stream.
    pub n: u64,
    /// Distinct points in the stream.
    pub distinct: usize,
    /// The share of the events that makes a range hot.
    pub hot: f64,
    /// The accuracy asked for.
    pub target: f64,
    /// Every configuration, in the order of [`SweepSpace::configs`].
    pub points: Vec<SweepPoint>,
    /// The configuration with the least memory among those reaching
    /// `target` (then the fewer average nodes, then the earlier in the
    /// grid), if any does.
    pub smallest: Option<SweepPoint>,
    /// The configurations no other beats on both memory and accuracy
    /// ([`pareto_front`]), as indices into `points`, smallest first.
    pub front: Vec<usize>,
}

/// The sweep's sink: one [`RangeProfiler`] per configuration and the exact
/// profile, all fed the same stream. Fed as one sink it feeds them in
/// turn; [`parts`](RapSweep::parts) hands them out to be fed on threads
/// of their own.
pub struct RapSweep {
    stream: Stream,
    configs: Vec<RapConfig>,
    profilers: Vec<RangeProfiler<1>>,
    exact: ExactPoints<1>,
}

impl RapSweep {
    /// A sweep of `space` over `stream`, the other parameters from `base`.
    ///
    /// ```
    /// use coprof_engines::rap::sweep::{RapSweep, SweepSpace};
    /// use coprof_engines::rap::{RapConfig, Stream};
    /// use coprof_core::synth::{generate, GenConfig, Workload};
    /// use coprof_core::{SliceSource, Source};
    ///
    /// let events = generate(&GenConfig::new(Workload::Loops, 50_000)).unwrap();
    /// let space = SweepSpace { epsilons: vec![0.1, 0.01], branchings: vec![4], buffers: vec![0, 1024] };
    /// let mut sweep = RapSweep::new(Stream::Pc, &space, &RapConfig::default()).unwrap();
    /// SliceSource::new(&events).run(&mut sweep).unwrap();
    /// let result = sweep.result(0.1, 0.95);
    /// assert_eq!(result.points.len(), 4);
    /// assert!(result.points.iter().all(|p| p.worst_over_bound <= 1.0));
    /// ```
    pub fn new(
        stream: Stream,
        space: &SweepSpace,
        base: &RapConfig,
    ) -> Result<RapSweep, SweepError> {
        let configs = space.configs(base).map_err(SweepError::Grid)?;
        let profilers = configs
            .iter()
            .map(|c| {
                Rap::new(c.clone())
                    .map(|rap| RangeProfiler::new(rap, [stream]))
                    .map_err(|e| SweepError::Config(Box::new(c.clone()), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RapSweep {
            stream,
            configs,
            profilers,
            exact: ExactPoints::new([stream]),
        })
    }

    /// Each configuration's profiler and the exact profile, as sinks that
    /// may be fed on threads of their own, each the whole stream.
    pub fn parts(&mut self) -> Vec<&mut (dyn Sink + Send)> {
        let mut out: Vec<&mut (dyn Sink + Send)> = Vec::with_capacity(self.profilers.len() + 1);
        for p in &mut self.profilers {
            out.push(p);
        }
        out.push(&mut self.exact);
        out
    }

    /// Every sink of [`parts`](RapSweep::parts), one after the other.
    fn each(&mut self, mut f: impl FnMut(&mut dyn Sink)) {
        for s in self.parts() {
            f(s);
        }
    }

    /// Each configuration checked against the exact profile, once the
    /// stream is over; ranges taking `hot` of the events are hot, and the
    /// smallest configuration must reach `target` accuracy.
    pub fn result(&mut self, hot: f64, target: f64) -> SweepResult {
        let exact = &self.exact;
        let points: Vec<SweepPoint> = self
            .profilers
            .iter_mut()
            .zip(&self.configs)
            .map(|(profiler, config)| {
                let snap = profiler.snapshot();
                let c = check(&snap, exact);
                let (ranges, max_pct, avg_pct) = check_hot(snap.hot_ranges(hot), &c);
                // The bytes of the entries the buffer holds, which may be
                // fewer than asked for (whole entries only).
                let buffer_held = snap.buffer_entries * entry_bytes(1);
                SweepPoint {
                    epsilon: config.epsilon,
                    branching: config.branching,
                    buffer_bytes: config.buffer_bytes.unwrap_or(0),
                    buffer_entries: snap.buffer_entries,
                    buffer_hits: snap.buffer_hits,
                    nodes_max: snap.nodes_max,
                    nodes_avg: snap.nodes_avg,
                    memory_bytes: snap.nodes_max * NODE_BYTES + buffer_held,
                    hot_ranges: ranges.len(),
                    avg_error_pct: avg_pct,
                    max_error_pct: max_pct,
                    worst_over_bound: c.max_abs_error_over_n / config.epsilon,
                    accuracy: 1.0 - avg_pct / 100.0,
                }
            })
            .collect();
        let smallest = smallest(&points, target);
        let front = pareto_front(&points, smaller, |a, b| b.accuracy.total_cmp(&a.accuracy));
        SweepResult {
            stream: self.stream,
            n: exact.n(),
            distinct: exact.distinct(),
            hot,
            target,
            points,
            smallest,
            front,
        }
    }
}

/// Less memory, then fewer average nodes (less work per event).
fn smaller(a: &SweepPoint, b: &SweepPoint) -> std::cmp::Ordering {
    a.memory_bytes
        .cmp(&b.memory_bytes)
        .then(a.nodes_avg.total_cmp(&b.nodes_avg))
}

/// The point of least memory reaching `target` ([`smaller`]), then the
/// first in the grid.
fn smallest(points: &[SweepPoint], target: f64) -> Option<SweepPoint> {
    points
        .iter()
        .filter(|p| p.accuracy >= target)
        .min_by(|a, b| smaller(a, b))
        .cloned()
}

impl Sink for RapSweep {
    fn wants(&self) -> ClassSet {
        self.exact.wants()
    }
    fn observe(&mut self, batch: &[Event]) {
        self.each(|s| s.observe(batch));
    }
    fn finish(&mut self) {
        self.each(|s| s.finish());
    }
    fn wants_with_runs(&self) -> Option<ClassSet> {
        let sinks = self.profilers.iter().map(|p| p as &dyn Sink);
        all_with_runs(sinks.chain(std::iter::once(&self.exact as &dyn Sink)))
    }
    fn runs_follow(&mut self) {
        self.each(|s| s.runs_follow());
    }
    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        self.each(|s| s.observe_runs(runs, blocks));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coprof_core::synth::{generate, GenConfig, Workload};
    use coprof_core::{SliceSource, Source};

    fn point(memory: usize, nodes_avg: f64, accuracy: f64) -> SweepPoint {
        SweepPoint {
            epsilon: 0.1,
            branching: 4,
            buffer_bytes: 0,
            buffer_entries: 0,
            buffer_hits: 0,
            nodes_max: 0,
            nodes_avg,
            memory_bytes: memory,
            hot_ranges: 0,
            avg_error_pct: 0.0,
            max_error_pct: 0.0,
            worst_over_bound: 0.0,
            accuracy,
        }
    }

    #[test]
    fn the_smallest_is_the_least_memory_that_reaches_the_target() {
        let points = [
            point(100, 5.0, 0.90),
            point(300, 9.0, 0.99),
            point(200, 8.0, 0.985),
            point(200, 7.0, 0.98),
        ];
        assert_eq!(smallest(&points, 0.98), Some(points[3].clone()));
        assert_eq!(smallest(&points, 0.99), Some(points[1].clone()));
        assert_eq!(smallest(&points, 0.5), Some(points[0].clone()));
        assert_eq!(smallest(&points, 0.999), None);
    }

    #[test]
    fn each_configuration_is_what_its_engine_alone_gives() {
        let events = generate(&GenConfig::new(Workload::Zipf, 60_000)).unwrap();
        let space = SweepSpace {
            epsilons: vec![0.1, 0.02],
            branchings: vec![2, 16],
            buffers: vec![0, 256],
        };
        let base = RapConfig::default();
        let mut sweep = RapSweep::new(Stream::LoadValue, &space, &base).unwrap();
        SliceSource::new(&events).run(&mut sweep).unwrap();
        let result = sweep.result(0.1, 0.9);
        assert_eq!(result.points.len(), 8);
        for (p, config) in result.points.iter().zip(space.configs(&base).unwrap()) {
            let rap = Rap::new(config.clone()).unwrap();
            let mut alone = RangeProfiler::new(rap, [Stream::LoadValue]);
            SliceSource::new(&events).run(&mut alone).unwrap();
            let snap = alone.snapshot();
            assert_eq!(
                (p.epsilon, p.branching, p.buffer_bytes),
                (
                    config.epsilon,
                    config.branching,
                    config.buffer_bytes.unwrap_or(0)
                )
            );
            assert_eq!(p.nodes_max, snap.nodes_max, "{config:?}");
            assert_eq!(p.nodes_avg, snap.nodes_avg, "{config:?}");
            assert_eq!(p.buffer_hits, snap.buffer_hits, "{config:?}");
            assert_eq!(p.hot_ranges, snap.hot_ranges(0.1).len(), "{config:?}");
            assert!(p.worst_over_bound <= 1.0, "{config:?}: {p:?}");
            let buffer = snap.buffer_entries * entry_bytes(1);
            assert_eq!(p.memory_bytes, snap.nodes_max * NODE_BYTES + buffer);
        }
        let loads = events
            .iter()
            .filter(|e| Stream::LoadValue.point(e).is_some());
        assert_eq!(result.n, loads.count() as u64);
    }

    #[test]
    fn a_bad_grid_is_named() {
        let base = RapConfig::default();
        let space = SweepSpace {
            branchings: vec![4, 3],
            ..SweepSpace::default()
        };
        let e = RapSweep::new(Stream::Pc, &space, &base).err().unwrap();
        assert!(
            e.to_string()
                .starts_with("configuration epsilon 0.1, branching 3, buffer 0 bytes:"),
            "{e}"
        );
        let space = SweepSpace {
            buffers: vec![],
            ..SweepSpace::default()
        };
        let e = RapSweep::new(Stream::Pc, &space, &base).err().unwrap();
        assert_eq!(e, SweepError::Grid(GridError::Empty("buffers")));
        let space = SweepSpace {
            epsilons: (1..100).map(|i| i as f64 / 100.0).collect(),
            ..SweepSpace::default()
        };
        let e = RapSweep::new(Stream::Pc, &space, &base).err().unwrap();
        assert_eq!(e, SweepError::Grid(GridError::TooMany(99 * 16)));
    }
}
