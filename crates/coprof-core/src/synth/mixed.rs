//! `mixed`: every class in realistic proportions.
//!
//! A random static program of 160 basic blocks, each three to twelve
//! instructions drawn from a SPEC-like instruction mix (about a quarter
//! loads, a tenth stores, a sixth control transfers) and ending in a
//! conditional branch: a loop back to the block's own start (taken with a
//! per-block probability), or a forward branch. Some instructions call one
//! of 24 leaf functions, which return. Each load PC has its own value
//! behaviour (invariant, few values, or strided), and its own stride
//! through memory. When control falls off the last block, a jump returns to
//! the first.

use super::{mix, Program, Rng};
use crate::event::{Class, Event};
use rand::Rng as _;

const CODE: u64 = 0x1_0000;
const LEAF: u64 = 0x9_0000;
const BLOCKS: usize = 160;
const LEAVES: u64 = 24;

#[derive(Clone, Copy)]
enum Op {
    Plain(Class),
    CallLeaf(u64),
}

struct Block {
    start: u64,
    ops: Vec<Op>,
    loop_back: bool,
    p_taken: f64,
    forward_to: usize,
}

pub(crate) struct MixedProgram {
    blocks: Vec<Block>,
    at: usize,
    tick: u64,
}

fn pick_class(rng: &mut Rng) -> Class {
    let r = rng.gen_range(0..1000);
    match r {
        0..=279 => Class::Load,
        280..=389 => Class::Store,
        390..=839 => Class::IntAlu,
        840..=899 => Class::MulDiv,
        900..=979 => Class::Float,
        980..=984 => Class::System,
        985..=989 => Class::Other,
        _ => Class::Jump,
    }
}

impl MixedProgram {
    pub(crate) fn new(rng: &mut Rng) -> MixedProgram {
        let mut blocks = Vec::with_capacity(BLOCKS);
        let mut pc = CODE;
        for b in 0..BLOCKS {
            let n = rng.gen_range(3..=12);
            let ops = (0..n)
                .map(|_| {
                    if rng.gen_range(0..30) == 0 {
                        Op::CallLeaf(rng.gen_range(0..LEAVES))
                    } else {
                        Op::Plain(pick_class(rng))
                    }
                })
                .collect::<Vec<_>>();
            let loop_back = rng.gen_bool(0.4);
            blocks.push(Block {
                start: pc,
                loop_back,
                p_taken: if loop_back {
                    rng.gen_range(0.5..0.98)
                } else {
                    rng.gen_range(0.1..0.6)
                },
                forward_to: rng.gen_range(b + 1..=(b + 4).min(BLOCKS)),
                ops,
            });
            pc += 4 * (n as u64 + 1);
        }
        MixedProgram {
            blocks,
            at: 0,
            tick: 0,
        }
    }
}

fn leaf_call(out: &mut Vec<Event>, rng: &mut Rng, site: u64, k: u64, tick: u64) {
    let entry = LEAF + k * 0x100;
    out.push(Event::control(site, Class::Call, entry, true));
    let len = 2 + k % 5;
    for j in 0..len {
        let pc = entry + 4 * j;
        if j == 0 {
            let v = if k.is_multiple_of(2) {
                k
            } else {
                rng.gen_range(0..8)
            };
            out.push(Event::load(pc, 0x6000_0000 + k * 64, 8, v));
        } else {
            out.push(Event::with_value(pc, Class::IntAlu, tick + j));
        }
    }
    out.push(Event::control(
        entry + 4 * len,
        Class::Return,
        site + 4,
        true,
    ));
}

impl Program for MixedProgram {
    fn emit(&mut self, rng: &mut Rng, out: &mut Vec<Event>) {
        let b = &self.blocks[self.at];
        self.tick += 1;
        let t = self.tick;
        let mut pc = b.start;
        for op in &b.ops {
            match *op {
                Op::CallLeaf(k) => leaf_call(out, rng, pc, k, t),
                Op::Plain(c) => {
                    let h = mix(pc);
                    let e = match c {
                        Class::Load => {
                            let stride = 8 << (h % 4);
                            let addr = 0x4000_0000 + (h & 0xff_f000) + (t * stride) % 0x4000;
                            let value = match h % 3 {
                                0 => h >> 48,
                                1 => (h >> 40) + rng.gen_range(0..4),
                                _ => t * stride,
                            };
                            Event::load(pc, addr, 8, value)
                        }
                        Class::Store => {
                            Event::store(pc, 0x5000_0000 + (h & 0xff_f000) + (t * 8) % 0x4000, 8, t)
                        }
                        Class::Jump => Event::control(pc, Class::Jump, pc + 4, true),
                        c => Event::with_value(pc, c, t ^ h),
                    };
                    out.push(e);
                }
            }
            pc += 4;
        }
        let taken = rng.gen_bool(b.p_taken);
        if b.loop_back {
            out.push(Event::control(pc, Class::CondBranch, b.start, taken));
            if !taken {
                self.at += 1;
            }
        } else {
            let target = self.blocks.get(b.forward_to).map_or(pc + 4, |t| t.start);
            out.push(Event::control(pc, Class::CondBranch, target, taken));
            self.at = if taken { b.forward_to } else { self.at + 1 };
        }
        if self.at >= BLOCKS {
            out.push(Event::control(pc + 4, Class::Jump, CODE, true));
            self.at = 0;
        }
    }
}
