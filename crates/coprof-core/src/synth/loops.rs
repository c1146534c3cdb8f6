//! `loops`: a program of loop nests with chosen trip counts and body sizes.
//!
//! The program is six nests, each an outer loop around one to three inner
//! loops, laid out 4 KiB apart and run in turn by a main loop whose back
//! edge is too far to be a short backward branch. An inner loop's body is a
//! strided load, ALU work, sometimes a multiply and a store, and a
//! conditional branch back to the body's start, taken on every iteration but
//! the last. Every loop is known in advance ([`LoopsProgram::loops`]), so
//! the exact iteration counts are known without running.

use super::{Program, Rng};
use crate::event::{Class, Event};
use rand::Rng as _;

/// One loop of the program: its back-edge branch and its body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopSpec {
    /// PC of the loop's backward branch (the loop's identity).
    pub branch_pc: u64,
    /// First PC of the body (the branch's target).
    pub body_lo: u64,
    /// Times the body runs per entry into the loop.
    pub trips: u64,
    /// Times the loop is entered per pass of the main loop.
    pub entries_per_pass: u64,
}

#[derive(Clone, Debug)]
struct Inner {
    start: u64,
    body: u64, // instructions, the branch included
    trips: u64,
    array: u64,
}

#[derive(Clone, Debug)]
struct Nest {
    start: u64,
    trips: u64,
    inners: Vec<Inner>,
    branch_pc: u64,
}

/// The program behind the `loops` workload.
#[derive(Clone, Debug)]
pub struct LoopsProgram {
    nests: Vec<Nest>,
    main_jump_pc: u64,
    counter: u64,
}

const CODE_BASE: u64 = 0x1_0000;

impl LoopsProgram {
    /// The program for a random number generator seeded by the config.
    pub fn new(rng: &mut Rng) -> LoopsProgram {
        let mut nests = Vec::new();
        for n in 0..6u64 {
            let start = CODE_BASE + n * 0x1000;
            let mut pc = start + 8; // two header instructions
            let mut inners = Vec::new();
            for k in 0..rng.gen_range(1..=3u64) {
                let body = rng.gen_range(4..=24u64);
                let trips = rng.gen_range(3..=120u64);
                inners.push(Inner {
                    start: pc,
                    body,
                    trips,
                    array: 0x4000_0000 + (n * 4 + k) * 0x10_0000,
                });
                pc += 4 * body;
            }
            let trips = rng.gen_range(2..=12u64);
            nests.push(Nest {
                start,
                trips,
                inners,
                branch_pc: pc,
            });
        }
        let main_jump_pc = CODE_BASE + 6 * 0x1000;
        LoopsProgram {
            nests,
            main_jump_pc,
            counter: 0,
        }
    }

    /// Every loop in the program, in program order.
    pub fn loops(&self) -> Vec<LoopSpec> {
        let mut v = Vec::new();
        for n in &self.nests {
            v.push(LoopSpec {
                branch_pc: n.branch_pc,
                body_lo: n.start,
                trips: n.trips,
                entries_per_pass: 1,
            });
            for i in &n.inners {
                v.push(LoopSpec {
                    branch_pc: i.start + 4 * (i.body - 1),
                    body_lo: i.start,
                    trips: i.trips,
                    entries_per_pass: n.trips,
                });
            }
        }
        v
    }

    /// Events in one pass of the main loop.
    pub fn events_per_pass(&self) -> u64 {
        let mut total = 1; // the main loop's jump
        for n in &self.nests {
            let inner: u64 = n.inners.iter().map(|i| i.body * i.trips).sum();
            total += n.trips * (2 + inner + 1);
        }
        total
    }
}

impl Program for LoopsProgram {
    fn emit(&mut self, _rng: &mut Rng, out: &mut Vec<Event>) {
        for n in &self.nests {
            for o in 0..n.trips {
                out.push(Event::with_value(n.start, Class::IntAlu, o));
                out.push(Event::with_value(n.start + 4, Class::IntAlu, 0));
                for i in &n.inners {
                    for t in 0..i.trips {
                        self.counter += 1;
                        let x = self.counter;
                        let body_end = i.start + 4 * (i.body - 1);
                        let mut pc = i.start;
                        let addr = i.array + 8 * t;
                        let loaded = (t * 7 + 3) & 0xff;
                        out.push(Event::load(pc, addr, 8, loaded));
                        pc += 4;
                        while pc < body_end {
                            let slot = (pc - i.start) / 4;
                            let e = match slot % 5 {
                                3 => Event::with_value(pc, Class::MulDiv, loaded * slot),
                                4 => Event::store(pc, addr + 0x8_0000, 8, loaded + x),
                                _ => Event::with_value(pc, Class::IntAlu, loaded + slot),
                            };
                            out.push(e);
                            pc += 4;
                        }
                        out.push(Event::control(
                            body_end,
                            Class::CondBranch,
                            i.start,
                            t + 1 < i.trips,
                        ));
                    }
                }
                out.push(Event::control(
                    n.branch_pc,
                    Class::CondBranch,
                    n.start,
                    o + 1 < n.trips,
                ));
            }
        }
        out.push(Event::control(
            self.main_jump_pc,
            Class::Jump,
            CODE_BASE,
            true,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::ExactCounts;
    use crate::synth::{generate, GenConfig, Workload};
    use rand::SeedableRng;

    #[test]
    fn exact_loop_counts_match_the_spec() {
        let cfg = GenConfig::new(Workload::Loops, 0).seed(3);
        let prog = LoopsProgram::new(&mut Rng::seed_from_u64(cfg.seed));
        let passes = 3;
        let ev = generate(&GenConfig {
            events: prog.events_per_pass() * passes,
            ..cfg
        })
        .unwrap();
        let mut x = ExactCounts::new();
        x.add(&ev[0]);
        for e in &ev[1..] {
            x.add(e);
        }
        for l in prog.loops() {
            let taken = (l.trips - 1) * l.entries_per_pass * passes;
            let got = x.sbb.get(&l.branch_pc).map(|c| c.taken).unwrap_or(0);
            assert_eq!(got, taken, "loop at {:#x}", l.branch_pc);
            if taken > 0 {
                assert_eq!(x.sbb[&l.branch_pc].target, l.body_lo);
            }
        }
        // The main loop's jump is not a short backward branch.
        assert_eq!(
            x.sbb.len(),
            prog.loops().iter().filter(|l| l.trips > 1).count()
        );
    }
}
