//! A bytecode interpreter that finds its hot loops with the frequent loop
//! detector (Gordon-Ross & Vahid, CASES 2003) and picks the ones to
//! compile, as a JIT's tier-up policy would: each taken backward jump is a
//! short backward branch (§3.1) handed to [`LoopDetector::add_sbb`], and
//! every so often the 32-entry, 2-way cache's snapshot says which loops
//! take most of the iterations. The detector holds 1,312 bytes whatever the
//! program; the exact count beside it, kept here only to show the answer
//! is right, grows with the number of loops.
//!
//! Run: `cargo run -p coprof-engines --example jit_hot_loops`

use coprof_engines::loops::{ExactLoopShares, LoopConfig, LoopDetector};
use std::collections::HashMap;

/// The virtual machine's instructions. Each is 4 bytes of "code" at
/// address 4 × its index, so loop bodies have the sizes the detector
/// expects of 4-byte instructions.
#[derive(Clone, Copy, Debug)]
enum Op {
    Push(i64),
    Load(usize),
    Store(usize),
    Add,
    Mul,
    Less,
    JumpIfFalse(usize),
    Jump(usize),
    Halt,
}

/// Where a loop's bound comes from.
#[derive(Clone, Copy)]
enum Bound {
    Const(i64),
    Var(usize),
}

/// Assembles a program from counted loops.
#[derive(Default)]
struct Builder {
    code: Vec<Op>,
}

impl Builder {
    fn emit(&mut self, op: Op) -> usize {
        self.code.push(op);
        self.code.len() - 1
    }

    /// `for var in 0..bound { body }`.
    fn repeat(&mut self, var: usize, bound: Bound, body: impl FnOnce(&mut Builder)) {
        self.emit(Op::Push(0));
        self.emit(Op::Store(var));
        let top = self.emit(Op::Load(var));
        self.emit(match bound {
            Bound::Const(n) => Op::Push(n),
            Bound::Var(v) => Op::Load(v),
        });
        self.emit(Op::Less);
        let exit = self.emit(Op::JumpIfFalse(usize::MAX));
        body(self);
        self.emit(Op::Load(var));
        self.emit(Op::Push(1));
        self.emit(Op::Add);
        self.emit(Op::Store(var));
        self.emit(Op::Jump(top));
        let end = self.code.len();
        self.code[exit] = Op::JumpIfFalse(end);
    }

    /// `acc += a * b`.
    fn accumulate(&mut self, acc: usize, a: usize, b: usize) {
        self.emit(Op::Load(acc));
        self.emit(Op::Load(a));
        self.emit(Op::Load(b));
        self.emit(Op::Mul);
        self.emit(Op::Add);
        self.emit(Op::Store(acc));
    }
}

/// A program of four loops: a triangular nest whose inner loop runs
/// 44,850 times, a flat loop of 20,000, and a cold one of 300.
fn program() -> Vec<Op> {
    let (i, j, k, m, sum) = (0, 1, 2, 3, 4);
    let mut b = Builder::default();
    b.repeat(i, Bound::Const(300), |b| {
        b.repeat(j, Bound::Var(i), |b| b.accumulate(sum, i, j));
    });
    b.repeat(k, Bound::Const(20_000), |b| b.accumulate(sum, k, k));
    b.repeat(m, Bound::Const(300), |b| b.accumulate(sum, m, m));
    b.emit(Op::Halt);
    b.code
}

/// What a run found: the loops compiled, in the order the policy chose
/// them, and how close the detector's shares were to the exact ones.
struct Outcome {
    /// (loop's backward-jump address, instructions retired when chosen).
    compiled: Vec<(u64, u64)>,
    /// 1 − SOD against the exact shares of iterations (the paper's metric).
    accuracy: f64,
    /// The hottest loop by the exact count.
    exact_top: u64,
    sum: i64,
    detector_bytes: usize,
}

/// Runs the program, asking the detector every `every` backward jumps
/// which loops hold at least `hot` of the iterations.
fn run(every: u64, hot: f64) -> Outcome {
    let code = program();
    let mut detector = LoopDetector::new(LoopConfig::default()).expect("the paper's defaults");
    let mut exact: HashMap<u64, u64> = HashMap::new();
    let mut compiled: Vec<(u64, u64)> = Vec::new();
    let (mut stack, mut vars) = (Vec::<i64>::new(), [0i64; 8]);
    let (mut pc, mut retired, mut jumps) = (0usize, 0u64, 0u64);
    loop {
        retired += 1;
        let op = code[pc];
        pc += 1;
        match op {
            Op::Push(v) => stack.push(v),
            Op::Load(v) => stack.push(vars[v]),
            Op::Store(v) => vars[v] = stack.pop().unwrap(),
            Op::Add | Op::Mul | Op::Less => {
                let (b, a) = (stack.pop().unwrap(), stack.pop().unwrap());
                stack.push(match op {
                    Op::Add => a.wrapping_add(b),
                    Op::Mul => a.wrapping_mul(b),
                    _ => (a < b) as i64,
                });
            }
            Op::JumpIfFalse(to) => {
                if stack.pop().unwrap() == 0 {
                    pc = to;
                }
            }
            Op::Jump(to) => {
                let from = (pc - 1) as u64 * 4;
                if to < pc {
                    // A taken backward jump: one iteration of the loop
                    // whose body is [to, from].
                    detector.add_sbb(from, to as u64 * 4);
                    *exact.entry(from).or_default() += 1;
                    jumps += 1;
                    if jumps.is_multiple_of(every) {
                        let profile = detector.snapshot();
                        for l in profile.loops.iter().filter(|l| l.share >= hot) {
                            if !compiled.iter().any(|&(pc, _)| pc == l.pc) {
                                compiled.push((l.pc, retired));
                            }
                        }
                    }
                }
                pc = to;
            }
            Op::Halt => break,
        }
    }
    detector.add_instructions(retired);
    let truth = ExactLoopShares::from_counts(exact.iter().map(|(&pc, &n)| (pc, n)));
    Outcome {
        compiled,
        accuracy: truth.accuracy(&detector.snapshot()),
        exact_top: exact
            .iter()
            .max_by_key(|(_, &n)| n)
            .map(|(&pc, _)| pc)
            .unwrap(),
        sum: vars[4],
        detector_bytes: detector.bytes(),
    }
}

fn main() {
    let out = run(1_000, 0.25);
    println!("program result {}", out.sum);
    for (pc, at) in &out.compiled {
        println!("compile the loop closing at {pc:#x} (after {at} instructions)");
    }
    println!(
        "detector: {} bytes; accuracy against the exact shares 1 - SOD = {:.1}%; \
         the exact hottest loop closes at {:#x}",
        out.detector_bytes,
        out.accuracy * 100.0,
        out.exact_top
    );
}

#[test]
fn the_hottest_loop_is_compiled_first_and_the_shares_are_right() {
    let out = run(1_000, 0.25);
    assert_eq!(out.compiled.first().map(|c| c.0), Some(out.exact_top));
    // The flat loop of 20,000 iterations (31% of them) is compiled too,
    // once it has run long enough; the cold loop never is.
    assert_eq!(out.compiled.len(), 2, "{:?}", out.compiled);
    assert!(out.accuracy > 0.99, "{}", out.accuracy);
    assert_eq!(out.detector_bytes, 1_312);
}
