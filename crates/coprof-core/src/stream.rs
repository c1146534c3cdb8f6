//! The push model that joins sources to engines.
//!
//! A [`Source`] (the simulator, a trace reader, a generator) runs and pushes
//! batches of [`Event`]s into one [`Sink`]. Before it starts, it asks the
//! sink which classes it wants ([`Sink::wants`]) and builds events only for
//! those: this is the co-processor paper's decode-time opcode filter (Zilles &
//! Sohi, HPCA 2001, §3.1), so that an unwanted class costs nothing.
//!
//! Engines, exact counters and trace writers are all sinks. Several sinks
//! listen to one source through a [`Fanout`].

use crate::event::{ClassSet, Event};

/// Something that consumes batches of events.
///
/// The source calls [`wants`](Sink::wants) once before the first batch,
/// then [`observe`](Sink::observe) for every batch, then
/// [`finish`](Sink::finish) once at the end of the stream. A sink receives
/// at least every event of the classes it asked for, in program order; it may
/// also receive events of other classes (for example when it shares a
/// [`Fanout`] with a sink that wants more) and must skip those it does not
/// handle.
pub trait Sink {
    /// The classes this sink needs. The default is every class.
    fn wants(&self) -> ClassSet {
        ClassSet::ALL
    }

    /// Called with each batch of events, in stream order. Batches are never
    /// empty.
    fn observe(&mut self, batch: &[Event]);

    /// Called once after the last batch. The default does nothing.
    fn finish(&mut self) {}
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn wants(&self) -> ClassSet {
        (**self).wants()
    }
    fn observe(&mut self, batch: &[Event]) {
        (**self).observe(batch)
    }
    fn finish(&mut self) {
        (**self).finish()
    }
}

impl<S: Sink + ?Sized> Sink for Box<S> {
    fn wants(&self) -> ClassSet {
        (**self).wants()
    }
    fn observe(&mut self, batch: &[Event]) {
        (**self).observe(batch)
    }
    fn finish(&mut self) {
        (**self).finish()
    }
}

/// Something that produces a stream of events and pushes it into a sink.
pub trait Source {
    /// The error a run can end with.
    type Error;

    /// Runs the source to its end, pushing every batch into `sink`, and
    /// calls `sink.finish()` when the stream ends normally. Returns the
    /// number of events delivered.
    fn run(&mut self, sink: &mut dyn Sink) -> Result<u64, Self::Error>;
}

/// Several sinks listening to one source. It wants the union of what its
/// members want and passes every batch to each of them.
#[derive(Default)]
pub struct Fanout<'a> {
    sinks: Vec<&'a mut dyn Sink>,
}

impl<'a> Fanout<'a> {
    /// An empty fan-out.
    pub fn new() -> Fanout<'a> {
        Fanout { sinks: Vec::new() }
    }

    /// Adds a sink.
    pub fn push(&mut self, sink: &'a mut dyn Sink) {
        self.sinks.push(sink);
    }

    /// Number of member sinks.
    pub fn len(&self) -> usize {
        self.sinks.len()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }
}

impl Sink for Fanout<'_> {
    fn wants(&self) -> ClassSet {
        self.sinks
            .iter()
            .fold(ClassSet::NONE, |s, k| s.union(k.wants()))
    }
    fn observe(&mut self, batch: &[Event]) {
        for s in &mut self.sinks {
            s.observe(batch);
        }
    }
    fn finish(&mut self) {
        for s in &mut self.sinks {
            s.finish();
        }
    }
}

/// A sink that keeps every event it receives, for tests and small streams.
#[derive(Clone, Debug, Default)]
pub struct Collect {
    /// The events received, in order.
    pub events: Vec<Event>,
    /// The classes it asks for.
    pub wants: ClassSet,
}

impl Collect {
    /// A collector of every class.
    pub fn all() -> Collect {
        Collect {
            events: Vec::new(),
            wants: ClassSet::ALL,
        }
    }
}

impl Sink for Collect {
    fn wants(&self) -> ClassSet {
        self.wants
    }
    fn observe(&mut self, batch: &[Event]) {
        self.events
            .extend(batch.iter().filter(|e| self.wants.contains(e.class)));
    }
}

/// A source over events held in memory, delivered in batches of
/// `batch` events and filtered to the classes the sink wants.
pub struct SliceSource<'a> {
    events: &'a [Event],
    batch: usize,
}

impl<'a> SliceSource<'a> {
    /// A source over `events`, delivered 4096 at a time.
    pub fn new(events: &'a [Event]) -> SliceSource<'a> {
        SliceSource {
            events,
            batch: 4096,
        }
    }

    /// Sets the batch size (at least 1).
    pub fn batch_size(mut self, batch: usize) -> SliceSource<'a> {
        self.batch = batch.max(1);
        self
    }
}

impl Source for SliceSource<'_> {
    type Error = std::convert::Infallible;

    fn run(&mut self, sink: &mut dyn Sink) -> Result<u64, Self::Error> {
        let wants = sink.wants();
        let mut delivered = 0u64;
        if wants == ClassSet::ALL {
            for chunk in self.events.chunks(self.batch) {
                sink.observe(chunk);
                delivered += chunk.len() as u64;
            }
        } else if !wants.is_empty() {
            let mut buf = Vec::with_capacity(self.batch);
            for e in self.events.iter().filter(|e| wants.contains(e.class)) {
                buf.push(*e);
                if buf.len() == self.batch {
                    sink.observe(&buf);
                    delivered += buf.len() as u64;
                    buf.clear();
                }
            }
            if !buf.is_empty() {
                sink.observe(&buf);
                delivered += buf.len() as u64;
            }
        }
        sink.finish();
        Ok(delivered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Class;

    #[test]
    fn slice_source_filters_to_wanted_classes() {
        let events: Vec<Event> = (0..10_000u64)
            .map(|i| {
                if i % 3 == 0 {
                    Event::load(i * 4, 0x1000, 8, i)
                } else {
                    Event::new(i * 4, Class::IntAlu)
                }
            })
            .collect();
        let mut c = Collect {
            events: vec![],
            wants: ClassSet::of(Class::Load),
        };
        let n = SliceSource::new(&events)
            .batch_size(100)
            .run(&mut c)
            .unwrap();
        assert_eq!(n, 3334);
        assert!(c.events.iter().all(|e| e.class == Class::Load));
        assert_eq!(c.events.len(), 3334);
    }

    #[test]
    fn fanout_wants_union_and_feeds_all() {
        let events = vec![
            Event::load(0, 1, 8, 2),
            Event::new(4, Class::IntAlu),
            Event::store(8, 1, 8, 3),
        ];
        let mut a = Collect {
            events: vec![],
            wants: ClassSet::of(Class::Load),
        };
        let mut b = Collect {
            events: vec![],
            wants: ClassSet::of(Class::Store),
        };
        let mut f = Fanout::new();
        f.push(&mut a);
        f.push(&mut b);
        assert_eq!(f.wants(), ClassSet::of(Class::Load).with(Class::Store));
        SliceSource::new(&events).run(&mut f).unwrap();
        assert_eq!(a.events.len(), 1);
        assert_eq!(b.events.len(), 1);
    }
}
