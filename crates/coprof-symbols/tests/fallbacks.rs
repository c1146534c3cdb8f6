//! Binaries without debug info: built with symbols but no DWARF (`-g0`)
//! they symbolize to function + offset from the ELF symbol table; stripped
//! (`-s`) to raw addresses. Either way the answer says so, with a note a
//! report can print, and disassembly still works.

mod common;

use common::{build, find_loop, instructions, Target};
use coprof_symbols::Quality;

fn symbols_without_dwarf(target: Target) {
    let b = build(target, &["-g0"]);
    let sym = b.open();
    let info = sym.debug_info();
    assert!(!info.dwarf, "{info:?}");
    assert_eq!(info.best(), Quality::Symbols);
    assert!(info.function_symbols > 0);
    let note = info.note().expect("a note for a binary without -g");
    assert!(note.contains("no debug info"), "{note}");
    assert!(
        note.contains("-g"),
        "the note says how to get lines: {note}"
    );

    let (start, end) = sym.function_range("sum_scaled").unwrap();
    for d in instructions(&sym, "sum_scaled") {
        let l = sym.lookup(d.pc);
        assert_eq!(l.source, Quality::Symbols, "{l:?}");
        assert_eq!(l.function.as_deref(), Some("sum_scaled"));
        assert_eq!(l.offset, Some(d.pc - start));
        assert_eq!((l.file.as_deref(), l.line), (None, None));
        // At the entry the name alone, as `addr2line -f` and perf give it.
        let named = match d.pc - start {
            0 => "sum_scaled".to_string(),
            offset => format!("sum_scaled+{offset:#x}"),
        };
        assert_eq!(l.to_string(), named);
        assert_eq!(l.source.note(), Quality::Symbols.note());
    }
    assert!(end > start);

    // The loop is found from the disassembly alone and reported by offset.
    let (lo, hi) = find_loop(&sym, target, "sum_scaled");
    let span = sym.span(lo, hi);
    assert_eq!(span.source, Quality::Symbols);
    assert!(span.files.is_empty());
    assert_eq!(span.offsets, Some((lo - start, hi - start)));
    assert_eq!(
        span.to_string(),
        format!("sum_scaled+{:#x}..+{:#x}", lo - start, hi - start)
    );
}

#[test]
fn riscv_symbols_without_dwarf() {
    symbols_without_dwarf(Target::Riscv64);
}

#[test]
fn x86_64_symbols_without_dwarf() {
    symbols_without_dwarf(Target::X86_64);
}

fn stripped_gives_addresses(target: Target) {
    let b = build(target, &["-s"]);
    let sym = b.open();
    let info = sym.debug_info();
    assert_eq!(info.best(), Quality::Address, "{info:?}");
    assert!(info.note().unwrap().contains("stripped"));
    assert_eq!(sym.function_range("sum_scaled"), None);

    let (code_start, code_end) = sym
        .code_ranges()
        .into_iter()
        .max_by_key(|(a, b)| b - a)
        .expect("a stripped binary still has code");
    let mut pc = code_start;
    let mut seen = 0;
    while pc < code_end && seen < 200 {
        let l = sym.lookup(pc);
        assert_eq!(l.source, Quality::Address, "{l:?}");
        assert_eq!(l.function, None);
        assert_eq!(l.to_string(), format!("{pc:#x}"));
        let d = sym
            .disassemble(pc)
            .unwrap_or_else(|| panic!("no instruction at {pc:#x}"));
        assert!(!d.text.is_empty());
        pc += d.bytes.len() as u64;
        seen += 1;
    }
    let span = sym.span(code_start, code_start + 0x10);
    assert_eq!(span.source, Quality::Address);
    assert_eq!(
        span.to_string(),
        format!("{code_start:#x}..{:#x}", code_start + 0x10)
    );
}

#[test]
fn riscv_stripped_gives_addresses() {
    stripped_gives_addresses(Target::Riscv64);
}

#[test]
fn x86_64_stripped_gives_addresses() {
    stripped_gives_addresses(Target::X86_64);
}

/// A PC outside every function and code section of a binary with DWARF
/// is an address, with the note.
#[test]
fn pc_outside_code_is_an_address() {
    let b = build(Target::Riscv64, &["-g"]);
    let sym = b.open();
    for pc in [0, 8, u64::MAX, u64::MAX - 1] {
        let l = sym.lookup(pc);
        assert_eq!(l.source, Quality::Address, "{l:?}");
        assert!(l.source.note().is_some());
        assert_eq!(sym.disassemble(pc), None);
    }
}
