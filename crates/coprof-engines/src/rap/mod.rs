//! Range-adaptive profiling (RAP): Mysore, Agrawal, Neuber, Sherwood,
//! Shrivastava and Suri, "Formulating and Implementing Profiling over
//! Adaptive Ranges", ACM TACO 5(1), 2008.
//!
//! RAP counts events over a huge universe (all 2^64 PCs, values or
//! addresses, or pairs of them) with a tree of ranges that refines itself
//! where the events are: a range that gets more than its share splits into
//! `b` subranges (§2.2.1), and subranges that stop mattering are merged back
//! (§2.2.2). Every range's count is within ε·n of the truth while the tree
//! holds O(log_b(R)/ε) nodes (§2.3).
//!
//! - [`config`]: ε, b, the universe, the merge period, the buffer;
//! - [`Rap`]: the engine (tree plus merging event buffer), `add_points`
//!   and `snapshot`; [`RapProfiles`]: several at once;
//! - [`RapSnapshot`]: the tree, its text dump; [`HotRange`]s (§5.1);
//! - [`streams`]: which profile an event stream gives (PC, load value, ...)
//!   and the [`RangeProfiler`] sink;
//! - [`check`](mod@check): comparison with the exact profile;
//! - [`block_buffer`]: an option beside the paper's, combining repeated
//!   basic-block executions in front of a code profile;
//! - [`sweep`]: a grid of configurations over one stream, each checked
//!   against the exact profile, for choosing the hardware's sizes.

pub mod block_buffer;
mod buffer;
pub mod check;
pub mod config;
mod engine;
mod grants;
mod hints;
mod hot;
mod node_cache;
mod profiles;
mod snapshot;
pub mod streams;
pub mod sweep;
mod tree;

pub use block_buffer::BlockBuffer;
pub use check::{check, check_hot, CheckedHotRange, ExactPoints, RangeCheck};
pub use config::{ConfigError, RapConfig};
pub use engine::Rap;
pub use hot::{HotRange, DEFAULT_HOT};
pub use profiles::{RapProfiles, UnknownProfile};
pub use snapshot::{format_range, RangeNode, RapSnapshot};
pub use streams::{RangeProfiler, Stream};
