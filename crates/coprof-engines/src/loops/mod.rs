//! The frequent loop detector of Gordon-Ross & Vahid, "Frequent Loop
//! Detection Using Efficient Non-Intrusive On-Chip Hardware" (CASES 2003).
//!
//! A loop announces itself by a taken short backward branch (sbb, §3.1): a
//! taken branch or jump whose target lies a short distance below its own
//! PC. The loop is named by the sbb's PC and its body is [target, sbb PC].
//! A tiny set-associative *frequent loop cache* (§3.3) counts sbbs per loop
//! in saturating counters; saturation halves every counter, a miss in a full
//! set replaces the least frequent loop. A *coalescing register* (§5) adds
//! up consecutive sbbs of one loop so the cache is updated once per visit,
//! and *sampling* (§6) tallies only every k-th sbb.
//!
//! - [`config`]: [`LoopConfig`], the hardware's parameters and defaults;
//! - [`cache`]: [`FrequencyCache`], the frequent loop cache;
//! - [`coalesce`]: the [`CoalescingRegister`];
//! - [`detector`]: [`LoopDetector`], the engine (a [`coprof_core::Sink`]);
//! - [`snapshot`]: [`LoopProfile`], what it reports;
//! - [`eval`]: accuracy against the exact profile (1 − SOD);
//! - [`sweep`](mod@sweep): the design-space sweep of the paper's Figure 3.

pub mod cache;
pub mod coalesce;
pub mod config;
pub mod detector;
pub mod eval;
pub mod snapshot;
pub mod sweep;

pub use cache::{CacheCost, CacheEntry, FrequencyCache};
pub use coalesce::CoalescingRegister;
pub use config::{ConfigError, LoopConfig};
pub use detector::LoopDetector;
pub use eval::{compare, ComparedLoop, ExactLoopShares, LoopComparison};
pub use snapshot::{DetectedLoop, HardwareCost, LoopProfile};
pub use sweep::{sweep, SbbStream, SweepPoint, SweepResult, SweepSpace};
