//! Which profile RAP builds from an event stream (Mysore et al., TACO 2008,
//! §5.4): the point each event contributes, and a [`Sink`] that feeds a RAP
//! tree from events.
//!
//! - `pc`: the code profile, every retired instruction's PC;
//! - `load-value`, `load-addr`, `store-addr`: value and address profiles;
//! - `zero-load-addr`: addresses of loads that returned zero (§5.4.3);
//! - `narrow-pc`: PCs of instructions whose result needs fewer than 16 bits
//!   (narrow-width operands, §5.4.2).
//!
//! An n-dimensional profile takes one stream per dimension; an event gives a
//! point only if every dimension has a value for it (`pc,load-addr` is the
//! code × data profile of loads).

use super::block_buffer::BlockBuffer;
use super::engine::Rap;
use super::snapshot::RapSnapshot;
use coprof_core::{Blocks, Class, ClassSet, Event, Run, Sink};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// A value is narrow when it fits in this many bits, as an unsigned or as
/// a sign-extended number (§5.4.2).
pub const NARROW_BITS: u32 = 16;

/// One dimension of a profile: how an event becomes a coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stream {
    /// The PC of every event.
    Pc,
    /// The value a load returned.
    LoadValue,
    /// The effective address of a load.
    LoadAddr,
    /// The effective address of a store.
    StoreAddr,
    /// The effective address of a load that returned zero.
    ZeroLoadAddr,
    /// The PC of an instruction whose produced value is narrow.
    NarrowPc,
}

impl Stream {
    /// Every stream.
    pub const ALL: [Stream; 6] = [
        Stream::Pc,
        Stream::LoadValue,
        Stream::LoadAddr,
        Stream::StoreAddr,
        Stream::ZeroLoadAddr,
        Stream::NarrowPc,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Pc => "pc",
            Stream::LoadValue => "load-value",
            Stream::LoadAddr => "load-addr",
            Stream::StoreAddr => "store-addr",
            Stream::ZeroLoadAddr => "zero-load-addr",
            Stream::NarrowPc => "narrow-pc",
        }
    }

    /// The classes whose events can give this stream a value.
    pub fn wants(self) -> ClassSet {
        match self {
            Stream::Pc | Stream::NarrowPc => ClassSet::ALL,
            Stream::LoadValue | Stream::LoadAddr | Stream::ZeroLoadAddr => {
                ClassSet::of(Class::Load)
            }
            Stream::StoreAddr => ClassSet::of(Class::Store),
        }
    }

    /// Whether the stream's points repeat in no pattern a processor
    /// learns: values and data addresses, which the engine takes with
    /// [`Rap::add_all_irregular`]; PCs, which loops repeat, go through
    /// [`Rap::add_all`].
    pub fn is_irregular(self) -> bool {
        match self {
            Stream::Pc | Stream::NarrowPc => false,
            Stream::LoadValue | Stream::LoadAddr | Stream::StoreAddr | Stream::ZeroLoadAddr => true,
        }
    }

    /// The coordinate `e` gives, if any.
    #[inline(always)]
    pub fn point(self, e: &Event) -> Option<u64> {
        match self {
            Stream::Pc => Some(e.pc),
            Stream::LoadValue => (e.class == Class::Load).then_some(e.value),
            Stream::LoadAddr => (e.class == Class::Load).then_some(e.addr),
            Stream::StoreAddr => (e.class == Class::Store).then_some(e.addr),
            Stream::ZeroLoadAddr => (e.class == Class::Load && e.value == 0).then_some(e.addr),
            Stream::NarrowPc => (e.has_value() && is_narrow(e.value)).then_some(e.pc),
        }
    }
}

/// Whether `v` fits in [`NARROW_BITS`] bits, zero- or sign-extended.
#[inline]
pub fn is_narrow(v: u64) -> bool {
    v >> NARROW_BITS == 0 || (v as i64) >> (NARROW_BITS - 1) == -1
}

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Stream {
    type Err = String;
    fn from_str(s: &str) -> Result<Stream, String> {
        let s = s.trim();
        Stream::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Stream::ALL.iter().map(|x| x.name()).collect();
                format!(
                    "unknown stream '{s}' (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// The point of `e` in a profile over `dims`, if every dimension has one.
#[inline(always)]
pub fn point_of<const D: usize>(dims: &[Stream; D], e: &Event) -> Option<[u64; D]> {
    let mut p = [0u64; D];
    for (x, s) in p.iter_mut().zip(dims) {
        *x = s.point(e)?;
    }
    Some(p)
}

/// The classes a profile over `dims` needs: those every dimension can use.
pub fn wants_of(dims: &[Stream]) -> ClassSet {
    dims.iter()
        .fold(ClassSet::ALL, |s, d| s.intersection(d.wants()))
}

/// Adds the point of every event of `batch` that has one, with
/// [`Rap::add_all_irregular`] when `irregular` (see
/// [`Stream::is_irregular`]), else with [`Rap::add_all`].
#[inline(always)]
fn feed<const D: usize>(
    rap: &mut Rap<D>,
    batch: &[Event],
    irregular: bool,
    point: impl Fn(&Event) -> Option<[u64; D]>,
) {
    let points = batch.iter().filter_map(point);
    if irregular {
        rap.add_all_irregular(points);
    } else {
        rap.add_all(points);
    }
}

/// A RAP tree fed from events: the [`Sink`] form of the engine.
#[derive(Clone, Debug)]
pub struct RangeProfiler<const D: usize> {
    rap: Rap<D>,
    dims: [Stream; D],
    /// Whether the PCs come as runs of blocks (a code profile of a live
    /// run): events then add nothing.
    runs: bool,
    /// The optional buffer of block executions in front of the engine,
    /// with its copy of the blocks' PCs (to drain it at the end).
    block_buffer: Option<(BlockBuffer, Blocks)>,
}

impl<const D: usize> RangeProfiler<D> {
    /// A profiler of `dims` into `rap`.
    pub fn new(rap: Rap<D>, dims: [Stream; D]) -> RangeProfiler<D> {
        RangeProfiler {
            rap,
            dims,
            runs: false,
            block_buffer: None,
        }
    }

    /// Puts a buffer of `bytes` worth of block executions in front of the
    /// engine ([`BlockBuffer`], an option beside the paper's): used when
    /// the PCs come as runs of blocks.
    pub fn with_block_buffer(mut self, bytes: usize) -> RangeProfiler<D> {
        self.block_buffer = Some((BlockBuffer::new(bytes), Blocks::new()));
        self
    }

    /// The buffer of block executions, if there is one.
    pub fn block_buffer(&self) -> Option<&BlockBuffer> {
        self.block_buffer.as_ref().map(|(b, _)| b)
    }

    /// Sends the block executions waiting in the block buffer on.
    fn drain_blocks(&mut self) {
        if let Some((buffer, blocks)) = &mut self.block_buffer {
            let rap = &mut self.rap;
            buffer.drain(|run, count| {
                let (first, pcs) = blocks.run_pcs_at(run);
                rap.add_positioned_counted([(first, pcs, count)])
            });
        }
    }

    /// The streams, one per dimension.
    pub fn dims(&self) -> &[Stream; D] {
        &self.dims
    }

    /// The engine.
    pub fn rap(&self) -> &Rap<D> {
        &self.rap
    }

    /// Flushes and returns the tree (see [`Rap::snapshot`]).
    pub fn snapshot(&mut self) -> RapSnapshot {
        self.drain_blocks();
        self.rap.snapshot()
    }
}

impl<const D: usize> Sink for RangeProfiler<D> {
    fn wants(&self) -> ClassSet {
        wants_of(&self.dims)
    }

    fn observe(&mut self, batch: &[Event]) {
        if self.runs {
            return;
        }
        // One loop per stream for one dimension, so that the choice of
        // stream is made once per batch, not once per event (an indirect
        // jump per event on the instruction stream of a live run).
        if D == 1 {
            let rap = &mut self.rap;
            let one = one_point::<D>;
            let irregular = self.dims[0].is_irregular();
            match self.dims[0] {
                Stream::Pc => feed(rap, batch, irregular, |e| Some(one(e.pc))),
                Stream::LoadValue => feed(rap, batch, irregular, |e| {
                    Stream::LoadValue.point(e).map(one)
                }),
                Stream::LoadAddr => feed(rap, batch, irregular, |e| {
                    Stream::LoadAddr.point(e).map(one)
                }),
                Stream::StoreAddr => feed(rap, batch, irregular, |e| {
                    Stream::StoreAddr.point(e).map(one)
                }),
                Stream::ZeroLoadAddr => feed(rap, batch, irregular, |e| {
                    Stream::ZeroLoadAddr.point(e).map(one)
                }),
                Stream::NarrowPc => feed(rap, batch, irregular, |e| {
                    Stream::NarrowPc.point(e).map(one)
                }),
            }
        } else {
            // Points of several dimensions take the buffer with a branch,
            // as they always have.
            let dims = self.dims;
            feed(&mut self.rap, batch, false, |e| point_of(&dims, e));
        }
    }

    fn finish(&mut self) {
        self.drain_blocks();
        self.rap.flush();
    }

    /// A one-dimensional code profile (`pc`) takes the instructions as
    /// runs of blocks and needs no events: the same points in the same
    /// order, without an event per instruction.
    fn wants_with_runs(&self) -> Option<ClassSet> {
        (D == 1 && self.dims[0] == Stream::Pc).then_some(ClassSet::NONE)
    }

    fn runs_follow(&mut self) {
        self.runs = true;
    }

    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        let rap = &mut self.rap;
        match &mut self.block_buffer {
            Some((buffer, copy)) => {
                copy.extend_from(blocks);
                rap.add_positioned_counted(runs.iter().filter_map(|run| buffer.insert(*run)).map(
                    |(old, count)| {
                        let (first, pcs) = blocks.run_pcs_at(old);
                        (first, pcs, count)
                    },
                ));
            }
            None => rap.add_positioned(runs.iter().map(|r| blocks.run_pcs_at(*r))),
        }
    }
}

/// A one-dimensional point (the profile's only dimension is the PC).
#[inline(always)]
pub(crate) fn one_point<const D: usize>(v: u64) -> [u64; D] {
    let mut p = [0u64; D];
    p[0] = v;
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rap::RapConfig;
    use coprof_core::synth::{generate, GenConfig, Workload};

    #[test]
    fn every_stream_feeds_the_points_it_names() {
        // The per-stream loops of `observe` against the events' points
        // added one by one, on a stream with every class.
        let events = generate(&GenConfig::new(Workload::Mixed, 50_000)).unwrap();
        for s in Stream::ALL {
            let mut profiler = RangeProfiler::new(Rap::new(RapConfig::default()).unwrap(), [s]);
            for batch in events.chunks(4096) {
                profiler.observe(batch);
            }
            let mut direct: Rap<1> = Rap::new(RapConfig::default()).unwrap();
            for e in &events {
                if let Some(p) = s.point(e) {
                    direct.add([p]);
                }
            }
            let (a, b) = (profiler.snapshot(), direct.snapshot());
            assert!(a.n > 0, "{s}: no events");
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{s}");
        }
    }

    #[test]
    fn a_code_profile_from_runs_equals_one_from_events() {
        use coprof_core::{SliceSource, Source};
        let events = generate(&GenConfig::new(Workload::Mixed, 100_000).seed(4)).unwrap();
        for s in Stream::ALL {
            let mut plain = RangeProfiler::new(Rap::new(RapConfig::default()).unwrap(), [s]);
            SliceSource::new(&events).run(&mut plain).unwrap();
            let mut runs = RangeProfiler::new(Rap::new(RapConfig::default()).unwrap(), [s]);
            let delivered = SliceSource::new(&events)
                .with_runs()
                .run(&mut runs)
                .unwrap();
            if s == Stream::Pc {
                assert_eq!(delivered, 0, "a code profile from runs needs no events");
            }
            let (a, b) = (plain.snapshot(), runs.snapshot());
            assert!(a.n > 0, "{s}: no events");
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{s}");
        }
    }

    #[test]
    fn a_block_buffer_keeps_the_error_bound_and_every_event() {
        use crate::rap::{check, ExactPoints};
        use coprof_core::{SliceSource, Source};
        for (workload, seed) in [(Workload::Loops, 3), (Workload::Mixed, 6)] {
            let events = generate(&GenConfig::new(workload, 300_000).seed(seed)).unwrap();
            for epsilon in [0.1, 0.01] {
                let rap = Rap::new(RapConfig::with_epsilon(epsilon)).unwrap();
                let mut p = RangeProfiler::new(rap, [Stream::Pc]).with_block_buffer(1024);
                SliceSource::new(&events).with_runs().run(&mut p).unwrap();
                let b = p.block_buffer().unwrap();
                assert_eq!(b.capacity(), 64);
                assert!(b.hits() > 0, "{workload:?}: repeated blocks combine");
                let snap = p.snapshot();
                assert_eq!(snap.n, events.len() as u64, "no event lost");
                let mut exact = ExactPoints::new([Stream::Pc]);
                SliceSource::new(&events).run(&mut exact).unwrap();
                let c = check(&snap, &exact);
                assert_eq!(c.over_estimates, 0);
                assert!(
                    c.max_abs_error_over_n <= epsilon,
                    "{workload:?} at ε = {epsilon}: error {} of n",
                    c.max_abs_error_over_n
                );
            }
        }
    }

    #[test]
    fn names_round_trip() {
        for s in Stream::ALL {
            assert_eq!(s.name().parse::<Stream>().unwrap(), s);
        }
        let e = "pcs".parse::<Stream>().unwrap_err();
        assert!(e.contains("unknown stream 'pcs'") && e.contains("narrow-pc"));
    }

    #[test]
    fn points_per_stream() {
        let zero = Event::load(0x10, 0x800, 8, 0);
        let big = Event::load(0x14, 0x808, 8, 1 << 40);
        let st = Event::store(0x18, 0x900, 4, 3);
        let neg = Event::with_value(0x1c, Class::IntAlu, (-5i64) as u64);
        let plain = Event::new(0x20, Class::IntAlu);
        assert_eq!(Stream::Pc.point(&plain), Some(0x20));
        assert_eq!(Stream::LoadValue.point(&big), Some(1 << 40));
        assert_eq!(Stream::LoadAddr.point(&st), None);
        assert_eq!(Stream::StoreAddr.point(&st), Some(0x900));
        assert_eq!(Stream::ZeroLoadAddr.point(&zero), Some(0x800));
        assert_eq!(Stream::ZeroLoadAddr.point(&big), None);
        assert_eq!(Stream::NarrowPc.point(&neg), Some(0x1c));
        assert_eq!(Stream::NarrowPc.point(&big), None);
        assert_eq!(Stream::NarrowPc.point(&plain), None, "no value, not narrow");
        assert!(is_narrow(0xffff) && !is_narrow(0x1_0000));
        assert!(is_narrow((-32768i64) as u64) && !is_narrow((-32769i64) as u64));
        assert_eq!(
            point_of(&[Stream::Pc, Stream::LoadAddr], &zero),
            Some([0x10, 0x800])
        );
        assert_eq!(point_of(&[Stream::Pc, Stream::LoadAddr], &st), None);
        assert_eq!(
            wants_of(&[Stream::Pc, Stream::LoadAddr]),
            ClassSet::of(Class::Load)
        );
    }
}
