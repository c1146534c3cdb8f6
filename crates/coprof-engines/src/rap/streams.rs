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

use super::engine::Rap;
use super::snapshot::RapSnapshot;
use coprof_core::{Class, ClassSet, Event, Sink};
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
    dims.iter().fold(ClassSet::ALL, |s, d| {
        ClassSet::from_bits(s.bits() & d.wants().bits())
    })
}

/// Adds the point of every event of `batch` that has one.
#[inline(always)]
fn feed<const D: usize>(
    rap: &mut Rap<D>,
    batch: &[Event],
    point: impl Fn(&Event) -> Option<[u64; D]>,
) {
    rap.add_all(batch.iter().filter_map(point));
}

/// A RAP tree fed from events: the [`Sink`] form of the engine.
#[derive(Clone, Debug)]
pub struct RangeProfiler<const D: usize> {
    rap: Rap<D>,
    dims: [Stream; D],
}

impl<const D: usize> RangeProfiler<D> {
    /// A profiler of `dims` into `rap`.
    pub fn new(rap: Rap<D>, dims: [Stream; D]) -> RangeProfiler<D> {
        RangeProfiler { rap, dims }
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
        self.rap.snapshot()
    }
}

impl<const D: usize> Sink for RangeProfiler<D> {
    fn wants(&self) -> ClassSet {
        wants_of(&self.dims)
    }

    fn observe(&mut self, batch: &[Event]) {
        // One loop per stream for one dimension, so that the choice of
        // stream is made once per batch, not once per event (an indirect
        // jump per event on the instruction stream of a live run).
        if D == 1 {
            let rap = &mut self.rap;
            let one = |v: u64| {
                let mut p = [0u64; D];
                p[0] = v;
                p
            };
            match self.dims[0] {
                Stream::Pc => feed(rap, batch, |e| Some(one(e.pc))),
                Stream::LoadValue => feed(rap, batch, |e| Stream::LoadValue.point(e).map(one)),
                Stream::LoadAddr => feed(rap, batch, |e| Stream::LoadAddr.point(e).map(one)),
                Stream::StoreAddr => feed(rap, batch, |e| Stream::StoreAddr.point(e).map(one)),
                Stream::ZeroLoadAddr => {
                    feed(rap, batch, |e| Stream::ZeroLoadAddr.point(e).map(one))
                }
                Stream::NarrowPc => feed(rap, batch, |e| Stream::NarrowPc.point(e).map(one)),
            }
        } else {
            let dims = self.dims;
            feed(&mut self.rap, batch, |e| point_of(&dims, e));
        }
    }

    fn finish(&mut self) {
        self.rap.flush();
    }
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
