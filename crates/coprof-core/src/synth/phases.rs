//! `phases`: loads whose values stay put for long phases.
//!
//! 64 load PCs, chosen with a Zipf law. By `i % 4`, load PC number `i` is
//! - 0, glacial: its value is constant for a phase of 2,000 to 50,000 of its
//!   executions, then changes to another of four values (the co-processor
//!   paper's "glacial" values, §5.1.4);
//! - 1, invariant: always the same value;
//! - 2, semi-invariant: one value 80% of the time, else one of 64 others
//!   with a Zipf law of exponent `alpha`;
//! - 3, random: a uniformly random 32-bit value.
//!
//! Between loads the stream has an ALU instruction, so loads are half of it.

use super::{mix, Program, Rng};
use crate::event::{Class, Event};
use rand::Rng as _;
use rand_distr::{Distribution, Zipf};

const PCS: u64 = 64;
const PC_BASE: u64 = 0x2_0000;

struct Glacial {
    left: u64,
    value: u64,
}

pub(crate) struct PhasesProgram {
    pc_law: Zipf<f64>,
    other_law: Zipf<f64>,
    glacial: Vec<Glacial>,
}

impl PhasesProgram {
    pub(crate) fn new(rng: &mut Rng, alpha: f64) -> PhasesProgram {
        let glacial = (0..PCS)
            .map(|i| Glacial {
                left: rng.gen_range(2_000..50_000),
                value: mix(i) & 0xffff,
            })
            .collect();
        PhasesProgram {
            pc_law: Zipf::new(PCS, 1.0).expect("constant"),
            other_law: Zipf::new(64, alpha).expect("validated alpha"),
            glacial,
        }
    }
}

impl Program for PhasesProgram {
    fn emit(&mut self, rng: &mut Rng, out: &mut Vec<Event>) {
        for _ in 0..128 {
            let i = self.pc_law.sample(rng) as u64 - 1;
            let pc = PC_BASE + 8 * i;
            let value = match i % 4 {
                0 => {
                    let g = &mut self.glacial[i as usize];
                    if g.left == 0 {
                        g.left = rng.gen_range(2_000..50_000);
                        g.value = mix(i * 4 + rng.gen_range(0..4u64)) & 0xffff;
                    }
                    g.left -= 1;
                    g.value
                }
                1 => mix(i) & 0xffff_ffff,
                2 => {
                    if rng.gen_bool(0.8) {
                        i
                    } else {
                        i * 1000 + self.other_law.sample(rng) as u64
                    }
                }
                _ => rng.gen::<u32>() as u64,
            };
            let addr = 0x3000_0000 + i * 0x1000 + (value & 0xff) * 8;
            out.push(Event::load(pc, addr, 8, value));
            out.push(Event::with_value(
                pc + 4,
                Class::IntAlu,
                value.wrapping_add(1),
            ));
        }
    }
}
