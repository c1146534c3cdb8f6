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
//! A profile may also hold its costs per calling context, when the run's
//! calls and returns were followed: each pprof sample then has the call
//! sites open as its stack, and a callgrind file has call arcs with their
//! inclusive costs. Without them (a native process's samples carry a PC,
//! not a stack) the profile is flat: each sample's stack is its one
//! location (with its inlined frames), and a callgrind file has no arcs.
//!
//! A profile with calls may keep each thread's costs apart: pprof's
//! samples then carry a `thread` label, and [`PcProfile::of_thread`] cuts
//! out one thread's part, as callgrind writes a file per thread.

pub mod callgrind;
#[cfg(test)]
mod fixtures;
pub mod pc_profile;
pub mod pprof;
pub mod sweep_plot;
mod thread_parts;

pub use pc_profile::{CallContext, ContextCost, Cost, FunctionCost, Object, PcCost, PcProfile};
pub use sweep_plot::SweepPlot;
