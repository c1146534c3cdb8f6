//! Gibbons–Matias hotlists, the per-PC value summaries of DCPI value
//! sampling (Burrows et al., "Efficient and Flexible Value Sampling",
//! ASPLOS 2000, §2.2, after Gibbons & Matias, SIGMOD 1998).
//!
//! - [`config`]: N, f, the variant (concise or counting samples), value
//!   types, sampling period;
//! - [`list`]: one hotlist, its coin tosses and thinning;
//! - [`table`]: a hotlist per PC and value type, as a [`coprof_core::Sink`].
//!
//! ```
//! use coprof_engines::hotlist::{HotlistConfig, HotlistTable, ValueKind};
//!
//! let mut t = HotlistTable::new(HotlistConfig::default()).unwrap();
//! for i in 0..100_000u64 {
//!     t.add(0x400, ValueKind::Loaded, if i % 4 == 0 { 7 } else { 100 + i % 40 });
//! }
//! assert!(t.len_of(0x400, ValueKind::Loaded).unwrap() <= 16);
//! let est = t.estimate(0x400, ValueKind::Loaded, 7);
//! assert!((est - 25_000.0).abs() < 5_000.0, "{est}");
//! ```

pub mod config;
pub mod list;
pub mod table;

pub use config::{HotlistConfig, ValueKind, Variant};
pub use table::{HotValue, HotlistEntry, HotlistSnapshot, HotlistTable};

#[cfg(test)]
mod tests;
