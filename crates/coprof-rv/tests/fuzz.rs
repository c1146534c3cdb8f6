//! No panic on any input: property tests over random bytes for the ELF
//! parser and loader, the decoder and disassembler, and the interpreter
//! running random instruction streams (issue 3, "Bad input").

use coprof_core::{Class, ClassSet, Collect};
use coprof_rv::decode::decode;
use coprof_rv::disasm::disassemble;
use coprof_rv::{elf, Config, Exit, Simulator};
use proptest::prelude::*;

/// A minimal valid RV64 ET_EXEC: ELF header, one PT_LOAD (R+X) holding the
/// whole file at 0x10000, entry at the code after the headers.
fn tiny_elf(code: &[u8]) -> Vec<u8> {
    let mut h = vec![0u8; 64 + 56];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 2;
    h[5] = 1;
    h[6] = 1;
    h[16..18].copy_from_slice(&2u16.to_le_bytes());
    h[18..20].copy_from_slice(&243u16.to_le_bytes());
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    h[24..32].copy_from_slice(&(0x10000u64 + 120).to_le_bytes());
    h[32..40].copy_from_slice(&64u64.to_le_bytes());
    h[52..54].copy_from_slice(&64u16.to_le_bytes());
    h[54..56].copy_from_slice(&56u16.to_le_bytes());
    h[56..58].copy_from_slice(&1u16.to_le_bytes());
    let total = (120 + code.len()) as u64;
    let p = 64;
    h[p..p + 4].copy_from_slice(&1u32.to_le_bytes());
    h[p + 4..p + 8].copy_from_slice(&5u32.to_le_bytes());
    h[p + 16..p + 24].copy_from_slice(&0x10000u64.to_le_bytes());
    h[p + 24..p + 32].copy_from_slice(&0x10000u64.to_le_bytes());
    h[p + 32..p + 40].copy_from_slice(&total.to_le_bytes());
    h[p + 40..p + 48].copy_from_slice(&(total + 0x2000).to_le_bytes());
    h[p + 48..p + 56].copy_from_slice(&0x1000u64.to_le_bytes());
    h.extend_from_slice(code);
    h
}

/// Removes every `ecall` encoding at any 2-byte offset, so random code
/// cannot make real system calls on the host.
fn defuse(code: &mut [u8]) {
    let mut i = 0;
    while i + 4 <= code.len() {
        if code[i..i + 4] == [0x73, 0, 0, 0] {
            code[i] = 0x13; // addi x0, x0, 0
        }
        i += 2;
    }
}

fn config() -> Config {
    Config {
        enosys: true,
        max_instructions: 20_000,
        ..Config::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn decoder_and_disassembler_take_any_bits(raw in any::<u32>(), pc in any::<u64>()) {
        let op = decode(raw, pc);
        let expect_len = if raw & 3 == 3 { 4 } else { 2 };
        prop_assert_eq!(op.len, expect_len);
        prop_assert_eq!(op.pc, pc);
        let text = disassemble(&op, (raw >> 29) & 7);
        prop_assert!(!text.is_empty());
    }

    #[test]
    fn elf_parser_takes_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = elf::parse(&bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn loader_takes_mutated_headers(
        flips in proptest::collection::vec((0usize..120, any::<u8>()), 1..8),
    ) {
        let mut file = tiny_elf(&[0x73, 0x00, 0x10, 0x00]); // ebreak
        for (at, v) in flips {
            file[at] = v;
        }
        // Either it loads (and then it runs to a stop) or it is refused.
        if let Ok(mut sim) = Simulator::load_bytes("fuzz".as_ref(), &file, &config()) {
            let mut none = Collect { events: vec![], wants: ClassSet::NONE };
            let _ = sim.run_to_exit(&mut none);
        }
    }

    #[test]
    fn interpreter_takes_random_code(mut code in proptest::collection::vec(any::<u8>(), 4..256)) {
        defuse(&mut code);
        let file = tiny_elf(&code);
        let mut sim = Simulator::load_bytes("fuzz".as_ref(), &file, &config()).unwrap();
        let mut all = Collect::all();
        let exit = sim.run_to_exit(&mut all);
        let exit = exit.expect("random code makes no system call");
        match exit {
            Exit::Signal { signal, message } => {
                prop_assert!([4, 5, 7, 11].contains(&signal), "{signal}: {message}");
                prop_assert!(message.contains("pc 0x"));
            }
            Exit::Limit => prop_assert!(sim.instret() >= 20_000),
            Exit::Code(_) => prop_assert!(false, "no exit call was possible"),
        }
        // Every retired instruction produced exactly one event, and the
        // exact per-PC counts add up to the retired count.
        prop_assert_eq!(all.events.len() as u64, sim.instret());
        let total: u64 = sim.pc_counts().iter().map(|(_, n)| n).sum();
        prop_assert_eq!(total, sim.instret());
        prop_assert!(all.events.iter().all(|e| e.class != Class::Other));
    }
}
