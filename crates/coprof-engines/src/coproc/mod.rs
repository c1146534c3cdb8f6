//! The programmable profiling co-processor (Zilles & Sohi, "A Programmable
//! Co-processor for Profiling", HPCA 2001), with its load-value profiler
//! and the simple sampling profiler it is compared with.
//!
//! - [`filter`]: the front end, opcode-class filter, PC partition filter and
//!   PC mask table (§3.1–3.2);
//! - [`buffer`]: the bounded sample buffer and its service rate (§3.2);
//! - [`primitives`]: associative array, saturating counters, LFSR, exits
//!   (§3.3);
//! - [`program`]: the trait a profiling program implements (§3.3–3.4);
//! - [`host`]: runs a program over a stream and counts its overhead (§3.5);
//! - [`lvp`]: the load-value profiler (§5.1, Appendix A);
//! - [`simple`]: simple sampling, every N-th load (§5), and
//!   [`simple_sweep`] its design space;
//! - [`report`]: the per-PC value estimates all value profilers report.

pub mod buffer;
pub mod filter;
pub mod host;
pub mod lvp;
pub mod primitives;
pub mod program;
pub mod report;
pub mod simple;
pub mod simple_sweep;
pub mod sweep;

pub use buffer::{Sample, SampleBuffer};
pub use filter::{FrontEnd, Part, PartitionFilter, PartitionHash, PcMaskTable};
pub use host::{Coprocessor, HostConfig, HostStats};
pub use lvp::{LoadValueProfiler, LvpConfig, LvpSnapshot};
pub use primitives::Exit;
pub use program::{InterruptReason, Program};
pub use report::{invariance_error, PcStatus, PcValues, ValueEstimate};
pub use simple::{SimpleConfig, SimpleSampler, SimpleSnapshot};
