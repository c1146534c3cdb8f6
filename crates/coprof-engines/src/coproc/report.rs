//! The shape every value profiler reports in: per load PC, its estimated
//! values with their invariance (Zilles & Sohi, HPCA 2001, §5.2), so that
//! the co-processor, simple sampling and the Gibbons–Matias hotlists can be
//! compared with each other and with the exact profile.

use coprof_core::metrics::invariance::{weighted_rms_error, Criteria, InvarianceError};
use coprof_core::ExactCounts;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// One value's estimated invariance.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ValueEstimate {
    /// The value.
    pub value: u64,
    /// Estimated share of the load's executions that produced it.
    pub invariance: f64,
}

/// Where a load's profile stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PcStatus {
    /// Still being profiled.
    Profiling,
    /// Masked with a confident estimate (§5.1.4 thresholds): complete.
    Complete,
    /// Masked because its profiling budget was spent.
    Masked,
    /// Sampled by a profiler that never masks (simple sampling, hotlists).
    Sampled,
}

/// One load's estimated values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PcValues {
    /// The load's PC.
    pub pc: u64,
    /// Samples the estimate rests on.
    pub samples: u64,
    /// The profiler's estimate of the load's execution weight (what the
    /// report sorts by).
    pub weight: u64,
    /// Where its profile stands.
    pub status: PcStatus,
    /// Whether it has glacial values (§5.1.4); only the co-processor
    /// tells.
    pub glacial: bool,
    /// Its values, most invariant first.
    pub values: Vec<ValueEstimate>,
}

impl PcValues {
    /// Sorts by weight, heaviest first, ties by lower PC.
    pub fn sort(v: &mut [PcValues]) {
        v.sort_unstable_by(|a, b| b.weight.cmp(&a.weight).then(a.pc.cmp(&b.pc)));
    }
}

/// Each reported (PC, value) pair's estimated invariance.
fn estimates(pcs: &[PcValues]) -> FxHashMap<(u64, u64), f64> {
    pcs.iter()
        .flat_map(|p| {
            p.values
                .iter()
                .map(move |v| ((p.pc, v.value), v.invariance))
        })
        .collect()
}

/// The paper's measure of a value profile (§5.2–5.3): the invariance
/// error of `pcs` against `exact`, root-mean-square and weighted by each
/// pair's executions, over the pairs `criteria` admits; a pair the
/// profile does not report counts with estimate 0.
pub fn invariance_error(
    exact: &ExactCounts,
    criteria: Criteria,
    pcs: &[PcValues],
) -> InvarianceError {
    let est = estimates(pcs);
    weighted_rms_error(exact, criteria, |pc, v| est.get(&(pc, v)).copied())
}
