//! The hotlists' design space in one pass: a grid of DCPI value-sampling
//! configurations (the values per hotlist N and the Gibbons–Matias sample
//! kind of §2.2, and the sampling period) fed the same stream, each
//! scored against the exact profile with the weighted RMS invariance
//! error the co-processor paper uses (Zilles & Sohi, HPCA 2001, §5.2–5.3),
//! and the cheapest within an error.
//!
//! Whoever sizes hotlists for a runtime or a monitor asks what each part
//! buys: a larger N keeps more of a load's values exactly, and a longer
//! period costs fewer samples (DCPI's interrupts) but sees less. Each
//! configuration is a [`HotlistTable`] of its own, so its report is
//! exactly what `coprof values --algo hotlist` with the same options
//! gives.

use super::config::{HotlistConfig, ValueKind, Variant};
use super::table::HotlistTable;
use crate::grid::{combinations, GridError};
use crate::value_sweep::{ScoredPoint, ValueSweep, ValueSweepResult};
use coprof_core::metrics::invariance::Criteria;
use serde::Serialize;
use std::cmp::Ordering;
use std::fmt;

/// The values per hotlist a sweep tries unless told otherwise, around
/// DCPI's N = 16.
pub const DEFAULT_SIZES: [usize; 4] = [4, 8, 16, 32];
/// The sampling periods tried by default, in loads: every load, and 1 in
/// 64, 1024 and 16384.
pub const DEFAULT_PERIODS: [u64; 4] = [1, 64, 1024, 16384];
/// The sample kinds tried by default: both.
pub const DEFAULT_VARIANTS: [Variant; 2] = [Variant::Concise, Variant::Counting];

/// The grid of a sweep: every combination of its three lists.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HotlistSpace {
    /// Values per hotlist.
    pub sizes: Vec<usize>,
    /// Sampling periods in loads.
    pub periods: Vec<u64>,
    /// Sample kinds.
    pub variants: Vec<Variant>,
}

impl Default for HotlistSpace {
    fn default() -> HotlistSpace {
        HotlistSpace {
            sizes: DEFAULT_SIZES.to_vec(),
            periods: DEFAULT_PERIODS.to_vec(),
            variants: DEFAULT_VARIANTS.to_vec(),
        }
    }
}

/// One configuration of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct HotlistPoint {
    /// Values per hotlist.
    pub size: usize,
    /// Sampling period in loads.
    pub period: u64,
    /// Sample kind.
    pub variant: Variant,
}

impl HotlistSpace {
    /// The configurations, sizes slowest and the variant fastest, each
    /// list in its given order.
    pub fn points(&self) -> Result<Vec<HotlistPoint>, GridError> {
        combinations(
            (&self.sizes, &self.periods, &self.variants),
            ["hotlist sizes", "periods", "variants"],
            |size, period, variant| HotlistPoint {
                size,
                period,
                variant,
            },
        )
    }
}

/// Why a sweep cannot start.
pub type SweepError = crate::grid::SweepError<HotlistPoint>;

/// A configuration as an error names it.
impl fmt::Display for HotlistPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "hotlist size {}, period {}, {} samples",
            self.size, self.period, self.variant
        )
    }
}

/// One configuration's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepResultPoint {
    /// The configuration.
    #[serde(flatten)]
    pub config: HotlistPoint,
    /// Bytes the hotlists hold at the end: what a runtime keeps.
    pub bytes: usize,
    /// Samples offered to the lists: DCPI's interrupts.
    pub samples: u64,
    /// Loads the profile reports.
    pub loads_reported: usize,
    /// The weighted RMS invariance error against the exact profile.
    pub weighted_rms_error: f64,
    /// Scored pairs the profile does not report (counted with estimate 0).
    pub unreported_pairs: usize,
}

/// A whole sweep's result: `cheapest` is, among the configurations
/// within `max_error`, the one of fewest bytes, then of fewest samples,
/// then the earliest in the grid.
pub type SweepResult = ValueSweepResult<SweepResultPoint>;

/// The sweep's sink: one hotlist table per configuration and the exact
/// load profile (see [`ValueSweep`]).
pub type HotlistSweep = ValueSweep<HotlistTable, HotlistPoint>;

impl HotlistSweep {
    /// A sweep of `space` over the values loaded, the other parameters
    /// (the factor, the seed) from `base`.
    ///
    /// ```
    /// use coprof_engines::hotlist::sweep::{HotlistSpace, HotlistSweep};
    /// use coprof_engines::hotlist::{HotlistConfig, Variant};
    /// use coprof_core::metrics::invariance::Criteria;
    /// use coprof_core::synth::{generate, GenConfig, Workload};
    /// use coprof_core::{SliceSource, Source};
    ///
    /// let events = generate(&GenConfig::new(Workload::Zipf, 100_000)).unwrap();
    /// let space = HotlistSpace { sizes: vec![4, 16], periods: vec![1, 64], variants: vec![Variant::Concise] };
    /// let mut sweep = HotlistSweep::new(&space, &HotlistConfig::default()).unwrap();
    /// SliceSource::new(&events).run(&mut sweep).unwrap();
    /// let result = sweep.result(Criteria::default(), 0.1);
    /// assert_eq!(result.points.len(), 4);
    /// // Sampling 1 in 64 loads offers a 64th of the samples.
    /// assert_eq!(result.points[1].samples, result.points[0].samples / 64);
    /// ```
    pub fn new(space: &HotlistSpace, base: &HotlistConfig) -> Result<HotlistSweep, SweepError> {
        ValueSweep::build(space.points(), |p| {
            HotlistTable::new(HotlistConfig {
                capacity: p.size,
                period: p.period,
                variant: p.variant,
                kinds: vec![ValueKind::Loaded],
                ..base.clone()
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
            |h| h.snapshot().pc_values(ValueKind::Loaded),
            |config, h, pcs, e| SweepResultPoint {
                config,
                bytes: h.bytes(),
                samples: h.samples(),
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

    /// Fewer bytes, then fewer samples.
    fn cheaper(&self, other: &Self) -> Ordering {
        self.bytes
            .cmp(&other.bytes)
            .then(self.samples.cmp(&other.samples))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coproc::invariance_error;
    use coprof_core::synth::{generate, GenConfig, Workload};
    use coprof_core::{SliceSource, Source};

    #[test]
    fn each_configuration_is_what_its_table_alone_gives() {
        let events = generate(&GenConfig::new(Workload::Mixed, 300_000)).unwrap();
        let space = HotlistSpace {
            sizes: vec![2, 16],
            periods: vec![1, 16],
            variants: vec![Variant::Concise, Variant::Counting],
        };
        let base = HotlistConfig {
            seed: 5,
            ..HotlistConfig::default()
        };
        let mut sweep = HotlistSweep::new(&space, &base).unwrap();
        SliceSource::new(&events).run(&mut sweep).unwrap();
        let result = sweep.result(Criteria::default(), 0.1);
        assert_eq!(result.points.len(), 8);
        let exact = crate::value_sweep::exact_loads(&events);
        assert!(result.scored_pairs > 0);
        for (p, config) in result.points.iter().zip(space.points().unwrap()) {
            assert_eq!(p.config, config);
            let mut alone = HotlistTable::new(HotlistConfig {
                capacity: config.size,
                period: config.period,
                variant: config.variant,
                ..base.clone()
            })
            .unwrap();
            SliceSource::new(&events).run(&mut alone).unwrap();
            let pcs = alone.snapshot().pc_values(ValueKind::Loaded);
            let e = invariance_error(&exact, Criteria::default(), &pcs);
            assert_eq!(p.weighted_rms_error, e.weighted_rms_error, "{config:?}");
            assert_eq!(p.unreported_pairs, e.unreported, "{config:?}");
            assert_eq!(p.samples, alone.snapshot().samples, "{config:?}");
            assert_eq!(p.bytes, alone.bytes(), "{config:?}");
            assert_eq!(p.loads_reported, pcs.len(), "{config:?}");
        }
        let within: Vec<&SweepResultPoint> = result
            .points
            .iter()
            .filter(|p| p.weighted_rms_error <= 0.1)
            .collect();
        let least = within.iter().map(|p| p.bytes).min();
        assert_eq!(result.cheapest.as_ref().map(|c| c.bytes), least);
    }

    #[test]
    fn a_bad_grid_is_named() {
        let base = HotlistConfig::default();
        let space = HotlistSpace {
            sizes: vec![16, 0],
            ..HotlistSpace::default()
        };
        let e = HotlistSweep::new(&space, &base).err().unwrap();
        assert!(
            e.to_string()
                .starts_with("configuration hotlist size 0, period 1, concise samples:"),
            "{e}"
        );
        let space = HotlistSpace {
            variants: vec![],
            ..HotlistSpace::default()
        };
        let e = HotlistSweep::new(&space, &base).err().unwrap();
        assert_eq!(e, SweepError::Grid(GridError::Empty("variants")));
    }
}
