//! coprof's profiles in the formats other tools read.
//!
//! A [`PcProfile`] is a flat profile: costs per PC (instructions retired,
//! samples taken), each PC with where it is in the source, inlined frames
//! included. It is written as
//!
//! - [`pprof`]: the gzipped `profile.proto` that `go tool pprof` reads
//!   (and with it speedscope and the pprof web UI);
//! - [`callgrind`]: the text format of valgrind's callgrind, which
//!   `callgrind_annotate` and KCachegrind read, with costs per instruction
//!   and per source line.
//!
//! A design-space sweep is drawn as an SVG picture ([`sweep_plot`]): each
//! configuration by cost and error, with the front of those no other
//! beats.
//!
//! The profile is flat: coprof's events carry a PC, not a call stack, so
//! each sample's stack is its one location (with its inlined frames), and
//! a callgrind file has no call arcs.

pub mod callgrind;
#[cfg(test)]
mod fixtures;
pub mod pc_profile;
pub mod pprof;
pub mod sweep_plot;

pub use pc_profile::{Cost, Object, PcCost, PcProfile};
pub use sweep_plot::SweepPlot;
