//! Accuracy metrics: how close an estimated profile is to the exact one,
//! each in the words of the paper that defined it.

pub mod overlap;
