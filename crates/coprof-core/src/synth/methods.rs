//! `methods`: a method-invocation stream with the resonant pattern.
//!
//! The stream has three parts. The first and last fifth call 48 methods
//! with a Zipf law from a dispatch loop. The middle three fifths are a
//! loop that calls two leaf methods, [`RESONANT_A`] then [`RESONANT_B`], on
//! every iteration, and does nothing else: counting calls, A and B
//! alternate, so a counter-based sampler with an even interval samples only
//! one of them (the resonance of Lee & Zilles, CGO 2008, §4.2). A and B are
//! called nowhere else. Every call is a `call` event (target = method
//! entry), the method's body (ALU instructions) and a `return` event.

use super::{Program, Rng};
use crate::event::{Class, Event};
use rand_distr::{Distribution, Zipf};

/// Entry of the first leaf method of the resonant loop.
pub const RESONANT_A: u64 = 0x5_0000;
/// Entry of the second leaf method of the resonant loop.
pub const RESONANT_B: u64 = 0x5_0400;

const METHODS: u64 = 48;
const METHOD_BASE: u64 = 0x6_0000;
const MAIN: u64 = 0x1_0000;
const LOOP: u64 = 0x1_1000;

/// The program behind the `methods` workload.
pub struct MethodsProgram {
    law: Zipf<f64>,
    emitted: u64,
    total: u64,
}

impl MethodsProgram {
    /// The program for a stream of `total` events.
    pub fn new(total: u64) -> MethodsProgram {
        MethodsProgram {
            law: Zipf::new(METHODS, 1.0).expect("constant"),
            emitted: 0,
            total,
        }
    }

    /// Entry address of dispatched method `k` (0-based).
    pub fn method_entry(k: u64) -> u64 {
        METHOD_BASE + k * 0x400
    }

    /// Body length, in instructions, of dispatched method `k`.
    fn body_len(k: u64) -> u64 {
        2 + k % 7
    }
}

fn call(out: &mut Vec<Event>, site: u64, entry: u64, body: u64) {
    out.push(Event::control(site, Class::Call, entry, true));
    for j in 0..body {
        out.push(Event::with_value(entry + 4 * j, Class::IntAlu, j));
    }
    out.push(Event::control(
        entry + 4 * body,
        Class::Return,
        site + 4,
        true,
    ));
}

impl Program for MethodsProgram {
    fn emit(&mut self, rng: &mut Rng, out: &mut Vec<Event>) {
        let start = out.len();
        let fifth = self.total / 5;
        if self.emitted >= fifth && self.emitted < self.total - fifth {
            // One iteration of the resonant loop: call A, call B, branch back.
            call(out, LOOP, RESONANT_A, 3);
            call(out, LOOP + 4, RESONANT_B, 3);
            out.push(Event::with_value(LOOP + 8, Class::IntAlu, self.emitted));
            out.push(Event::control(LOOP + 12, Class::CondBranch, LOOP, true));
        } else {
            let k = self.law.sample(rng) as u64 - 1;
            out.push(Event::load(MAIN, 0x7000_0000 + 8 * k, 8, k));
            call(out, MAIN + 4, Self::method_entry(k), Self::body_len(k));
            out.push(Event::control(MAIN + 8, Class::CondBranch, MAIN, true));
        }
        self.emitted += (out.len() - start) as u64;
    }
}

#[cfg(test)]
mod tests {
    use crate::event::Class;
    use crate::synth::{generate, GenConfig, Workload, RESONANT_A, RESONANT_B};

    #[test]
    fn resonant_calls_alternate() {
        let ev = generate(&GenConfig::new(Workload::Methods, 100_000)).unwrap();
        let calls: Vec<u64> = ev
            .iter()
            .filter(|e| e.class == Class::Call)
            .map(|e| e.addr)
            .collect();
        let first = calls.iter().position(|&t| t == RESONANT_A).unwrap();
        let last = calls.iter().rposition(|&t| t == RESONANT_B).unwrap();
        for (k, t) in calls[first..=last].iter().enumerate() {
            assert_eq!(*t, if k % 2 == 0 { RESONANT_A } else { RESONANT_B });
        }
        let a = calls.iter().filter(|&&t| t == RESONANT_A).count();
        assert!(
            a > calls.len() / 4,
            "resonant loop too small: {a} of {}",
            calls.len()
        );
    }
}
