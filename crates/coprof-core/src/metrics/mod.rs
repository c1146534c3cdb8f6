//! Accuracy metrics from the papers, for comparing an engine's estimate
//! with the exact profile of the same stream.

pub mod sod;
//! Accuracy metrics: how far an engine's estimates are from the exact
//! profile of the same stream, each in its paper's own terms.
//!
//! Every metric takes the ground truth as an [`ExactCounts`](crate::ExactCounts)
//! and the engine's estimates as a lookup, so that any engine (bounded or
//! not, sampled or not) can be scored the same way.
pub mod invariance;
//! Accuracy metrics: how close an estimated profile is to the exact one,
//! each in the words of the paper that defined it.
pub mod overlap;
