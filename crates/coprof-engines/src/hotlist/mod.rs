//! Gibbons–Matias hotlists, the per-PC value summaries of DCPI value
//! sampling (Burrows et al., "Efficient and Flexible Value Sampling",
//! ASPLOS 2000, §2.2, after Gibbons & Matias, SIGMOD 1998).
//!
//! - [`config`]: N, f, the variant (concise or counting samples), value
//!   types, sampling period;
//! - `heads`: each list's state in one cache line, found by hashing its PC;
//! - [`list`]: one hotlist, its coin tosses and thinning;
//! - [`table`]: a hotlist per PC and value type, as a [`coprof_core::Sink`].
//!
//! ```
//! use coprof_engines::hotlist::{HotlistConfig, HotlistTable, ValueKind};
//!
//! let mut t = HotlistTable::new(HotlistConfig::default()).unwrap();
//! // Ten values fit in a 16-value list: p stays 1 and counts are exact.
//! for i in 0..100_000u64 {
//!     t.add(0x400, ValueKind::Loaded, if i % 4 == 0 { 7 } else { 100 + i % 9 });
//! }
//! assert_eq!(t.estimate(0x400, ValueKind::Loaded, 7), 25_000.0);
//! // Thousands of values: at most 16 are kept, p falls, C[v]/p estimates.
//! for i in 0..100_000u64 {
//!     t.add(0x800, ValueKind::Loaded, if i % 2 == 0 { 7 } else { i });
//! }
//! assert!(t.len_of(0x800, ValueKind::Loaded).unwrap() <= 16);
//! assert!(t.estimate(0x800, ValueKind::Loaded, 7) > 0.0);
//! ```

pub mod config;
mod heads;
pub mod list;
pub mod sweep;
pub mod table;

pub use config::{HotlistConfig, ValueKind, Variant};
pub use table::{HotValue, HotlistEntry, HotlistSnapshot, HotlistTable};

#[cfg(test)]
mod tests;
