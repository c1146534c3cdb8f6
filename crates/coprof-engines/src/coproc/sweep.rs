//! The co-processor's design space in one pass: a grid of hardware
//! configurations of the load-value profiler (its slots, §5.1; the
//! co-processor's service rate and its sample buffer, §3.2 and §3.5) fed
//! the same stream, each scored against the exact profile with the
//! paper's weighted RMS invariance error (§5.2–5.3) beside its overhead
//! proxies (§3.5), and the cheapest configuration within an error.
//!
//! An architect sizing the co-processor asks what each part buys on real
//! programs: more slots hold more of a program's hot loads at once and
//! thrash less (A.5); a slower co-processor is cheaper but drops samples
//! when loads come faster than it serves them, and a larger buffer
//! absorbs the bursts. Each configuration is a [`Coprocessor`] of its
//! own, fed only the classes it asks for, so its report is exactly what
//! `coprof values` with the same options gives.

use super::host::{Coprocessor, HostConfig};
use super::lvp::{LoadValueProfiler, LvpConfig};
use crate::grid::{combinations, GridError};
use crate::value_sweep::{ScoredPoint, ValueSweep, ValueSweepResult};
use coprof_core::metrics::invariance::Criteria;
use serde::Serialize;
use std::cmp::Ordering;
use std::fmt;

/// The slot counts a sweep tries unless told otherwise: the paper's
/// baseline, 256, and the two it also measures (§5.1).
pub const DEFAULT_SLOTS: [usize; 3] = [128, 256, 512];
/// The service rates tried by default, in samples per retired
/// instruction: a co-processor that keeps up with every instruction, and
/// ones two, four and eight times slower.
pub const DEFAULT_SERVICE_RATES: [f64; 4] = [1.0, 0.5, 0.25, 0.125];
/// The sample buffers tried by default, in bytes; 1024 is the paper's.
pub const DEFAULT_BUFFERS: [usize; 3] = [256, 1024, 4096];

/// The grid of a sweep: every combination of its three lists.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoprocSpace {
    /// Slots of the load-value profiler.
    pub slots: Vec<usize>,
    /// Samples the co-processor serves per retired instruction.
    pub service_rates: Vec<f64>,
    /// Sample buffer sizes in bytes.
    pub buffers: Vec<usize>,
}

impl Default for CoprocSpace {
    fn default() -> CoprocSpace {
        CoprocSpace {
            slots: DEFAULT_SLOTS.to_vec(),
            service_rates: DEFAULT_SERVICE_RATES.to_vec(),
            buffers: DEFAULT_BUFFERS.to_vec(),
        }
    }
}

/// One configuration of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CoprocPoint {
    /// Slots of the load-value profiler.
    pub slots: usize,
    /// Samples served per retired instruction.
    pub service_rate: f64,
    /// The sample buffer in bytes.
    pub buffer_bytes: usize,
}

impl CoprocSpace {
    /// The configurations, slots slowest and the buffer fastest, each list
    /// in its given order.
    pub fn points(&self) -> Result<Vec<CoprocPoint>, GridError> {
        combinations(
            (&self.slots, &self.service_rates, &self.buffers),
            ["slots", "service rates", "buffers"],
            |slots, service_rate, buffer_bytes| CoprocPoint {
                slots,
                service_rate,
                buffer_bytes,
            },
        )
    }
}

/// Why a sweep cannot start.
pub type SweepError = crate::grid::SweepError<CoprocPoint>;

/// A configuration as an error names it.
impl fmt::Display for CoprocPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} slots, service rate {}, buffer {} bytes",
            self.slots, self.service_rate, self.buffer_bytes
        )
    }
}

/// One configuration's result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SweepResultPoint {
    /// The configuration.
    #[serde(flatten)]
    pub config: CoprocPoint,
    /// The bytes of the hardware: the slots, the sample buffer, the PC
    /// mask table and the partition filter (not the profile the handler
    /// keeps in the main processor's memory).
    pub hardware_bytes: usize,
    /// Interrupts of the main processor (§3.5).
    pub interrupts: u64,
    /// Samples copied from the co-processor to the profile (§3.5).
    pub samples_transferred: u64,
    /// Samples the full buffer turned away.
    pub samples_dropped: u64,
    /// Samples the co-processor's program processed.
    pub samples_processed: u64,
    /// Whether the profile completed and profiling stopped (§5.1.4).
    pub complete: bool,
    /// Loads the profile reports.
    pub loads_reported: usize,
    /// The weighted RMS invariance error against the exact profile.
    pub weighted_rms_error: f64,
    /// Scored pairs the profile does not report (counted with estimate 0).
    pub unreported_pairs: usize,
}

/// A whole sweep's result: `cheapest` is, among the configurations
/// within `max_error`, the one of fewest hardware bytes, then of the
/// slowest co-processor, then of fewest samples transferred, then the
/// earliest in the grid.
pub type SweepResult = ValueSweepResult<SweepResultPoint>;

/// The sweep's sink: one co-processor per configuration and the exact
/// load profile (see [`ValueSweep`]).
pub type CoprocSweep = ValueSweep<Coprocessor<LoadValueProfiler>, CoprocPoint>;

impl CoprocSweep {
    /// A sweep of `space`, the other parameters from `host` and `lvp`.
    ///
    /// ```
    /// use coprof_engines::coproc::sweep::{CoprocSpace, CoprocSweep};
    /// use coprof_engines::coproc::{HostConfig, LvpConfig};
    /// use coprof_core::metrics::invariance::Criteria;
    /// use coprof_core::synth::{generate, GenConfig, Workload};
    /// use coprof_core::{SliceSource, Source};
    ///
    /// let events = generate(&GenConfig::new(Workload::Zipf, 100_000)).unwrap();
    /// let space = CoprocSpace { slots: vec![128, 256], service_rates: vec![1.0, 0.25], buffers: vec![1024] };
    /// let mut sweep = CoprocSweep::new(&space, &HostConfig::default(), &LvpConfig::default()).unwrap();
    /// SliceSource::new(&events).run(&mut sweep).unwrap();
    /// let result = sweep.result(Criteria::default(), 0.1);
    /// assert_eq!(result.points.len(), 4);
    /// // Keeping up with every instruction, the co-processor drops nothing.
    /// assert_eq!(result.points[0].samples_dropped, 0);
    /// ```
    pub fn new(
        space: &CoprocSpace,
        host: &HostConfig,
        lvp: &LvpConfig,
    ) -> Result<CoprocSweep, SweepError> {
        ValueSweep::build(space.points(), |p| build(p, host, lvp))
    }

    /// Each configuration scored against the exact profile once the
    /// stream is over, over the pairs `criteria` admits; the cheapest
    /// must be within `max_error`.
    pub fn result(&self, criteria: Criteria, max_error: f64) -> SweepResult {
        self.score(
            criteria,
            max_error,
            |cp| cp.program().estimates(),
            |config, cp, pcs, e| {
                let stats = cp.stats();
                SweepResultPoint {
                    config,
                    hardware_bytes: cp.hardware_bytes(),
                    interrupts: stats.interrupts,
                    samples_transferred: stats.transferred,
                    samples_dropped: stats.dropped,
                    samples_processed: stats.processed,
                    complete: cp.stopped(),
                    loads_reported: pcs.len(),
                    weighted_rms_error: e.weighted_rms_error,
                    unreported_pairs: e.unreported,
                }
            },
        )
    }
}

/// The co-processor of configuration `p`.
fn build(
    p: CoprocPoint,
    host: &HostConfig,
    lvp: &LvpConfig,
) -> Result<Coprocessor<LoadValueProfiler>, String> {
    let lvp = LoadValueProfiler::new(LvpConfig {
        slots: p.slots,
        ..lvp.clone()
    })?;
    let host = HostConfig {
        service_rate: p.service_rate,
        buffer_bytes: p.buffer_bytes,
        ..host.clone()
    };
    Coprocessor::new(&host, lvp)
}

impl ScoredPoint for SweepResultPoint {
    fn error(&self) -> f64 {
        self.weighted_rms_error
    }

    /// Fewer hardware bytes, then the slower co-processor, then fewer
    /// samples transferred.
    fn cheaper(&self, other: &Self) -> Ordering {
        self.hardware_bytes
            .cmp(&other.hardware_bytes)
            .then(
                self.config
                    .service_rate
                    .total_cmp(&other.config.service_rate),
            )
            .then(self.samples_transferred.cmp(&other.samples_transferred))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coproc::invariance_error;
    use coprof_core::synth::{generate, GenConfig, Workload};
    use coprof_core::{Class, Event, SliceSource, Source};

    fn point(bytes: usize, rate: f64, transferred: u64, error: f64) -> SweepResultPoint {
        SweepResultPoint {
            config: CoprocPoint {
                slots: 256,
                service_rate: rate,
                buffer_bytes: 1024,
            },
            hardware_bytes: bytes,
            interrupts: 0,
            samples_transferred: transferred,
            samples_dropped: 0,
            samples_processed: 0,
            complete: false,
            loads_reported: 0,
            weighted_rms_error: error,
            unreported_pairs: 0,
        }
    }

    fn cheapest(points: &[SweepResultPoint], max_error: f64) -> Option<SweepResultPoint> {
        let within = points.iter().filter(|p| p.weighted_rms_error <= max_error);
        within.min_by(|a, b| a.cheaper(b)).cloned()
    }

    #[test]
    fn the_cheapest_is_the_fewest_bytes_then_the_slowest_then_the_fewest_samples() {
        let points = [
            point(100, 1.0, 10, 0.30),
            point(300, 1.0, 10, 0.01),
            point(200, 1.0, 10, 0.04),
            point(200, 0.25, 50, 0.05),
            point(200, 0.25, 40, 0.05),
        ];
        assert_eq!(cheapest(&points, 0.05), Some(points[4].clone()));
        assert_eq!(cheapest(&points, 0.04), Some(points[2].clone()));
        assert_eq!(cheapest(&points, 0.02), Some(points[1].clone()));
        assert_eq!(cheapest(&points, 0.5), Some(points[0].clone()));
        assert_eq!(cheapest(&points, 0.001), None);
    }

    /// `coprof values` alone: one co-processor fed a source's stream,
    /// which gives a sink only the classes it wants.
    fn alone(events: &[Event], p: CoprocPoint) -> Coprocessor<LoadValueProfiler> {
        let lvp = LoadValueProfiler::new(LvpConfig::with_slots(p.slots)).unwrap();
        let host = HostConfig {
            service_rate: p.service_rate,
            buffer_bytes: p.buffer_bytes,
            ..HostConfig::default()
        };
        let mut cp = Coprocessor::new(&host, lvp).unwrap();
        SliceSource::new(events).run(&mut cp).unwrap();
        cp
    }

    #[test]
    fn each_configuration_is_what_its_coprocessor_alone_gives() {
        let events = generate(&GenConfig::new(Workload::Mixed, 300_000)).unwrap();
        let space = CoprocSpace {
            slots: vec![16, 256],
            service_rates: vec![1.0, 0.05],
            buffers: vec![64, 1024],
        };
        let mut sweep =
            CoprocSweep::new(&space, &HostConfig::default(), &LvpConfig::default()).unwrap();
        SliceSource::new(&events).run(&mut sweep).unwrap();
        let result = sweep.result(Criteria::default(), 0.1);
        assert_eq!(result.points.len(), 8);
        let exact = crate::value_sweep::exact_loads(&events);
        assert_eq!(result.loads, exact.class_count(Class::Load));
        for (p, config) in result.points.iter().zip(space.points().unwrap()) {
            assert_eq!(p.config, config);
            let cp = alone(&events, config);
            let pcs = cp.program().estimates();
            let e = invariance_error(&exact, Criteria::default(), &pcs);
            assert_eq!(p.weighted_rms_error, e.weighted_rms_error, "{config:?}");
            assert_eq!(p.unreported_pairs, e.unreported, "{config:?}");
            assert_eq!(p.interrupts, cp.stats().interrupts, "{config:?}");
            assert_eq!(p.samples_transferred, cp.stats().transferred, "{config:?}");
            assert_eq!(p.samples_dropped, cp.stats().dropped, "{config:?}");
            assert_eq!(p.hardware_bytes, cp.hardware_bytes(), "{config:?}");
        }
        // The slow co-processor with the small buffer drops samples; the
        // one that keeps up never does.
        assert!(
            result.points[6].samples_dropped > 0,
            "{:?}",
            result.points[6]
        );
        assert_eq!(result.points[4].samples_dropped, 0);
    }

    #[test]
    fn a_bad_grid_is_named() {
        let (host, lvp) = (HostConfig::default(), LvpConfig::default());
        let space = CoprocSpace {
            buffers: vec![1024, 8],
            ..CoprocSpace::default()
        };
        let e = CoprocSweep::new(&space, &host, &lvp).err().unwrap();
        assert!(
            e.to_string()
                .starts_with("configuration 128 slots, service rate 1, buffer 8 bytes:"),
            "{e}"
        );
        let space = CoprocSpace {
            service_rates: vec![],
            ..CoprocSpace::default()
        };
        let e = CoprocSweep::new(&space, &host, &lvp).err().unwrap();
        assert_eq!(e, SweepError::Grid(GridError::Empty("service rates")));
        let space = CoprocSpace {
            slots: (1..=30).collect(),
            ..CoprocSpace::default()
        };
        let e = CoprocSweep::new(&space, &host, &lvp).err().unwrap();
        assert_eq!(e, SweepError::Grid(GridError::TooMany(30 * 12)));
    }
}
