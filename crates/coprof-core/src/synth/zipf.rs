//! `zipf` and `uniform`: a stream of loads at 256 PCs.
//!
//! The PC of each load follows a Zipf law over the 256 PCs (uniform for
//! `uniform`). Load PC number `i` has `keys >> (i % 17)` distinct values
//! (at least one), drawn with a Zipf law of exponent `alpha` (uniformly for
//! `uniform`): so some PCs are fully invariant, some semi-invariant and some
//! spread over thousands of values, as in real programs. Value of rank `r`
//! at PC `i` is `i * 2^20 + r - 1`; its address is `0x2000_0000 + i * 2^24 +
//! 8 * (r - 1)`, so values and addresses are Zipf-distributed too.

use super::{GenConfig, Program, Rng};
use crate::event::Event;
use rand::Rng as _;
use rand_distr::{Distribution, Zipf};

/// Number of load PCs.
pub const PCS: u64 = 256;
/// Address of the first load PC.
pub const PC_BASE: u64 = 0x1_0000;

pub(crate) struct ZipfProgram {
    uniform: bool,
    pc_law: Zipf<f64>,
    value_laws: Vec<(u64, Zipf<f64>)>,
}

impl ZipfProgram {
    pub(crate) fn new(cfg: &GenConfig, uniform: bool) -> ZipfProgram {
        let value_laws = (0..PCS)
            .map(|i| {
                let n = (cfg.keys >> (i % 17)).max(1);
                (n, Zipf::new(n, cfg.alpha).expect("validated alpha"))
            })
            .collect();
        ZipfProgram {
            uniform,
            pc_law: Zipf::new(PCS, 1.0).expect("constant"),
            value_laws,
        }
    }
}

impl Program for ZipfProgram {
    fn emit(&mut self, rng: &mut Rng, out: &mut Vec<Event>) {
        for _ in 0..256 {
            let i = if self.uniform {
                rng.gen_range(0..PCS)
            } else {
                self.pc_law.sample(rng) as u64 - 1
            };
            let (n, law) = &self.value_laws[i as usize];
            let r = if self.uniform {
                rng.gen_range(0..*n)
            } else {
                law.sample(rng) as u64 - 1
            };
            let pc = PC_BASE + 4 * i;
            let value = (i << 20) + r;
            let addr = 0x2000_0000 + (i << 24) + 8 * r;
            out.push(Event::load(pc, addr, 8, value));
        }
    }
}
