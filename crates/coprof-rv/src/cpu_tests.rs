//! Instruction semantics against the examples and tables of the RISC-V
//! Unprivileged ISA (20191213): each test runs a few encoded instructions
//! on a fresh hart and checks registers, memory and flags.

use super::*;
use crate::code::translate;
use crate::encode::{i_type, r_type, s_type};
use crate::mem::perm;
use coprof_core::{ClassSet, Collect};

const CODE: u64 = 0x1000;
const DATA: u64 = 0x8000;

fn r(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    r_type(opc, rd, f3, rs1, rs2, f7)
}
fn i(imm: i32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    i_type(opc, rd, f3, rs1, imm)
}
fn s_(imm: i32, rs2: u32, rs1: u32, f3: u32, opc: u32) -> u32 {
    s_type(opc, f3, rs1, rs2, imm)
}
const EBREAK: u32 = 0x0010_0073;

/// Runs `words` from CODE until the ebreak appended to them (or another
/// stop), with a1..a7 preset by `setup`. Returns the hart, memory and stop.
fn run(words: &[u32], setup: impl FnOnce(&mut Cpu, &mut Memory)) -> (Cpu, Memory, Stop) {
    let mut mem = Memory::new().unwrap();
    mem.map(CODE, 0x1000, perm::R | perm::X).unwrap();
    mem.map(DATA, 0x1000, perm::R | perm::W).unwrap();
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.extend_from_slice(&EBREAK.to_le_bytes());
    mem.poke(CODE, &bytes).unwrap();
    let mut cpu = Cpu::new(CODE);
    setup(&mut cpu, &mut mem);
    let mut sink = Collect {
        events: vec![],
        wants: ClassSet::NONE,
    };
    let mut ev = Events::new(&mut sink);
    loop {
        let block = translate(cpu.pc, &mem, crate::Isa::default());
        let stop = exec_block::<false>(&mut cpu, &mut mem, &block.ops, &mut ev);
        cpu.instret += stop.retired(block.ops.len()) as u64;
        if stop != Stop::Next {
            return (cpu, mem, stop);
        }
    }
}

const A0: u32 = 10;
const A1: u32 = 11;
const A2: u32 = 12;

fn alu(word: u32, a: u64, b: u64) -> u64 {
    let (cpu, _, stop) = run(&[word], |c, _| {
        c.x[11] = a;
        c.x[12] = b;
    });
    assert_eq!(stop, Stop::Ebreak);
    cpu.x[10]
}

#[test]
fn division_table_7_1() {
    let div = r(1, A2, A1, 4, A0, 0x33);
    let divu = r(1, A2, A1, 5, A0, 0x33);
    let rem = r(1, A2, A1, 6, A0, 0x33);
    let remu = r(1, A2, A1, 7, A0, 0x33);
    let divw = r(1, A2, A1, 4, A0, 0x3b);
    let remw = r(1, A2, A1, 6, A0, 0x3b);
    // Division by zero: quotient all ones, remainder the dividend.
    assert_eq!(alu(div, 7, 0), u64::MAX);
    assert_eq!(alu(divu, 7, 0), u64::MAX);
    assert_eq!(alu(rem, 7, 0), 7);
    assert_eq!(alu(remu, 7, 0), 7);
    assert_eq!(alu(divw, 7, 0), u64::MAX);
    assert_eq!(alu(remw, (-7i64) as u64, 0), (-7i64) as u64);
    // Overflow: −2^(L−1) / −1 = −2^(L−1), remainder 0.
    assert_eq!(alu(div, i64::MIN as u64, u64::MAX), i64::MIN as u64);
    assert_eq!(alu(rem, i64::MIN as u64, u64::MAX), 0);
    assert_eq!(alu(divw, i32::MIN as u64, u64::MAX), i32::MIN as i64 as u64);
    // Signed division truncates toward zero.
    assert_eq!(alu(div, (-7i64) as u64, 2), (-3i64) as u64);
    assert_eq!(alu(rem, (-7i64) as u64, 2), (-1i64) as u64);
}

#[test]
fn multiply_high_parts() {
    let mulh = r(1, A2, A1, 1, A0, 0x33);
    let mulhsu = r(1, A2, A1, 2, A0, 0x33);
    let mulhu = r(1, A2, A1, 3, A0, 0x33);
    let mulw = r(1, A2, A1, 0, A0, 0x3b);
    assert_eq!(alu(mulh, u64::MAX, u64::MAX), 0); // (−1)·(−1) = 1
    assert_eq!(alu(mulhu, u64::MAX, u64::MAX), u64::MAX - 1);
    assert_eq!(alu(mulhsu, u64::MAX, u64::MAX), u64::MAX); // −1 · (2^64−1)
    assert_eq!(
        alu(mulw, 0x1_0000_0002, 0x4000_0000),
        (-0x8000_0000i64) as u64
    );
}

#[test]
fn rv64_word_operations_sign_extend() {
    let addiw = i(1, A1, 0, A0, 0x1b);
    assert_eq!(alu(addiw, 0x7fff_ffff, 0), 0xffff_ffff_8000_0000);
    let srliw = i(4, A1, 5, A0, 0x1b);
    assert_eq!(alu(srliw, 0xffff_ffff_8000_0000, 0), 0x0800_0000);
    let sraiw = (0x20 << 25) | i(4, A1, 5, A0, 0x1b);
    assert_eq!(alu(sraiw, 0x8000_0000, 0), 0xffff_ffff_f800_0000);
    let sllw = r(0, A2, A1, 1, A0, 0x3b);
    assert_eq!(alu(sllw, 1, 63), 0xffff_ffff_8000_0000); // shamt is rs2[4:0]
    let sra = r(0x20, A2, A1, 5, A0, 0x33);
    assert_eq!(alu(sra, 0x8000_0000_0000_0000, 67), 0xf000_0000_0000_0000); // rs2[5:0]
    let sltiu = i(1, A1, 3, A0, 0x13); // seqz
    assert_eq!(alu(sltiu, 0, 0), 1);
    assert_eq!(alu(sltiu, 5, 0), 0);
    let sltiu_neg = i(-1, A1, 3, A0, 0x13); // immediate sign-extends, compares unsigned
    assert_eq!(alu(sltiu_neg, 5, 0), 1);
}

#[test]
fn x0_stays_zero_and_jalr_clears_bit_zero() {
    // addi x0, x0, 5 ; add a0, x0, x0
    let (cpu, _, _) = run(&[i(5, 0, 0, 0, 0x13), r(0, 0, 0, 0, A0, 0x33)], |_, _| {});
    assert_eq!(cpu.x[10], 0);
    assert_eq!(cpu.x[0], 0);
    // jalr ra, 1(a1) with a1 = CODE + 8: target CODE + 9 & !1 = CODE + 8.
    let (cpu, _, stop) = run(&[i(1, A1, 0, 1, 0x67), i(9, 0, 0, A0, 0x13)], |c, _| {
        c.x[11] = CODE + 8
    });
    assert_eq!(stop, Stop::Ebreak);
    assert_eq!(cpu.x[1], CODE + 4);
    assert_eq!(cpu.x[10], 0, "the skipped addi did not run");
    assert_eq!(cpu.pc, CODE + 8);
}

#[test]
fn loads_extend_and_stores_truncate() {
    let sd = s_(0, A2, A1, 3, 0x23);
    let lb = i(0, A1, 0, A0, 0x03);
    let lbu = i(0, A1, 4, 13, 0x03);
    let lw = i(4, A1, 2, 14, 0x03);
    let lwu = i(4, A1, 6, 15, 0x03);
    let (cpu, mem, _) = run(&[sd, lb, lbu, lw, lwu], |c, _| {
        c.x[11] = DATA;
        c.x[12] = 0x8000_0001_0000_00ff;
    });
    assert_eq!(cpu.x[10], u64::MAX);
    assert_eq!(cpu.x[13], 0xff);
    assert_eq!(cpu.x[14], 0xffff_ffff_8000_0001);
    assert_eq!(cpu.x[15], 0x8000_0001);
    assert_eq!(mem.load::<8>(DATA).unwrap(), 0x8000_0001_0000_00ff);
    // A store to the code page faults with the address.
    let (_, _, stop) = run(&[s_(0, A2, A1, 0, 0x23)], |c, _| c.x[11] = CODE);
    assert!(matches!(stop, Stop::Fault { at: 0, fault } if fault.addr == CODE));
}

#[test]
fn lr_sc_and_amos() {
    let lr = r(0b00010 << 2, 0, A1, 3, 13, 0x2f);
    let sc = r(0b00011 << 2, A2, A1, 3, A0, 0x2f);
    let (cpu, mem, _) = run(&[lr, sc, sc], |c, m| {
        c.x[11] = DATA;
        c.x[12] = 77;
        m.store::<8>(DATA, 5).unwrap();
    });
    assert_eq!(cpu.x[13], 5);
    assert_eq!(cpu.x[10], 1, "the second sc has no reservation");
    assert_eq!(mem.load::<8>(DATA).unwrap(), 77);
    // amomin.w is signed, amominu.w unsigned; rd gets the old value
    // sign-extended.
    let amomin = r(0b10000 << 2, A2, A1, 2, A0, 0x2f);
    let (cpu, mem, _) = run(&[amomin], |c, m| {
        c.x[11] = DATA;
        c.x[12] = 1;
        m.store::<4>(DATA, 0xffff_fff0).unwrap();
    });
    assert_eq!(cpu.x[10], 0xffff_ffff_ffff_fff0);
    assert_eq!(mem.load::<4>(DATA).unwrap(), 0xffff_fff0);
    let amominu = r(0b11000 << 2, A2, A1, 2, A0, 0x2f);
    let (_, mem, _) = run(&[amominu], |c, m| {
        c.x[11] = DATA;
        c.x[12] = 1;
        m.store::<4>(DATA, 0xffff_fff0).unwrap();
    });
    assert_eq!(mem.load::<4>(DATA).unwrap(), 1);
    // Misaligned AMOs raise an exception (§8.4).
    let (_, _, stop) = run(&[amomin], |c, _| c.x[11] = DATA + 2);
    assert!(matches!(stop, Stop::Misaligned { addr, .. } if addr == DATA + 2));
}

#[test]
fn csrs_and_fp_state() {
    // csrrwi x0, frm, 3 ; fdiv.d fa0, fa1, fa2 (dyn) ; csrrs a0, fcsr, x0 ;
    // csrrs a1, instret, x0
    let csrrwi_frm = (0x002 << 20) | (3 << 15) | (5 << 12) | 0x73;
    let fdiv = r(0x0d, A2, A1, 7, A0, 0x53);
    let read_fcsr = (0x003 << 20) | (2 << 12) | (A0 << 7) | 0x73;
    let read_instret = (0xc02 << 20) | (2 << 12) | (A1 << 7) | 0x73;
    let (cpu, _, stop) = run(&[csrrwi_frm, fdiv, read_fcsr, read_instret], |c, _| {
        c.f[11] = 1.0f64.to_bits();
        c.f[12] = 3.0f64.to_bits();
    });
    assert_eq!(stop, Stop::Ebreak);
    assert_eq!(cpu.x[10], (3 << 5) | fp::flag::NX as u64);
    assert_eq!(cpu.x[11], 3, "three instructions retired before it");
    assert!(f64::from_bits(cpu.f[10]) > 1.0 / 3.0, "rounded up");
    // Writing the read-only cycle counter is illegal; so is an unknown CSR.
    let write_cycle = (0xc00 << 20) | (A1 << 15) | (1 << 12) | 0x73;
    assert_eq!(run(&[write_cycle], |_, _| {}).2, Stop::Illegal { at: 0 });
    let unknown = (0x7c0 << 20) | (2 << 12) | (A0 << 7) | 0x73;
    assert_eq!(run(&[unknown], |_, _| {}).2, Stop::Illegal { at: 0 });
    // A reserved dynamic rounding mode makes FP instructions illegal.
    let csrrwi_frm5 = (0x002 << 20) | (5 << 15) | (5 << 12) | 0x73;
    assert_eq!(
        run(&[csrrwi_frm5, fdiv], |_, _| {}).2,
        Stop::Illegal { at: 1 }
    );
}

#[test]
fn nan_boxing_and_moves() {
    // fadd.s fa0, fa1, fa2 with fa1 not NaN-boxed: the operand is the
    // canonical NaN (§12.2).
    let fadd_s = r(0x00, A2, A1, 7, A0, 0x53);
    let (cpu, _, _) = run(&[fadd_s], |c, _| {
        c.f[11] = 1.0f32.to_bits() as u64;
        c.f[12] = fp::box_s(1.0f32.to_bits() as u64);
    });
    assert_eq!(cpu.f[10], fp::box_s(fp::CANON_S));
    // fmv.x.w sign-extends bit 31; fmv.w.x boxes.
    let fmv_x_w = r(0x70, 0, A1, 0, A0, 0x53);
    let (cpu, _, _) = run(&[fmv_x_w], |c, _| c.f[11] = fp::box_s(0x8000_0000));
    assert_eq!(cpu.x[10], 0xffff_ffff_8000_0000);
    let fmv_w_x = r(0x78, 0, A1, 0, A0, 0x53);
    let (cpu, _, _) = run(&[fmv_w_x], |c, _| c.x[11] = 0x1234_3f80_0000);
    assert_eq!(cpu.f[10], 0xffff_ffff_3f80_0000);
    // fcvt.w.d of NaN saturates to 2^31 − 1 and raises NV (Table 11.4).
    let fcvt_w_d = r(0x61, 0, A1, 1, A0, 0x53);
    let (cpu, _, _) = run(&[fcvt_w_d], |c, _| c.f[11] = fp::CANON_D);
    assert_eq!(cpu.x[10], 0x7fff_ffff);
    assert_eq!(cpu.fflags, fp::flag::NV);
}

#[test]
fn compressed_code_runs() {
    // c.li a0, 5 ; c.addi a0, -1 ; c.bnez a0, -2 (loop until zero); then ebreak.
    let words: [u16; 4] = [0x4515, 0x157d, 0xfd7d, 0x0001];
    let w0 = words[0] as u32 | (words[1] as u32) << 16;
    let w1 = words[2] as u32 | (words[3] as u32) << 16;
    let (cpu, _, stop) = run(&[w0, w1], |_, _| {});
    assert_eq!(stop, Stop::Ebreak);
    assert_eq!(cpu.x[10], 0);
    // li + 5 × (addi + bnez) + nop = 12 retired.
    assert_eq!(cpu.instret, 12);
}

/// Doubles of every kind: any bits, and values near the edges of the
/// fast paths (subnormals, the smallest normals, huge values, zeros).
fn float_bits() -> impl proptest::strategy::Strategy<Value = u64> {
    use proptest::prelude::*;
    prop_oneof![
        any::<u64>(),
        any::<f64>().prop_map(f64::to_bits),
        (-1100i32..1024, any::<u32>())
            .prop_map(|(e, m)| { (2f64.powi(e) * (1.0 + m as f64 / u32::MAX as f64)).to_bits() }),
        (1u64..1 << 20).prop_map(|m| m << 20),
        Just(0u64),
        Just(1u64 << 63),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 4000, ..Default::default() })]

    /// `exec_float`, compiled with the host's fused multiply-adds where
    /// it has them, against the software arithmetic of every rounding
    /// mode: the same result and flags for the arithmetic and the fused
    /// multiply-adds of doubles and singles.
    #[test]
    fn float_ops_match_the_software_arithmetic(
        a in float_bits(),
        b in float_bits(),
        c in float_bits(),
        rm in 0u8..5,
        which in 0usize..8,
        single in proptest::bool::ANY,
    ) {
        use crate::fp::{arith_soft, box_s, fma_soft, round_of, Arith, D, S};
        // Per op, its double and single kinds, and the arithmetic it is
        // (none for the fused multiply-adds).
        let ops = [
            (Kind::FaddD, Kind::FaddS, Some(Arith::Add)),
            (Kind::FsubD, Kind::FsubS, Some(Arith::Sub)),
            (Kind::FmulD, Kind::FmulS, Some(Arith::Mul)),
            (Kind::FdivD, Kind::FdivS, Some(Arith::Div)),
            (Kind::FmaddD, Kind::FmaddS, None),
            (Kind::FmsubD, Kind::FmsubS, None),
            (Kind::FnmsubD, Kind::FnmsubS, None),
            (Kind::FnmaddD, Kind::FnmaddS, None),
        ];
        let (double, one, arith) = ops[which];
        let kind = if single { one } else { double };
        // Singles from the low word, NaN-boxed.
        let (a, b, c) = if single {
            (a & 0xffff_ffff, b & 0xffff_ffff, c & 0xffff_ffff)
        } else {
            (a, b, c)
        };
        let mut cpu = Cpu::new(0);
        let boxed = |v: u64| if single { box_s(v) } else { v };
        cpu.f[1] = boxed(a);
        cpu.f[2] = boxed(b);
        cpu.f[3] = boxed(c);
        let op = Op {
            pc: 0,
            imm: 0,
            kind,
            rd: 4,
            rs1: 1,
            rs2: 2,
            rs3: 3,
            rm,
            len: 4,
            class: coprof_core::Class::Float,
            emit: crate::op::Emit::FloatDest,
        };
        proptest::prop_assert!(exec_float(&mut cpu, &op));
        let round = round_of(rm as u32).unwrap();
        // Which of the product and the addend are negated, by the spec's
        // table (§11.6), apart from the interpreter's own.
        let (np, na) = match double {
            Kind::FmaddD => (false, false),
            Kind::FmsubD => (false, true),
            Kind::FnmsubD => (true, false),
            _ => (true, true),
        };
        let (v, fl) = match (arith, single) {
            (Some(ar), false) => arith_soft::<D>(ar, a, b, round),
            (Some(ar), true) => arith_soft::<S>(ar, a, b, round),
            (None, false) => fma_soft::<D>(a, b, c, np, na, round),
            (None, true) => fma_soft::<S>(a, b, c, np, na, round),
        };
        proptest::prop_assert_eq!(cpu.f[4], boxed(v), "{:?} rm {}", kind, rm);
        proptest::prop_assert_eq!(cpu.fflags, fl, "{:?} rm {}", kind, rm);
    }
}
