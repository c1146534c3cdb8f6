//! coprof-engines: streaming summarisers with bounded memory, each the
//! software form of one paper's profiling hardware.
//!
//! Every engine has the same shape: `new(config)`, `observe(&[Event])` (it
//! is a [`coprof_core::Sink`]) or a typed `add`, and `snapshot()`, which
//! returns a serialisable result including the bytes the engine holds.
//! Engines never print.
//!
//! | module | paper | feed it | it answers |
//! |---|---|---|---|
//! | [`loops`] | Gordon-Ross & Vahid, CASES 2003 | taken short backward branches: [`LoopDetector::add_sbb`](loops::LoopDetector::add_sbb) | which loops are hot, and their share |
//! | [`rap`] | Mysore et al., TACO 2008 | points of 1 to 4 dimensions: [`Rap::add`](rap::Rap::add) | which ranges of code, values, addresses (or pairs) are hot, each within ε·n |
//! | [`coproc`] | Zilles & Sohi, HPCA 2001 | load events: [`LoadValueProfiler`](coproc::LoadValueProfiler) on a [`Coprocessor`](coproc::Coprocessor) | which loads are (semi-)invariant, with what value |
//! | [`hotlist`] | Burrows et al., ASPLOS 2000 | sampled values per site: [`HotlistTable::add`](hotlist::HotlistTable::add) | each site's most frequent values |
//!
//! Every engine but the loop detector's (which has its own, in
//! [`loops`]) also has a design-space sweep, a sink of one engine per
//! configuration of a grid ([`grid`]) and the exact answer, fed in one
//! pass: [`rap::sweep`], [`coproc::sweep`] and [`hotlist::sweep`], the
//! last two on [`value_sweep`].
//!
//! Outside a simulator they take any program's own events. The examples
//! are programs of the kinds that would (each runs with `cargo run -p
//! coprof-engines --example NAME`, and `cargo test` checks its answer):
//!
//! - `jit_hot_loops`: a bytecode interpreter whose backward jumps feed the
//!   loop detector, and which compiles the loops that take a quarter of
//!   the iterations;
//! - `network_monitor`: two-dimensional RAP over (source, destination)
//!   IPv4 addresses finds a flood and a scan as address ranges, in a
//!   ninth of the memory of an exact count, within its bound;
//! - `value_specialization`: sampled hotlists of call-site arguments pick
//!   the sites to specialize on a value.
//!
//! The smallest use, a value stream's hot ranges:
//!
//! ```
//! use coprof_engines::rap::{Rap, RapConfig};
//!
//! let mut rap: Rap<1> = Rap::new(RapConfig::with_epsilon(0.01)).unwrap();
//! for i in 0..100_000u64 {
//!     // Nine values in ten are small counters, one in ten a pointer.
//!     let v = if i % 10 == 0 { 0x7fff_0000_0000 + i * 8 } else { i % 100 };
//!     rap.add([v]);
//! }
//! // Ranges with at least 30% of the values (§5.1): the counters 0 to
//! // 99 fill two aligned blocks of 64, with 57.6% and 32.4% of them; the
//! // pointers, spread over 80,000 bytes, make no hot range.
//! let hot = rap.snapshot().hot_ranges(0.3);
//! let ranges: Vec<(u64, u64)> = hot.iter().map(|h| (h.lo[0], h.hi[0])).collect();
//! assert_eq!(ranges, [(0, 63), (64, 127)]);
//! assert!((hot[0].share - 0.576).abs() <= 0.01 && (hot[1].share - 0.324).abs() <= 0.01);
//! ```

pub mod coproc;
pub mod grid;
pub mod hotlist;
pub mod loops;
pub mod rap;
pub mod value_sweep;
