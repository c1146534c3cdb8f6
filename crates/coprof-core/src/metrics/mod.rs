//! Accuracy metrics: how far an engine's estimates are from the exact
//! profile of the same stream, each in the terms of the paper that defined
//! it, so that any engine (bounded or not, sampled or not) is scored the
//! same way.

pub mod invariance;
pub mod overlap;
pub mod sod;
