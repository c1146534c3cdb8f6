//! The load-value profiler: a profiling program for the co-processor that
//! finds which loads are invariant or semi-invariant, and with what value
//! (Zilles & Sohi, "A Programmable Co-processor for Profiling", HPCA 2001,
//! §5.1 and Appendix A).
//!
//! - [`config`]: the parameters and the paper's defaults;
//! - [`slots`]: the co-processor side, applied to every sample (A.1–A.5);
//! - [`handler`]: the main-processor side, the profile, masking and
//!   partitioning (§5.1.3–5.1.4);
//! - [`estimate`]: invariance estimation (A.6) and glacial values.
//!
//! Use it through the host:
//!
//! ```
//! use coprof_engines::coproc::{Coprocessor, HostConfig, LoadValueProfiler, LvpConfig};
//! use coprof_core::{Event, Sink};
//!
//! let lvp = LoadValueProfiler::new(LvpConfig::default()).unwrap();
//! let mut cp = Coprocessor::new(&HostConfig::default(), lvp).unwrap();
//! let loads: Vec<Event> = (0..10_000).map(|i| Event::load(0x400, 0x8000, 8, (i % 10 != 0) as u64)).collect();
//! cp.observe(&loads);
//! cp.finish();
//! let snap = cp.snapshot();
//! assert_eq!(snap.pcs[0].values[0].value, 1);
//! assert!((snap.pcs[0].values[0].invariance - 0.9).abs() < 0.05);
//! ```

pub mod config;
pub mod estimate;
pub mod handler;
pub mod slots;

pub use config::LvpConfig;
pub use handler::{MaskReason, PcProfile, ValueRecord};
pub use slots::{LvpInterrupt, SlotRecord};

use super::buffer::Sample;
use super::filter::{FrontEnd, Part};
use super::host::{Coprocessor, HostStats};
use super::primitives::Exit;
use super::program::Program;
use super::report::{PcStatus, PcValues, ValueEstimate};
use coprof_core::{Class, ClassSet};
use handler::Handler;
use serde::Serialize;
use slots::Slots;

/// The load-value profiling program: slots on the co-processor, a profile
/// on the main processor.
#[derive(Clone, Debug)]
pub struct LoadValueProfiler {
    cfg: LvpConfig,
    slots: Slots,
    handler: Handler,
}

impl LoadValueProfiler {
    /// A profiler with parameters `cfg`.
    pub fn new(cfg: LvpConfig) -> Result<LoadValueProfiler, String> {
        cfg.validate()?;
        Ok(LoadValueProfiler {
            slots: Slots::new(&cfg),
            handler: Handler::new(&cfg),
            cfg,
        })
    }

    /// The parameters.
    pub fn config(&self) -> &LvpConfig {
        &self.cfg
    }

    /// The co-processor's slots.
    pub fn slots(&self) -> &Slots {
        &self.slots
    }

    /// The main processor's side: profile and partitioning state.
    pub fn handler(&self) -> &Handler {
        &self.handler
    }

    /// Every profiled load with its estimated values, most samples first.
    pub fn estimates(&self) -> Vec<PcValues> {
        let c = &self.cfg;
        let mut out: Vec<PcValues> = self
            .handler
            .profile()
            .iter()
            .map(|(&pc, p)| PcValues {
                pc,
                samples: p.samples,
                weight: p.samples,
                status: match p.masked {
                    Some(r) if r.confident() => PcStatus::Complete,
                    Some(_) => PcStatus::Masked,
                    None => PcStatus::Profiling,
                },
                glacial: estimate::is_glacial(
                    p,
                    c.glacial_min_hits,
                    c.glacial_max_miss_ratio,
                    c.glacial_min_values,
                ),
                values: estimate::invariance(p, c.unseen_share_cap)
                    .into_iter()
                    .map(|(value, invariance)| ValueEstimate { value, invariance })
                    .collect(),
            })
            .collect();
        PcValues::sort(&mut out);
        out
    }
}

impl Program for LoadValueProfiler {
    type Reason = LvpInterrupt;

    fn classes(&self) -> ClassSet {
        ClassSet::of(Class::Load)
    }

    #[inline]
    fn sample(&mut self, s: Sample) -> Exit<LvpInterrupt> {
        self.slots.sample(s)
    }

    fn resume(&mut self) {
        self.handler.reopen();
    }

    fn interrupt(&mut self, reason: LvpInterrupt, front: &mut FrontEnd) -> u64 {
        self.handler.interrupt(reason, &mut self.slots, front)
    }

    fn idle(&mut self, front: &mut FrontEnd) -> u64 {
        self.handler.idle(&mut self.slots, front)
    }

    fn finish(&mut self) -> u64 {
        self.handler.copy(&self.slots)
    }

    fn coprocessor_bytes(&self) -> usize {
        self.slots.bytes()
    }

    fn hardware_bytes(&self) -> usize {
        self.slots.hardware_bytes()
    }

    fn profile_bytes(&self) -> usize {
        self.handler.bytes()
    }
}

/// The load-value profiler's result.
#[derive(Clone, Debug, Serialize)]
pub struct LvpSnapshot {
    /// The parameters.
    pub config: LvpConfig,
    /// Every profiled load, most samples first.
    pub pcs: Vec<PcValues>,
    /// Whether the profile is complete (profiling stopped).
    pub complete: bool,
    /// The part of the program being profiled.
    pub current_part: Part,
    /// Parts left to profile after it.
    pub parts_left: usize,
    /// Times the program was split after thrashing.
    pub splits: u64,
    /// Samples discarded at thrash interrupts.
    pub samples_discarded: u64,
    /// Bits set in the PC mask table.
    pub mask_bits_set: u32,
    /// What the host counted: interrupts, samples transferred, dropped.
    pub host: HostStats,
    /// Bytes on the co-processor (slots and registers).
    pub coprocessor_bytes: usize,
    /// Bytes held in all: co-processor, sample buffer, filters, profile.
    pub bytes: usize,
}

impl Coprocessor<LoadValueProfiler> {
    /// The load-value profile so far (what has been copied to the main
    /// processor) and the overhead counts.
    pub fn snapshot(&self) -> LvpSnapshot {
        let p = self.program();
        LvpSnapshot {
            config: p.cfg.clone(),
            pcs: p.estimates(),
            complete: p.handler.complete(),
            current_part: self.front_end().partition.part,
            parts_left: p.handler.parts_left(),
            splits: p.handler.splits(),
            samples_discarded: p.handler.discarded(),
            mask_bits_set: self.front_end().mask.count(),
            host: self.stats().clone(),
            coprocessor_bytes: p.coprocessor_bytes(),
            bytes: self.bytes(),
        }
    }
}
