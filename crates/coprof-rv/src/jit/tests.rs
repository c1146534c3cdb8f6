//! Translated blocks against the interpreter: random blocks of encoded
//! instructions, run from the same registers and memory both ways, must
//! leave the same registers, memory, next PC, stop and events.

use super::*;
use crate::code::{translate, CodeCache};
use crate::encode::{b_type, i_type, j_type, r_type, s_type};
use crate::mem::perm;
use coprof_core::{Class, Collect, Event};
use proptest::prelude::*;

const CODE: u64 = 0x1000;
/// Two read-write pages: an access across them is legal but leaves the
/// translation for the interpreter.
const DATA: u64 = 0x8000;
const READ_ONLY: u64 = 0xa000;
const UNMAPPED: u64 = 0xb000;
/// Shared memory, whose atomic ops are the interpreter's.
const SHARED: u64 = 0xc000;

fn memory() -> Memory {
    let mut mem = Memory::new().unwrap();
    mem.map(CODE, 0x1000, perm::R | perm::X).unwrap();
    mem.map(DATA, 0x2000, perm::R | perm::W).unwrap();
    mem.map(READ_ONLY, 0x1000, perm::R).unwrap();
    mem.map_shared(SHARED, 0x1000, perm::R | perm::W, None, 0)
        .unwrap();
    let fill: Vec<u8> = (0..0x3000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    mem.poke(DATA, &fill).unwrap();
    mem
}

/// An R-type instruction of `opcode` with one of the (funct3, funct7)
/// pairs of `table` and random registers.
fn r_word(opcode: u32, table: Vec<(u32, u32)>) -> impl Strategy<Value = u32> {
    (0u32..32, 0u32..32, 0u32..32, prop::sample::select(table))
        .prop_map(move |(rd, rs1, rs2, (f3, f7))| r_type(opcode, rd, f3, rs1, rs2, f7))
}

/// One instruction that the translator takes, or one it leaves to the
/// interpreter (a read of `instret`).
fn body_word() -> impl Strategy<Value = u32> {
    let reg = 0u32..32;
    let imm12 = -2048i32..2048;
    // Small offsets, so that a base register near the data pages stays
    // near them.
    let off = -16i32..16;
    prop_oneof![
        // OP-IMM: addi slti sltiu xori ori andi.
        (
            reg.clone(),
            reg.clone(),
            prop::sample::select(vec![0u32, 2, 3, 4, 6, 7]),
            imm12.clone()
        )
            .prop_map(|(rd, rs1, f3, imm)| i_type(0x13, rd, f3, rs1, imm)),
        // slli srli srai.
        (
            reg.clone(),
            reg.clone(),
            0i32..64,
            prop::sample::select(vec![(1u32, 0), (5, 0), (5, 0x400)])
        )
            .prop_map(|(rd, rs1, sh, (f3, hi))| i_type(0x13, rd, f3, rs1, hi | sh)),
        // OP-IMM-32: addiw, slliw srliw sraiw.
        (reg.clone(), reg.clone(), imm12.clone())
            .prop_map(|(rd, rs1, imm)| i_type(0x1b, rd, 0, rs1, imm)),
        (
            reg.clone(),
            reg.clone(),
            0i32..32,
            prop::sample::select(vec![(1u32, 0), (5, 0), (5, 0x400)])
        )
            .prop_map(|(rd, rs1, sh, (f3, hi))| i_type(0x1b, rd, f3, rs1, hi | sh)),
        // OP and M: add sub sll slt sltu xor srl sra or and, mul mulh
        // mulhsu mulhu div divu rem remu.
        r_word(
            0x33,
            vec![
                (0, 0),
                (0, 0x20),
                (1, 0),
                (2, 0),
                (3, 0),
                (4, 0),
                (5, 0),
                (5, 0x20),
                (6, 0),
                (7, 0),
                (0, 1),
                (1, 1),
                (2, 1),
                (3, 1),
                (4, 1),
                (5, 1),
                (6, 1),
                (7, 1),
            ]
        ),
        // OP-32: addw subw sllw srlw sraw mulw divw divuw remw remuw.
        r_word(
            0x3b,
            vec![
                (0, 0),
                (0, 0x20),
                (1, 0),
                (5, 0),
                (5, 0x20),
                (0, 1),
                (4, 1),
                (5, 1),
                (6, 1),
                (7, 1)
            ]
        ),
        // lui, auipc.
        (reg.clone(), any::<u32>(), prop::bool::ANY).prop_map(|(rd, imm, auipc)| (imm & !0xfff)
            | (rd << 7)
            | if auipc { 0x17 } else { 0x37 }),
        // Loads and stores, twice as likely.
        (reg.clone(), reg.clone(), 0u32..7, off.clone())
            .prop_map(|(rd, rs1, f3, imm)| i_type(0x03, rd, f3, rs1, imm)),
        (reg.clone(), reg.clone(), 0u32..7, off.clone())
            .prop_map(|(rd, rs1, f3, imm)| i_type(0x03, rd, f3, rs1, imm)),
        (reg.clone(), reg.clone(), 0u32..4, off.clone())
            .prop_map(|(rs2, rs1, f3, imm)| s_type(0x23, f3, rs1, rs2, imm)),
        (reg.clone(), reg.clone(), 0u32..4, off)
            .prop_map(|(rs2, rs1, f3, imm)| s_type(0x23, f3, rs1, rs2, imm)),
        // csrrs rd, instret, x0.
        reg.clone().prop_map(|rd| i_type(0x73, rd, 2, 0, 0xc02)),
        float_word(),
        float_word(),
        atomic_word(),
        bit_word(),
        bit_word(),
    ]
}

/// The register forms of Zba, Zbb, Zbc and Zbs in OP, as (funct3,
/// funct7): sh1add sh2add sh3add andn orn xnor max maxu min minu rol ror
/// bclr bext binv bset clmul clmulr clmulh.
const BIT_OP: [(u32, u32); 19] = [
    (2, 0x10),
    (4, 0x10),
    (6, 0x10),
    (7, 0x20),
    (6, 0x20),
    (4, 0x20),
    (6, 5),
    (7, 5),
    (4, 5),
    (5, 5),
    (1, 0x30),
    (5, 0x30),
    (1, 0x24),
    (5, 0x24),
    (1, 0x34),
    (1, 0x14),
    (1, 5),
    (2, 5),
    (3, 5),
];

/// The register forms in OP-32: add.uw sh1add.uw sh2add.uw sh3add.uw rolw
/// rorw (and zext.h, funct3 4 and funct7 4 with rs2 = x0).
const BIT_OP_32: [(u32, u32); 6] = [
    (0, 4),
    (2, 0x10),
    (4, 0x10),
    (6, 0x10),
    (1, 0x30),
    (5, 0x30),
];

/// The unary ops, as (opcode, funct3, imm12): clz ctz cpop sext.b sext.h
/// orc.b rev8, clzw ctzw cpopw.
const BIT_UNARY: [(u32, u32, i32); 10] = [
    (0x13, 1, 0x600),
    (0x13, 1, 0x601),
    (0x13, 1, 0x602),
    (0x13, 1, 0x604),
    (0x13, 1, 0x605),
    (0x13, 5, 0x287),
    (0x13, 5, 0x6b8),
    (0x1b, 1, 0x600),
    (0x1b, 1, 0x601),
    (0x1b, 1, 0x602),
];

/// The immediate forms, as (opcode, funct3, imm12 without the amount,
/// amounts): rori bclri bexti binvi bseti slli.uw (six bits), roriw
/// (five).
const BIT_SHIFTS: [(u32, u32, i32, i32); 7] = [
    (0x13, 5, 0x600, 64),
    (0x13, 1, 0x480, 64),
    (0x13, 5, 0x480, 64),
    (0x13, 1, 0x680, 64),
    (0x13, 1, 0x280, 64),
    (0x1b, 1, 0x080, 64),
    (0x1b, 5, 0x600, 32),
];

/// One op of Zba, Zbb, Zbc or Zbs (Bit-Manipulation ISA-extensions 1.0.0,
/// §1.4): the register forms of OP and OP-32, `zext.h`, the unary ops
/// and the immediate forms with every shift amount.
fn bit_word() -> impl Strategy<Value = u32> {
    let reg = 0u32..32;
    prop_oneof![
        r_word(0x33, BIT_OP.to_vec()),
        r_word(0x3b, BIT_OP_32.to_vec()),
        (reg.clone(), reg.clone()).prop_map(|(rd, rs1)| r_type(0x3b, rd, 4, rs1, 0, 4)),
        (
            reg.clone(),
            reg.clone(),
            prop::sample::select(BIT_UNARY.to_vec())
        )
            .prop_map(|(rd, rs1, (opc, f3, imm))| i_type(opc, rd, f3, rs1, imm)),
        (
            reg.clone(),
            reg,
            prop::sample::select(BIT_SHIFTS.to_vec()),
            0i32..64
        )
            .prop_map(|(rd, rs1, (opc, f3, hi, amounts), sh)| i_type(
                opc,
                rd,
                f3,
                rs1,
                hi | (sh % amounts)
            )),
    ]
}

/// The funct5 of each AMO (A §8.4): swap, add, xor, and, or, min, max,
/// minu, maxu.
const AMO_FUNCT5: [u32; 9] = [1, 0, 4, 0xc, 8, 0x10, 0x14, 0x18, 0x1c];

/// One op of the A extension: an AMO or an SC (funct5 3), of a word or
/// a doubleword, with any aq and rl bits; or an LR (rs2 0).
fn atomic_word() -> impl Strategy<Value = u32> {
    let table: Vec<(u32, u32)> = [2u32, 3]
        .iter()
        .flat_map(|&f3| {
            AMO_FUNCT5
                .iter()
                .chain([3].iter())
                .flat_map(move |&f5| (0..4).map(move |aqrl| (f3, f5 << 2 | aqrl)))
        })
        .collect();
    prop_oneof![
        r_word(0x2f, table),
        (0u32..32, 0u32..32, 2u32..4, 0u32..4).prop_map(|(rd, rs1, f3, aqrl)| r_type(
            0x2f,
            rd,
            f3,
            rs1,
            0,
            2 << 2 | aqrl
        )),
    ]
}

/// One instruction of the F and D extensions: a load or store, or an op
/// that computes, with any rounding-mode field (5 and 6 are reserved:
/// the op is then an illegal instruction).
fn float_word() -> impl Strategy<Value = u32> {
    let reg = 0u32..32;
    let off = -16i32..16;
    // OP-FP: (funct7, funct3 or None for the rounding mode, rs2 or None
    // for a register).
    let op_fp: Vec<(u32, Option<u32>, Option<u32>)> = vec![
        (0x01, None, None),       // fadd.d
        (0x05, None, None),       // fsub.d
        (0x09, None, None),       // fmul.d
        (0x0d, None, None),       // fdiv.d
        (0x2d, None, Some(0)),    // fsqrt.d
        (0x00, None, None),       // fadd.s
        (0x08, None, None),       // fmul.s
        (0x11, Some(0), None),    // fsgnj.d
        (0x11, Some(1), None),    // fsgnjn.d
        (0x11, Some(2), None),    // fsgnjx.d
        (0x10, Some(0), None),    // fsgnj.s
        (0x15, Some(0), None),    // fmin.d
        (0x15, Some(1), None),    // fmax.d
        (0x51, Some(2), None),    // feq.d
        (0x51, Some(1), None),    // flt.d
        (0x51, Some(0), None),    // fle.d
        (0x61, None, Some(0)),    // fcvt.w.d
        (0x61, None, Some(2)),    // fcvt.l.d
        (0x69, None, Some(2)),    // fcvt.d.l
        (0x20, None, Some(1)),    // fcvt.s.d
        (0x21, None, Some(0)),    // fcvt.d.s
        (0x71, Some(0), Some(0)), // fmv.x.d
        (0x71, Some(1), Some(0)), // fclass.d
        (0x79, Some(0), Some(0)), // fmv.d.x
        (0x70, Some(0), Some(0)), // fmv.x.w
        (0x78, Some(0), Some(0)), // fmv.w.x
    ];
    prop_oneof![
        // flw fld, fsw fsd.
        (reg.clone(), reg.clone(), 2u32..4, off.clone())
            .prop_map(|(rd, rs1, f3, imm)| i_type(0x07, rd, f3, rs1, imm)),
        (reg.clone(), reg.clone(), 2u32..4, off)
            .prop_map(|(rs2, rs1, f3, imm)| s_type(0x27, f3, rs1, rs2, imm)),
        (
            reg.clone(),
            reg.clone(),
            reg.clone(),
            0u32..8,
            prop::sample::select(op_fp)
        )
            .prop_map(|(rd, rs1, rs2, rm, (f7, f3, fixed))| {
                r_type(0x53, rd, f3.unwrap_or(rm), rs1, fixed.unwrap_or(rs2), f7)
            }),
        // fmadd fmsub fnmsub fnmadd, single and double (R4-type).
        (
            (reg.clone(), reg.clone(), reg.clone(), reg),
            0u32..8,
            0u32..2,
            prop::sample::select(vec![0x43u32, 0x47, 0x4b, 0x4f])
        )
            .prop_map(|((rd, rs1, rs2, rs3), rm, fmt, opcode)| {
                rs3 << 27 | fmt << 25 | rs2 << 20 | rs1 << 15 | rm << 12 | rd << 7 | opcode
            }),
    ]
}

/// Floating-point register values: any bits, NaN-boxed singles, and
/// doubles of every kind (zeros, subnormals, infinities, NaNs, numbers
/// that round).
fn float_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        any::<u32>().prop_map(|v| 0xffff_ffff_0000_0000 | v as u64),
        any::<f32>().prop_map(|v| 0xffff_ffff_0000_0000 | v.to_bits() as u64),
        any::<f64>().prop_map(f64::to_bits),
        prop::sample::select(vec![
            0u64,
            0x8000_0000_0000_0000,
            0x7ff0_0000_0000_0000,
            0x7ff8_0000_0000_0000,
            0x7ff4_0000_0000_0000,
            0x0000_0000_0000_0001,
            0x3ff0_0000_0000_0001,
            1.0f64.to_bits(),
            3.0f64.to_bits(),
            1e300f64.to_bits(),
        ]),
    ]
}

/// How a block ends: a branch, a jump, or falling into an `ebreak`.
fn last_word() -> impl Strategy<Value = Option<u32>> {
    let reg = 0u32..32;
    prop_oneof![
        (0u32..8, reg.clone(), reg.clone(), -64i32..64)
            .prop_filter_map("a branch", |(f3, a, b, off)| {
                (f3 != 2 && f3 != 3).then(|| b_type(f3, a, b, off * 2))
            })
            .prop_map(Some),
        (reg.clone(), -64i32..64).prop_map(|(rd, off)| Some(j_type(rd, off * 2))),
        (reg.clone(), reg, -64i32..64)
            .prop_map(|(rd, rs1, imm)| Some(i_type(0x67, rd, 0, rs1, imm))),
        Just(None),
    ]
}

/// Register values: many near the edges of the pages above, so that
/// loads and stores reach each case.
fn reg_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        (0u64..0x2000).prop_map(|o| DATA + o),
        (0u64..16).prop_map(|o| DATA + 0x1ff8 + o),
        (0u64..16).prop_map(|o| DATA + 0xff8 + o),
        (0u64..0x1000).prop_map(|o| READ_ONLY + o),
        (0u64..0x1000).prop_map(|o| CODE + o),
        (0u64..0x1000).prop_map(|o| UNMAPPED + o),
        (0u64..0x1000).prop_map(|o| SHARED + o),
        Just(crate::mem::LIMIT - 4),
    ]
}

struct Outcome {
    stop: Stop,
    x: Vec<u64>,
    f: Vec<u64>,
    fflags: u32,
    pc: u64,
    data: Vec<u8>,
    shared: Vec<u8>,
    code_written: bool,
    events: Vec<Event>,
    /// The hart's reservation and the value its LR loaded.
    reservation: (u64, u64),
}

fn outcome(stop: Stop, cpu: &Cpu, mem: &Memory, events: Vec<Event>) -> Outcome {
    Outcome {
        stop,
        x: cpu.x[..32].to_vec(),
        f: cpu.f.to_vec(),
        fflags: cpu.fflags,
        pc: cpu.pc,
        data: mem.slice(DATA, 0x2000, perm::R).unwrap().to_vec(),
        shared: mem.slice(SHARED, 0x1000, perm::R).unwrap().to_vec(),
        code_written: mem.code_written,
        events,
        reservation: (cpu.reservation, cpu.reserved_value),
    }
}

/// Runs the block at CODE both ways; returns (interpreted, translated,
/// whether a translation was made).
fn both(words: &[u32], regs: &[u64], wants: ClassSet) -> (Outcome, Outcome, bool) {
    both_from(words, regs, &[], 0, wants)
}

/// [`both`] with floating-point registers `fregs` (the first ones; the
/// rest 0) and the dynamic rounding mode `frm`.
fn both_from(
    words: &[u32],
    regs: &[u64],
    fregs: &[u64],
    frm: u32,
    wants: ClassSet,
) -> (Outcome, Outcome, bool) {
    both_with_flags(words, regs, fregs, frm, 0, wants)
}

/// [`both_from`] with the accrued flags `fflags` before the block.
fn both_with_flags(
    words: &[u32],
    regs: &[u64],
    fregs: &[u64],
    frm: u32,
    fflags: u32,
    wants: ClassSet,
) -> (Outcome, Outcome, bool) {
    let run = |translated: bool| {
        let mut mem = memory();
        let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        bytes.extend_from_slice(&0x0010_0073u32.to_le_bytes()); // ebreak
        mem.poke(CODE, &bytes).unwrap();
        let mut cpu = Cpu::new(CODE);
        for (r, v) in regs.iter().enumerate() {
            cpu.x[r + 1] = *v;
        }
        cpu.f[..fregs.len()].copy_from_slice(fregs);
        cpu.frm = frm;
        cpu.fflags = fflags;
        cpu.instret = 1000;
        // A reservation of a0's address, so that an SC with that base
        // may succeed without an LR in the block.
        cpu.reservation = cpu.x[10];
        cpu.reserved_value = 0;
        let mut sink = Collect {
            events: vec![],
            wants,
        };
        let mut made = false;
        let stop = {
            let mut ev = Events::new(&mut sink);
            let mut code = CodeCache::new();
            code.blocks
                .push(translate(CODE, &mem, crate::Isa::default()));
            let stop = if translated {
                let mut jit = Jit::new().unwrap();
                jit.begin_run(&mut code, wants, false);
                jit.translate(&mut code, 0, wants);
                made = code.blocks[0].jit < UNTRANSLATABLE;
                if made {
                    let (last, stop) =
                        jit.run::<true, false>(&mut code, 0, &mut cpu, &mut mem, &mut ev, u64::MAX);
                    assert_eq!(last, 0);
                    stop
                } else {
                    exec_block::<true>(&mut cpu, &mut mem, &code.blocks[0].ops, &mut ev)
                }
            } else {
                exec_block::<true>(&mut cpu, &mut mem, &code.blocks[0].ops, &mut ev)
            };
            ev.flush();
            stop
        };
        (outcome(stop, &cpu, &mem, sink.events), made)
    };
    let (a, _) = run(false);
    let (b, made) = run(true);
    (a, b, made)
}

fn same(a: &Outcome, b: &Outcome) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.stop, b.stop);
    prop_assert_eq!(&a.x, &b.x);
    prop_assert_eq!(&a.f, &b.f);
    prop_assert_eq!(a.fflags, b.fflags);
    prop_assert_eq!(a.pc, b.pc);
    prop_assert!(a.data == b.data, "data pages differ");
    prop_assert!(a.shared == b.shared, "shared pages differ");
    prop_assert_eq!(a.code_written, b.code_written);
    prop_assert_eq!(&a.events, &b.events);
    prop_assert_eq!(a.reservation, b.reservation);
    Ok(())
}

fn wants_choice() -> impl Strategy<Value = ClassSet> {
    prop_oneof![
        Just(ClassSet::NONE),
        Just(ClassSet::of(Class::Load)),
        Just(ClassSet::of(Class::Load).with(Class::Store)),
        Just(ClassSet::ALL),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn translated_blocks_do_what_the_interpreter_does(
        body in prop::collection::vec(body_word(), 1..24),
        last in last_word(),
        regs in prop::collection::vec(reg_value(), 31),
        fregs in prop::collection::vec(float_value(), 32),
        frm in prop_oneof![Just(0u32), 0u32..8],
        wants in wants_choice(),
    ) {
        let mut words = body;
        words.extend(last);
        let (a, b, _) = both_from(&words, &regs, &fregs, frm, wants);
        same(&a, &b)?;
    }
}

/// One floating-point op of those translated in place
/// (`jit::float`), with a rounding-mode field that is most often round
/// to nearest (0) or dynamic (7), else one of the static modes that
/// conversions take (toward zero, down, up, ties away), else any, or an
/// instruction on the floating-point CSRs.
fn fast_float_word() -> impl Strategy<Value = u32> {
    let reg = 0u32..32;
    let rm = prop_oneof![
        3 => Just(0u32),
        3 => Just(7u32),
        2 => 1u32..5,
        1 => 0u32..8,
    ];
    // OP-FP: (funct7, funct3 or None for the rounding mode, rs2 or None
    // for a register).
    let op_fp: Vec<(u32, Option<u32>, Option<u32>)> = vec![
        (0x01, None, None),       // fadd.d
        (0x05, None, None),       // fsub.d
        (0x09, None, None),       // fmul.d
        (0x0d, None, None),       // fdiv.d
        (0x51, Some(2), None),    // feq.d
        (0x51, Some(1), None),    // flt.d
        (0x51, Some(0), None),    // fle.d
        (0x61, None, Some(0)),    // fcvt.w.d
        (0x61, None, Some(2)),    // fcvt.l.d
        (0x61, None, Some(1)),    // fcvt.wu.d
        (0x61, None, Some(3)),    // fcvt.lu.d
        (0x69, None, Some(0)),    // fcvt.d.w
        (0x69, None, Some(1)),    // fcvt.d.wu
        (0x69, None, Some(2)),    // fcvt.d.l
        (0x69, None, Some(3)),    // fcvt.d.lu
        (0x00, None, None),       // fadd.s
        (0x04, None, None),       // fsub.s
        (0x08, None, None),       // fmul.s
        (0x0c, None, None),       // fdiv.s
        (0x50, Some(2), None),    // feq.s
        (0x50, Some(1), None),    // flt.s
        (0x50, Some(0), None),    // fle.s
        (0x60, None, Some(0)),    // fcvt.w.s
        (0x60, None, Some(2)),    // fcvt.l.s
        (0x60, None, Some(1)),    // fcvt.wu.s
        (0x60, None, Some(3)),    // fcvt.lu.s
        (0x68, None, Some(0)),    // fcvt.s.w
        (0x68, None, Some(1)),    // fcvt.s.wu
        (0x68, None, Some(2)),    // fcvt.s.l
        (0x68, None, Some(3)),    // fcvt.s.lu
        (0x20, None, Some(1)),    // fcvt.s.d
        (0x21, None, Some(0)),    // fcvt.d.s
        (0x70, Some(0), Some(0)), // fmv.x.w
        (0x78, Some(0), Some(0)), // fmv.w.x
        (0x10, Some(0), None),    // fsgnj.s
        (0x10, Some(1), None),    // fsgnjn.s
        (0x10, Some(2), None),    // fsgnjx.s
        (0x2d, None, Some(0)),    // fsqrt.d
        (0x2c, None, Some(0)),    // fsqrt.s
        (0x15, Some(0), None),    // fmin.d
        (0x15, Some(1), None),    // fmax.d
        (0x14, Some(0), None),    // fmin.s
        (0x14, Some(1), None),    // fmax.s
        (0x71, Some(1), Some(0)), // fclass.d
        (0x70, Some(1), Some(0)), // fclass.s
    ];
    prop_oneof![
        (
            reg.clone(),
            reg.clone(),
            reg.clone(),
            rm.clone(),
            prop::sample::select(op_fp)
        )
            .prop_map(|(rd, rs1, rs2, rm, (f7, f3, fixed))| {
                r_type(0x53, rd, f3.unwrap_or(rm), rs1, fixed.unwrap_or(rs2), f7)
            }),
        // The floating-point CSRs (fflags, frm, fcsr), read, written, set
        // and cleared from a register or an immediate: frflags, fsflags,
        // fsrm, fscsr and the rest.
        (
            reg.clone(),
            reg.clone(),
            prop::sample::select(vec![1u32, 2, 3, 5, 6, 7]),
            1i32..4
        )
            .prop_map(|(rd, rs1, f3, csr)| i_type(0x73, rd, f3, rs1, csr)),
        // fmadd fmsub fnmsub fnmadd, single and double.
        (
            (reg.clone(), reg.clone(), reg.clone(), reg),
            rm,
            0u32..2,
            prop::sample::select(vec![0x43u32, 0x47, 0x4b, 0x4f])
        )
            .prop_map(|((rd, rs1, rs2, rs3), rm, fmt, opcode)| {
                rs3 << 27 | fmt << 25 | rs2 << 20 | rs1 << 15 | rm << 12 | rd << 7 | opcode
            }),
    ]
}

/// Doubles and NaN-boxed singles for the fast paths: most of them
/// ordinary numbers, exact or not, some at the edges of the ranges where
/// the fast paths give way to the call (near the subnormals, near
/// overflow, at the integers' bounds, subnormals), some of any kind.
fn fast_float_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => fast_double(),
        2 => fast_single().prop_map(|v| 0xffff_ffff_0000_0000 | v as u64),
    ]
}

/// The singles of [`fast_float_value`].
fn fast_single() -> impl Strategy<Value = u32> {
    let f = |v: f32| v.to_bits();
    prop_oneof![
        3 => (-1000i32..1000).prop_map(|i| (i as f32).to_bits()),
        3 => (-1000i32..1000, 0u32..30).prop_map(|(i, s)| (i as f32 / 2f32.powi(s as i32)).to_bits()),
        4 => (any::<u32>(), 100u32..160).prop_map(|(m, e)| (m & 0x807f_ffff) | e << 23),
        2 => (any::<u32>(), prop_oneof![0u32..30, 230u32..255])
            .prop_map(|(m, e)| (m & 0x807f_ffff) | e << 23),
        2 => prop::sample::select(vec![
            f(1.0e-30),
            f(1.0e-30) + 1,
            f(1.0e-30) - 1,
            f(1.0e37),
            f(1.0e37) + 1,
            f(1.0e-15),
            f(1.0e15),
            f(f32::MAX),
            f(f32::MIN_POSITIVE),
            f(2f32.powi(24) + 2.0),
            f(2f32.powi(63)),
            f(-(2f32.powi(63))),
            f(2f32.powi(31)),
            f(-(2f32.powi(31))),
            f(-0.0),
            f(0.5),
            f(-2.5),
            f(f32::INFINITY),
            0x7fc0_0000,
            0x7fa0_0000,
            1,
        ]),
        1 => any::<u32>(),
    ]
}

/// The doubles of [`fast_float_value`].
fn fast_double() -> impl Strategy<Value = u64> {
    let d = |v: f64| v.to_bits();
    prop_oneof![
        3 => (-1000i64..1000).prop_map(|i| (i as f64).to_bits()),
        3 => (-1000i64..1000, 0u32..40).prop_map(|(i, s)| (i as f64 / 2f64.powi(s as i32)).to_bits()),
        4 => (any::<u64>(), 900u64..1150)
            .prop_map(|(m, e)| (m & 0x800f_ffff_ffff_ffff) | e << 52),
        // Subnormals and the smallest normals; the largest numbers.
        2 => (any::<u64>(), prop_oneof![0u64..80, 1990u64..2047])
            .prop_map(|(m, e)| (m & 0x800f_ffff_ffff_ffff) | e << 52),
        2 => prop::sample::select(vec![
            d(1.0e-280),
            d(1.0e-280) + 1,
            d(1.0e-280) - 1,
            d(1.0e290),
            d(1.0e290) + 1,
            d(-1.0e290),
            d(1.0e-150),
            d(1.0e150),
            d(f64::MAX),
            d(f64::MIN_POSITIVE),
            d(2f64.powi(53)),
            d(2f64.powi(63)),
            d(-(2f64.powi(63))),
            d(2f64.powi(31)),
            d(-(2f64.powi(31))),
            d(-(2f64.powi(31)) - 0.5),
            d(2f64.powi(31) - 0.5),
            d(-0.0),
            d(0.0),
            d(0.5),
            d(-2.5),
            d(f64::INFINITY),
            0x7ff8_0000_0000_0000,
            0x7ff4_0000_0000_0000,
            1,
        ]),
        1 => any::<u64>(),
    ]
}

/// Integer registers for the conversions to double.
fn fast_int_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        (-100_000i64..100_000).prop_map(|v| v as u64),
        prop::sample::select(vec![
            (1u64 << 53) + 1,
            1 << 63,
            (1 << 63) + 1,
            u64::MAX,
            i64::MAX as u64,
            i32::MIN as i64 as u64,
            i32::MAX as u64,
            u32::MAX as u64,
            0x8000_0000,
        ]),
        any::<u64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8000, ..ProptestConfig::default() })]

    #[test]
    fn floating_point_ops_translated_in_place_do_what_the_interpreter_does(
        body in prop::collection::vec(fast_float_word(), 1..12),
        regs in prop::collection::vec(fast_int_value(), 31),
        fregs in prop::collection::vec(fast_float_value(), 32),
        frm in prop_oneof![4 => Just(0u32), 1 => 0u32..8],
        fflags in prop_oneof![Just(0u32), 0u32..32],
    ) {
        let (a, b, _) = both_with_flags(&body, &regs, &fregs, frm, fflags, ClassSet::NONE);
        same(&a, &b)?;
    }
}

#[test]
fn a_quotient_of_a_subnormal_is_inexact_though_its_residual_underflows() {
    // fdiv.d f3, f1, f2 (round to nearest): 5e-320 / (3 · 2^-140), a
    // normal quotient whose residual x − r·y is below the smallest
    // subnormal, so that an FMA gives it as zero: the fast path must
    // leave such a dividend to the call, which raises NX.
    let words = [r_type(0x53, 3, 0, 1, 2, 0x0d)];
    let fregs = [0, 5e-320f64.to_bits(), (3.0 * 2f64.powi(-140)).to_bits()];
    let (a, b, made) = both_from(&words, &[], &fregs, 0, ClassSet::NONE);
    assert!(made);
    same(&a, &b).unwrap();
    assert_eq!(b.f[3], (5e-320 / (3.0 * 2f64.powi(-140))).to_bits());
    assert_eq!(b.fflags, crate::fp::flag::NX);
}

#[test]
fn a_root_of_a_subnormal_is_inexact_though_its_residual_underflows() {
    // fsqrt.d f3, f1 (round to nearest) of 8 · 2^-1074: r·r − x is below
    // the smallest subnormal, so an FMA gives it as zero.
    let words = [r_type(0x53, 3, 0, 1, 0, 0x2d)];
    let x = f64::from_bits(8);
    let (a, b, made) = both_from(&words, &[], &[0, x.to_bits()], 0, ClassSet::NONE);
    assert!(made);
    same(&a, &b).unwrap();
    assert_eq!(b.f[3], x.sqrt().to_bits());
    assert_eq!(b.fflags, crate::fp::flag::NX);
}

#[test]
fn the_minimum_of_two_zeros_is_negative_zero() {
    // fmin.d f3, f2, f1 and fmax.d f4, f1, f2 of +0 (f1) and -0 (f2):
    // the host's minsd and maxsd would give their second operand.
    let words = [
        r_type(0x53, 3, 0, 2, 1, 0x15),
        r_type(0x53, 4, 1, 1, 2, 0x15),
    ];
    let fregs = [0, 0.0f64.to_bits(), (-0.0f64).to_bits()];
    let (a, b, made) = both_from(&words, &[], &fregs, 0, ClassSet::NONE);
    assert!(made);
    same(&a, &b).unwrap();
    assert_eq!(b.f[3], (-0.0f64).to_bits());
    assert_eq!(b.f[4], 0.0f64.to_bits());
}

#[test]
fn a_product_of_singles_in_the_subnormals_raises_underflow() {
    // fmul.s f3, f1, f2 (round to nearest): 1e-20 · 3e-20 is a subnormal
    // single, rounded: UF and NX, which only the call raises.
    use crate::fp::flag;
    let words = [r_type(0x53, 3, 0, 1, 2, 0x08)];
    let boxed = |v: f32| 0xffff_ffff_0000_0000 | v.to_bits() as u64;
    let fregs = [0, boxed(1e-20), boxed(3e-20)];
    let (a, b, made) = both_from(&words, &[], &fregs, 0, ClassSet::NONE);
    assert!(made);
    same(&a, &b).unwrap();
    assert_eq!(b.f[3], boxed(1e-20 * 3e-20));
    assert_eq!(b.fflags, flag::UF | flag::NX);
}

#[test]
fn mulhsu_is_translated_for_every_sign() {
    // mulhsu a0, a1, a2 for rs1 of either sign and rs2 with or without
    // its top bit: the high half of signed times unsigned.
    let words = [r_type(0x33, 10, 2, 11, 12, 1)];
    for (x, y) in [
        (-1i64 as u64, u64::MAX),
        (-3i64 as u64, 5),
        (i64::MIN as u64, 1 << 63),
        (7, u64::MAX),
        (1 << 62, 12345),
    ] {
        let mut regs = vec![0u64; 31];
        regs[10] = x; // a1 (x11)
        regs[11] = y; // a2 (x12)
        let (a, b, made) = both(&words, &regs, ClassSet::NONE);
        assert!(made);
        same(&a, &b).unwrap();
        let want = ((x as i64 as i128).wrapping_mul(y as u128 as i128) >> 64) as u64;
        assert_eq!(b.x[10], want, "{x:#x} * {y:#x}");
    }
}

#[test]
fn a_block_of_integer_ops_is_translated_whole() {
    // addi a0, a0, 5; add a1, a0, a0; ld a2, 0(a3); beq a0, a1, +8
    let words = [
        i_type(0x13, 10, 0, 10, 5),
        r_type(0x33, 11, 0, 10, 10, 0),
        i_type(0x03, 12, 3, 13, 0),
        b_type(0, 10, 11, 8),
    ];
    let mut regs = vec![0u64; 31];
    regs[12] = DATA + 8; // a3 (x13)
    let (a, b, made) = both(&words, &regs, ClassSet::of(Class::Load));
    assert!(made);
    same(&a, &b).unwrap();
    assert_eq!(b.stop, Stop::Next);
    assert_eq!(b.pc, CODE + 16);
    assert_eq!(b.events.len(), 1);
    assert_eq!(b.events[0].addr, DATA + 8);
}

#[test]
fn bit_manipulation_ops_are_translated_at_their_edges() {
    // Each Zba, Zbb, Zbc and Zbs op of a0 and a1 into a2, for sources at the
    // edges of their counts, signs and words: zero, all ones, the top
    // bit of the word and of the register, one, and a mixed pattern.
    let edges = [
        0u64,
        u64::MAX,
        0x8000_0000,
        1 << 63,
        1,
        0x0080_ff00_0001_7f00,
        0xffff_ffff_0000_0000,
    ];
    let ops: Vec<u32> = (BIT_OP
        .iter()
        .map(|&(f3, f7)| r_type(0x33, 12, f3, 10, 11, f7)))
    .chain(
        BIT_OP_32
            .iter()
            .map(|&(f3, f7)| r_type(0x3b, 12, f3, 10, 11, f7)),
    )
    .chain([r_type(0x3b, 12, 4, 10, 0, 4)])
    .chain(
        BIT_UNARY
            .iter()
            .map(|&(opc, f3, imm)| i_type(opc, 12, f3, 10, imm)),
    )
    // Each immediate form at its largest amount and at 0.
    .chain(BIT_SHIFTS.iter().flat_map(|&(opc, f3, hi, amounts)| {
        [hi | (amounts - 1), hi].map(|imm| i_type(opc, 12, f3, 10, imm))
    }))
    .collect();
    assert_eq!(ops.len(), 50, "every op of the four extensions");
    for &word in &ops {
        let kind = crate::decode::decode(word, CODE).kind;
        for &x in &edges {
            for &y in &edges {
                let mut regs = vec![0u64; 31];
                regs[9] = x; // a0
                regs[10] = y; // a1
                let (a, b, made) = both(&[word], &regs, ClassSet::NONE);
                assert!(made, "{kind:?} not translated");
                same(&a, &b).unwrap_or_else(|e| panic!("{kind:?} {x:#x} {y:#x}: {e}"));
            }
        }
    }
}

/// Loads and stores: events the translation makes (one of another class
/// would leave the rest of the block to the interpreter).
const MEMORY_EVENTS: ClassSet = ClassSet::of(Class::Load).with(Class::Store);

/// A block of atomic ops on the data page at a3 (x13): each AMO of a
/// word and a doubleword, then an LR and an SC of the same word, which
/// succeeds, and an SC with no reservation left, which fails.
fn atomic_block() -> Vec<u32> {
    let amo = |f5: u32, f3: u32, rd: u32, rs1: u32| r_type(0x2f, rd, f3, rs1, 11, f5 << 2);
    let mut words = Vec::new();
    for (i, f5) in AMO_FUNCT5.into_iter().enumerate() {
        // amo<op>.w a2, a1, (a3); amo<op>.d a4, a1, (a5); add a1, a1, a2
        words.push(amo(f5, 2, 12, 13));
        words.push(amo(f5, 3, 14, 15));
        words.push(r_type(0x33, 11, 0, 11, 12, 0));
        // Move the bases on, so that each op sees a word of its own.
        words.push(i_type(0x13, 13, 0, 13, 8 * (i as i32 % 2)));
    }
    // lr.w a6, (a5); sc.w a7, a1, (a5); sc.d t3, a1, (a5)
    words.push(r_type(0x2f, 16, 2, 15, 0, 2 << 2));
    words.push(r_type(0x2f, 17, 2, 15, 11, 3 << 2));
    words.push(r_type(0x2f, 28, 3, 15, 11, 3 << 2));
    words
}

#[test]
fn atomic_ops_are_translated_and_do_what_the_interpreter_does() {
    let words = atomic_block();
    for a1 in [0x8000_0000_7fff_fff0u64, 5, u64::MAX, 0x1234_5678_9abc_def0] {
        let mut regs = vec![0u64; 31];
        regs[10] = a1; // a1 (x11)
        regs[12] = DATA + 0x100; // a3
        regs[14] = DATA + 0x200; // a5
        for wants in [ClassSet::NONE, MEMORY_EVENTS] {
            let (a, b, made) = both(&words, &regs, wants);
            assert!(made);
            same(&a, &b).unwrap();
            assert_eq!(b.stop, Stop::Ebreak, "the block ran to its end");
            assert_eq!(b.x[17], 0, "the sc after the lr stores");
            assert_eq!(b.x[28], 1, "the second sc has no reservation");
            assert_eq!(b.reservation.0, Cpu::NO_RESERVATION);
            if wants == MEMORY_EVENTS {
                // 18 AMOs and an LR load, two SCs store (the second of
                // no bytes).
                let loads = b.events.iter().filter(|e| e.class == Class::Load).count();
                assert_eq!(loads, 19);
                let stores: Vec<u8> = b
                    .events
                    .iter()
                    .filter(|e| e.class == Class::Store)
                    .map(|e| e.size)
                    .collect();
                assert_eq!(stores, vec![4, 0]);
            }
        }
    }
}

#[test]
fn atomic_ops_on_shared_or_misaligned_words_are_the_interpreters() {
    let words = atomic_block();
    for (a3, a5) in [
        (SHARED + 8, DATA + 0x200),
        (DATA + 0x102, DATA + 0x200),
        (DATA + 0x100, SHARED),
    ] {
        let mut regs = vec![0u64; 31];
        regs[10] = 7;
        regs[12] = a3;
        regs[14] = a5;
        let (a, b, made) = both(&words, &regs, MEMORY_EVENTS);
        assert!(made);
        same(&a, &b).unwrap();
    }
}

/// A loop of one block of three AMOs that runs `n` times: `amoadd.w t0,
/// t1, (a3); amoadd.d t2, t1, (a4); amoor.w t3, t1, (a3); addi a0, a0,
/// 1; bne a0, a1, -16`, with its load events; translated and linked to
/// itself, or interpreted. Returns the events, the registers and the
/// data page.
fn atomic_loop(n: u64, translated: bool) -> (Vec<Event>, Vec<u64>, Vec<u8>) {
    let words = [
        r_type(0x2f, 5, 2, 13, 6, 0),
        r_type(0x2f, 7, 3, 14, 6, 0),
        r_type(0x2f, 28, 2, 13, 6, 8 << 2),
        i_type(0x13, 10, 0, 10, 1),
        b_type(1, 10, 11, -16),
    ];
    let mut mem = memory();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let mut cpu = Cpu::new(CODE);
    cpu.x[11] = n;
    cpu.x[13] = DATA + 0x40;
    cpu.x[14] = DATA + 0x48;
    cpu.x[6] = 0x0101_0101_0101_0103;
    let wants = ClassSet::of(Class::Load);
    let mut sink = Collect {
        events: vec![],
        wants,
    };
    {
        let mut ev = Events::new(&mut sink);
        let mut code = CodeCache::new();
        code.blocks
            .push(translate(CODE, &mem, crate::Isa::default()));
        let mut jit = Jit::new().unwrap();
        if translated {
            jit.begin_run(&mut code, wants, false);
            jit.translate(&mut code, 0, wants);
            assert!(code.blocks[0].jit < UNTRANSLATABLE);
            jit.link(&code, 0, 0, CODE);
        }
        // Each time the loop finds no room for the next run's events, it
        // goes back to the caller, as to the simulator's loop.
        while cpu.pc == CODE {
            let stop = if translated {
                jit.run::<true, false>(&mut code, 0, &mut cpu, &mut mem, &mut ev, u64::MAX)
                    .1
            } else {
                exec_block::<true>(&mut cpu, &mut mem, &code.blocks[0].ops, &mut ev)
            };
            assert_eq!(stop, Stop::Next);
        }
        ev.flush();
    }
    let data = mem.slice(DATA, 0x2000, perm::R).unwrap().to_vec();
    (sink.events, cpu.x[..32].to_vec(), data)
}

#[test]
fn a_linked_loop_of_amos_makes_room_for_their_events() {
    // 3 load events a run, 30,000 in all: a linked translation entered
    // from itself must find room for all three before it starts, across
    // many batches of events.
    let (events, x, data) = atomic_loop(10_000, true);
    assert_eq!(events.len(), 30_000);
    let (want_events, want_x, want_data) = atomic_loop(10_000, false);
    assert!(events == want_events, "the events differ");
    assert_eq!(x, want_x);
    assert!(data == want_data);
}

#[test]
fn fclass_of_every_class_is_the_interpreters() {
    // fclass.d a0, fa0; fclass.s a1, fa1 (F §11.9): the bit of each of
    // the ten classes, in both precisions, and a single that is not
    // NaN-boxed, which is the canonical NaN.
    let words = [
        r_type(0x53, 10, 1, 10, 0, 0x71),
        r_type(0x53, 11, 1, 11, 0, 0x70),
    ];
    let boxed = |s: u64| 0xffff_ffff_0000_0000 | s;
    let cases: [(u64, u64, u32); 12] = [
        (0xfff0_0000_0000_0000, boxed(0xff80_0000), 0),
        (0xbff0_0000_0000_0000, boxed(0xbf80_0000), 1),
        (0x8000_0000_0000_0001, boxed(0x8000_0001), 2),
        (0x8000_0000_0000_0000, boxed(0x8000_0000), 3),
        (0, boxed(0), 4),
        (0x000f_ffff_ffff_ffff, boxed(0x007f_ffff), 5),
        (0x3ff0_0000_0000_0000, boxed(0x3f80_0000), 6),
        (0x7fef_ffff_ffff_ffff, boxed(0x7f7f_ffff), 6),
        (0x7ff0_0000_0000_0000, boxed(0x7f80_0000), 7),
        (0x7ff0_0000_0000_0001, boxed(0x7f80_0001), 8),
        (0xfff8_0000_0000_0001, boxed(0xffc0_0001), 9),
        (0x7ff8_0000_0000_0000, 0x3f80_0000, 9),
    ];
    for (d, s, bit) in cases {
        let mut fregs = vec![0u64; 32];
        fregs[10] = d;
        fregs[11] = s;
        let (a, b, made) = both_from(&words, &[0; 31], &fregs, 0, ClassSet::NONE);
        assert!(made);
        same(&a, &b).unwrap();
        assert_eq!(b.x[10], 1 << bit, "fclass.d of {d:#x}");
        assert_eq!(b.x[11], 1 << bit, "fclass.s of {s:#x}");
    }
}

#[test]
fn a_fault_is_the_interpreters() {
    // addi a0, a0, 1; lw a1, 0(a2) with a2 unmapped; addi a0, a0, 1
    let words = [
        i_type(0x13, 10, 0, 10, 1),
        i_type(0x03, 11, 2, 12, 0),
        i_type(0x13, 10, 0, 10, 1),
    ];
    let mut regs = vec![0u64; 31];
    regs[11] = UNMAPPED + 4;
    let (a, b, made) = both(&words, &regs, ClassSet::NONE);
    assert!(made);
    same(&a, &b).unwrap();
    assert!(matches!(b.stop, Stop::Fault { at: 1, .. }), "{:?}", b.stop);
    assert_eq!(b.x[10], 1);
}

#[test]
fn a_store_to_code_leaves_the_translation() {
    // sw a0, 0(a1) with a1 in the code page.
    let words = [s_type(0x23, 2, 11, 10, 0), i_type(0x13, 10, 0, 10, 1)];
    let mut regs = vec![0u64; 31];
    regs[10] = CODE + 0x800;
    let (a, b, made) = both(&words, &regs, ClassSet::NONE);
    assert!(made);
    same(&a, &b).unwrap();
    assert!(b.code_written);
}

/// A loop of one block, `addi a0, a0, 1; bne a0, a1, loop`, translated
/// and linked to itself, run from the loop's call with `a1` and the
/// count `check` at which the loop must look: returns a0, the
/// instructions retired (the blocks before the last counted by the run,
/// the last added as the simulator's loop does), the block's count and
/// the next PC.
fn self_loop(a1: u64, check: u64) -> (u64, u64, u64, u64) {
    let words = [i_type(0x13, 10, 0, 10, 1), b_type(1, 10, 11, -4)];
    // The taken branch goes back to the block's start: way 0.
    linked_loop(&words, a1, check, CODE)
}

/// A loop of one block of `words` at CODE, translated and linked to
/// itself for the target `pc`, run as [`self_loop`] says.
fn linked_loop(words: &[u32], a1: u64, check: u64, pc: u64) -> (u64, u64, u64, u64) {
    let mut cpu = Cpu::new(CODE);
    cpu.x[11] = a1;
    cpu.x[12] = CODE;
    let count = run_linked(words, &mut cpu, check, pc);
    (cpu.x[10], cpu.instret, count, cpu.pc)
}

/// Runs the block of `words` at CODE on `cpu`, translated and linked to
/// itself for the target `pc`, from the loop's call with the count
/// `check` at which the loop must look, as the simulator's loop would
/// (the last block's instructions added to `cpu.instret`); returns the
/// block's count.
fn run_linked(words: &[u32], cpu: &mut Cpu, check: u64, pc: u64) -> u64 {
    let mut mem = memory();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let mut sink = Collect {
        events: vec![],
        wants: ClassSet::NONE,
    };
    let mut ev = Events::new(&mut sink);
    let mut code = CodeCache::new();
    code.blocks
        .push(translate(CODE, &mem, crate::Isa::default()));
    assert_eq!(code.blocks[0].ops.len(), words.len());
    let mut jit = Jit::new().unwrap();
    jit.begin_run(&mut code, ClassSet::NONE, false);
    jit.translate(&mut code, 0, ClassSet::NONE);
    assert!(code.blocks[0].jit < UNTRANSLATABLE);
    jit.link(&code, 0, 0, pc);
    code.blocks[0].count = 1;
    let (last, stop) = jit.run::<false, false>(&mut code, 0, cpu, &mut mem, &mut ev, check);
    assert_eq!((last, stop), (0, Stop::Next));
    cpu.instret += words.len() as u64;
    code.blocks[0].count
}

/// A loop of one block that ends in a `jalr` to a2 (CODE) while a0 < a1,
/// then to CODE + 8: `addi a0, a0, 1; sltu t0, a0, a1; xori t0, t0, 1;
/// slli t0, t0, 3; add t1, a2, t0; jalr x0, 0(t1)`.
const JALR_LOOP: [u32; 6] = [
    0x0015_0513, // addi a0, a0, 1
    0x00b5_32b3, // sltu t0, a0, a1
    0x0012_c293, // xori t0, t0, 1
    0x0032_9293, // slli t0, t0, 3
    0x0056_0333, // add t1, a2, t0
    0x0003_0067, // jalr x0, 0(t1)
];

#[test]
fn a_jalr_linked_for_its_target_loops_and_leaves_for_another() {
    // Linked for CODE: 100 blocks, the last of which goes to CODE + 8.
    assert_eq!(
        linked_loop(&JALR_LOOP, 100, 1_000_000, CODE),
        (100, 600, 100, CODE + 8)
    );
    // Stops where the loop must look: 83 blocks retire 498 instructions,
    // below 499; the 84th reaches it.
    assert_eq!(
        linked_loop(&JALR_LOOP, 1000, 499, CODE),
        (84, 504, 84, CODE)
    );
    // Linked for another target, it goes back to the loop after one block
    // (with a bound on the chain, so that a wrong link fails, not hangs).
    assert_eq!(
        linked_loop(&JALR_LOOP, 100, 10_000, CODE + 8),
        (1, 6, 1, CODE)
    );
}

#[test]
fn a_linked_loop_runs_until_the_loops_next_look() {
    // 250 blocks retire 500 instructions, below 501; the 251st reaches it.
    assert_eq!(self_loop(1000, 501), (251, 502, 251, CODE));
    assert_eq!(self_loop(1000, 500), (250, 500, 250, CODE));
}

#[test]
fn a_linked_loop_leaves_by_its_unlinked_way() {
    // A bound far above the loop's 200 instructions, so that a broken
    // link or register fails the test rather than hangs it.
    assert_eq!(self_loop(100, 1_000_000), (100, 200, 100, CODE + 8));
}

#[test]
fn held_registers_go_home_around_a_call_and_at_the_end() {
    // A loop of one block, linked to itself, whose calls of the
    // interpreter's code read and write registers the translations hold
    // in host registers (a0, a3; see `regs`), among ops on others:
    //   fcvt.d.l f1, a0, rdn  (a call when inexact: above 2^53, odd a0)
    //   fclass.d a3, f1       (always a call: 1 << 6, a positive normal)
    //   add a4, a4, a3
    //   add t3, t3, a3        (t3 stays in memory)
    //   addi a0, a0, 1
    //   bne a0, a1, loop
    let words = [
        r_type(0x53, 1, 2, 10, 2, 0b110_1001),
        r_type(0x53, 13, 1, 1, 0, 0b111_0001),
        r_type(0x33, 14, 0, 14, 13, 0),
        r_type(0x33, 28, 0, 28, 13, 0),
        i_type(0x13, 10, 0, 10, 1),
        b_type(1, 10, 11, -20),
    ];
    assert!(regs::held(10).is_some() && regs::held(13).is_some() && regs::held(14).is_some());
    assert!(regs::held(28).is_none());
    let start = (1u64 << 53) + 1;
    let mut cpu = Cpu::new(CODE);
    cpu.x[10] = start;
    cpu.x[11] = start + 100;
    let count = run_linked(&words, &mut cpu, 10_000, CODE);
    assert_eq!(count, 100);
    assert_eq!(cpu.pc, CODE + 24);
    assert_eq!(cpu.x[10], start + 100);
    assert_eq!(
        (cpu.x[13], cpu.x[14], cpu.x[28]),
        (1 << 6, 100 << 6, 100 << 6)
    );
    // The last conversion, of 2^53 + 100, is exact; the first, of
    // 2^53 + 1, was rounded down and flagged inexact.
    assert_eq!(cpu.f[1], ((start + 99) as f64).to_bits());
    assert_eq!(cpu.fflags & 1, 1, "NX");
}

#[test]
fn division_edge_cases_of_table_7_1() {
    // a0 = a1 op a2, for div divu rem remu and their *w forms.
    let pairs = [
        (i64::MIN as u64, u64::MAX),
        (5, 0),
        (u64::MAX, 0),
        ((-7i64) as u64, 2),
        (7, (-2i64) as u64),
        (i32::MIN as i64 as u64, u64::MAX),
        (0x1_0000_0005, 0x1_0000_0000),
        (0xffff_ffff_8000_0000, 0x0000_0001_ffff_ffff),
    ];
    for opcode in [0x33, 0x3b] {
        for f3 in 4..8 {
            for (x, y) in pairs {
                let words = [r_type(opcode, 10, f3, 11, 12, 1)];
                let mut regs = vec![0u64; 31];
                regs[10] = x; // a1 (x11)
                regs[11] = y; // a2 (x12)
                let (a, b, made) = both(&words, &regs, ClassSet::NONE);
                assert!(made);
                same(&a, &b).unwrap_or_else(|e| {
                    panic!("opcode {opcode:#x} funct3 {f3}, {x:#x} by {y:#x}: {e}")
                });
            }
        }
    }
}

#[test]
fn floating_point_ops_are_translated_and_a_reserved_rounding_mode_is_the_interpreters() {
    // fld f1, 0(a3); fadd.d f2, f1, f1 (dynamic rounding); fsd f2, 8(a3);
    // flw f3, 16(a3); fmul.d f4, f2, f2 with rm = 5 (reserved).
    let words = [
        i_type(0x07, 1, 3, 13, 0),
        r_type(0x53, 2, 7, 1, 1, 0x01),
        s_type(0x27, 3, 13, 2, 8),
        i_type(0x07, 3, 2, 13, 16),
        r_type(0x53, 4, 5, 2, 2, 0x09),
    ];
    let mut regs = vec![0u64; 31];
    regs[12] = DATA + 0x100; // a3 (x13)
    let wants = ClassSet::of(Class::Load).with(Class::Store);
    let (a, b, made) = both_from(&words, &regs, &[], 0, wants);
    assert!(made);
    same(&a, &b).unwrap();
    assert_eq!(b.stop, Stop::Illegal { at: 4 });
    let loaded = u64::from_le_bytes(b.data[0x100..0x108].try_into().unwrap());
    assert_eq!(b.f[1], loaded);
    assert_eq!(b.f[2], (f64::from_bits(loaded) * 2.0).to_bits());
    assert_eq!(b.f[3] >> 32, 0xffff_ffff, "a single is NaN-boxed");
    assert_eq!(b.events.len(), 3, "two loads and a store");
    // The same op in round-to-nearest runs translated.
    let mut words = words;
    words[4] = r_type(0x53, 4, 7, 2, 2, 0x09);
    let (a, b, _) = both_from(&words, &regs, &[], 0, wants);
    same(&a, &b).unwrap();
    assert_eq!(b.stop, Stop::Ebreak, "on to the ebreak after the block");
}

/// [`JALR_LOOP`] at CODE going to a2 = CODE + 24 while a0 < a1, where a
/// `jal` goes back to CODE, then to CODE + 32: `li a3, 7; jalr x0, 0(x0)`.
/// The `jalr` is linked for CODE + 32, after CODE + 24 when
/// `cached`: the jump cache then holds CODE + 24's translation. Runs from
/// the loop's call with a1 = 100; returns the block run last, a0, a3, the
/// three blocks' counts and the next PC.
fn jump_cached_loop(cached: bool) -> (usize, u64, u64, [u64; 3], u64) {
    let mut mem = memory();
    let jal_back = j_type(0, -24);
    let tail = [i_type(0x13, 13, 0, 0, 7), i_type(0x67, 0, 0, 0, 0)];
    let words: Vec<u32> = JALR_LOOP
        .iter()
        .chain(&[jal_back, 0])
        .chain(&tail)
        .copied()
        .collect();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    mem.poke(CODE, &bytes).unwrap();
    let mut cpu = Cpu::new(CODE);
    cpu.x[11] = 100;
    cpu.x[12] = CODE + 24;
    let mut sink = Collect {
        events: vec![],
        wants: ClassSet::NONE,
    };
    let mut ev = Events::new(&mut sink);
    let mut code = CodeCache::new();
    for pc in [CODE, CODE + 24, CODE + 32] {
        code.blocks.push(translate(pc, &mem, crate::Isa::default()));
    }
    let mut jit = Jit::new().unwrap();
    jit.begin_run(&mut code, ClassSet::NONE, false);
    for bi in 0..3 {
        jit.translate(&mut code, bi, ClassSet::NONE);
        assert!(code.blocks[bi].jit < UNTRANSLATABLE);
    }
    jit.link(&code, 1, 0, CODE);
    if cached {
        jit.link(&code, 0, 1, CODE + 24);
    }
    jit.link(&code, 0, 2, CODE + 32);
    code.blocks[0].count = 1;
    let (last, stop) =
        jit.run::<false, false>(&mut code, 0, &mut cpu, &mut mem, &mut ev, 1_000_000);
    assert_eq!(stop, Stop::Next);
    let counts = [0, 1, 2].map(|bi| code.blocks[bi].count);
    (last, cpu.x[10], cpu.x[13], counts, cpu.pc)
}

#[test]
fn a_jalr_goes_on_to_another_target_through_the_jump_cache() {
    // Linked for CODE + 32, the jalr finds CODE + 24 in the jump cache:
    // 100 rounds through both blocks, then on to the linked target.
    assert_eq!(jump_cached_loop(true), (2, 100, 7, [100, 99, 1], 0));
    // Not in the cache: back to the loop after the first block.
    assert_eq!(jump_cached_loop(false), (0, 1, 0, [1, 0, 0], CODE + 24));
}
