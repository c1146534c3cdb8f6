//! coprof-engines: streaming summarisers with bounded memory, each the
//! software form of one paper's profiling hardware.
//!
//! Every engine has the same shape: `new(config)`, `observe(&[Event])` (it
//! is a [`coprof_core::Sink`]) or a typed `add`, and `snapshot()`, which
//! returns a serialisable result including the bytes the engine holds.
//! Engines never print.

pub mod coproc;
pub mod hotlist;
pub mod loops;
pub mod rap;
