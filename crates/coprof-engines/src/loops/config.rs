//! The frequent loop detector's parameters (Gordon-Ross & Vahid, CASES 2003,
//! §3.1 short backward branches, §3.3 the frequent loop cache, §5
//! coalescing, §6 sampling), with the paper's best configuration as the
//! default.

use serde::Serialize;
use std::fmt;

/// The largest `entries` accepted: far beyond anything the paper explores,
/// but small enough that a mistyped size cannot exhaust memory.
pub const MAX_ENTRIES: usize = 1 << 16;

/// Everything that shapes one frequent loop detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LoopConfig {
    /// Entries (loops) the frequent loop cache holds (§3.3): a power of two;
    /// the paper explores 16, 32 and 64.
    pub entries: usize,
    /// Ways per set (§3.3): 1 is direct mapped, `entries` is fully
    /// associative. A power of two that divides `entries`.
    pub ways: usize,
    /// Width of each frequency counter in bits, 4 to 32 (§3.3). A counter
    /// saturates at 2^width − 1, and that halves every counter.
    pub width: u32,
    /// Whether the coalescing register adds up consecutive short backward
    /// branches of one loop before they reach the cache (§5).
    pub coalesce: bool,
    /// Only every k-th short backward branch is tallied (§6); 1 tallies all.
    pub sample_interval: u64,
    /// Largest distance in bytes from a short backward branch back to its
    /// target (§3.1). The default, 4 KiB, covers every inner and most outer
    /// loops of compiled code (a 4 KiB body is 1024 RISC-V instructions)
    /// while excluding the back edges of whole-program driver loops, which
    /// are not "loops" in the paper's sense of a critical region.
    pub max_distance: u64,
    /// The cache is indexed by the sbb PC shifted right by this many bits
    /// (2: instruction words of 4 bytes, as in the paper's 32-bit ISA; use 1
    /// for code dense in 2-byte compressed instructions).
    pub index_shift: u32,
}

impl Default for LoopConfig {
    /// The paper's best configuration from its design-space exploration
    /// (Fig. 3): a 2-way set-associative cache of
    /// 32 entries with 24-bit counters, no coalescing, no sampling.
    fn default() -> LoopConfig {
        LoopConfig {
            entries: 32,
            ways: 2,
            width: 24,
            coalesce: false,
            sample_interval: 1,
            max_distance: coprof_core::exact::DEFAULT_SBB_DISTANCE,
            index_shift: 2,
        }
    }
}

/// A parameter outside what the hardware can be built with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl LoopConfig {
    /// The default configuration with `entries`, `ways` and `width` set.
    pub fn sized(entries: usize, ways: usize, width: u32) -> LoopConfig {
        LoopConfig {
            entries,
            ways,
            width,
            ..LoopConfig::default()
        }
    }

    /// Sets the coalescing register on or off.
    pub fn coalescing(mut self, on: bool) -> LoopConfig {
        self.coalesce = on;
        self
    }

    /// Sets the sampling interval.
    pub fn sampling(mut self, every: u64) -> LoopConfig {
        self.sample_interval = every;
        self
    }

    /// Number of sets: `entries / ways`.
    pub fn sets(&self) -> usize {
        self.entries / self.ways
    }

    /// Whether the cache is fully associative (one set).
    pub fn fully_associative(&self) -> bool {
        self.ways == self.entries
    }

    /// The value at which a frequency counter saturates: 2^width − 1.
    pub fn counter_max(&self) -> u64 {
        (1u64 << self.width) - 1
    }

    /// Hardware storage in bits: each entry holds a 32-bit sbb address tag
    /// and a `width`-bit counter (§3.3, the paper's 32-bit processor). Used
    /// to rank configurations by size.
    pub fn size_bits(&self) -> u64 {
        self.entries as u64 * (32 + self.width as u64)
    }

    /// Checks every parameter, naming the one that is wrong.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |m: String| Err(ConfigError(m));
        if self.entries == 0 || !self.entries.is_power_of_two() || self.entries > MAX_ENTRIES {
            return err(format!(
                "entries must be a power of two from 1 to {MAX_ENTRIES}, got {}",
                self.entries
            ));
        }
        if self.ways == 0 || !self.ways.is_power_of_two() || self.ways > self.entries {
            return err(format!(
                "ways must be a power of two no larger than entries ({}), got {}",
                self.entries, self.ways
            ));
        }
        if !(4..=32).contains(&self.width) {
            return err(format!(
                "counter width must be 4 to 32 bits, got {}",
                self.width
            ));
        }
        if self.sample_interval == 0 {
            return err("sample interval must be at least 1".to_string());
        }
        if self.index_shift > 16 {
            return err(format!(
                "index shift must be 0 to 16 bits, got {}",
                self.index_shift
            ));
        }
        Ok(())
    }

    /// A short label such as `32e/2w/24b+coal`.
    pub fn label(&self) -> String {
        let ways = if self.fully_associative() && self.entries > 1 {
            "full".to_string()
        } else {
            format!("{}w", self.ways)
        };
        format!(
            "{}e/{}/{}b{}",
            self.entries,
            ways,
            self.width,
            if self.coalesce { "+coal" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_the_papers_best() {
        let c = LoopConfig::default();
        assert_eq!((c.entries, c.ways, c.width), (32, 2, 24));
        assert_eq!(c.sample_interval, 1);
        assert!(!c.coalesce);
        assert_eq!(c.max_distance, 4096);
        assert!(c.validate().is_ok());
        assert_eq!(c.sets(), 16);
        assert_eq!(c.counter_max(), (1 << 24) - 1);
    }

    #[test]
    fn rejects_impossible_hardware() {
        let bad = [
            LoopConfig::sized(24, 2, 24),
            LoopConfig::sized(0, 1, 24),
            LoopConfig::sized(32, 3, 24),
            LoopConfig::sized(32, 64, 24),
            LoopConfig::sized(32, 2, 3),
            LoopConfig::sized(32, 2, 33),
            LoopConfig::default().sampling(0),
        ];
        for c in bad {
            let e = c.validate().unwrap_err();
            assert!(!e.0.is_empty());
        }
        assert!(LoopConfig::sized(64, 64, 32).validate().is_ok());
        assert_eq!(LoopConfig::sized(64, 64, 32).label(), "64e/full/32b");
        assert_eq!(
            LoopConfig::default().coalescing(true).label(),
            "32e/2w/24b+coal"
        );
    }
}
