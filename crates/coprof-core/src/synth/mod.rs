//! Deterministic synthetic event streams whose ground truth is known.
//!
//! The engines' tests and benchmarks need streams with a known answer: a
//! Zipf law of values, loops with chosen trip counts, values that stay put
//! for long phases, a method-call pattern that makes fixed-interval sampling
//! resonate. Every generator is a pure function of its [`GenConfig`]: the same
//! seed gives the same events on every machine.

mod loops;
mod methods;
mod mixed;
mod phases;
mod zipf;

pub use loops::{LoopSpec, LoopsProgram};
pub use methods::{MethodsProgram, RESONANT_A, RESONANT_B};

use crate::event::Event;
use crate::stream::{Sink, Source};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The random number generator behind every workload: small, fast and the
/// same on every platform for a given seed.
pub type Rng = Xoshiro256PlusPlus;

/// The synthetic workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// Loads at 256 PCs whose values and addresses follow a Zipf law.
    Zipf,
    /// Like `zipf` but every value, address and PC equally likely.
    Uniform,
    /// Nested loops with chosen trip counts and body sizes.
    Loops,
    /// Loads whose values stay constant for long phases ("glacial" values).
    Phases,
    /// Calls and returns, including a loop calling two leaf methods in turn.
    Methods,
    /// Every class in realistic proportions, from a random static program.
    Mixed,
}

impl Workload {
    /// Every workload.
    pub const ALL: [Workload; 6] = [
        Workload::Zipf,
        Workload::Uniform,
        Workload::Loops,
        Workload::Phases,
        Workload::Methods,
        Workload::Mixed,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Zipf => "zipf",
            Workload::Uniform => "uniform",
            Workload::Loops => "loops",
            Workload::Phases => "phases",
            Workload::Methods => "methods",
            Workload::Mixed => "mixed",
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Workload, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
                format!(
                    "unknown workload '{s}' (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// Everything that determines a synthetic stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GenConfig {
    /// Which workload.
    pub workload: Workload,
    /// How many events to produce.
    pub events: u64,
    /// The random seed.
    pub seed: u64,
    /// The Zipf exponent (for `zipf`, and the skew inside other workloads).
    pub alpha: f64,
    /// Distinct values per load PC at most (for `zipf` and `uniform`).
    pub keys: u64,
}

impl GenConfig {
    /// A config with the defaults: seed 1, alpha 1.0, 65536 keys.
    pub fn new(workload: Workload, events: u64) -> GenConfig {
        GenConfig {
            workload,
            events,
            seed: 1,
            alpha: 1.0,
            keys: 1 << 16,
        }
    }

    /// The same config with another seed.
    pub fn seed(mut self, seed: u64) -> GenConfig {
        self.seed = seed;
        self
    }

    /// Checks the parameters, naming the one that is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(format!(
                "--alpha must be a positive number, got {}",
                self.alpha
            ));
        }
        if self.keys == 0 {
            return Err("--keys must be at least 1".into());
        }
        Ok(())
    }
}

/// One workload's program: appends the next few events (one iteration, one
/// call, one pass) to `out`.
pub(crate) trait Program {
    fn emit(&mut self, rng: &mut Rng, out: &mut Vec<Event>);
}

/// A synthetic stream: a [`Source`] that produces exactly `config.events`
/// events.
pub struct Generator {
    program: Box<dyn Program + Send>,
    rng: Rng,
    remaining: u64,
    pending: Vec<Event>,
    pos: usize,
    batch: usize,
}

impl Generator {
    /// A generator for `config`.
    pub fn new(config: &GenConfig) -> Result<Generator, String> {
        config.validate()?;
        let mut rng = Rng::seed_from_u64(config.seed);
        let program: Box<dyn Program + Send> = match config.workload {
            Workload::Zipf => Box::new(zipf::ZipfProgram::new(config, false)),
            Workload::Uniform => Box::new(zipf::ZipfProgram::new(config, true)),
            Workload::Loops => Box::new(LoopsProgram::new(&mut rng)),
            Workload::Phases => Box::new(phases::PhasesProgram::new(&mut rng, config.alpha)),
            Workload::Methods => Box::new(MethodsProgram::new(config.events)),
            Workload::Mixed => Box::new(mixed::MixedProgram::new(&mut rng)),
        };
        Ok(Generator {
            program,
            rng,
            remaining: config.events,
            pending: Vec::new(),
            pos: 0,
            batch: 8192,
        })
    }

    /// Fills `out` (cleared first) with up to `max` next events; returns
    /// false when the stream has ended.
    pub fn next_batch(&mut self, out: &mut Vec<Event>, max: usize) -> bool {
        out.clear();
        while out.len() < max && self.remaining > 0 {
            if self.pos == self.pending.len() {
                self.pending.clear();
                self.pos = 0;
                while self.pending.is_empty() {
                    self.program.emit(&mut self.rng, &mut self.pending);
                }
            }
            let take = (max - out.len())
                .min(self.pending.len() - self.pos)
                .min(self.remaining.min(usize::MAX as u64) as usize);
            out.extend_from_slice(&self.pending[self.pos..self.pos + take]);
            self.pos += take;
            self.remaining -= take as u64;
        }
        !out.is_empty()
    }
}

impl Source for Generator {
    type Error = std::convert::Infallible;

    fn run(&mut self, sink: &mut dyn Sink) -> Result<u64, Self::Error> {
        let wants = sink.wants();
        let mut buf = Vec::with_capacity(self.batch);
        let mut delivered = 0;
        while self.next_batch(&mut buf, self.batch) {
            if wants != crate::event::ClassSet::ALL {
                buf.retain(|e| wants.contains(e.class));
                if buf.is_empty() {
                    continue;
                }
            }
            delivered += buf.len() as u64;
            sink.observe(&buf);
        }
        sink.finish();
        Ok(delivered)
    }
}

/// All events of `config` in memory.
pub fn generate(config: &GenConfig) -> Result<Vec<Event>, String> {
    let mut g = Generator::new(config)?;
    let mut all = Vec::with_capacity(config.events.min(1 << 26) as usize);
    let mut buf = Vec::new();
    while g.next_batch(&mut buf, 1 << 16) {
        all.extend_from_slice(&buf);
    }
    Ok(all)
}

/// Mixes a number into a well-spread 64-bit hash (splitmix64's finaliser
/// of `x` plus the golden-ratio increment), used to derive per-PC
/// properties from a PC deterministically; applied to a state that grows
/// by that increment per call, it is the SplitMix64 generator.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Class;
    use crate::exact::ExactCounts;

    #[test]
    fn every_workload_gives_exactly_n_events_deterministically() {
        for w in Workload::ALL {
            let cfg = GenConfig::new(w, 50_001).seed(7);
            let a = generate(&cfg).unwrap();
            let b = generate(&cfg).unwrap();
            assert_eq!(a.len(), 50_001, "{w}");
            assert_eq!(a, b, "{w} is not deterministic");
            let c = generate(&cfg.clone().seed(8)).unwrap();
            assert_ne!(a, c, "{w} ignores the seed");
        }
    }

    #[test]
    fn mixed_has_every_common_class() {
        let ev = generate(&GenConfig::new(Workload::Mixed, 200_000)).unwrap();
        let mut x = ExactCounts::new();
        x.observe(&ev);
        for c in [
            Class::Load,
            Class::Store,
            Class::CondBranch,
            Class::Jump,
            Class::Call,
            Class::Return,
            Class::IntAlu,
            Class::MulDiv,
            Class::Float,
        ] {
            assert!(x.class_count(c) > 0, "no {c}");
        }
        let loads = x.class_count(Class::Load) as f64 / x.events as f64;
        assert!((0.15..0.40).contains(&loads), "load share {loads}");
    }

    #[test]
    fn rejects_bad_parameters() {
        let mut c = GenConfig::new(Workload::Zipf, 10);
        c.alpha = -1.0;
        assert!(Generator::new(&c).is_err());
        assert!("nope".parse::<Workload>().is_err());
    }
}
