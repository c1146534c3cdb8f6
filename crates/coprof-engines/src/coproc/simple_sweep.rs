//! The design space of simple sampling in one pass: a grid of
//! [`SimpleSampler`]s (the sampling period and the values kept per load
//! PC) fed the same stream, each scored against the exact profile with the
//! weighted RMS invariance error (Zilles & Sohi, HPCA 2001, §5.2–5.3), and
//! the cheapest within an error.
//!
//! Simple sampling is the baseline the co-processor is measured against
//! (§5): its cost is an interrupt per sample, so the question it answers
//! is how rarely one may sample and still see each load's values. Each
//! configuration is a sampler of its own, so its line is exactly what
//! `coprof values --algo simple` with the same options gives.

use super::simple::{SimpleConfig, SimpleSampler};
use crate::grid::{combinations, SweepError as GridSweepError};
use crate::value_sweep::{ScoredPoint, ValueSweep, ValueSweepResult};
use coprof_core::metrics::invariance::Criteria;
use serde::Serialize;
use std::cmp::Ordering;
use std::fmt;

/// The sampling periods a sweep tries unless told otherwise, in loads:
/// the hotlist sweep's, so that the two can be read side by side, with
/// the paper's 1 in 1,024 among them.
pub const DEFAULT_PERIODS: [u64; 4] = [1, 64, 1024, 16384];
/// The values kept per load PC tried by default, around the default 16.
pub const DEFAULT_VALUES_PER_PC: [usize; 4] = [4, 8, 16, 32];

/// The grid of a sweep: every combination of its two lists.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimpleSpace {
    /// Sampling periods in loads.
    pub periods: Vec<u64>,
    /// Values kept per load PC.
    pub values_per_pc: Vec<usize>,
}

impl Default for SimpleSpace {
    fn default() -> SimpleSpace {
        SimpleSpace {
            periods: DEFAULT_PERIODS.to_vec(),
            values_per_pc: DEFAULT_VALUES_PER_PC.to_vec(),
        }
    }
}

/// One configuration of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SimplePoint {
    /// Sampling period in loads.
    pub period: u64,
    /// Values kept per load PC.
    pub values_per_pc: usize,
}

impl SimpleSpace {
    /// The configurations, periods slowest, each list in its given order.
    pub fn points(&self) -> Result<Vec<SimplePoint>, crate::grid::GridError> {
        // A grid of two lists is one of three whose last has one member.
        combinations(
            (&self.periods, &self.values_per_pc, &[()]),
            ["periods", "values per PC", ""],
            |period, values_per_pc, ()| SimplePoint {
                period,
                values_per_pc,
            },
        )
    }
}

/// Why a sweep cannot start.
pub type SweepError = GridSweepError<SimplePoint>;

/// A configuration as an error names it.
impl fmt::Display for SimplePoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "period {}, {} values per PC",
            self.period, self.values_per_pc
        )
    }
}

/// One configuration's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepResultPoint {
    /// The configuration.
    #[serde(flatten)]
    pub config: SimplePoint,
    /// Samples taken: each one interrupt and one sample handed over.
    pub samples: u64,
    /// Bytes the per-PC tables hold at the end.
    pub bytes: usize,
    /// Loads the profile reports.
    pub loads_reported: usize,
    /// The weighted RMS invariance error against the exact profile.
    pub weighted_rms_error: f64,
    /// Scored pairs the profile does not report (counted with estimate 0).
    pub unreported_pairs: usize,
}

/// A whole sweep's result: `cheapest` is, among the configurations
/// within `max_error`, the one of fewest samples, then of fewest bytes,
/// then the earliest in the grid.
pub type SweepResult = ValueSweepResult<SweepResultPoint>;

/// The sweep's sink: one sampler per configuration and the exact load
/// profile (see [`ValueSweep`]).
pub type SimpleSweep = ValueSweep<SimpleSampler, SimplePoint>;

impl SimpleSweep {
    /// A sweep of `space`.
    ///
    /// ```
    /// use coprof_engines::coproc::simple_sweep::{SimpleSpace, SimpleSweep};
    /// use coprof_core::metrics::invariance::Criteria;
    /// use coprof_core::synth::{generate, GenConfig, Workload};
    /// use coprof_core::{SliceSource, Source};
    ///
    /// let events = generate(&GenConfig::new(Workload::Zipf, 100_000)).unwrap();
    /// let space = SimpleSpace { periods: vec![1, 64], values_per_pc: vec![4, 16] };
    /// let mut sweep = SimpleSweep::new(&space).unwrap();
    /// SliceSource::new(&events).run(&mut sweep).unwrap();
    /// let result = sweep.result(Criteria::default(), 0.1);
    /// assert_eq!(result.points.len(), 4);
    /// // Sampling 1 in 64 loads takes a 64th of the samples.
    /// assert_eq!(result.points[2].samples, result.points[0].samples / 64);
    /// ```
    pub fn new(space: &SimpleSpace) -> Result<SimpleSweep, SweepError> {
        ValueSweep::build(space.points(), |p| {
            SimpleSampler::new(SimpleConfig {
                period: p.period,
                values_per_pc: p.values_per_pc,
            })
        })
    }

    /// Each configuration scored against the exact profile once the
    /// stream is over, over the pairs `criteria` admits; the cheapest
    /// must be within `max_error`.
    pub fn result(&self, criteria: Criteria, max_error: f64) -> SweepResult {
        self.score(
            criteria,
            max_error,
            |s| s.snapshot().pcs,
            |config, s, pcs, e| SweepResultPoint {
                config,
                samples: s.samples(),
                bytes: s.bytes(),
                loads_reported: pcs.len(),
                weighted_rms_error: e.weighted_rms_error,
                unreported_pairs: e.unreported,
            },
        )
    }
}

impl ScoredPoint for SweepResultPoint {
    fn error(&self) -> f64 {
        self.weighted_rms_error
    }

    /// Fewer samples, then fewer bytes: the paper counts simple
    /// sampling's overhead in interrupts, one per sample (§5.3).
    fn cheaper(&self, other: &Self) -> Ordering {
        self.samples
            .cmp(&other.samples)
            .then(self.bytes.cmp(&other.bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coproc::invariance_error;
    use crate::grid::GridError;
    use coprof_core::synth::{generate, GenConfig, Workload};
    use coprof_core::{Class, SliceSource, Source};

    #[test]
    fn each_configuration_is_what_its_sampler_alone_gives() {
        let events = generate(&GenConfig::new(Workload::Mixed, 300_000)).unwrap();
        let space = SimpleSpace {
            periods: vec![1, 7, 256],
            values_per_pc: vec![1, 16],
        };
        let mut sweep = SimpleSweep::new(&space).unwrap();
        SliceSource::new(&events).run(&mut sweep).unwrap();
        let result = sweep.result(Criteria::default(), 0.1);
        assert_eq!(result.points.len(), 6);
        let exact = crate::value_sweep::exact_loads(&events);
        assert_eq!(result.loads, exact.class_count(Class::Load));
        assert!(result.scored_pairs > 0);
        for (p, config) in result.points.iter().zip(space.points().unwrap()) {
            assert_eq!(p.config, config);
            let mut alone = SimpleSampler::new(SimpleConfig {
                period: config.period,
                values_per_pc: config.values_per_pc,
            })
            .unwrap();
            SliceSource::new(&events).run(&mut alone).unwrap();
            let snap = alone.snapshot();
            let e = invariance_error(&exact, Criteria::default(), &snap.pcs);
            assert_eq!(p.weighted_rms_error, e.weighted_rms_error, "{config:?}");
            assert_eq!(p.unreported_pairs, e.unreported, "{config:?}");
            assert_eq!(p.samples, snap.samples, "{config:?}");
            assert_eq!(p.bytes, snap.bytes, "{config:?}");
            assert_eq!(p.loads_reported, snap.pcs.len(), "{config:?}");
        }
        // Every load sampled with room for its values is exact.
        assert_eq!(result.points[1].weighted_rms_error, 0.0);
        // One value per PC cannot hold a load's second value.
        assert!(result.points[0].weighted_rms_error > 0.0);
        let within: Vec<&SweepResultPoint> = result
            .points
            .iter()
            .filter(|p| p.weighted_rms_error <= 0.1)
            .collect();
        let fewest = within.iter().map(|p| p.samples).min();
        assert_eq!(result.cheapest.as_ref().map(|c| c.samples), fewest);
    }

    #[test]
    fn a_bad_grid_is_named() {
        let space = SimpleSpace {
            values_per_pc: vec![16, 0],
            ..SimpleSpace::default()
        };
        let e = SimpleSweep::new(&space).err().unwrap();
        assert_eq!(
            e.to_string(),
            "configuration period 1, 0 values per PC: values per PC must be at least 1"
        );
        let space = SimpleSpace {
            periods: vec![],
            ..SimpleSpace::default()
        };
        let e = SimpleSweep::new(&space).err().unwrap();
        assert_eq!(e, SweepError::Grid(GridError::Empty("periods")));
    }
}
