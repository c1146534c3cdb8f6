//! The events the simulator itself hands to a sink (issue 3, "Events"):
//! a hand-assembled RV64 program runs in a loaded [`Simulator`] and every
//! event it delivers is checked against the program text and the contract
//! of [`coprof_core::Event`]: loads and stores carry their effective
//! address, size and value; conditional branches their outcome and target;
//! jumps, calls and returns their class and target; only the classes the
//! sink asked for leave the simulator (the decode-time filter of Zilles &
//! Sohi, HPCA 2001, §3.1); and the exact per-PC counts are the true ones.
//!
//! The sink here records every batch unfiltered, so a class the simulator
//! should not have built cannot be hidden by a downstream filter (as
//! [`coprof_core::Collect`] would).

use coprof_core::{flags, Class, ClassSet, Event, Sink};
use coprof_rv::encode::{b_type, i_type, j_type, r_type, s_type};
use coprof_rv::{Config, Exit, Simulator};

const BASE: u64 = 0x10000;
/// The code starts after the ELF header and one program header.
const ENTRY: u64 = BASE + 120;

/// A minimal RV64 ET_EXEC: one R+X PT_LOAD holding the whole file at BASE,
/// entry at the code after the headers.
fn tiny_elf(code: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 120];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 2; // ELFCLASS64
    h[5] = 1; // little-endian
    h[6] = 1; // EV_CURRENT
    h[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    h[18..20].copy_from_slice(&243u16.to_le_bytes()); // EM_RISCV
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    h[24..32].copy_from_slice(&ENTRY.to_le_bytes());
    h[32..40].copy_from_slice(&64u64.to_le_bytes()); // e_phoff
    h[52..54].copy_from_slice(&64u16.to_le_bytes());
    h[54..56].copy_from_slice(&56u16.to_le_bytes());
    h[56..58].copy_from_slice(&1u16.to_le_bytes());
    let total = (120 + code.len()) as u64;
    let p = 64;
    h[p..p + 4].copy_from_slice(&1u32.to_le_bytes()); // PT_LOAD
    h[p + 4..p + 8].copy_from_slice(&5u32.to_le_bytes()); // R+X
    h[p + 16..p + 24].copy_from_slice(&BASE.to_le_bytes());
    h[p + 24..p + 32].copy_from_slice(&BASE.to_le_bytes());
    h[p + 32..p + 40].copy_from_slice(&total.to_le_bytes());
    h[p + 40..p + 48].copy_from_slice(&total.to_le_bytes());
    h[p + 48..p + 56].copy_from_slice(&0x1000u64.to_le_bytes());
    h.extend_from_slice(code);
    h
}

// Base instruction formats (RISC-V Unprivileged ISA 20191213, §2.2-§2.3).
fn r(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    r_type(opc, rd, f3, rs1, rs2, f7)
}
fn i(imm: i32, rs1: u32, f3: u32, rd: u32, opc: u32) -> u32 {
    i_type(opc, rd, f3, rs1, imm)
}
fn s(imm: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    s_type(0x23, f3, rs1, rs2, imm)
}
fn b(imm: i32, rs2: u32, rs1: u32, f3: u32) -> u32 {
    b_type(f3, rs1, rs2, imm)
}
fn jal(imm: i32, rd: u32) -> u32 {
    j_type(rd, imm)
}
fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
    i(imm, rs1, 0, rd, 0x13)
}

const ZERO: u32 = 0;
const RA: u32 = 1;
const SP: u32 = 2;
const T0: u32 = 5;
const T1: u32 = 6;
const A0: u32 = 10;
const A1: u32 = 11;
const A2: u32 = 12;
const A3: u32 = 13;
const A7: u32 = 17;
const S0: u32 = 8;
const S1: u32 = 9;

/// The test program and the addresses of the instructions the tests look
/// at.
struct Program {
    elf: Vec<u8>,
    sb: u64,
    lb: u64,
    sh: u64,
    lh: u64,
    sd: u64,
    ld: u64,
    c_ldsp: u64,
    li5: u64,
    loop_top: u64,
    bne: u64,
    call: u64,
    jump: u64,
    func: u64,
    ret: u64,
    after_jump: u64,
    /// Instructions retired from entry to the exit `ecall`, inclusive.
    retired: u64,
}

/// Assembles the program. In order:
///
/// ```text
///       addi sp, sp, -32
///       lui  t0, 0x12345 ; addi t0, t0, 0x680     # t0 = 0x1234_5680
///       sd   t0, 8(sp)                            # 8 bytes
///       sb   t0, 0(sp)                            # 1 byte: 0x80
///       lb   a1, 0(sp)                            # a1 = -128
///       addi t1, zero, -2
///       sh   t1, 2(sp)                            # 2 bytes: 0xfffe
///       lh   a2, 2(sp)                            # a2 = -2
///       ld   a3, 8(sp)
///       c.ldsp a4, 8(sp)                          # compressed
///       c.nop
///       addi a0, zero, 5
/// top:  addi a0, a0, -1
///       bne  a0, zero, top                        # taken 4 times, then not
///       jal  ra, func                             # call
///       jal  zero, out                            # jump
/// func: jalr zero, 0(ra)                          # return
/// out:  addi a0, a1, 0x80                         # a0 = 0 if lb sign-extended
///       addi a7, zero, 93
///       ecall                                     # exit(a0)
/// ```
fn program() -> Program {
    let mut code: Vec<u8> = Vec::new();
    let pc = |code: &Vec<u8>| ENTRY + code.len() as u64;
    let w = |code: &mut Vec<u8>, word: u32| -> u64 {
        let at = ENTRY + code.len() as u64;
        code.extend_from_slice(&word.to_le_bytes());
        at
    };
    let c = |code: &mut Vec<u8>, half: u16| -> u64 {
        let at = ENTRY + code.len() as u64;
        code.extend_from_slice(&half.to_le_bytes());
        at
    };
    w(&mut code, addi(SP, SP, -32));
    w(&mut code, (0x12345 << 12) | (T0 << 7) | 0x37);
    w(&mut code, addi(T0, T0, 0x680));
    let sd = w(&mut code, s(8, T0, SP, 3));
    let sb = w(&mut code, s(0, T0, SP, 0));
    let lb = w(&mut code, i(0, SP, 0, A1, 0x03));
    w(&mut code, addi(T1, ZERO, -2));
    let sh = w(&mut code, s(2, T1, SP, 1));
    let lh = w(&mut code, i(2, SP, 1, A2, 0x03));
    let ld = w(&mut code, i(8, SP, 3, A3, 0x03));
    // c.ldsp a4, 8(sp): 011 | uimm[5]=0 | rd=01110 | uimm[4:3]=01 |
    // uimm[8:6]=000 | 10 (§16.3).
    let c_ldsp = c(&mut code, 0x6722);
    c(&mut code, 0x0001); // c.nop
    let li5 = w(&mut code, addi(A0, ZERO, 5));
    let loop_top = w(&mut code, addi(A0, A0, -1));
    let bne = pc(&code);
    w(&mut code, b(loop_top as i32 - bne as i32, ZERO, A0, 1));
    let call = pc(&code);
    let func = call + 8;
    w(&mut code, jal((func - call) as i32, RA));
    let jump = pc(&code);
    let after_jump = func + 4;
    w(&mut code, jal((after_jump - jump) as i32, ZERO));
    let ret = w(&mut code, i(0, RA, 0, ZERO, 0x67));
    assert_eq!((func, after_jump), (ret, pc(&code)));
    w(&mut code, addi(A0, A1, 0x80));
    w(&mut code, addi(A7, ZERO, 93));
    w(&mut code, 0x0000_0073); // ecall
                               // 12 straight-line + 1 + 5 × 2 (loop) + call, jump, return + 3.
    let retired = 12 + 1 + 5 * 2 + 3 + 3;
    Program {
        elf: tiny_elf(&code),
        sb,
        lb,
        sh,
        lh,
        sd,
        ld,
        c_ldsp,
        li5,
        loop_top,
        bne,
        call,
        jump,
        func,
        ret,
        after_jump,
        retired,
    }
}

/// A sink that keeps every event exactly as delivered, unfiltered.
struct Record {
    wants: ClassSet,
    events: Vec<Event>,
}

impl Sink for Record {
    fn wants(&self) -> ClassSet {
        self.wants
    }
    fn observe(&mut self, batch: &[Event]) {
        self.events.extend_from_slice(batch);
    }
}

/// Loads the program, runs it to its exit with a sink wanting `wants`, and
/// returns the simulator, the events, and the stack pointer the program
/// started with.
fn run(wants: ClassSet) -> (Simulator, Vec<Event>, u64) {
    let p = program();
    let mut sim = Simulator::load_bytes("events".as_ref(), &p.elf, &Config::default()).unwrap();
    let sp0 = sim.cpu().x[SP as usize];
    let mut sink = Record {
        wants,
        events: vec![],
    };
    let exit = sim.run_to_exit(&mut sink).unwrap();
    assert_eq!(
        exit,
        Exit::Code(0),
        "lb sign-extends 0x80 into the register, so a0 = -128 + 0x80 = 0"
    );
    (sim, sink.events, sp0)
}

fn at(events: &[Event], pc: u64) -> Vec<Event> {
    events.iter().filter(|e| e.pc == pc).copied().collect()
}

/// The one event of the instruction at `pc`.
fn one(events: &[Event], pc: u64) -> Event {
    let v = at(events, pc);
    assert_eq!(v.len(), 1, "events at {pc:#x}: {v:?}");
    v[0]
}

#[test]
fn loads_and_stores_carry_address_size_and_value() {
    let p = program();
    let (sim, events, sp0) = run(ClassSet::ALL);
    let frame = sp0 - 32;
    // A store carries what reached memory: the low `size` bytes of rs2.
    assert_eq!(
        one(&events, p.sd),
        Event::store(p.sd, frame + 8, 8, 0x1234_5680)
    );
    assert_eq!(one(&events, p.sb), Event::store(p.sb, frame, 1, 0x80));
    assert_eq!(one(&events, p.sh), Event::store(p.sh, frame + 2, 2, 0xfffe));
    // A load carries the bytes read, zero-extended, as the Event type
    // documents ("value loaded (zero-extended)"); the register gets the
    // ISA's sign-extension (§2.6: lb, lh sign-extend).
    assert_eq!(one(&events, p.lb), Event::load(p.lb, frame, 1, 0x80));
    assert_eq!(sim.cpu().x[A1 as usize], 0xffff_ffff_ffff_ff80);
    assert_eq!(one(&events, p.lh), Event::load(p.lh, frame + 2, 2, 0xfffe));
    assert_eq!(sim.cpu().x[A2 as usize], (-2i64) as u64);
    assert_eq!(
        one(&events, p.ld),
        Event::load(p.ld, frame + 8, 8, 0x1234_5680)
    );
    // A compressed load is the same load, flagged as 2 bytes long.
    let c = one(&events, p.c_ldsp);
    assert_eq!(
        c,
        Event {
            flags: flags::HAS_VALUE | flags::COMPRESSED,
            ..Event::load(p.c_ldsp, frame + 8, 8, 0x1234_5680)
        }
    );
    // Exactly these memory accesses, in program order.
    let mem: Vec<u64> = events
        .iter()
        .filter(|e| matches!(e.class, Class::Load | Class::Store))
        .map(|e| e.pc)
        .collect();
    assert_eq!(mem, [p.sd, p.sb, p.lb, p.sh, p.lh, p.ld, p.c_ldsp]);
}

#[test]
fn conditional_branches_carry_outcome_and_target() {
    let p = program();
    let (_, events, _) = run(ClassSet::ALL);
    let branches = at(&events, p.bne);
    assert_eq!(branches.len(), 5, "{branches:?}");
    for (n, e) in branches.iter().enumerate() {
        assert_eq!(e.class, Class::CondBranch);
        // The target is the branch's, taken or not.
        assert_eq!(e.target(), p.loop_top, "branch {n}");
        assert_eq!(e.taken(), n < 4, "branch {n}: a0 reaches zero on the fifth");
        assert_eq!(e.size, 0);
        assert!(e.is_short_backward_branch(4) == (n < 4));
    }
    // The retire order shows the outcome: after a taken branch comes the
    // loop top, after the not-taken one the fall-through (the call).
    let pos = |pc: u64| events.iter().position(|e| e.pc == pc).unwrap();
    let last = events.iter().rposition(|e| e.pc == p.bne).unwrap();
    assert_eq!(events[last + 1].pc, p.call);
    assert_eq!(events[pos(p.bne) + 1].pc, p.loop_top);
}

#[test]
fn jumps_calls_and_returns_carry_their_class_and_target() {
    let p = program();
    let (_, events, _) = run(ClassSet::ALL);
    let call = one(&events, p.call);
    assert_eq!(
        (call.class, call.target(), call.taken()),
        (Class::Call, p.func, true)
    );
    // A call writes its link register, and the event carries that value.
    assert!(call.has_value());
    assert_eq!(call.value, p.call + 4);
    let jump = one(&events, p.jump);
    assert_eq!(
        (jump.class, jump.target(), jump.taken()),
        (Class::Jump, p.after_jump, true)
    );
    let ret = one(&events, p.ret);
    assert_eq!(
        (ret.class, ret.target(), ret.taken()),
        (Class::Return, p.call + 4, true)
    );
    assert_eq!(p.func, p.ret);
    // A jump or return to x0 writes no register, so it carries no value
    // ("link value written, if any").
    for e in [jump, ret] {
        assert!(!e.has_value(), "{e:?}");
        assert_eq!(e.value, 0, "{e:?}");
    }
}

/// Instructions whose destination is x0 write nothing (§2.1: x0 is
/// hard-wired to zero), so their events carry no value: a `nop`, or a
/// HINT such as `add x0, a1, a2`, must not look like a value producer to a
/// value profiler or to RAP's narrow-value stream.
#[test]
fn writes_to_x0_carry_no_value() {
    let mut code = Vec::new();
    for word in [
        addi(A1, ZERO, 7),
        addi(ZERO, ZERO, 0),         // nop
        r(0, A1, A1, 0, ZERO, 0x33), // add x0, a1, a1
        r(1, A1, A1, 0, ZERO, 0x33), // mul x0, a1, a1
        r(0, A1, A1, 0, A2, 0x33),   // add a2, a1, a1
        addi(A0, ZERO, 0),
        addi(A7, ZERO, 93),
        0x0000_0073,
    ] {
        code.extend_from_slice(&word.to_le_bytes());
    }
    code.extend_from_slice(&0x0001u16.to_le_bytes()); // c.nop, never reached
    let elf = tiny_elf(&code);
    let mut sim = Simulator::load_bytes("x0".as_ref(), &elf, &Config::default()).unwrap();
    let mut sink = Record {
        wants: ClassSet::ALL,
        events: vec![],
    };
    assert_eq!(sim.run_to_exit(&mut sink).unwrap(), Exit::Code(0));
    let ev = &sink.events;
    assert_eq!(ev.len(), 8);
    assert_eq!((ev[0].value, ev[0].has_value()), (7, true));
    for e in &ev[1..4] {
        assert!(matches!(e.class, Class::IntAlu | Class::MulDiv), "{e:?}");
        assert!(!e.has_value(), "write to x0 at {:#x}: {e:?}", e.pc);
    }
    assert_eq!((ev[4].value, ev[4].has_value()), (14, true));
}

#[test]
fn only_the_requested_classes_leave_the_simulator() {
    let p = program();
    // Loads only: the four loads and nothing else, not even filtered out
    // later, since `Record` keeps whatever it is given.
    let (sim, loads, _) = run(ClassSet::of(Class::Load));
    let pcs: Vec<u64> = loads.iter().map(|e| e.pc).collect();
    assert_eq!(pcs, [p.lb, p.lh, p.ld, p.c_ldsp]);
    assert!(loads.iter().all(|e| e.class == Class::Load));
    assert_eq!(sim.events_delivered(), 4);
    // Two control classes: the five branches and the call, no jump or
    // return although they share the decoder's control-transfer path.
    let (_, some, _) = run(ClassSet::of(Class::CondBranch).with(Class::Call));
    let classes: Vec<Class> = some.iter().map(|e| e.class).collect();
    assert_eq!(
        classes,
        [[Class::CondBranch; 5].as_slice(), &[Class::Call]].concat()
    );
    // Nothing wanted: nothing built, and the program still runs the same.
    let (sim, none, _) = run(ClassSet::NONE);
    assert!(none.is_empty());
    assert_eq!(sim.events_delivered(), 0);
    assert_eq!(sim.instret(), p.retired);
    // Everything wanted: one event per retired instruction.
    let (sim, all, _) = run(ClassSet::ALL);
    assert_eq!(all.len() as u64, sim.instret());
    // Integer results alone (built after the instruction executes, by
    // the interpreter compiled with that step): exactly those of all.
    let (_, alu, _) = run(ClassSet::of(Class::IntAlu));
    let expected: Vec<Event> = all
        .iter()
        .filter(|e| e.class == Class::IntAlu)
        .copied()
        .collect();
    assert!(expected.len() >= 10, "{expected:?}");
    assert_eq!(alu, expected);
}

#[test]
fn per_pc_counts_are_exact_for_a_loop() {
    let p = program();
    let (sim, _, _) = run(ClassSet::NONE);
    assert_eq!(sim.instret(), p.retired);
    let counts = sim.pc_counts();
    let count = |pc: u64| {
        counts
            .iter()
            .find(|(at, _)| *at == pc)
            .map_or(0, |(_, n)| *n)
    };
    assert_eq!(count(p.li5), 1);
    assert_eq!(count(p.loop_top), 5, "the loop body runs five times");
    assert_eq!(count(p.bne), 5);
    for pc in [p.sd, p.lb, p.c_ldsp, p.call, p.jump, p.func, p.after_jump] {
        assert_eq!(count(pc), 1, "pc {pc:#x}");
    }
    // Every retired instruction is counted once, and nothing else is.
    assert_eq!(counts.iter().map(|(_, n)| n).sum::<u64>(), p.retired);
    assert_eq!(counts.len() as u64, p.retired - 4 * 2);
    // The counts are the same whether or not a sink listens.
    let (with_events, _, _) = run(ClassSet::ALL);
    assert_eq!(with_events.pc_counts(), counts);
}

/// A sink that takes the instruction stream as runs of blocks and loads
/// as events, and keeps both unfiltered.
struct RecordRuns {
    told: bool,
    pcs: Vec<u64>,
    compressed_pcs: Vec<u64>,
    events: Vec<Event>,
}

impl Sink for RecordRuns {
    fn wants(&self) -> ClassSet {
        ClassSet::ALL
    }
    fn observe(&mut self, batch: &[Event]) {
        self.events.extend_from_slice(batch);
    }
    fn wants_with_runs(&self) -> Option<ClassSet> {
        Some(ClassSet::of(Class::Load))
    }
    fn runs_follow(&mut self) {
        self.told = true;
    }
    fn observe_runs(&mut self, runs: &[coprof_core::Run], blocks: &coprof_core::Blocks) {
        for r in runs {
            assert!(r.len as usize <= blocks.pcs(r.block).len());
            self.pcs.extend_from_slice(blocks.run_pcs(*r));
            if blocks.run_has_compressed(*r) {
                self.compressed_pcs.extend_from_slice(blocks.run_pcs(*r));
            }
        }
    }
}

#[test]
fn runs_of_blocks_give_every_retired_pc_in_order() {
    let p = program();
    let (_, all, _) = run(ClassSet::ALL);
    let mut sim = Simulator::load_bytes("events".as_ref(), &p.elf, &Config::default()).unwrap();
    let mut sink = RecordRuns {
        told: false,
        pcs: vec![],
        compressed_pcs: vec![],
        events: vec![],
    };
    assert_eq!(sim.run_to_exit(&mut sink).unwrap(), Exit::Code(0));
    assert!(sink.told, "the sink is told before the first batch");
    // The runs expand to exactly the PCs of the per-instruction events.
    let expected: Vec<u64> = all.iter().map(|e| e.pc).collect();
    assert_eq!(sink.pcs, expected);
    assert_eq!(sim.instructions_in_runs(), p.retired);
    // Only the classes named with the runs come as events: the loads.
    let loads: Vec<Event> = all
        .iter()
        .filter(|e| e.class == Class::Load)
        .copied()
        .collect();
    assert_eq!(sink.events, loads);
    assert_eq!(sim.events_delivered(), loads.len() as u64);
    // The block holding c.ldsp says it has a compressed instruction.
    assert!(sink.compressed_pcs.contains(&p.c_ldsp));
    assert!(!sink.compressed_pcs.contains(&p.func));
}

/// Keeps every run with its block's first PC.
struct AllRuns(Vec<(u64, u32)>);

impl Sink for AllRuns {
    fn observe(&mut self, _: &[Event]) {}
    fn wants_with_runs(&self) -> Option<ClassSet> {
        Some(ClassSet::NONE)
    }
    fn observe_runs(&mut self, runs: &[coprof_core::Run], blocks: &coprof_core::Blocks) {
        self.0
            .extend(runs.iter().map(|r| (blocks.pcs(r.block)[0], r.len)));
    }
}

#[test]
fn a_jump_into_a_fault_ends_with_a_run_of_nothing_that_says_where_it_went() {
    // addi t0, zero, 16; jalr zero, 0(t0): a jump to unmapped address 16.
    let mut code = Vec::new();
    code.extend_from_slice(&addi(T0, ZERO, 16).to_le_bytes());
    code.extend_from_slice(&i(0, T0, 0, ZERO, 0x67).to_le_bytes());
    let elf = tiny_elf(&code);
    let mut sim = Simulator::load_bytes("fault".as_ref(), &elf, &Config::default()).unwrap();
    let mut sink = AllRuns(vec![]);
    let exit = sim.run_to_exit(&mut sink).unwrap();
    assert!(matches!(exit, Exit::Signal { signal: 11, .. }), "{exit:?}");
    assert_eq!(sim.instret(), 2);
    assert_eq!(
        sink.0,
        [(ENTRY, 2), (16, 0)],
        "the jump's block, then its target's"
    );
    assert_eq!(sim.instructions_in_runs(), 2);
}

#[test]
fn faults_caught_by_a_handler_keep_the_exact_counts() {
    // rt_sigaction(SIGSEGV, {handler}, NULL, 8); then three times: an
    // addi, a load from unmapped address 16 (caught: the handler moves
    // the saved PC past it), an addi; then exit(0). Each fault stops its
    // block after one op, so the block's count overstates the two behind
    // the load every time.
    let handler_at = 22 * 4;
    let words = [
        addi(SP, SP, -32),
        0x0000_0297, // auipc t0, 0
        addi(T0, T0, handler_at - 4),
        s(0, T0, SP, 3),   // sd t0, 0(sp)
        s(8, ZERO, SP, 3), // sd zero, 8(sp)
        s(16, ZERO, SP, 3),
        addi(A0, ZERO, 11),
        addi(A1, SP, 0),
        addi(A2, ZERO, 0),
        addi(A3, ZERO, 8),
        addi(A7, ZERO, 134),
        0x0000_0073, // ecall
        addi(S0, ZERO, 0),
        addi(S1, ZERO, 3),
        // loop:
        addi(T1, ZERO, 16),
        i(0, T1, 2, T0, 0x03), // lw t0, 0(t1): faults
        addi(S0, S0, 1),
        b(-12, S1, S0, 4), // blt s0, s1, loop
        addi(A0, ZERO, 0),
        addi(A7, ZERO, 93),
        0x0000_0073,
        0x0000_0013, // nop (never reached)
        // handler: the saved pc is at ucontext + 176.
        i(176, A2, 3, T1, 0x03), // ld t1, 176(a2)
        addi(T1, T1, 4),
        s(176, T1, A2, 3),       // sd t1, 176(a2)
        i(0, RA, 0, ZERO, 0x67), // ret (to the rt_sigreturn trampoline)
    ];
    let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let elf = tiny_elf(&code);
    let mut sim = Simulator::load_bytes("caught".as_ref(), &elf, &Config::default()).unwrap();
    let mut all = coprof_core::Collect {
        events: vec![],
        wants: ClassSet::ALL,
    };
    let exit = sim.run_to_exit(&mut all).unwrap();
    assert_eq!(exit, Exit::Code(0));
    let mut from_events = std::collections::BTreeMap::<u64, u64>::new();
    for e in &all.events {
        *from_events.entry(e.pc).or_default() += 1;
    }
    let counts = sim.pc_counts();
    assert_eq!(
        counts,
        from_events.into_iter().collect::<Vec<_>>(),
        "the exact counts are the retired instructions"
    );
    let count = |pc: u64| counts.iter().find(|(at, _)| *at == pc).map_or(0, |c| c.1);
    let load = ENTRY + 15 * 4;
    assert_eq!(count(load), 0, "the load never retired");
    assert_eq!(count(load - 4), 3);
    assert_eq!(count(load + 4), 3, "resumed after the load each time");
    assert_eq!(
        count(ENTRY + handler_at as u64),
        3,
        "the handler ran three times"
    );
    assert_eq!(
        count(coprof_rv::signal::TRAMPOLINE),
        3,
        "and returned through the trampoline"
    );
    assert_eq!(counts.iter().map(|c| c.1).sum::<u64>(), sim.instret());
}

#[test]
fn a_limit_and_a_look_stop_at_the_first_block_boundary_past_them() {
    // The simulator runs block after block in one call and comes back to
    // its loop only when a block needs it: a limit, or the time to report
    // progress, must still stop the run at the end of the block in which
    // the count reaches it, as one block per turn of the loop did. The
    // program's blocks end after 15 instructions (the straight line into
    // the loop's first branch), then 2 each for four more turns of the
    // loop, then the call, the jump and the return, 1 each, and the exit's
    // 3, which ends the run with its ecall.
    let p = program();
    let ends = [15u64, 17, 19, 21, 23, 24, 25, 26, 29];
    assert_eq!(ends.last(), Some(&p.retired));
    for limit in 1..=p.retired + 2 {
        let config = Config {
            max_instructions: limit,
            ..Config::default()
        };
        let mut sim = Simulator::load_bytes("limit".as_ref(), &p.elf, &config).unwrap();
        let mut sink = Record {
            wants: ClassSet::NONE,
            events: vec![],
        };
        let exit = sim.run_to_exit(&mut sink).unwrap();
        let end = *ends.iter().find(|&&e| e >= limit).unwrap_or(&p.retired);
        if end < p.retired {
            assert_eq!(exit, Exit::Limit, "limit {limit}");
        } else {
            // The block that reaches the limit ends in the exit's ecall.
            assert_eq!(exit, Exit::Code(0), "limit {limit}: the exit comes first");
        }
        assert_eq!(sim.instret(), end, "limit {limit}");
    }
    for every in 1..=p.retired {
        let mut sim = Simulator::load_bytes("looks".as_ref(), &p.elf, &Config::default()).unwrap();
        let mut sink = Record {
            wants: ClassSet::ALL,
            events: vec![],
        };
        let mut seen = vec![];
        let exit = sim
            .run_with_progress(&mut sink, every, &mut |n| seen.push(n))
            .unwrap();
        assert_eq!(exit, Exit::Code(0));
        // Each look at the first block end at least `every` past the last.
        let mut expected = vec![];
        let mut last = 0;
        for &e in &ends[..ends.len() - 1] {
            if e >= last + every {
                expected.push(e);
                last = e;
            }
        }
        assert_eq!(seen, expected, "every {every}");
    }
}
