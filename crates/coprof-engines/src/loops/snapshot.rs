//! What the frequent loop detector reports (Gordon-Ross & Vahid, CASES
//! 2003, §3.3 frequencies, §5 Fig. 4 update savings): the resident loops
//! ranked by frequency, and the hardware's activity for power estimates.

use super::config::LoopConfig;
use serde::Serialize;

/// A snapshot of the detector.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoopProfile {
    /// The configuration that produced it.
    pub config: LoopConfig,
    /// Every resident loop, most frequent first (ties: lower PC first).
    pub loops: Vec<DetectedLoop>,
    /// Taken short backward branches seen.
    pub sbbs: u64,
    /// Of those, tallied after sampling (§6).
    pub tallied: u64,
    /// Retired instructions seen (0 when fed short backward branches only).
    pub instructions: u64,
    /// Whether any instruction was a 2-byte compressed one: body lengths
    /// in instructions assume 4-byte instructions and are then too small.
    pub compressed_seen: bool,
    /// What the hardware did.
    pub cost: HardwareCost,
    /// Bytes the detector holds.
    pub bytes: usize,
}

/// One detected loop.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DetectedLoop {
    /// 1 for the most frequent.
    pub rank: usize,
    /// PC of the loop's short backward branch: the loop's identity.
    pub pc: u64,
    /// First PC of the body: the branch's target.
    pub body_lo: u64,
    /// Last PC of the body: the branch itself.
    pub body_hi: u64,
    /// The frequency counter, as the cache holds it (after halvings).
    pub count: u64,
    /// `count × sample interval`: the iterations the counter stands for
    /// (a lower bound once halvings have happened).
    pub iterations: u64,
    /// Body length in instructions: (body_hi − body_lo) / 4 + 1, exact for
    /// code of 4-byte instructions only.
    pub body_instructions: u64,
    /// Estimated share of loop iterations: this counter over the sum of
    /// all counters in the cache. Halvings keep ratios, so this is the
    /// quantity the hardware measures.
    pub share: f64,
    /// Estimated share of execution: `iterations × body_instructions` over
    /// the retired instructions seen (or, when none were counted, over the
    /// same product summed over the detected loops). A proxy for time: it
    /// counts each iteration as one pass over the static body, so an outer
    /// loop's inner loops are counted once per outer iteration.
    pub exec_share: f64,
}

/// The hardware's activity (§5, Fig. 4): enough to estimate dynamic power
/// as energy per read, write and halving times these counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct HardwareCost {
    /// Updates written to the cache (increments, or coalesced additions).
    pub cache_updates: u64,
    /// Set reads (one per update).
    pub cache_reads: u64,
    /// Entry writes (one per update, plus every entry per halving).
    pub cache_writes: u64,
    /// Times every counter was halved.
    pub halvings: u64,
    /// Updates that missed.
    pub misses: u64,
    /// Misses that evicted a resident loop.
    pub replacements: u64,
    /// Tallied short backward branches absorbed by the coalescing register
    /// without an update of their own.
    pub coalesced: u64,
    /// Share of cache updates saved by coalescing: `coalesced / tallied`
    /// (the paper's Fig. 4 metric; 0 without coalescing).
    pub updates_saved: f64,
}
