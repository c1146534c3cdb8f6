//! Properties over arbitrary input: any PC, any range, any file. Look-ups
//! never panic and always return an answer that says where it came from;
//! opening a damaged ELF either fails with an error naming the file or
//! gives a symbolizer whose look-ups still never panic.

mod common;

use common::{build, build_cpp, Built, Target};
use coprof_symbols::{Quality, Symbolizer};
use proptest::prelude::*;
use std::path::Path;

fn leak(b: Built) -> &'static Built {
    Box::leak(Box::new(b))
}

thread_local! {
    static RV_DWARF: Symbolizer = leak(build(Target::Riscv64, &["-g"])).open();
    static X86_DWARF: Symbolizer = leak(build(Target::X86_64, &["-g"])).open();
    static RV_STRIPPED: Symbolizer = leak(build(Target::Riscv64, &["-s"])).open();
    static RV_BYTES: (Vec<u8>, Vec<(usize, usize)>) = {
        let bytes = std::fs::read(&leak(build(Target::Riscv64, &["-g"])).binary).unwrap();
        let regions = parser_regions(&bytes);
        (bytes, regions)
    };
    static CPP_BYTES: (Vec<u8>, Vec<(usize, usize)>) = {
        let bytes = std::fs::read(build_cpp().binary).unwrap();
        let regions = parser_regions(&bytes);
        (bytes, regions)
    };
}

type Edits = Vec<(prop::sample::Index, prop::sample::Index, u8)>;

/// Damage to a file: 1 to 31 bytes overwritten (which parser region,
/// where in it, the new byte), perhaps a cut, and 16 PCs to look up.
fn damage() -> impl Strategy<Value = (Edits, Option<prop::sample::Index>, Vec<u64>)> {
    (
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>(),
                any::<u8>(),
            ),
            1..32,
        ),
        prop::option::of(any::<prop::sample::Index>()),
        prop::collection::vec(pc(), 16),
    )
}

/// `bytes` with `edits` written into its parser regions and perhaps cut
/// short must open with an error naming the file, or give a symbolizer
/// whose look-ups never panic, in its code and at `pcs`.
fn check_damaged(
    (mut bytes, regions): (Vec<u8>, Vec<(usize, usize)>),
    edits: Edits,
    cut: Option<prop::sample::Index>,
    pcs: Vec<u64>,
) -> Result<(), TestCaseError> {
    for (region, at, v) in edits {
        let (start, end) = regions[region.index(regions.len())];
        bytes[start + at.index(end - start)] = v;
    }
    if let Some(c) = cut {
        bytes.truncate(c.index(bytes.len()));
    }
    let path = Path::new("damaged.elf");
    match Symbolizer::from_bytes(path, &bytes) {
        Err(e) => prop_assert!(e.to_string().starts_with("damaged.elf: "), "{}", e),
        Ok(sym) => {
            let code: Vec<u64> = sym
                .code_ranges()
                .iter()
                .flat_map(|&(a, b)| {
                    (0..16)
                        .map(move |i| a + (b - a) / 16 * i)
                        .chain([b.saturating_sub(2)])
                })
                .collect();
            for pc in pcs.into_iter().chain(code) {
                check_any_pc(&sym, pc, 0x80);
            }
        }
    }
    Ok(())
}

/// File ranges `[start, end)` that the symbolizer's parsers read: the ELF
/// header, the section header table and every `.debug_*` section. Damage
/// aimed there exercises error paths instead of landing in data.
fn parser_regions(bytes: &[u8]) -> Vec<(usize, usize)> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(bytes).unwrap();
    let mut regions = vec![(0, 64)];
    let shoff = u64::from_le_bytes(bytes[0x28..0x30].try_into().unwrap()) as usize;
    regions.push((shoff, bytes.len()));
    for s in file.sections() {
        if s.name().is_ok_and(|n| n.starts_with(".debug_")) {
            if let Some((off, size)) = s.file_range() {
                regions.push((off as usize, (off + size) as usize));
            }
        }
    }
    assert!(
        regions.len() >= 6,
        "the -g build has debug sections: {regions:?}"
    );
    regions
}

/// PCs drawn near the code (where the interesting answers are) as well as
/// anywhere in the address space.
fn pc() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        0x1_0000u64..0x10_0000,
        0u64..0x1_0000,
        (u64::MAX - 0x100)..=u64::MAX,
    ]
}

fn check_any_pc(sym: &Symbolizer, pc: u64, other: u64) {
    let l = sym.lookup(pc);
    assert_eq!(l.pc, pc);
    // The answer's quality matches what it carries.
    match l.source {
        Quality::Dwarf => assert!(l.function.is_some() || l.line.is_some(), "{l:?}"),
        Quality::GoTable => assert!(
            l.function.is_some() && l.offset.is_some() && l.inlined.is_empty(),
            "{l:?}"
        ),
        Quality::Symbols => assert!(l.function.is_some() && l.offset.is_some(), "{l:?}"),
        Quality::Address => assert!(l.function.is_none() && l.file.is_none(), "{l:?}"),
    }
    // No better than the binary's best, but in a PLT stub, named from the
    // relocations whatever else the binary holds.
    let stub = l.function.as_deref().is_some_and(|f| f.ends_with("@plt"));
    assert!(l.source >= sym.debug_info().best() || stub, "{l:?}");
    let _ = l.inlined_chain().to_string();
    assert_eq!(sym.lookup(pc), l, "the cached answer is the same");
    if let Some(d) = sym.disassemble(pc) {
        assert_eq!(d.pc, pc);
        assert!(!d.bytes.is_empty() && !d.text.is_empty());
    }
    // Ranges of any size, clamped so an arbitrary pair stays quick.
    let hi = pc.saturating_add(other % 0x1000);
    let span = sym.span(pc, hi);
    assert_eq!((span.lo, span.hi), (pc, hi));
    let _ = span.to_string();
    // A count of instructions, when there is one, is what a walk of the
    // range's disassembly finds.
    if let Some(n) = sym.instructions_in(pc, hi) {
        let mut at = pc;
        for _ in 1..n {
            at += sym.disassemble(at).expect("code on the way").bytes.len() as u64;
        }
        assert_eq!(at, hi, "{n} instructions from {pc:#x} end at {hi:#x}");
    }
    match sym.disassemble(pc) {
        Some(d) if d.text != "(bad)" => {
            assert_eq!(sym.instructions_in(pc, pc), Some(1), "{d:?}")
        }
        _ => assert_eq!(sym.instructions_in(pc, pc), None),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn riscv_lookup_never_panics(pc in pc(), other in any::<u64>()) {
        RV_DWARF.with(|s| check_any_pc(s, pc, other));
    }

    #[test]
    fn x86_64_lookup_never_panics(pc in pc(), other in any::<u64>()) {
        X86_DWARF.with(|s| check_any_pc(s, pc, other));
    }

    #[test]
    fn stripped_lookup_never_panics(pc in pc(), other in any::<u64>()) {
        RV_STRIPPED.with(|s| check_any_pc(s, pc, other));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Random bytes overwritten in the parts of a real ELF with DWARF that
    /// the parsers read (ELF header, section table, debug sections), and
    /// sometimes the file cut short.
    #[test]
    fn damaged_elf_never_panics(
        (edits, cut, pcs) in damage(),
    ) {
        check_damaged(RV_BYTES.with(|b| b.clone()), edits, cut, pcs)?;
    }

    /// The same over a C++ program, whose functions are named through
    /// chains of DIEs and the scopes around them.
    #[test]
    fn damaged_cpp_never_panics(
        (edits, cut, pcs) in damage(),
    ) {
        check_damaged(CPP_BYTES.with(|b| b.clone()), edits, cut, pcs)?;
    }
}
