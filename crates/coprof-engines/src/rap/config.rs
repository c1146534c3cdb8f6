//! RAP's parameters and their checks (Mysore et al., TACO 2008, §2.2 and
//! §3): the error bound ε, the branching factor b of the multibit trie, the
//! size of the universe R = 2^bits per dimension, the merge period's growth
//! factor q and the merging event buffer's capacity.

use serde::Serialize;
use std::fmt;

/// The paper's default error bound: 1% of the events (§4).
pub const DEFAULT_EPSILON: f64 = 0.01;
/// The paper's default branching factor: a 4-ary multibit trie (§3.2.2).
pub const DEFAULT_BRANCHING: u32 = 4;
/// The default universe: 64-bit points (R = 2^64).
pub const DEFAULT_BITS: u32 = 64;
/// The paper's default growth factor of the merge period (§3.1).
pub const DEFAULT_MERGE_FACTOR: f64 = 2.0;
/// The paper's default merging event buffer: 1 KB worth of entries
/// (§3.2.1).
pub const DEFAULT_BUFFER_BYTES: usize = 1024;

/// How a RAP tree is built. [`RapConfig::default`] gives the paper's
/// defaults; [`RapConfig::validate`] names any parameter that is wrong.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RapConfig {
    /// The error bound ε, in (0, 1): every range's count is within ε·n of
    /// the truth (§2.3).
    pub epsilon: f64,
    /// Children per split, b: a power of two ≥ 2. In n dimensions each
    /// dimension is divided by b^(1/n), so b must be a power of 2^n (§5.5).
    pub branching: u32,
    /// Bits per dimension of the universe: the root covers [0, 2^bits − 1]
    /// in every dimension.
    pub bits: u32,
    /// Growth factor q > 1 of the period between merge batches (§3.1).
    pub merge_factor: f64,
    /// Capacity in bytes of the merging event buffer (§3.2.1), or `None`
    /// to send every event straight to the tree.
    pub buffer_bytes: Option<usize>,
}

impl Default for RapConfig {
    fn default() -> RapConfig {
        RapConfig {
            epsilon: DEFAULT_EPSILON,
            branching: DEFAULT_BRANCHING,
            bits: DEFAULT_BITS,
            merge_factor: DEFAULT_MERGE_FACTOR,
            buffer_bytes: Some(DEFAULT_BUFFER_BYTES),
        }
    }
}

impl RapConfig {
    /// The paper's defaults with error bound `epsilon`.
    pub fn with_epsilon(epsilon: f64) -> RapConfig {
        RapConfig {
            epsilon,
            ..RapConfig::default()
        }
    }

    /// Checks every parameter for a tree of `dims` dimensions.
    pub fn validate(&self, dims: usize) -> Result<(), ConfigError> {
        if !(self.epsilon > 0.0 && self.epsilon < 1.0) {
            return Err(ConfigError::Epsilon(self.epsilon));
        }
        let b = self.branching;
        if b < 2 || !b.is_power_of_two() {
            return Err(ConfigError::Branching(b));
        }
        if dims == 0 || dims > 8 {
            return Err(ConfigError::Dims(dims));
        }
        let log_b = b.trailing_zeros() as usize;
        if log_b / dims * dims != log_b {
            return Err(ConfigError::BranchingForDims { branching: b, dims });
        }
        if !(1..=64).contains(&self.bits) {
            return Err(ConfigError::Bits(self.bits));
        }
        if !(self.merge_factor.is_finite() && self.merge_factor > 1.0) {
            return Err(ConfigError::MergeFactor(self.merge_factor));
        }
        if let Some(bytes) = self.buffer_bytes {
            if bytes < entry_bytes(dims) {
                return Err(ConfigError::Buffer(bytes, entry_bytes(dims)));
            }
        }
        Ok(())
    }

    /// Bits of each dimension consumed per tree level: log2(b) / dims.
    pub fn bits_per_level(&self, dims: usize) -> u32 {
        self.branching.trailing_zeros() / dims as u32
    }

    /// Levels below the root: ⌈log_b(R^dims)⌉, the height of the tree
    /// and the divisor in SplitThreshold (§2.2.1).
    pub fn levels(&self, dims: usize) -> u32 {
        self.bits.div_ceil(self.bits_per_level(dims))
    }

    /// The most live nodes a tree of `dims` dimensions holds after any
    /// call to `add_points` returns: 1 + b·L²·(1 + q)/ε with L the levels.
    ///
    /// Why: right after a merge batch at n_m, every internal node's subtree
    /// holds more than T_m = ε·n_m/L events (a node whose children are all
    /// leaves survived the merge test, and any other internal node contains
    /// one), and internal nodes of one depth have disjoint subtrees, so
    /// there are at most L/ε of them per depth. Until the next batch (n <
    /// q·n_m) a node splits only when its count and the weight being added
    /// pass T ≥ T_m, each node at most once and each add at most once per
    /// depth, so fewer than L·q·L/ε splits happen. Each internal node has
    /// b children. The paper's O(log_b(R)/ε) (§2.3) counts the nodes that
    /// hold events; the chains of empty nodes above a hot point add the
    /// factor L.
    pub fn node_bound(&self, dims: usize) -> f64 {
        let l = self.levels(dims) as f64;
        1.0 + self.branching as f64 * l * l * (1.0 + self.merge_factor) / self.epsilon
    }

    /// Entries of the merging event buffer: the largest power of two whose
    /// entries fit in `buffer_bytes`, or 0 when the buffer is off.
    pub fn buffer_entries(&self, dims: usize) -> usize {
        match self.buffer_bytes {
            None => 0,
            Some(bytes) => {
                let fit = (bytes / entry_bytes(dims)).max(1);
                1 << (usize::BITS - 1 - fit.leading_zeros())
            }
        }
    }
}

/// Bytes of one merging-buffer entry: the point and its count.
pub const fn entry_bytes(dims: usize) -> usize {
    8 * dims + 8
}

/// A parameter that RAP cannot work with.
#[derive(Clone, Debug, PartialEq)]
pub enum ConfigError {
    /// ε outside (0, 1).
    Epsilon(f64),
    /// b not a power of two ≥ 2.
    Branching(u32),
    /// b not a power of 2^dims.
    BranchingForDims {
        /// The branching factor asked for.
        branching: u32,
        /// The number of dimensions.
        dims: usize,
    },
    /// Dimensions outside 1..=8.
    Dims(usize),
    /// Bits outside 1..=64.
    Bits(u32),
    /// q not greater than 1.
    MergeFactor(f64),
    /// A buffer too small for one entry: (bytes asked, bytes per entry).
    Buffer(usize, usize),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Epsilon(e) => {
                write!(f, "epsilon must lie strictly between 0 and 1, got {e}")
            }
            ConfigError::Branching(b) => write!(
                f,
                "branching factor must be a power of two of at least 2 (2, 4, 8, 16, ...), got {b}"
            ),
            ConfigError::BranchingForDims { branching, dims } => write!(
                f,
                "branching factor {branching} cannot divide each of {dims} dimensions equally: \
                 it must be a power of {} (e.g. {} or {})",
                1u64 << dims,
                1u64 << dims,
                1u64 << (2 * dims)
            ),
            ConfigError::Dims(d) => write!(f, "dimensions must be 1 to 8, got {d}"),
            ConfigError::Bits(b) => write!(f, "bits must be 1 to 64, got {b}"),
            ConfigError::MergeFactor(q) => {
                write!(f, "merge factor must be a number greater than 1, got {q}")
            }
            ConfigError::Buffer(bytes, entry) => write!(
                f,
                "merging buffer of {bytes} bytes cannot hold one {entry}-byte entry"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_papers() {
        let c = RapConfig::default();
        assert_eq!(c.validate(1), Ok(()));
        assert_eq!(c.levels(1), 32);
        assert_eq!(c.levels(2), 64);
        assert_eq!(c.buffer_entries(1), 64);
        assert_eq!(c.buffer_entries(2), 32);
    }

    #[test]
    fn rejects_bad_parameters_by_name() {
        for e in [0.0, 1.0, -0.5, f64::NAN, 2.0] {
            let err = RapConfig::with_epsilon(e).validate(1).unwrap_err();
            assert!(err.to_string().contains("epsilon"), "{err}");
        }
        for b in [0, 1, 3, 6, 12] {
            let c = RapConfig {
                branching: b,
                ..RapConfig::default()
            };
            assert_eq!(c.validate(1), Err(ConfigError::Branching(b)));
        }
        let c = RapConfig {
            branching: 8,
            ..RapConfig::default()
        };
        assert!(c.validate(1).is_ok());
        assert!(matches!(
            c.validate(2),
            Err(ConfigError::BranchingForDims { .. })
        ));
        let c = RapConfig {
            merge_factor: 1.0,
            ..RapConfig::default()
        };
        assert!(c.validate(1).is_err());
        let c = RapConfig {
            bits: 65,
            ..RapConfig::default()
        };
        assert!(c.validate(1).is_err());
    }

    #[test]
    fn uneven_levels_round_up() {
        let c = RapConfig {
            branching: 8,
            ..RapConfig::default()
        };
        assert_eq!(c.levels(1), 22); // 64 bits, 3 per level
    }
}
