//! What the design-space sweeps of the value profilers share: one
//! profiler per configuration and the exact load profile, all fed the
//! same stream, each only the classes it asks for; and each
//! configuration scored with the co-processor paper's weighted RMS
//! invariance error (Zilles & Sohi, HPCA 2001, §5.2–5.3), with the
//! cheapest within an error named.
//!
//! The co-processor's sweep ([`crate::coproc::sweep`]) and the hotlists'
//! ([`crate::hotlist::sweep`]) are this with their own configurations,
//! measures of cost and order of cheapness.

use crate::coproc::report::{invariance_error, PcValues};
use crate::grid::{pareto_front, GridError, SweepError};
use coprof_core::metrics::invariance::{Criteria, InvarianceError};
use coprof_core::wanted::OnlyWanted;
use coprof_core::{Class, ClassSet, Event, ExactCounts, Sink};
use serde::Serialize;
use std::cmp::Ordering;

/// The exact (PC, value) counts of the loads, fed nothing else.
struct ExactLoads(ExactCounts);

impl Sink for ExactLoads {
    fn wants(&self) -> ClassSet {
        ClassSet::of(Class::Load)
    }
    fn observe(&mut self, batch: &[Event]) {
        self.0.observe(batch);
    }
}

/// What a sweep asks of each configuration's point: its error, and how
/// cheap it is beside another.
pub trait ScoredPoint: Clone {
    /// The weighted RMS invariance error against the exact profile.
    fn error(&self) -> f64;
    /// `Less` when it is the cheaper of the two.
    fn cheaper(&self, other: &Self) -> Ordering;
}

/// A sweep's result: every configuration's point, and the cheapest within
/// the error asked for.
#[derive(Clone, Debug, Serialize)]
pub struct ValueSweepResult<T> {
    /// Loads in the stream.
    pub loads: u64,
    /// Distinct load PCs.
    pub load_pcs: usize,
    /// (PC, value) pairs the error is taken over; with none, the error is
    /// not defined and no configuration is named.
    pub scored_pairs: usize,
    /// The largest error the cheapest configuration may have.
    pub max_error: f64,
    /// Every configuration, in the grid's order.
    pub points: Vec<T>,
    /// The cheapest configuration within `max_error`, if any is.
    pub cheapest: Option<T>,
    /// The configurations no other beats on both cost and error
    /// ([`pareto_front`]), as indices into `points`, cheapest first;
    /// empty when the error is not defined.
    pub front: Vec<usize>,
}

/// One profiler `P` per configuration `C` and the exact load profile.
/// Fed as one sink it feeds them in turn; [`parts`](ValueSweep::parts)
/// hands them out to be fed on threads of their own.
pub struct ValueSweep<P, C> {
    configs: Vec<C>,
    members: Vec<OnlyWanted<P>>,
    exact: OnlyWanted<ExactLoads>,
}

impl<P: Sink + Send, C: Copy> ValueSweep<P, C> {
    /// The sweep of the configurations of a grid (`points`, or why there
    /// are none), each profiler made by `make`; the first configuration
    /// `make` refuses is named with its reason.
    pub(crate) fn build(
        points: Result<Vec<C>, GridError>,
        make: impl Fn(C) -> Result<P, String>,
    ) -> Result<ValueSweep<P, C>, SweepError<C>> {
        let configs = points.map_err(SweepError::Grid)?;
        let members = configs
            .iter()
            .map(|&c| {
                make(c)
                    .map(OnlyWanted::new)
                    .map_err(|why| SweepError::Config(c, why))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ValueSweep {
            configs,
            members,
            exact: OnlyWanted::new(ExactLoads(ExactCounts::new())),
        })
    }

    /// Each configuration's profiler and the exact profile, as sinks that
    /// may be fed on threads of their own, each the whole stream.
    pub fn parts(&mut self) -> Vec<&mut (dyn Sink + Send)> {
        let mut out: Vec<&mut (dyn Sink + Send)> = Vec::with_capacity(self.members.len() + 1);
        for m in &mut self.members {
            out.push(m);
        }
        out.push(&mut self.exact);
        out
    }

    /// The result once the stream is over: `point` makes each
    /// configuration's point from its profiler, the profile it reports
    /// (`pcs`) and its error over the pairs `criteria` admits; the
    /// cheapest is the cheapest within `max_error` (the earlier in the
    /// grid among equals).
    pub(crate) fn score<T: ScoredPoint>(
        &self,
        criteria: Criteria,
        max_error: f64,
        pcs: impl Fn(&P) -> Vec<PcValues>,
        point: impl Fn(C, &P, &[PcValues], &InvarianceError) -> T,
    ) -> ValueSweepResult<T> {
        let exact = &self.exact.inner().0;
        let mut scored_pairs = 0;
        let points: Vec<T> = self
            .members
            .iter()
            .zip(&self.configs)
            .map(|(m, &config)| {
                let profiler = m.inner();
                let reported = pcs(profiler);
                let e = invariance_error(exact, criteria, &reported);
                scored_pairs = e.pairs;
                point(config, profiler, &reported, &e)
            })
            .collect();
        let cheapest = if scored_pairs == 0 {
            None
        } else {
            points
                .iter()
                .filter(|p| p.error() <= max_error)
                .min_by(|a, b| a.cheaper(b))
                .cloned()
        };
        let front = if scored_pairs == 0 {
            Vec::new()
        } else {
            pareto_front(&points, T::cheaper, |a, b| a.error().total_cmp(&b.error()))
        };
        ValueSweepResult {
            loads: exact.class_count(Class::Load),
            load_pcs: exact.per_pc.len(),
            scored_pairs,
            max_error,
            points,
            cheapest,
            front,
        }
    }
}

impl<P: Sink + Send, C: Copy> Sink for ValueSweep<P, C> {
    fn wants(&self) -> ClassSet {
        self.members
            .iter()
            .fold(self.exact.wants(), |w, m| w.union(m.wants()))
    }
    fn observe(&mut self, batch: &[Event]) {
        for s in self.parts() {
            s.observe(batch);
        }
    }
    fn finish(&mut self) {
        for s in self.parts() {
            s.finish();
        }
    }
}

/// The exact profile of the loads of `events`, as a sweep keeps it: what
/// the sweeps' tests score each configuration run alone against.
#[cfg(test)]
pub(crate) fn exact_loads(events: &[Event]) -> ExactCounts {
    let mut exact = ExactLoads(ExactCounts::new());
    let loads: Vec<Event> = events
        .iter()
        .filter(|e| exact.wants().contains(e.class))
        .copied()
        .collect();
    exact.observe(&loads);
    exact.0
}
