//! The load-value profiler's parameters, with the paper's defaults
//! (Zilles & Sohi, HPCA 2001, §5.1 and Appendix A).
//!
//! Where the paper gives a number it is the default here; where a rule
//! needs a number the paper leaves open, the default is named and
//! documented as this implementation's choice.

use serde::Serialize;

/// Parameters of [`LoadValueProfiler`](super::LoadValueProfiler).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LvpConfig {
    /// Slots (PC, active value, counters); paper baseline 256, also 128
    /// and 512 (§5.1).
    pub slots: usize,
    /// Width of each slot's hit and miss counters in bits (paper: 1 byte).
    pub hit_miss_bits: u32,
    /// Width of each slot's total counter in bits (paper: 2 bytes).
    pub total_bits: u32,
    /// A.1 re-sampling: when the active value's measured invariance
    /// hit / (hit + miss) falls below this, the slot re-selects its active
    /// value (paper: 20%).
    pub resample_below: f64,
    /// A.2: a re-selection needed after this many samples in the slot turns
    /// the slot off instead (paper: 16).
    pub off_after_samples: u16,
    /// A.3 informational replacement: random bits drawn from the LFSR;
    /// the next-up slot is replaced iff the number (0..2^bits) exceeds its
    /// total counter (paper: 4 bits, 0..15).
    pub replace_random_bits: u32,
    /// A.4: the failed-replacement counter raises an interrupt when it
    /// reaches this value. The paper does not fix it; the default equals
    /// the baseline's slot count, 256.
    pub interrupt_threshold: u32,
    /// A.5 thrash detection: more than `thrash_factor × slots`
    /// replacements since the last restart raise an interrupt (paper: 4).
    pub thrash_factor: u64,
    /// A.5: thrashing detected within this many samples of a restart is
    /// "fast" and splits the program 4 ways, else 2 ways. The paper does
    /// not fix it; the default is 8 × the baseline's 256 slots, twice the
    /// smallest number of samples that can reach the thrash limit.
    pub fast_thrash_samples: u64,
    /// A.5: no further split once the partition mask is this wide.
    pub max_partition_bits: u32,
    /// §5.1.4: an instruction whose estimated invariance is at or above
    /// this is masked as complete (this implementation's default: 90%).
    pub high_invariance: f64,
    /// §5.1.4: an instruction whose estimated invariance is at or below
    /// this is masked as complete (this implementation's default: 10%).
    pub low_invariance: f64,
    /// §5.1.4: the thresholds apply only once the instruction has this
    /// many samples in the profile (this implementation's default: 64).
    pub confidence_samples: u64,
    /// §5.1.4: the thresholds apply only once the instruction has been
    /// profiled in this many intervals, so that an estimate from one
    /// window is confirmed in another before it is trusted; this is what
    /// lets glacial values show (this implementation's default: 2).
    pub confidence_profiles: u32,
    /// §5.1.4: profiles of one load count towards confidence and towards
    /// `max_profiles` only when spaced in time: a profile counts if the
    /// retired-instruction count has grown by at least this factor since
    /// the load's previous counted profile. Profiles taken back to back
    /// see one window of the run, which is how a glacial load passes for
    /// invariant; spacing them geometrically spreads them over the run at
    /// any run length (this implementation's default: 2; 1 counts every
    /// profile).
    pub profile_spacing: f64,
    /// §5.1.4: a load flagged glacial is never masked, so that its profile
    /// covers every phase of the run rather than the window in which it
    /// happened to be profiled (this implementation's reading of what the
    /// flag is for; default on). Off, glacial loads are masked like others.
    pub keep_glacial_unmasked: bool,
    /// §5.1.4: an instruction not masked by the thresholds is profiled in
    /// at most this many intervals, then masked (paper: 4).
    pub max_profiles: u32,
    /// A.6: the cap on each value's equal share of the samples seen only
    /// by the total counter (paper: 20%).
    pub unseen_share_cap: f64,
    /// §5.1.4 glacial values: a value counts towards "glacial" when it has
    /// at least this many hits (this implementation's default: 32) ...
    pub glacial_min_hits: u64,
    /// ... and at most this share of misses per hit (default: 1/8).
    pub glacial_max_miss_ratio: f64,
    /// ... and an instruction is glacial with at least this many such
    /// values (default: 2).
    pub glacial_min_values: usize,
    /// Seed of the co-processor's LFSR.
    pub seed: u32,
    /// Watch for new loads after the profile is complete, instead of
    /// switching the front end off (§5.1.4 stops profiling; this is an
    /// option of this implementation, default off). The front end stays
    /// on with the partition filter opened to the whole program: the mask
    /// table rejects every load already profiled, so a run whose loads are
    /// all masked still costs no samples and no interrupts, while a load
    /// first executed in a later phase passes the mask table and re-opens
    /// profiling until it too is masked. The completion test (a run of
    /// rejected samples) sees only the phase that has run so far; watching
    /// keeps that from hiding the loads of the phases after it.
    pub watch_new_loads: bool,
}

impl Default for LvpConfig {
    fn default() -> LvpConfig {
        LvpConfig {
            slots: 256,
            hit_miss_bits: 8,
            total_bits: 16,
            resample_below: 0.20,
            off_after_samples: 16,
            replace_random_bits: 4,
            interrupt_threshold: 256,
            thrash_factor: 4,
            fast_thrash_samples: 8 * 256,
            max_partition_bits: 12,
            high_invariance: 0.90,
            low_invariance: 0.10,
            confidence_samples: 64,
            confidence_profiles: 2,
            keep_glacial_unmasked: true,
            profile_spacing: 2.0,
            max_profiles: 4,
            unseen_share_cap: 0.20,
            glacial_min_hits: 32,
            glacial_max_miss_ratio: 0.125,
            glacial_min_values: 2,
            seed: 0xace1,
            watch_new_loads: false,
        }
    }
}

impl LvpConfig {
    /// The defaults with `slots` slots.
    pub fn with_slots(slots: usize) -> LvpConfig {
        LvpConfig {
            slots,
            ..LvpConfig::default()
        }
    }

    /// Checks every parameter, naming the one that is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=65536).contains(&self.slots) {
            return Err(format!("slots must be in 1..=65536, got {}", self.slots));
        }
        if !(1..=16).contains(&self.hit_miss_bits) || !(1..=16).contains(&self.total_bits) {
            return Err("counter widths must be in 1..=16 bits".into());
        }
        if !(1..=16).contains(&self.replace_random_bits) {
            return Err("replace_random_bits must be in 1..=16".into());
        }
        for (name, v) in [
            ("resample_below", self.resample_below),
            ("high_invariance", self.high_invariance),
            ("low_invariance", self.low_invariance),
            ("unseen_share_cap", self.unseen_share_cap),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("{name} must be in [0, 1], got {v}"));
            }
        }
        if !(self.profile_spacing.is_finite() && self.profile_spacing >= 1.0) {
            return Err(format!(
                "profile_spacing must be a number of at least 1, got {}",
                self.profile_spacing
            ));
        }
        if self.low_invariance >= self.high_invariance {
            return Err("low_invariance must be below high_invariance".into());
        }
        if self.interrupt_threshold == 0 || self.thrash_factor == 0 || self.max_profiles == 0 {
            return Err(
                "interrupt_threshold, thrash_factor and max_profiles must be at least 1".into(),
            );
        }
        Ok(())
    }
}
