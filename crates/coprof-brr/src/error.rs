//! Errors of the samplers' constructors: each names the parameter that is
//! out of range and the range it must lie in.

use core::fmt;

/// A sampler or register parameter out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The LFSR width is outside 16..=64.
    Width(u32),
    /// An LFSR state of all zeros, which a linear register never leaves.
    ZeroState,
    /// A brr frequency outside 0..=15.
    Freq(u32),
    /// A sampling interval (or period) of zero.
    ZeroInterval,
    /// A periodic jitter that is not smaller than its period.
    Jitter {
        /// The period N.
        period: u64,
        /// The jitter J, which must be below N.
        jitter: u64,
    },
    /// A convergent sampler's setting that breaks its rule (named).
    Convergent(&'static str),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Width(w) => write!(f, "LFSR width {w} is outside 16..=64"),
            Error::ZeroState => f.write_str("an LFSR state of all zeros never changes"),
            Error::Freq(x) => write!(
                f,
                "brr frequency {x} is outside 0..=15 (probability (1/2)^(freq+1))"
            ),
            Error::ZeroInterval => f.write_str("the sampling interval must be at least 1"),
            Error::Jitter { period, jitter } => write!(
                f,
                "jitter {jitter} must be smaller than the period {period}"
            ),
            Error::Convergent(what) => write!(f, "convergent sampler: {what}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
