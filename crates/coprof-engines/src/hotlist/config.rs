//! Parameters of the Gibbons–Matias hotlists as DCPI value sampling uses
//! them (Burrows et al., "Efficient and Flexible Value Sampling", ASPLOS
//! 2000, §2.2; Gibbons & Matias, SIGMOD 1998, §3).

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The two Gibbons–Matias sample kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Concise samples: every occurrence enters with probability p; a
    /// counter counts the occurrences that entered. `C[v]/p` is unbiased.
    Concise,
    /// Counting samples: a value enters with probability p, and from then
    /// on every occurrence is counted. `C[v] + 1/p − 1` estimates the count.
    Counting,
}

impl Variant {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Concise => "concise",
            Variant::Counting => "counting",
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Variant, String> {
        match s {
            "concise" => Ok(Variant::Concise),
            "counting" => Ok(Variant::Counting),
            _ => Err(format!(
                "unknown hotlist variant '{s}' (expected concise or counting)"
            )),
        }
    }
}

/// Which value of a sampled load a hotlist tracks: DCPI keeps one hotlist
/// per PC and value type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ValueKind {
    /// The value the load returned.
    Loaded,
    /// The load's effective address.
    Address,
}

impl ValueKind {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ValueKind::Loaded => "loaded",
            ValueKind::Address => "address",
        }
    }
}

impl FromStr for ValueKind {
    type Err = String;
    fn from_str(s: &str) -> Result<ValueKind, String> {
        match s {
            "loaded" | "value" => Ok(ValueKind::Loaded),
            "address" | "addr" => Ok(ValueKind::Address),
            _ => Err(format!(
                "unknown value kind '{s}' (expected loaded or address)"
            )),
        }
    }
}

/// Parameters of a [`HotlistTable`](super::HotlistTable).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HotlistConfig {
    /// Values per hotlist at most (DCPI: N = 16).
    pub capacity: usize,
    /// The factor f that p is divided by when the list overflows; `None`
    /// is DCPI's N/(N−1).
    pub factor: Option<f64>,
    /// Concise or counting samples.
    pub variant: Variant,
    /// The value types tracked, one hotlist per PC and type.
    pub kinds: Vec<ValueKind>,
    /// Offer every `period`-th load (1: every load; DCPI's periodic
    /// interrupts are a larger period).
    pub period: u64,
    /// Seed of the coin tosses.
    pub seed: u64,
}

impl Default for HotlistConfig {
    fn default() -> HotlistConfig {
        HotlistConfig {
            capacity: 16,
            factor: None,
            variant: Variant::Concise,
            kinds: vec![ValueKind::Loaded],
            period: 1,
            seed: 1,
        }
    }
}

impl HotlistConfig {
    /// The factor in effect: `factor`, or N/(N−1).
    pub fn effective_factor(&self) -> f64 {
        self.factor
            .unwrap_or(self.capacity as f64 / (self.capacity as f64 - 1.0))
    }

    /// Checks every parameter, naming the one that is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if !(2..=4096).contains(&self.capacity) {
            return Err(format!(
                "hotlist capacity must be in 2..=4096 values, got {}",
                self.capacity
            ));
        }
        let f = self.effective_factor();
        if !(f.is_finite() && f > 1.0) {
            return Err(format!("hotlist factor must be a number above 1, got {f}"));
        }
        if self.kinds.is_empty() {
            return Err("at least one value kind is needed".into());
        }
        if self.period == 0 {
            return Err("sampling period must be at least 1 load".into());
        }
        Ok(())
    }
}
