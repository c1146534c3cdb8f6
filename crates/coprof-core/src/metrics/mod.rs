//! Accuracy metrics from the papers, for comparing an engine's estimate
//! with the exact profile of the same stream.

pub mod sod;
