//! `coprof sample --sweep`: the samplers' design space over one pass of
//! the input: each sampling method at each mean interval, every one scored
//! with the overlap accuracy against the same full profile (Lee & Zilles,
//! CGO 2008, §4.1), as the paper sets branch-on-random beside counter
//! sampling at several rates (Fig. 9–10).
//!
//! Each configuration is a [`SampleEval`] of its own, fed the same stream,
//! so that its row is exactly what `coprof sample --eval --sampler S` with
//! the same seed gives, and the configurations can be fed on threads of
//! their own.

use super::sample::Args;
use crate::error::bad_input;
use crate::input::InputInfo;
use crate::job::{Job, Rendered};
use crate::output::{count, pct, thousands};
use crate::sampled::{ProfileKind, SampleEval};
use coprof_brr::{AnySampler, Sampler, SamplerSpec, Spacing};
use coprof_core::{all_with_runs, Blocks, ClassSet, Event, Run, Sink};
use coprof_engines::grid::pareto_front;
use serde::Serialize;

/// The mean intervals a sweep tries unless told otherwise: powers of two,
/// which branch-on-random's rates are, from 1 in 16 to 1 in 4,096.
pub const DEFAULT_INTERVALS: [u64; 5] = [16, 64, 256, 1024, 4096];

/// A way of sampling, at a mean interval the sweep chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Branch-on-random, `brr:F` (the interval a power of two, 2^(F+1)).
    Brr,
    /// Branch-on-random with its register bits spread, `brr:F,spread`.
    BrrSpread,
    /// Branch-on-random with adjacent register bits, `brr:F,adjacent`.
    BrrAdjacent,
    /// Every N-th event, `counter:N` (Arnold–Ryder).
    Counter,
    /// Geometric intervals of mean N, `geometric:N`.
    Geometric,
    /// DCPI's period with its default jitter, `periodic:N` (N ± N/16).
    Periodic,
}

/// The methods a sweep tries unless told otherwise: each kind once, brr
/// with its default bits.
pub const DEFAULT_METHODS: [Method; 4] = [
    Method::Brr,
    Method::Counter,
    Method::Geometric,
    Method::Periodic,
];

impl Method {
    /// The sampler of this method with mean interval `n`.
    fn spec(self, n: u64) -> Result<SamplerSpec, String> {
        let spec = match self {
            Method::Brr | Method::BrrSpread | Method::BrrAdjacent => {
                if !n.is_power_of_two() || !(2..=1 << 16).contains(&n) {
                    return Err(format!(
                        "--sweep-intervals {n}: branch-on-random's intervals are the powers of \
                         two from 2 to 65536 (brr:F takes 1 in 2^(F+1)); leave brr out with \
                         --sweep-methods"
                    ));
                }
                SamplerSpec::Brr {
                    freq: n.trailing_zeros() - 1,
                    spacing: match self {
                        Method::BrrSpread => Spacing::Spread,
                        Method::BrrAdjacent => Spacing::Adjacent,
                        _ => Spacing::Spaced,
                    },
                }
            }
            Method::Counter => SamplerSpec::Counter { interval: n },
            Method::Geometric => SamplerSpec::Geometric { mean: n },
            Method::Periodic => SamplerSpec::Periodic {
                period: n,
                jitter: n / 16,
            },
        };
        spec.check()
            .map_err(|e| format!("--sweep-intervals {n}: {spec}: {e}"))?;
        Ok(spec)
    }
}

/// The sweep of `a`'s options as a [`Job`]; `a` must have --sweep.
pub fn prepare(a: &Args) -> anyhow::Result<Box<dyn Job>> {
    let classes = a.classes.unwrap_or(a.profile.default_classes());
    let mut points = Vec::new();
    let mut evals = Vec::new();
    // An empty list is one not given: clap has no default for them, so
    // that they are refused without --sweep.
    let methods = match a.sweep_methods.as_slice() {
        [] => &DEFAULT_METHODS[..],
        given => given,
    };
    let intervals = match a.sweep_intervals.as_slice() {
        [] => &DEFAULT_INTERVALS[..],
        given => given,
    };
    for &n in intervals {
        for &m in methods {
            let spec = m.spec(n).map_err(bad_input)?;
            let sampler = spec
                .build(a.seed)
                .map_err(|e| bad_input(format!("--sweep: {spec}: {e}")))?;
            points.push((m, n, spec));
            evals.push(SampleEval::new(sampler, classes, a.profile));
        }
    }
    a.svg.check()?;
    Ok(Box::new(SweepJob {
        points,
        evals,
        classes,
        kind: a.profile,
        seed: a.seed,
        name: a.input.name(),
        svg: a.svg.clone(),
    }))
}

/// Every sampler of the grid, each with the full profile beside it.
struct SweepJob {
    /// Each configuration's method, interval and sampler, in the order of
    /// `evals`.
    points: Vec<(Method, u64, SamplerSpec)>,
    evals: Vec<SampleEval<AnySampler>>,
    classes: ClassSet,
    kind: ProfileKind,
    seed: u64,
    name: String,
    svg: crate::output::SvgArgs,
}

/// One configuration's score.
#[derive(Serialize)]
struct Point {
    sampler: String,
    method: Method,
    interval: u64,
    samples: u64,
    overlap: f64,
    keys_sampled: usize,
    /// The share of the full profile whose keys were never sampled.
    missed_share: f64,
    sampler_bytes: usize,
}

/// The most accurate sampler at one interval.
#[derive(Serialize)]
struct Best {
    interval: u64,
    sampler: String,
    overlap: f64,
}

#[derive(Serialize)]
struct SweepReport {
    profile: ProfileKind,
    classes: String,
    seed: u64,
    events: u64,
    keys_full: usize,
    points: Vec<Point>,
    best: Vec<Best>,
    /// The samplers no other beats on both samples taken and overlap
    /// ([`pareto_front`]), as indices into `points`, fewest samples first.
    front: Vec<usize>,
}

impl Sink for SweepJob {
    fn wants(&self) -> ClassSet {
        self.classes
    }
    fn observe(&mut self, batch: &[Event]) {
        self.evals.iter_mut().for_each(|e| e.observe(batch));
    }
    fn finish(&mut self) {
        self.evals.iter_mut().for_each(|e| e.finish());
    }
    fn wants_with_runs(&self) -> Option<ClassSet> {
        all_with_runs(self.evals.iter().map(|e| e as &dyn Sink))
    }
    fn runs_follow(&mut self) {
        self.evals.iter_mut().for_each(|e| e.runs_follow());
    }
    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        self.evals
            .iter_mut()
            .for_each(|e| e.observe_runs(runs, blocks));
    }
}

impl Job for SweepJob {
    fn sink(&mut self) -> &mut (dyn Sink + Send) {
        self
    }

    /// Each sampler apart, so that they may be fed on threads of their own.
    fn sinks(&mut self) -> Vec<&mut (dyn Sink + Send)> {
        self.evals
            .iter_mut()
            .map(|e| e as &mut (dyn Sink + Send))
            .collect()
    }

    fn finish(self: Box<Self>, _info: &InputInfo) -> anyhow::Result<Rendered> {
        let full = &self.evals[0];
        if full.full.is_empty() {
            return Err(super::sample::no_events(
                &self.name,
                self.kind,
                self.classes,
            ));
        }
        let points: Vec<Point> = self
            .points
            .iter()
            .zip(&self.evals)
            .map(|(&(method, interval, spec), e)| Point {
                sampler: spec.to_string(),
                method,
                interval,
                samples: e.samples,
                overlap: e.overlap(),
                keys_sampled: e.sampled.len(),
                missed_share: e.missed_share(),
                sampler_bytes: e.sampler().bytes(),
            })
            .collect();
        let mut best: Vec<Best> = Vec::new();
        for p in &points {
            match best.iter_mut().find(|b| b.interval == p.interval) {
                Some(b) if p.overlap > b.overlap => {
                    (b.sampler, b.overlap) = (p.sampler.clone(), p.overlap);
                }
                Some(_) => {}
                None => best.push(Best {
                    interval: p.interval,
                    sampler: p.sampler.clone(),
                    overlap: p.overlap,
                }),
            }
        }
        let front = pareto_front(
            &points,
            |a, b| a.samples.cmp(&b.samples),
            |a, b| b.overlap.total_cmp(&a.overlap),
        );
        let r = SweepReport {
            profile: self.kind,
            classes: self.classes.to_string(),
            seed: self.seed,
            events: full.seen,
            keys_full: full.full.len(),
            points,
            best,
            front,
        };
        let mut text = String::new();
        print_text(&mut text, &r);
        let mut json = serde_json::to_value(&r)?;
        let plot = || coprof_report::SweepPlot {
            title: format!(
                "Sampling, {} profile: {} over {} events",
                r.profile.name(),
                count(r.points.len(), "sampler"),
                thousands(r.events)
            ),
            cost: "samples taken".into(),
            error: "1 - overlap with the full profile".into(),
            points: r
                .points
                .iter()
                .map(|p| (p.samples as f64, 1.0 - p.overlap))
                .collect(),
            front: r.front.clone(),
            labels: r
                .front
                .iter()
                .map(|&i| r.points[i].sampler.clone())
                .collect(),
            max_error: None,
        };
        self.svg.draw(plot, &mut text, &mut json)?;
        Ok(Rendered { json, text })
    }
}

fn print_text(out: &mut String, r: &SweepReport) {
    crate::outln!(
        out,
        "sampling sweep: {} profile over classes {}, {} over one pass (seed {})",
        r.profile.name(),
        r.classes,
        count(r.points.len(), "sampler"),
        r.seed
    );
    crate::outln!(
        out,
        "{} events, {} keys in the full profile; overlap: the sum over keys of the smaller of \
         the full and the sampled share",
        thousands(r.events),
        thousands(r.keys_full as u64)
    );
    crate::outln!(out);
    crate::outln!(
        out,
        "{:>9}  {:<20} {:>12} {:>9} {:>14}",
        "interval",
        "sampler",
        "samples",
        "overlap",
        "never sampled"
    );
    for p in &r.points {
        crate::outln!(
            out,
            "{:>9}  {:<20} {:>12} {:>9} {:>14}",
            thousands(p.interval),
            p.sampler,
            thousands(p.samples),
            pct(p.overlap),
            pct(p.missed_share)
        );
    }
    crate::outln!(out);
    crate::outln!(out, "most accurate at each interval:");
    for b in &r.best {
        crate::outln!(
            out,
            "{:>9}  {:<20} {:>9}",
            thousands(b.interval),
            b.sampler,
            pct(b.overlap)
        );
    }
    crate::outln!(out);
    let heading = "the front, where no other sampler takes as few samples and is as accurate, \
                   fewest first:";
    crate::output::print_front(out, heading, &r.front, |i| {
        let p = &r.points[i];
        format!(
            "{:>9}  {:<20} {:>12} {:>9}",
            thousands(p.interval),
            p.sampler,
            thousands(p.samples),
            pct(p.overlap)
        )
    });
}
