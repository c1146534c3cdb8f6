//! coprof-core: the pieces every part of coprof shares.
//!
//! - [`event`]: the [`Event`] record and instruction [`Class`]es;
//! - [`stream`]: the push model, [`Source`] → [`Sink`];
//! - [`runs`]: the instruction stream as runs of basic blocks;
//! - [`threads`]: sinks fed on threads of their own, beside the source;
//! - [`call_tree`]: exact counts per calling context, the call graph;
//! - [`exact`]: exact counters, the ground truth for every estimator;
//! - [`key_counts`]: exact counts per key, fast on hot keys;
//! - [`metrics`]: each paper's accuracy metric against the exact counts;
//! - [`trace`]: the `.cpt` trace file format, streaming writer and reader;
//! - [`synth`]: deterministic synthetic streams with known answers.

pub mod areas;
pub mod call_tree;
pub mod event;
pub mod exact;
pub mod key_counts;
pub mod metrics;
pub mod pc_counts;
pub mod put;
pub mod runs;
pub mod stream;
pub mod synth;
pub mod threads;
pub mod trace;
pub mod wanted;

pub use call_tree::CallTree;
pub use event::{flags, Class, ClassSet, Event};
pub use exact::ExactCounts;
pub use key_counts::KeyCounts;
pub use pc_counts::PcCounts;
pub use runs::{BlockCounts, Blocks, Run, Transfers};
pub use stream::{
    all_with_runs, any_with_runs, Collect, Discard, Fanout, OpenCall, Sink, SliceSource, Source,
};
